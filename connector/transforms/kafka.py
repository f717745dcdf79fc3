"""Kafka Connect's own transforms (``org.apache.kafka.connect.transforms``), for records with schemas
(every record of this connector has them), with Kafka 4's behaviour as Debezium 3.6's embedded
engine runs it (recorded in ``tests/golden/debezium/transforms/kafka_*.jsonl``).

``$Key``/``$Value`` variants work on the record's key or value. A null key or value passes
unchanged, as in Kafka (a tombstone keeps its null value through ``ReplaceField``/``InsertField``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Self, TypeVar

from connector.transforms.base import Options, TransformError, replace_first, struct_like
from connector.transforms.settings import (
    InsertFieldSettings,
    RegexRouterSettings,
    ReplaceFieldSettings,
    extract_field_name,
    value_to_key_fields,
)
from mysql_cdc_base.connect import ConnectSchema, Field
from mysql_cdc_base.records import ChangeRecord

_OPTIONAL_STRING = ConnectSchema("string", optional=True)
_STRING = ConnectSchema("string")


class _Part:
    """Which half of the record a ``$Key``/``$Value`` transform works on."""

    def __init__(self, is_key: bool) -> None:
        self.is_key = is_key

    def get(self, record: ChangeRecord) -> tuple[ConnectSchema | None, Any]:
        return (record.key_schema, record.key) if self.is_key else (record.value_schema, record.value)

    def put(self, record: ChangeRecord, schema: ConnectSchema | None, value: Any) -> ChangeRecord:
        if self.is_key:
            return replace(record, key_schema=schema, key=value)
        return replace(record, value_schema=schema, value=value)


KEY, VALUE = _Part(True), _Part(False)

_T = TypeVar("_T")


class _KeyOrValue:
    """Kafka's ``$Key`` and ``$Value`` variants of one transform class (the factory table's entries)."""

    part: _Part
    _derived: dict[int, tuple[ConnectSchema, Any]]  # by id of the struct schema (``_for_schema``)

    def __init__(self, options: Options, part: _Part) -> None:
        raise NotImplementedError

    @classmethod
    def key(cls, options: Options) -> Self:
        return cls(options, KEY)

    @classmethod
    def value(cls, options: Options) -> Self:
        return cls(options, VALUE)

    def _struct(self, record: ChangeRecord) -> tuple[ConnectSchema, dict[str, Any]] | None:
        """The part's schema and value when the part is a struct; None: the record passes as it is."""
        schema, value = self.part.get(record)
        if value is None or schema is None or schema.fields is None:
            return None
        return schema, value

    def _for_schema(self, schema: ConnectSchema, build: Callable[[ConnectSchema], _T]) -> _T:
        """``build(schema)``, kept per struct schema (the records of a table share theirs)."""
        cached = self._derived.get(id(schema))
        if cached is None or cached[0] is not schema:
            cached = (schema, build(schema))
            self._derived[id(schema)] = cached
        result: _T = cached[1]
        return result


class RegexRouter:
    """``regex`` matching the whole topic → ``replacement`` (Java ``$1`` groups)."""

    def __init__(self, options: Options) -> None:
        options.check_options(frozenset({"regex", "replacement"}))
        settings = RegexRouterSettings.from_options(options)
        self.pattern = settings.pattern
        self.replacement = settings.replacement

    def apply(self, record: ChangeRecord) -> ChangeRecord | None:
        topic = replace_first(self.pattern, self.replacement, record.topic)
        return record if topic is None else replace(record, topic=topic)


class Filter:
    """Drops every record it is applied to (use it with a predicate)."""

    def __init__(self, options: Options) -> None:
        options.check_options(frozenset())

    def apply(self, record: ChangeRecord) -> ChangeRecord | None:
        return None


class ReplaceField(_KeyOrValue):
    """``exclude`` / ``include`` field names, ``renames`` (``old:new,...``) of the key or value struct."""

    def __init__(self, options: Options, part: _Part) -> None:
        options.check_options(
            frozenset(
                {"exclude", "include", "renames", "blacklist", "whitelist", "replace.null.with.default"}
            )
        )
        self.part = part
        settings = ReplaceFieldSettings.from_options(options)
        self.exclude = set(settings.exclude)
        self.include = set(settings.include)
        self.renames: dict[str, str] = dict(settings.renames)
        self._derived = {}

    def _keep(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def _replaced(self, schema: ConnectSchema) -> tuple[ConnectSchema, tuple[tuple[str, str], ...]]:
        """The struct schema with the fields kept and renamed, and the (old, new) name of each."""
        kept = [f for f in schema.fields or () if self._keep(f.name)]
        moves = tuple((f.name, self.renames.get(f.name, f.name)) for f in kept)
        fields = tuple(Field(new, f.schema) for f, (_, new) in zip(kept, moves, strict=True))
        return struct_like(schema, fields), moves

    def apply(self, record: ChangeRecord) -> ChangeRecord | None:
        struct = self._struct(record)
        if struct is None:
            return record
        schema, value = struct
        new_schema, moves = self._for_schema(schema, self._replaced)
        return self.part.put(record, new_schema, {new: value.get(old) for old, new in moves})


class InsertField(_KeyOrValue):
    """Appends ``topic.field`` (the topic), ``partition.field`` and ``static.field`` = ``static.value``."""

    def __init__(self, options: Options, part: _Part) -> None:
        options.check_options(
            frozenset(
                {
                    "topic.field",
                    "partition.field",
                    "static.field",
                    "static.value",
                    "replace.null.with.default",
                }
            )
        )
        settings = InsertFieldSettings.from_options(options)
        self.part = part
        self.topic = settings.topic
        self.partition = settings.partition
        self.static = settings.static
        self.static_value = settings.static_value
        inserts: list[tuple[str, bool, ConnectSchema, Callable[[ChangeRecord], Any]]] = []
        if self.topic is not None:
            inserts.append((*self.topic, ConnectSchema("string"), lambda r: r.topic))
        if self.partition is not None:
            inserts.append((*self.partition, ConnectSchema("int32"), lambda r: r.partition))
        if self.static is not None:
            value = self.static_value
            inserts.append((*self.static, ConnectSchema("string"), lambda r: value))
        self.inserts = tuple(
            (name, replace(schema, optional=not required), get) for name, required, schema, get in inserts
        )
        self._derived = {}

    def _inserted(self, schema: ConnectSchema) -> ConnectSchema:
        """The struct schema with the inserted fields after its own."""
        return struct_like(schema, (*(schema.fields or ()), *(Field(name, s) for name, s, _ in self.inserts)))

    def apply(self, record: ChangeRecord) -> ChangeRecord | None:
        struct = self._struct(record)
        if struct is None:
            return record
        schema, value = struct
        updated = dict(value)
        for name, _, get in self.inserts:
            updated[name] = get(record)
        return self.part.put(record, self._for_schema(schema, self._inserted), updated)


class ValueToKey:
    """The key becomes a struct of the value's ``fields``."""

    def __init__(self, options: Options) -> None:
        options.check_options(frozenset({"fields", "replace.null.with.default"}))
        self.fields = list(value_to_key_fields(options))
        self.alias = options.prefix
        self._cache: dict[int, tuple[ConnectSchema, ConnectSchema]] = {}

    def apply(self, record: ChangeRecord) -> ChangeRecord | None:
        schema, value = record.value_schema, record.value
        if value is None or schema is None:
            raise TransformError(
                f"{self.alias}: only Struct objects supported for [copying fields from value to key], "
                f"found: null (topic {record.topic})"
            )
        cached = self._cache.get(id(schema))
        if cached is None or cached[0] is not schema:
            members = []
            for name in self.fields:
                found = schema.field(name)
                if found is None:
                    raise TransformError(
                        f"{self.alias}: {name} is not a valid field name (topic {record.topic})"
                    )
                members.append(found)
            cached = (schema, ConnectSchema("struct", fields=tuple(members)))
            self._cache[id(schema)] = cached
        return replace(record, key_schema=cached[1], key={name: value.get(name) for name in self.fields})


class ExtractField(_KeyOrValue):
    """The key or value becomes one of its fields."""

    def __init__(self, options: Options, part: _Part) -> None:
        options.check_options(frozenset({"field", "field.syntax.version", "replace.null.with.default"}))
        self.field = extract_field_name(options)
        self.part = part
        self.alias = options.prefix

    def apply(self, record: ChangeRecord) -> ChangeRecord | None:
        schema, value = self.part.get(record)
        if schema is None:
            return self.part.put(record, None, value.get(self.field) if isinstance(value, dict) else None)
        found = schema.field(self.field)
        if found is None:
            raise TransformError(f"{self.alias}: unknown field {self.field} (topic {record.topic})")
        return self.part.put(record, found.schema, None if value is None else value.get(self.field))


__all__ = ["ExtractField", "Filter", "InsertField", "RegexRouter", "ReplaceField", "ValueToKey"]
