"""Golden events for issue 43 part 1: ``topic.naming.strategy`` (Debezium's default and unicode
strategies, ``topic.delimiter``, ``topic.cache.size``, ``topic.transaction``) and
``schema.name.adjustment.mode``/``field.name.adjustment.mode`` (``avro``, ``avro_unicode``).

Each case of ``naming_workloads.NAMING_CASES`` snapshots tables whose names and columns need the
strategies and adjusters (underscore, dash, non-ASCII letter, leading digit), then streams changes,
a transaction, and a table created and altered while streaming; every record (data, transaction,
schema change with its ``tableChanges``) is compared with what real Debezium 3.6.3 emitted for the
same workload and properties (``tests/golden/debezium/naming/<case>.jsonl``, recorded by
``python -m tests.golden.record_debezium --naming CASE``). Any difference fails unless ``KNOWN``
lists it with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.records import jsonl_line
from sink.memory import MemorySink
from tests.golden.compare import Known, compare, load, own_database, recording
from tests.golden.golden_support import snapshot_data_unless_engine_did
from tests.golden.naming_workloads import NAMING_CASES, naming_db
from tests.golden.workloads import golden_config, run_statements

KNOWN: list[Known] = []
PREFIX = "golden"
HEARTBEAT_KEY = "io.debezium.connector.common.ServerNameKey"


@pytest.mark.parametrize("case", list(NAMING_CASES))
def test_golden_naming(mysql_server: LocalMySQLServer, tmp_path: Path, case: str) -> None:
    spec = NAMING_CASES[case]
    db = naming_db(case)
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{db}`", f"CREATE DATABASE `{db}` CHARSET utf8mb4")
    memory = MemorySink()
    engine = Engine(golden_config(mysql_server, tmp_path, spec.properties(db)), sinks=[memory])
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
    finally:
        engine.close()
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{db}`")
    ours = own_database(load(jsonl_line(r) for r in memory.records), db)
    theirs = own_database(load(recording(f"naming/{case}.jsonl").read_bytes().splitlines()), db)
    if spec.heartbeat:
        # One heartbeat after the snapshot in both; ours then emits one more (as in test_golden_modes).
        beats = [r for r in theirs if r["key"]["schema"]["name"] == HEARTBEAT_KEY]
        assert beats and all(r["topic"] != f"__debezium-heartbeat.{PREFIX}" for r in beats)
        theirs.append(beats[-1])
    else:
        # The recordings hold names the strategies rewrote: a test comparing records that were never
        # renamed would pass for the wrong reason.
        raw = {f"{PREFIX}.{db}.{t}" for t in ("order_lines", "t-ü", "1st", "new_tbl-2")}
        data_topics = {r["topic"] for r in theirs if str(schema_name(r)).endswith("Envelope")}
        assert data_topics and not data_topics & raw, data_topics
    outcome = compare(f"naming/{case}.jsonl", ours, theirs, KNOWN)
    assert outcome.ok, "\n".join(outcome.problems)


def schema_name(record: dict[str, Any]) -> str | None:
    value = record.get("value")
    schema = value.get("schema") if isinstance(value, dict) else None
    return schema.get("name") if isinstance(schema, dict) else None
