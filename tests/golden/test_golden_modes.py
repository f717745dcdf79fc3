"""Golden events for the event kinds and modes beyond the type families: transaction metadata
(BEGIN/END records and ``transaction`` blocks), the truncate event, a heartbeat record, and the
column mappers (mask, hash v1/v2, truncate) next to a custom message key.

Each case runs a fresh engine against a real server on the workload of ``workloads.CASES`` and
compares every record it produced (the JSON-lines form: topic, key and value with schemas, headers;
schema changes included) with what real Debezium 3.6.3 emitted for the same workload and properties,
``tests/golden/debezium/modes/<case>.jsonl`` (recorded by ``python -m tests.golden.record_debezium``),
after the normalisation of ``compare.py`` (per-run fields only, transaction ids included). Any other
difference fails with a per-record diff unless ``KNOWN`` below lists it with its reason.

Two adjustments of the recording, both to what the workload can reproduce:

* Schema changes of other databases are left out on both sides: Debezium's snapshot records the DDL
  of every database on the server (``schema.history.internal.store.only.captured.databases.ddl``
  is false by default), and the test session's server holds other tests' databases.
* ``heartbeat``: our test triggers one more heartbeat after the one that follows the snapshot (an
  interval of 600000 ms never elapses in a test); Debezium's recording has only the latter, so the
  expected records are the recording plus a copy of its heartbeat (a heartbeat carries nothing but
  its topic, ``serverName`` and ``ts_ms``).

Rules behind the expected lines (Debezium 3.6.1.Final; sections of shared/docs/debezium-reference.md,
Debezium classes in brackets):

* ``transaction_metadata`` (1.11, 3e [``TransactionMonitor``, ``TransactionContext``,
  ``BinlogOffsetContext``]): BEGIN on ``<prefix>.transaction`` when the transaction starts (MariaDB: its
  non-standalone GTID event), key ``TransactionMetadataKey {id}``, value ``TransactionMetadataValue``
  with ``event_count``/``data_collections`` null; every data event gets ``transaction {id,
  total_order, data_collection_order}`` counted over emitted events (the tombstone after the delete does not
  count); END with ``event_count`` = 5 and ``data_collections`` in Java HashMap order; id = the GTID
  (``domain-server-seq``). Transaction records carry no headers (bare ``SourceRecord``s).
  ``TRUNCATE TABLE`` with ``skipped.operations=none`` is ``op: t`` with null key/key schema, null
  before/after, and ``transaction: null`` (a DDL statement has no BEGIN, so no transaction id).
* ``heartbeat`` (1.10, 3f [``HeartbeatImpl``]): topic ``__debezium-heartbeat.<prefix>``, key
  ``io.debezium.connector.common.ServerNameKey {serverName}``, value
  ``io.debezium.connector.common.Heartbeat {ts_ms}``, no headers. One heartbeat right after the
  snapshot completes (1.10: "one heartbeat is also emitted right after the snapshot"), then one per
  interval (here triggered directly).
* ``column_mappers`` (2.2 [``ColumnMappers``, ``MaskStrings``, ``TruncateColumn``, ``TableSchemaBuilder``]):
  ``column.mask.with.4.chars`` → ``****`` also for NULL (the mask converter ignores its input) and an
  unchanged INT with parameter ``masked=true``; ``column.mask.hash.SHA-256.with.salt.<s>`` → hex of
  SHA-256(salt, ObjectOutputStream bytes of the string), 64 chars fit VARCHAR(100); ``v2.MD5`` → hex of
  MD5(salt, UTF-8 bytes) cut to CHAR(8); ``column.truncate.to.5.chars`` → TEXT cut to 5 chars and
  VARBINARY(16) bytes cut to 5 bytes, parameter ``truncateLength=5``; ``column.propagate.source.type``
  parameters on an unmapped column. ``message.key.columns`` makes the hashed column the key, and the
  key keeps the real value and a plain schema (key fields are built without mappers), so changing it
  is a key change: delete (header ``__debezium.newkey``) + tombstone + create (``__debezium.oldkey``).
  The hash values were checked against Java's own ``MessageDigest``/``ObjectOutputStream``
  (tests/connector/records/test_column_mappers.py runs that oracle).
* ``savepoints``: a SAVEPOINT statement inside a transaction neither ends it nor is a schema change.
* ``savepoint_rollback_buffered`` (``binlog.buffer.size``): the rows a ROLLBACK TO undid are not
  emitted (``UNEMITTED``: Debezium emits them; the test checks MySQL lacks the row).
* ``skip_unchanged`` (``skip.messages.without.change`` with ``column.exclude.list``, and
  ``streaming.delay.ms``): an update of excluded columns only is not emitted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.records import jsonl_line
from sink.memory import MemorySink
from tests.golden.compare import Known, compare, load, own_database, recording
from tests.golden.golden_support import snapshot_data_unless_engine_did
from tests.golden.workloads import CASES, golden_config, mode_db, run_statements

# Differences from Debezium we keep on purpose (each with its reason). Everything else fails.
KNOWN: list[Known] = []


@dataclass(frozen=True)
class Unemitted:
    """Debezium records of a case we do not emit on purpose, with the reason."""

    reason: str
    debezium_only: Callable[[dict[str, Any]], bool]
    # A row MySQL never committed (table, id): the test checks the server lacks it.
    absent_row: tuple[str, int] | None = None


def _row(table: str, id_: int) -> Callable[[dict[str, Any]], bool]:
    def matches(record: dict[str, Any]) -> bool:
        payload = (record.get("value") or {}).get("payload") or {}
        after = payload.get("after") if isinstance(payload, dict) else None
        return str(record.get("topic", "")).endswith(f".{table}") and str((after or {}).get("id")) == str(id_)

    return matches


def _ddl(prefix: str) -> Callable[[dict[str, Any]], bool]:
    def matches(record: dict[str, Any]) -> bool:
        payload = (record.get("value") or {}).get("payload") or {}
        return isinstance(payload, dict) and str(payload.get("ddl", "")).upper().startswith(prefix)

    return matches


_ROLLED_BACK = (
    "binlog.buffer.size: the binlog holds a row rolled back to a savepoint (a transaction that also "
    "wrote a MyISAM table) followed by ROLLBACK TO; Debezium's buffer passes ROLLBACK TO on and emits "
    "the row, which MySQL does not have. Ours drops it (connector.sources.transaction_buffer)."
)
UNEMITTED: dict[str, list[Unemitted]] = {
    "savepoint_rollback_buffered": [
        Unemitted(_ROLLED_BACK, _row("t", 4), absent_row=("t", 4)),
        Unemitted(
            "Debezium hands ROLLBACK TO to its DDL parser, which records it on the schema change topic "
            "with no table changes; it changes no structure, so we do not emit it.",
            _ddl("ROLLBACK TO"),
        ),
    ]
}


def _one_more(ours: Any, theirs: Any) -> bool:
    """Debezium's count or order is ours plus the one rolled-back row."""
    return str(ours).isdigit() and str(theirs) == str(int(str(ours)) + 1)


KNOWN_BY_CASE: dict[str, list[Known]] = {
    "savepoint_rollback_buffered": [
        Known(
            "END event counts without the rolled-back row",
            _ROLLED_BACK,
            r"\.value\.payload\.(event_count|data_collections\[\d+\]\.event_count)",
            _one_more,
        ),
        Known(
            "transaction order after the rolled-back row",
            _ROLLED_BACK,
            r"\.value\.payload\.transaction\.(total_order|data_collection_order)",
            _one_more,
        ),
    ]
}


@pytest.mark.parametrize("case", list(CASES))
def test_golden_modes(mysql_server: LocalMySQLServer, tmp_path: Path, case: str) -> None:
    spec = CASES[case]
    db = mode_db(case)
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{db}`", f"CREATE DATABASE `{db}` CHARSET utf8mb4")
    memory = MemorySink()
    engine = Engine(golden_config(mysql_server, tmp_path, spec.properties(db)), sinks=[memory])
    unemitted = UNEMITTED.get(case, [])
    try:
        run_statements(mysql_server, spec.setup, db)
        engine.catch_up()
        if spec.snapshot_data:
            snapshot_data_unless_engine_did(engine, memory)
        if spec.stream:
            run_statements(mysql_server, spec.stream, db)
            engine.catch_up()
        if spec.heartbeat:
            assert engine.streaming is not None
            engine.streaming.emit_heartbeat()
        engine.delivery.flush()
        for absent in (u.absent_row for u in unemitted if u.absent_row is not None):
            assert not mysql_server.query(f"SELECT id FROM {absent[0]} WHERE id = {absent[1]}", db)
    finally:
        engine.close()
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{db}`")
    ours = own_database(load(jsonl_line(r) for r in memory.records), db)
    theirs = own_database(load(recording(f"modes/{case}.jsonl").read_bytes().splitlines()), db)
    for u in unemitted:
        assert any(u.debezium_only(r) for r in theirs), f"the recording no longer has: {u.reason}"
        theirs = [r for r in theirs if not u.debezium_only(r)]
    if spec.heartbeat:
        theirs.append(next(r for r in reversed(theirs) if r["topic"].startswith("__debezium-heartbeat.")))
    outcome = compare(f"modes/{case}.jsonl", ours, theirs, KNOWN + KNOWN_BY_CASE.get(case, []))
    assert outcome.ok, "\n".join(outcome.problems)
