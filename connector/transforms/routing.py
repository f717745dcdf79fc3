"""Debezium's ``io.debezium.transforms.ByLogicalTableRouter``: records of several physical tables
(shards) go to one logical topic (recorded in ``tests/golden/debezium/transforms/logical_router*.jsonl``).

``topic.regex`` must match the whole topic; ``topic.replacement`` (Java ``$1`` groups) gives the new
topic. The key and value schemas are renamed after it (``<topic>.Key``, ``<topic>.Envelope``, the row
structs ``<topic>.Value``), and with ``key.enforce.uniqueness`` (default true) the key gets one more
field, ``key.field.name`` (default ``__dbz__physicalTableIdentifier``), holding the original topic, or
``key.field.regex``/``key.field.replacement`` applied to it, so that rows of different shards with
the same primary key stay distinct. Other records (schema changes, heartbeats) pass unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from connector.transforms.base import Options, replace_first
from connector.transforms.settings import RouterSettings
from mysql_cdc_base.connect import ConnectSchema, Field
from mysql_cdc_base.records import ChangeRecord

OPTIONS = frozenset(
    {
        "topic.regex",
        "topic.replacement",
        "key.enforce.uniqueness",
        "key.field.name",
        "key.field.regex",
        "key.field.replacement",
        "logical.table.cache.size",
        "schema.name.adjustment.mode",
    }
)


class ByLogicalTableRouter:
    def __init__(self, options: Options) -> None:
        options.check_options(OPTIONS)
        self.settings = RouterSettings.from_options(options)
        self._keys: dict[tuple[int, str], tuple[ConnectSchema, ConnectSchema]] = {}
        self._values: dict[tuple[int, str], tuple[ConnectSchema, ConnectSchema]] = {}

    def apply(self, record: ChangeRecord) -> ChangeRecord | None:
        topic = replace_first(self.settings.topic_regex, self.settings.topic_replacement, record.topic)
        if topic is None:
            return record
        key_schema, key = self._key(record, topic)
        value_schema = self._value_schema(record.value_schema, topic)
        return replace(record, topic=topic, key_schema=key_schema, key=key, value_schema=value_schema)

    def _key_field_value(self, old_topic: str) -> str:
        if self.settings.key_field_regex is not None:
            replaced = replace_first(
                self.settings.key_field_regex, self.settings.key_field_replacement, old_topic
            )
            if replaced is not None:
                return replaced
        return old_topic

    def _key(self, record: ChangeRecord, topic: str) -> tuple[ConnectSchema | None, Any]:
        schema = record.key_schema
        if schema is None or schema.fields is None:
            return schema, record.key
        cache_key = (id(schema), topic)
        cached = self._keys.get(cache_key)
        if cached is None or cached[0] is not schema:
            fields = schema.fields
            if self.settings.enforce_key:
                fields = fields + (Field(self.settings.key_field, ConnectSchema("string")),)
            cached = (schema, replace(schema, name=f"{topic}.Key", fields=fields))
            self._keys[cache_key] = cached
        key = record.key
        if self.settings.enforce_key and isinstance(key, dict):
            key = {**key, self.settings.key_field: self._key_field_value(record.topic)}
        return cached[1], key

    def _value_schema(self, schema: ConnectSchema | None, topic: str) -> ConnectSchema | None:
        if schema is None or schema.fields is None or not (schema.name or "").endswith(".Envelope"):
            return schema
        cache_key = (id(schema), topic)
        cached = self._values.get(cache_key)
        if cached is None or cached[0] is not schema:
            fields = tuple(
                Field(f.name, replace(f.schema, name=f"{topic}.Value"))
                if f.name in ("before", "after")
                else f
                for f in schema.fields
            )
            cached = (schema, replace(schema, name=f"{topic}.Envelope", fields=fields))
            self._values[cache_key] = cached
        return cached[1]
