"""Helpers for the in-memory dispatcher tests: a scripted binlog over a fake connector's tables, and
ways to look at what it emitted."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from connector.testing.event_source import InMemoryBinlog
from connector.testing.fake import FakeConnector
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord, RecordKind, jsonl_line
from tests.golden.compare import load, recording

DB = "inventory"


def in_memory(
    *ddl: str,
    properties: Mapping[str, Any] | None = None,
    database: str = DB,
    flavor: str = "mysql",
    topic_prefix: str = "fake",
    start: SourceOffset | None = None,
) -> InMemoryBinlog:
    """An in-memory binlog whose stream starts with the tables of ``ddl`` (in ``database``)."""
    fake = FakeConnector(
        list(ddl), topic_prefix=topic_prefix, database=database, flavor=flavor, properties=properties
    )
    return InMemoryBinlog(fake, start=start)


def data(records: Iterable[ChangeRecord], op: str | None = None) -> list[ChangeRecord]:
    """The data change records (not tombstones), of ``op`` if given."""
    return [
        r
        for r in records
        if r.kind is RecordKind.DATA and r.value is not None and (op is None or r.value["op"] == op)
    ]


def of_kind(records: Iterable[ChangeRecord], kind: RecordKind) -> list[ChangeRecord]:
    return [r for r in records if r.kind is kind]


def shape(records: Iterable[ChangeRecord]) -> list[str]:
    """One word per record: its op, ``tombstone``, ``BEGIN``/``END``, ``schema`` or ``heartbeat``."""
    out = []
    for r in records:
        if r.kind is RecordKind.DATA:
            out.append(r.value["op"] if r.value is not None else "tombstone")
        elif r.kind is RecordKind.TOMBSTONE:
            out.append("tombstone")
        elif r.kind is RecordKind.TRANSACTION:
            out.append(r.value["status"])
        elif r.kind is RecordKind.SCHEMA_CHANGE:
            out.append("schema")
        else:
            out.append(r.kind.value)
    return out


def offset_map(record: ChangeRecord) -> dict[str, Any]:
    assert record.offset is not None, f"{record.topic}: no offset"
    return dict(record.offset.to_map())


def header_names(record: ChangeRecord) -> list[str]:
    return [h.name for h in record.headers]


def as_json(records: Sequence[ChangeRecord]) -> list[dict[str, Any]]:
    """Our records as Debezium's recordings hold them (the jsonl form, per-run fields blanked)."""
    return load(jsonl_line(r) for r in records)


def streamed_part(relative: str) -> list[dict[str, Any]]:
    """The records of a recording after its snapshot (no snapshot marker other than "false"), with
    the per-run fields blanked."""
    out = []
    for record in load(recording(relative).read_bytes().splitlines()):
        value = record.get("value")
        payload = value.get("payload") if isinstance(value, dict) else None
        source = payload.get("source") if isinstance(payload, dict) else None
        if isinstance(source, dict) and source.get("snapshot") not in (None, "false"):
            continue
        out.append(record)
    return out


def payloads(records: Sequence[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(r, default=str)[:300] for r in records)


def recorded_create_table(relative: str, table: str) -> str:
    """The CREATE TABLE text of ``table`` in a recording's snapshot (what SHOW CREATE TABLE gave
    Debezium), so the in-memory stream starts from the structure Debezium knew."""
    for record in load(recording(relative).read_bytes().splitlines()):
        value = record.get("value")
        payload = value.get("payload") if isinstance(value, dict) else None
        ddl = payload.get("ddl") if isinstance(payload, dict) else None
        if isinstance(ddl, str) and ddl.startswith(f"CREATE TABLE `{table}`"):
            return ddl
    raise LookupError(f"{relative} has no snapshot CREATE TABLE of {table}")
