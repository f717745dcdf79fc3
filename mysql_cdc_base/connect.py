"""Kafka Connect's data model, and the bytes its ``JsonConverter`` writes for it.

Debezium's wire format *is* Kafka Connect's ``JsonConverter`` output, so byte compatibility depends
on reproducing two things exactly: the schema node layout (key order ``type``, ``fields``/``items``/
``keys``/``values``, ``optional``, ``name``, ``version``, ``doc``, ``parameters``, ``default``, and
``field`` last on struct members) and the payload rules (a null whose schema has a default is
written as the default; floats rendered as Java does).

Payloads are kept as plain JSON-ready Python values (bytes already base64 text, decimals already
encoded), so sinks that want objects (Spark, the embedded API) and sinks that want bytes (Kafka,
JSON lines) share one representation. A schema is serialised once and cached.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from struct import Struct
from typing import Any

import orjson

from mysql_cdc_base.properties import Property, PropertySource, bool_of, by_name, choice_of, prop

# How values are represented (the converters build these; the Spark sink types columns by them).
REPRESENTATION_PROPERTIES: tuple[Property, ...] = (
    prop(
        "decimal.handling.mode",
        "precise",
        "DECIMAL representation.",
        kind="choice",
        choices=("precise", "double", "string"),
    ),
    prop(
        "time.precision.mode",
        "adaptive_time_microseconds",
        "Temporal representation.",
        kind="choice",
        choices=("adaptive_time_microseconds", "adaptive", "connect"),
    ),
    prop(
        "bigint.unsigned.handling.mode",
        "long",
        "BIGINT UNSIGNED representation.",
        kind="choice",
        choices=("long", "precise"),
    ),
    prop(
        "binary.handling.mode",
        "bytes",
        "Binary column representation.",
        kind="choice",
        choices=("bytes", "base64", "base64-url-safe", "hex"),
    ),
)

_MODES = by_name(REPRESENTATION_PROPERTIES)


def _mode_default(key: str) -> str:
    return _MODES[key].default or ""


@dataclass(frozen=True)
class ValueModes:
    """How values are represented, typed: the REPRESENTATION_PROPERTIES, built once from the
    property table. The one value-modes type: the connector's converters extend it
    (``ConverterSettings``), the Spark sink types its columns by it."""

    decimal_handling_mode: str = _mode_default("decimal.handling.mode")
    time_precision_mode: str = _mode_default("time.precision.mode")
    bigint_unsigned_handling_mode: str = _mode_default("bigint.unsigned.handling.mode")
    binary_handling_mode: str = _mode_default("binary.handling.mode")

    @classmethod
    def from_config(cls, config: PropertySource) -> ValueModes:
        return cls(**cls.read(config))

    @staticmethod
    def read(config: PropertySource) -> dict[str, str]:
        """The modes as keyword arguments (for a subclass built with more settings)."""
        return {spec.name.replace(".", "_"): choice_of(config, spec) for spec in REPRESENTATION_PROPERTIES}


# The JSON converter's envelope: whether keys and values carry their schema.
CONVERTER_PROPERTIES: tuple[Property, ...] = (
    prop("key.converter.schemas.enable", "true", "Keys carry their schema.", kind="bool"),
    prop("value.converter.schemas.enable", "true", "Values carry their schema.", kind="bool"),
)


def schemas_enabled(config: PropertySource) -> tuple[bool, bool]:
    """Whether keys and values carry their schema (``*.converter.schemas.enable``)."""
    key_schemas, value_schemas = CONVERTER_PROPERTIES
    return bool_of(config, key_schemas), bool_of(config, value_schemas)


_NO_DEFAULT: Any = object()


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    schema: ConnectSchema


@dataclass(frozen=True, slots=True)
class ConnectSchema:
    """One Connect schema node. ``type`` is Connect's lower-case type name (``int8`` ... ``struct``)."""

    type: str
    optional: bool = False
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: tuple[tuple[str, str], ...] | None = None
    # The default, already in payload (JSON-ready) form; _NO_DEFAULT when the schema has none.
    default: Any = _NO_DEFAULT
    fields: tuple[Field, ...] | None = None
    items: ConnectSchema | None = None
    keys: ConnectSchema | None = None
    values: ConnectSchema | None = None
    _json: bytes = field(default=b"", compare=False, repr=False)
    _needs_walk: bool = field(default=False, compare=False, repr=False)
    # Struct members whose payload the converter changes (a default, a float somewhere below):
    # only these are visited when serialising; the rest are copied as they are.
    _walk_fields: tuple[Field, ...] = field(default=(), compare=False, repr=False)
    # ``_walk`` for this schema, generated (see ``_compile_walker``); None when nothing changes.
    _walker: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_json", orjson.dumps(self.to_json()))
        object.__setattr__(self, "_needs_walk", _needs_walk(self))
        object.__setattr__(
            self,
            "_walk_fields",
            tuple(f for f in self.fields or () if f.schema.has_default or f.schema._needs_walk),
        )
        if self._needs_walk:
            object.__setattr__(self, "_walker", _compile_walker(self))

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    def field(self, name: str) -> Field | None:
        for f in self.fields or ():
            if f.name == name:
                return f
        return None

    def to_json(self) -> dict[str, Any]:
        """The schema node exactly as ``JsonConverter.asJsonSchema`` builds it."""
        node: dict[str, Any] = {"type": _JSON_TYPE_NAMES.get(self.type, self.type)}
        if self.fields is not None:
            node["fields"] = [{**f.schema.to_json(), "field": f.name} for f in self.fields]
        if self.items is not None:
            node["items"] = self.items.to_json()
        if self.keys is not None:
            node["keys"] = self.keys.to_json()
        if self.values is not None:
            node["values"] = self.values.to_json()
        node["optional"] = self.optional
        if self.name is not None:
            node["name"] = self.name
        if self.version is not None:
            node["version"] = self.version
        if self.doc is not None:
            node["doc"] = self.doc
        if self.parameters is not None:
            node["parameters"] = dict(self.parameters)
        if self.has_default:
            node["default"] = _rendered_default(self)
        return node

    @property
    def json_bytes(self) -> bytes:
        return self._json

    def payload_for_json(self, value: Any) -> Any:
        """The payload as the converter writes it: defaults substituted for nulls, Java floats."""
        walker = self._walker
        return value if walker is None else walker(value)


# Connect types whose name in JsonConverter's schema JSON differs (JsonSchema.FLOAT_TYPE_NAME, ...).
_JSON_TYPE_NAMES = {"float32": "float", "float64": "double"}


def _needs_walk(schema: ConnectSchema) -> bool:
    if schema.type in ("float32", "float64"):
        return True
    if schema.fields is not None:
        return any(f.schema.has_default or f.schema._needs_walk for f in schema.fields)
    for child in (schema.items, schema.keys, schema.values):
        if child is not None and (child.has_default or child._needs_walk):
            return True
    return False


def _rendered_default(schema: ConnectSchema) -> Any:
    """The default as the converter writes it, in the schema and for a null: a FLOAT's as Java prints
    a float (``5.6``, not the widened ``5.599999904632568``)."""
    if not schema.has_default:
        return None
    if schema.type in ("float32", "float64"):
        return java_float(schema.default, schema.type == "float32")
    return schema.default


def _walk(schema: ConnectSchema, value: Any) -> Any:
    if value is None:
        return _rendered_default(schema)
    kind = schema.type
    if kind in ("float32", "float64"):
        return java_float(value, kind == "float32")
    if kind == "struct" and schema.fields is not None:
        # Payload structs are built in field order with every field present, so a shallow copy
        # keeps the converter's field order.
        out = dict(value)
        for f in schema._walk_fields:
            out[f.name] = _walk(f.schema, value.get(f.name))
        return out
    if kind == "array" and schema.items is not None:
        return [_walk(schema.items, v) for v in value]
    if kind == "map" and schema.values is not None:
        return {k: _walk(schema.values, v) for k, v in value.items()}
    return value


def _compile_walker(schema: ConnectSchema) -> Any:
    """``_walk`` specialised to one schema: a generated function that visits only the members whose
    payload changes (defaults for nulls, Java floats), with each member's rule inlined or its own
    walker called. Same result as ``_walk``; per record it saves the generic dispatch."""
    namespace: dict[str, Any] = {"java_float": java_float}

    def constant(value: Any) -> str:
        name = f"k{len(namespace)}"
        namespace[name] = value
        return name

    when_null = constant(_rendered_default(schema))
    lines = ["def walk(value):", f"    if value is None: return {when_null}"]
    kind = schema.type
    if kind in ("float32", "float64"):
        lines.append(f"    return java_float(value, {kind == 'float32'})")
    elif kind == "struct" and schema.fields is not None:
        # The payload itself when no member changes (every field there, no null with a default,
        # each member's walker giving back what it got): a copy only where one is needed.
        lines.append("    get = value.get")
        unchanged = [f"len(value) == {len(schema.fields)}"]
        updates = []
        for number, f in enumerate(schema._walk_fields):
            key = repr(f.name)
            child = f.schema
            if child.type in ("struct", "array", "map") or child._needs_walk:
                lines.append(f"    w{number} = {constant(_walker_of(child))}(o{number} := get({key}))")
                unchanged.append(f"w{number} is o{number}")
                updates.append(f"    out[{key}] = w{number}")
            else:  # a primitive with a default
                default = constant(_rendered_default(child))
                unchanged.append(f"get({key}) is not None")
                updates.append(f"    v = get({key}); out[{key}] = {default} if v is None else v")
        lines += [f"    if {' and '.join(unchanged)}: return value", "    out = dict(value)", *updates]
        lines.append("    return out")
    elif kind == "array" and schema.items is not None:
        lines.append(f"    return [{constant(_walker_of(schema.items))}(v) for v in value]")
    elif kind == "map" and schema.values is not None:
        lines.append(f"    return {{k: {constant(_walker_of(schema.values))}(v) for k, v in value.items()}}")
    else:
        lines.append("    return value")
    exec(compile("\n".join(lines), "<connect payload walker>", "exec"), namespace)  # noqa: S102
    return namespace["walk"]


def _walker_of(schema: ConnectSchema) -> Any:
    return schema._walker if schema._walker is not None else _compile_walker(schema)


def java_float(value: float, single: bool = False) -> Any:
    """A float rendered the way Jackson prints a Java float/double.

    Java's ``Double.toString`` switches to ``1.0E10`` notation outside [1e-3, 1e7) and prints
    ``NaN``/``Infinity`` (which Jackson emits as strings only with a feature flag; the converter
    writes them as numbers, which is not valid JSON, so we follow Jackson's default of quoting).
    Values inside the plain range serialise identically from Python, so they stay plain floats.
    """
    if isinstance(value, bool) or not isinstance(value, float):
        return value
    if math.isnan(value) or math.isinf(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if single:
        value = _float32_shortest(value)
    magnitude = abs(value)
    if value == 0.0 or 1e-3 <= magnitude < 1e7:
        return value
    return orjson.Fragment(_java_sci(value).encode())


def _float32_shortest(value: float) -> float:
    # Java prints a float with the fewest digits that round-trip *as a float*; Python's repr would
    # show the widened double (0.1f -> 0.10000000149011612). Find the shortest decimal that maps
    # back to the same float32. Near the float32 maximum a short candidate can round beyond it
    # (3.4025e38 -> 3.403e38): such a candidate is not a float32 at all, so the search goes on.
    packed = _FLOAT32.pack(value)
    for digits in range(1, 10):
        candidate = float(f"{value:.{digits}g}")
        try:
            if _FLOAT32.pack(candidate) == packed:
                return candidate
        except OverflowError:
            continue
    return value


_FLOAT32 = Struct("<f")


def _java_sci(value: float) -> str:
    # repr() gives the shortest round-tripping digits, as Java's Double.toString does (JDK 19+);
    # only the layout differs: Java writes d.dddE<exp>.
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    exp10 = int(exponent) + len(digits) - 1
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{exp10}"


def envelope_bytes(schema: ConnectSchema | None, payload: Any, schemas_enable: bool) -> bytes | None:
    """``JsonConverter.fromConnectData`` for one key or value; ``None`` for a null record part."""
    parts = envelope_parts(schema, payload, schemas_enable)
    return None if parts is None else b"".join(parts)


def envelope_parts(
    schema: ConnectSchema | None, payload: Any, schemas_enable: bool
) -> tuple[bytes, ...] | None:
    """``envelope_bytes`` in pieces, for a writer that joins many records at once: the schema's
    kilobytes are copied once, into the joined output, instead of into each record's bytes first."""
    if schema is None and payload is None:
        return None
    body = orjson.dumps(schema.payload_for_json(payload) if schema is not None else payload)
    if not schemas_enable:
        return (body,)
    schema_json = schema.json_bytes if schema is not None else b"null"
    return (b'{"schema":', schema_json, b',"payload":', body, b"}")


def struct(
    name: str | None,
    fields: Mapping[str, ConnectSchema] | list[Field],
    *,
    optional: bool = False,
    version: int | None = None,
    doc: str | None = None,
) -> ConnectSchema:
    """Shorthand for a struct schema, fields in the given order."""
    members = tuple(fields) if isinstance(fields, list) else tuple(Field(k, v) for k, v in fields.items())
    return ConnectSchema("struct", optional=optional, name=name, version=version, doc=doc, fields=members)


def primitive(
    kind: str,
    optional: bool = False,
    name: str | None = None,
    version: int | None = None,
    parameters: Mapping[str, str] | None = None,
    default: Any = _NO_DEFAULT,
    doc: str | None = None,
) -> ConnectSchema:
    return ConnectSchema(
        kind,
        optional=optional,
        name=name,
        version=version,
        doc=doc,
        parameters=tuple(parameters.items()) if parameters is not None else None,
        default=default,
    )


NO_DEFAULT = _NO_DEFAULT


# JsonConverter's schema type names that differ from Connect's (the inverse of _JSON_TYPE_NAMES).
_CONNECT_TYPE_NAMES = {v: k for k, v in _JSON_TYPE_NAMES.items()}
_SCHEMA_TYPES = frozenset(
    {"int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string", "bytes"}
    | {"array", "map", "struct"}
)


def schema_from_json(node: Any) -> ConnectSchema:
    """The Connect schema a JsonConverter schema node describes (``JsonConverter.asConnectSchema``):
    what a consumer of the connector's topics rebuilds from each record's own ``schema``. Raises
    ``ValueError`` naming what is wrong for a node that is not a Connect schema."""
    if not isinstance(node, Mapping):
        raise ValueError(f"a schema must be a JSON object, got {type(node).__name__}")
    kind = _CONNECT_TYPE_NAMES.get(str(node.get("type")), str(node.get("type")))
    if kind not in _SCHEMA_TYPES:
        raise ValueError(f"unknown schema type {node.get('type')!r}")
    fields = None
    if kind == "struct":
        members = node.get("fields")
        if not isinstance(members, list):
            raise ValueError("a struct schema needs a 'fields' list")
        fields = tuple(Field(str(m.get("field")), schema_from_json(m)) for m in members)
    parameters = node.get("parameters")
    return ConnectSchema(
        kind,
        optional=bool(node.get("optional", False)),
        name=node.get("name"),
        version=node.get("version"),
        doc=node.get("doc"),
        parameters=tuple((str(k), str(v)) for k, v in parameters.items())
        if isinstance(parameters, Mapping)
        else None,
        default=node.get("default", _NO_DEFAULT),
        fields=fields,
        items=schema_from_json(node["items"]) if kind == "array" else None,
        keys=schema_from_json(node["keys"]) if kind == "map" else None,
        values=schema_from_json(node["values"]) if kind == "map" else None,
    )
