"""Debezium's ``io.debezium.transforms.ExtractNewRecordState`` ("unwrap"): the change event's row image
becomes the record value, with Debezium 3.6's options and output (recorded in
``tests/golden/debezium/transforms/unwrap_*.jsonl``).

* ``delete.tombstone.handling.mode``: ``tombstone`` (default: a delete becomes a record with a null
  value and the row's schema, Debezium's tombstone is dropped), ``drop`` (both dropped), ``rewrite``
  (the delete becomes its ``before`` image plus ``__deleted: "true"``, every other record gets
  ``"false"``; tombstones dropped), ``rewrite-with-tombstone`` (the same, tombstones kept),
  ``delete-to-tombstone`` (the delete becomes a real tombstone: null value and no schema; Debezium's
  tombstone dropped).
* ``add.fields`` / ``add.headers``: ``op``, ``ts_ms``, ``ts_us``, ``ts_ns`` (the envelope's),
  ``source.<f>`` or a bare source field name (``table``, ``db``, ...), ``transaction.<f>``; each as
  ``<prefix><struct>_<f>`` (``__source_ts_ms``) or ``<prefix><f>`` for bare names, or ``f:NEW``.
  Fields are appended after ``__deleted``, optional, with the envelope field's type.
* ``route.by.field``: the row's field (``after``, ``before`` for deletes) becomes the topic.
* Debezium 2.x's ``drop.tombstones`` / ``delete.handling.mode`` (removed in 3.0; Debezium 3.6 ignores
  them) are refused at start-up, naming ``delete.tombstone.handling.mode`` to use instead.
* ``add.headers`` on a kept tombstone: taken from the delete event just before it, ``op`` as ``"d"``.

Records that are not change events (schema changes, heartbeats, transaction records) pass unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from connector.transforms.base import Options, TransformError
from connector.transforms.settings import UNWRAP_MODES, UnwrapSettings
from mysql_cdc_base.connect import ConnectSchema, Field
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.records import ChangeRecord, Header, RecordKind

MODES = UNWRAP_MODES
DELETED_FIELD = "__deleted"
_ENVELOPE_FIELDS = frozenset({"op", "ts_ms", "ts_us", "ts_ns"})
_TRANSACTION_FIELDS = frozenset({"id", "total_order", "data_collection_order"})
OPTIONS = frozenset(
    {
        "delete.tombstone.handling.mode",
        "route.by.field",
        "add.fields",
        "add.fields.prefix",
        "add.headers",
        "add.headers.prefix",
        "replace.null.with.default",
    }
)
_DELETED_SCHEMA = ConnectSchema("string", optional=True)


@dataclass(frozen=True)
class FieldReference:
    """One entry of ``add.fields``/``add.headers``: where the value is and what it is called."""

    struct: str | None  # None: the envelope itself; "source"; "transaction"
    field: str
    new_name: str

    @classmethod
    def parse(cls, spec: str, prefix: str) -> FieldReference:
        path, _, rename = spec.partition(":")
        head, dot, tail = path.strip().partition(".")
        if not dot:
            return cls(_struct_of(head), head, prefix + (rename.strip() or head))
        return cls(head, tail, prefix + (rename.strip() or f"{head}_{tail}"))

    def schema(self, envelope: ConnectSchema) -> ConnectSchema | None:
        holder: ConnectSchema | None = envelope
        if self.struct is not None:
            member = envelope.field(self.struct)
            holder = member.schema if member is not None else None
        found = holder.field(self.field) if holder is not None else None
        if found is None:
            return None
        # Kafka's SchemaUtil.copySchemaBasics(...).optional(): no default, optional
        s = found.schema
        return ConnectSchema(
            s.type,
            optional=True,
            name=s.name,
            version=s.version,
            doc=s.doc,
            parameters=s.parameters,
            fields=s.fields,
            items=s.items,
            keys=s.keys,
            values=s.values,
        )

    def value(self, envelope: dict[str, Any]) -> Any:
        holder = envelope if self.struct is None else envelope.get(self.struct)
        return holder.get(self.field) if isinstance(holder, dict) else None


def _struct_of(field: str) -> str | None:
    if field in _ENVELOPE_FIELDS:
        return None
    if field in _TRANSACTION_FIELDS:
        return "transaction"
    return "source"


_REMOVED = {
    "drop.tombstones": "delete.tombstone.handling.mode (tombstone keeps them, drop removes them)",
    "delete.handling.mode": "delete.tombstone.handling.mode (rewrite, rewrite-with-tombstone, drop, "
    "delete-to-tombstone)",
}


def _refuse_removed(options: Options) -> None:
    """Debezium 2.x's ``drop.tombstones`` / ``delete.handling.mode`` were removed in 3.0: Debezium 3.6
    ignores them (its output is then the default mode's, as the recording ``unwrap_legacy_options``
    shows), so a pasted 2.x configuration would silently change shape. Refused, naming the replacement."""
    for name, replacement in _REMOVED.items():
        if options.get(name) is not None:
            raise ConfigError(
                options.key(name),
                f"was removed in Debezium 3.0 (Debezium 3.6 ignores it); use {options.prefix}{replacement}",
            )


class ExtractNewRecordState:
    def __init__(self, options: Options) -> None:
        options.check_options(OPTIONS)
        _refuse_removed(options)
        settings = UnwrapSettings.from_options(options)
        self.mode = settings.mode
        self.rewrite = self.mode.startswith("rewrite")
        self.keep_tombstones = self.mode == "rewrite-with-tombstone"
        self.route_by = settings.route_by
        self.options = options
        self.fields = tuple(FieldReference.parse(f, settings.fields_prefix) for f in settings.add_fields)
        self.headers = tuple(FieldReference.parse(f, settings.headers_prefix) for f in settings.add_headers)
        self._last_delete: tuple[Any, ConnectSchema, dict[str, Any]] | None = None
        self._schemas: dict[tuple[int, bool], tuple[ConnectSchema, ConnectSchema]] = {}

    def apply(self, record: ChangeRecord) -> ChangeRecord | None:
        if record.kind is RecordKind.TOMBSTONE or (record.value is None and record.value_schema is None):
            if not self.keep_tombstones:
                return None
            return (
                replace(record, headers=record.headers + self._tombstone_headers(record))
                if self.headers
                else record
            )
        schema = record.value_schema
        if (
            record.kind is not RecordKind.DATA
            or schema is None
            or not (schema.name or "").endswith(".Envelope")
        ):
            return record
        envelope: dict[str, Any] = record.value
        op = envelope.get("op")
        if op == "t":
            return None  # a truncate carries no row: Debezium's unwrap drops it
        headers = record.headers + self._headers(schema, envelope)
        if op == "d":
            self._last_delete = (record.key, schema, envelope)
        image_field = "before" if op == "d" else "after"
        row = envelope.get(image_field)
        if op == "d" and not self.rewrite:
            if self.mode == "drop":
                return None
            if self.mode == "delete-to-tombstone":
                return replace(
                    record, value_schema=None, value=None, headers=headers, kind=RecordKind.TOMBSTONE
                )
            before = schema.field("before")
            return replace(
                record, value_schema=before.schema if before else None, value=None, headers=headers
            )
        value_schema = self._schema(schema, image_field)
        value = dict(row or {})
        if self.rewrite:
            value[DELETED_FIELD] = "true" if op == "d" else "false"
        for ref in self.fields:
            value[ref.new_name] = ref.value(envelope)
        topic = record.topic
        if self.route_by is not None:
            topic = self._route(record, value)
        return replace(record, topic=topic, value_schema=value_schema, value=value, headers=headers)

    def _schema(self, envelope: ConnectSchema, image_field: str) -> ConnectSchema:
        key = (id(envelope), image_field == "before")
        cached = self._schemas.get(key)
        if cached is not None and cached[0] is envelope:
            return cached[1]
        image = envelope.field(image_field)
        assert image is not None and image.schema.fields is not None
        extra = [Field(DELETED_FIELD, _DELETED_SCHEMA)] if self.rewrite else []
        for ref in self.fields:
            field_schema = ref.schema(envelope)
            if field_schema is not None:
                extra.append(Field(ref.new_name, field_schema))
        built = replace(image.schema, optional=False, fields=image.schema.fields + tuple(extra))
        self._schemas[key] = (envelope, built)
        return built

    def _headers(self, schema: ConnectSchema, envelope: dict[str, Any]) -> tuple[Header, ...]:
        return tuple(
            Header(ref.new_name, ref.value(envelope), ref.schema(schema))
            for ref in self.headers
            if ref.schema(schema) is not None
        )

    def _tombstone_headers(self, record: ChangeRecord) -> tuple[Header, ...]:
        """Debezium gives a tombstone the headers of its delete event (the record just before it),
        ``op`` as a required ``"d"``."""
        last, self._last_delete = self._last_delete, None
        out = []
        for ref in self.headers:
            if ref.struct is None and ref.field == "op":
                out.append(Header(ref.new_name, "d", ConnectSchema("string")))
            elif last is not None and last[0] == record.key:
                out.append(Header(ref.new_name, ref.value(last[2]), ref.schema(last[1])))
        return tuple(out)

    def _route(self, record: ChangeRecord, value: dict[str, Any]) -> str:
        assert self.route_by is not None
        if self.route_by not in value:
            raise TransformError(
                f"{self.options.key('route.by.field')}: {self.route_by} is not a valid field name "
                f"of the records on topic {record.topic}"
            )
        return str(value[self.route_by])
