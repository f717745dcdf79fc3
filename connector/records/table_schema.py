"""A table structure's Connect schemas and compiled converters (``TableSchema``).

Built once per table structure by the ``EventBuilder``: the key, value and envelope schemas plus the
per-column converters compiled into one function per image, so the per-row work is one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from connector.records.column_mappers import SOURCE_TYPE_PARAMETER_PREFIX
from connector.records.conversion import ColumnConverter, identity, null_rule_of
from ddl.model import Table
from mysql_cdc_base.connect import ConnectSchema


@dataclass(frozen=True)
class TableSchema:
    """Connect schemas and converters for one table structure."""

    table: Table
    topic: str
    key_schema: ConnectSchema | None
    value_schema: ConnectSchema
    envelope_schema: ConnectSchema
    # (index into the table's columns, field name, converter) for each emitted column.
    value_columns: tuple[tuple[int, str, ColumnConverter], ...]
    key_fields: tuple[str, ...]
    # (column index, Python codec) that mysql-replication must decode text columns with.
    binlog_encodings: tuple[tuple[int, str], ...] = field(default=(), repr=False)
    _binlog: tuple[tuple[int, str, Callable[[Any], Any]], ...] = field(default=(), repr=False)
    _snapshot: tuple[tuple[int, str, Callable[[Any], Any]], ...] = field(default=(), repr=False)
    _convert_binlog: Callable[[Sequence[Any]], dict[str, Any]] = field(default=dict, repr=False)
    _convert_snapshot: Callable[[Sequence[Any]], dict[str, Any]] = field(default=dict, repr=False)
    _key_from_value: Callable[[Mapping[str, Any]], dict[str, Any]] = field(default=dict, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "binlog_encodings",
            tuple((i, c.binlog_encoding) for i, _, c in self.value_columns if c.binlog_encoding),
        )
        object.__setattr__(self, "_binlog", tuple((i, n, c.from_binlog) for i, n, c in self.value_columns))
        object.__setattr__(
            self, "_snapshot", tuple((i, n, c.from_snapshot) for i, n, c in self.value_columns)
        )
        object.__setattr__(self, "_convert_binlog", compile_image_converter(self._binlog))
        object.__setattr__(self, "_convert_snapshot", compile_image_converter(self._snapshot))
        object.__setattr__(self, "_key_from_value", compile_key_extractor(self.key_fields))

    # Converters get nulls too: a NOT NULL column's null (a zero date) becomes its default/fallback.
    def value_from_binlog(self, values: Sequence[Any]) -> dict[str, Any]:
        return self._convert_binlog(values)

    def value_from_snapshot(self, values: Sequence[Any]) -> dict[str, Any]:
        return self._convert_snapshot(values)

    def key_of(self, value: Mapping[str, Any]) -> dict[str, Any] | None:
        if self.key_schema is None:
            return None
        return self._key_from_value(value)

    # ``value_from_binlog``/``value_from_snapshot`` as the function that does the work, for a loop
    # over an event's rows (one call per image instead of two).
    @property
    def binlog_image_converter(self) -> Callable[[Sequence[Any]], dict[str, Any]]:
        return self._convert_binlog

    @property
    def snapshot_image_converter(self) -> Callable[[Sequence[Any]], dict[str, Any]]:
        return self._convert_snapshot

    @property
    def binlog_payload_display(self) -> Callable[[dict[str, Any], Callable[[int], str]], str] | None:
        """For a row decoder that builds the payload as it reads an image: ``payload_display`` of
        this table's binlog converters (namespace, value_of -> the payload's dict display); None
        when the payload is built another way (``binlog_image_converter`` converts the image)."""
        return self._binlog_payload_display

    def _binlog_payload_display(self, namespace: dict[str, Any], value_of: Callable[[int], str]) -> str:
        return payload_display(namespace, self._binlog, value_of)


def compile_key_extractor(fields: Sequence[str]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """One function building a row's key payload from its value payload (a dict display of the key
    fields in key order), generated once per table structure like ``compile_image_converter``."""
    namespace: dict[str, Any] = {}
    items = ", ".join(f"{name!r}: value.get({name!r})" for name in fields)
    exec(compile(f"def key_of(value):\n    return {{{items}}}", "<row key extractor>", "exec"), namespace)  # noqa: S102
    extractor: Callable[[Mapping[str, Any]], dict[str, Any]] = namespace["key_of"]
    return extractor


def compile_image_converter(
    columns: Sequence[tuple[int, str, Callable[[Any], Any]]],
) -> Callable[[Sequence[Any]], dict[str, Any]]:
    """One function turning a row image (values in table column order) into its value payload:
    a dict display with every emitted column in order, calling only the converters that are not
    ``identity``. Generated once per table structure; per row it saves a loop, a call per column
    and a tuple unpacking per column over the equivalent dict comprehension."""
    namespace: dict[str, Any] = {}
    display = payload_display(namespace, columns, "values[{}]".format)
    exec(
        compile(f"def convert_image(values):\n    return {display}", "<row image converter>", "exec"),
        namespace,
    )  # noqa: S102
    converter: Callable[[Sequence[Any]], dict[str, Any]] = namespace["convert_image"]
    return converter


def payload_display(
    namespace: dict[str, Any],
    columns: Sequence[tuple[int, str, Callable[[Any], Any]]],
    value_of: Callable[[int], str],
) -> str:
    """The dict display (Python source) of a row's value payload: each emitted column's converted
    value in order, where ``value_of(index)`` is the expression holding the image's value of column
    ``index``. The converters it calls are put into ``namespace`` (as ``convert<n>`` and
    ``when_null<n>``, n the emitted column's number); the display assigns the local ``v``. Shared
    by ``compile_image_converter`` and the row decoder, which converts as it reads."""
    items = [
        f"{name!r}: {_converted_value(namespace, number, value_of(index), convert)}"
        for number, (index, name, convert) in enumerate(columns)
    ]
    return "{" + ", ".join(items) + "}"


def _converted_value(
    namespace: dict[str, Any], number: int, value: str, convert: Callable[[Any], Any]
) -> str:
    """The expression converting ``value`` (an expression) in a generated payload display; the
    constants it names go into ``namespace``. A guarded converter's null rule (``NullRule``) is
    written out in line, so a column costs one call (its conversion), or none for a null."""
    if convert is identity:
        return value
    rule = null_rule_of(convert)
    if rule is None:
        namespace[f"convert{number}"] = convert
        return f"convert{number}({value})"
    namespace[f"when_null{number}"] = rule.when_null
    converted = "v" if rule.convert is identity else f"convert{number}(v)"
    if rule.convert is not identity:
        namespace[f"convert{number}"] = rule.convert
    if rule.may_invalidate:  # an invalid value (None from the conversion) is a null too
        return f"(when_null{number} if (v := {value}) is None or (v := {converted}) is None else v)"
    return f"(when_null{number} if (v := {value}) is None else {converted})"


class RowImage(dict[str, Any]):
    """A row's value payload that also carries its message key, for tables whose key cannot be read
    from the value (a key column excluded by the column filters or changed by a column mapper)."""

    __slots__ = ("key",)

    def __init__(self, value: dict[str, Any], key: dict[str, Any]) -> None:
        super().__init__(value)
        self.key = key


@dataclass(frozen=True)
class DetachedKeyTableSchema(TableSchema):
    """A ``TableSchema`` whose key columns are converted on their own (Debezium builds key fields from
    the table's key columns, without column filters or mappers)."""

    # (column index, field name, converter without mappers) per key field.
    key_columns: tuple[tuple[int, str, ColumnConverter], ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        # Key columns outside the value need their text codec set on the library's columns too.
        known = {i for i, _ in self.binlog_encodings}
        extra = tuple(
            (i, c.binlog_encoding) for i, _, c in self.key_columns if c.binlog_encoding and i not in known
        )
        object.__setattr__(self, "binlog_encodings", self.binlog_encodings + extra)

    def value_from_binlog(self, values: Sequence[Any]) -> dict[str, Any]:
        return RowImage(
            {name: conv(values[i]) for i, name, conv in self._binlog},
            {name: c.from_binlog(values[i]) for i, name, c in self.key_columns},
        )

    def value_from_snapshot(self, values: Sequence[Any]) -> dict[str, Any]:
        return RowImage(
            {name: conv(values[i]) for i, name, conv in self._snapshot},
            {name: c.from_snapshot(values[i]) for i, name, c in self.key_columns},
        )

    @property
    def binlog_image_converter(self) -> Callable[[Sequence[Any]], dict[str, Any]]:
        return self.value_from_binlog

    @property
    def binlog_payload_display(self) -> None:
        return None  # the payload carries the key converted on its own (RowImage)

    @property
    def snapshot_image_converter(self) -> Callable[[Sequence[Any]], dict[str, Any]]:
        return self.value_from_snapshot

    def key_of(self, value: Mapping[str, Any]) -> dict[str, Any] | None:
        if isinstance(value, RowImage):
            return value.key
        return super().key_of(value)  # an image built by hand: the best the value can tell


def key_field_schema(schema: ConnectSchema) -> ConnectSchema:
    # Key fields are built without column mappers, so without propagated source-type parameters.
    params = schema.parameters
    if not params or not any(k.startswith(SOURCE_TYPE_PARAMETER_PREFIX) for k, _ in params):
        return schema
    kept = tuple((k, v) for k, v in params if not k.startswith(SOURCE_TYPE_PARAMETER_PREFIX))
    return replace(schema, parameters=kept or None)
