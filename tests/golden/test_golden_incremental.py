"""Golden events for signal-triggered snapshots: incremental (both watermarking strategies, a composite
key with an additional condition, a signal table outside the include list, stop-snapshot) and
blocking, compared with what real Debezium 3.6.3 emitted for the same tables, signals and properties
(``tests/golden/debezium/incremental/<case>.jsonl``, recorded by ``python -m
tests.golden.record_incremental``; ``FACTS.md`` there summarises them).

Beyond ``compare.py``'s per-run fields, the window markers carry per-run values on both sides: the
chunk ids (random UUIDs) and the window timestamps in their ``data``. Ids become ``chunk-<n>`` in
order of appearance and timestamps are blanked, on both sides, so the marker rows, their order
relative to the snapshot rows and their tombstones (``insert_delete``) are still compared.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.records import jsonl_line
from sink.memory import MemorySink
from tests.golden.compare import Known, compare, load, own_database, recording
from tests.golden.record_incremental import BASE_PROPS, CASES, DB, SETUP
from tests.golden.workloads import golden_config, run_statements

# Differences from Debezium we keep on purpose (each with its reason). Everything else fails.
KNOWN: list[Known] = []

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_RECORDER_ONLY = ("max.batch.size", "offset.flush.interval.ms")


def normalise_markers(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chunk ids → ``chunk-<n>`` (order of appearance); window timestamps blanked."""
    names: dict[str, str] = {}

    def rename(text: str) -> str:
        return _UUID.sub(lambda m: names.setdefault(m.group(0), f"chunk-{len(names) + 1}"), text)

    for record in records:
        for part in ("key", "value"):
            node = record.get(part)
            payload = node.get("payload") if isinstance(node, dict) else None
            if not isinstance(payload, dict):
                continue
            images = [payload] if part == "key" else [payload.get("before"), payload.get("after")]
            for image in images:
                if not isinstance(image, dict):
                    continue
                if isinstance(image.get("id"), str):
                    image["id"] = rename(image["id"])
                if isinstance(image.get("data"), str) and "WindowTimestamp" in image["data"]:
                    data = json.loads(image["data"])
                    image["data"] = json.dumps(
                        {k: "*" if k.endswith("Timestamp") else v for k, v in data.items()}
                    )
    return records


def _start(mysql_server: LocalMySQLServer, tmp_path: Path, case: str) -> tuple[Engine, MemorySink]:
    """The recorded workload's database and an engine with the case's properties on it."""
    spec = CASES[case]
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`", f"CREATE DATABASE `{DB}` CHARSET utf8mb4")
    run_statements(mysql_server, SETUP)
    mysql_server.execute(
        f"GRANT INSERT, DELETE ON `{DB}`.`dbz_signal` TO '{mysql_server.connector.user}'@'%'"
    )
    props = {k: v for k, v in {**BASE_PROPS, **spec.props}.items() if k not in _RECORDER_ONLY}
    memory = MemorySink()
    return Engine(golden_config(mysql_server, tmp_path, props), sinks=[memory]), memory


@pytest.mark.parametrize("case", list(CASES))
def test_golden_signalled_snapshots(mysql_server: LocalMySQLServer, tmp_path: Path, case: str) -> None:
    spec = CASES[case]
    engine, memory = _start(mysql_server, tmp_path, case)
    try:
        engine.catch_up()
        run_statements(mysql_server, spec.signals)
        deadline = time.monotonic() + 60
        engine.catch_up()
        assert engine.streaming is not None
        while engine.streaming.signals.incremental.running:
            assert time.monotonic() < deadline, "the incremental snapshot did not finish"
            engine.catch_up()
        if spec.after:
            run_statements(mysql_server, spec.after)
            engine.catch_up()
        engine.delivery.flush()
    finally:
        engine.close()
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`")
    ours = normalise_markers(own_database(load(jsonl_line(r) for r in memory.records), DB))
    theirs = normalise_markers(
        own_database(load(recording(f"incremental/{case}.jsonl").read_bytes().splitlines()), DB)
    )
    outcome = compare(f"incremental/{case}.jsonl", ours, theirs, KNOWN)
    assert outcome.ok, "\n".join(outcome.problems)


def _java_int_key(hex_text: str | None) -> int | None:
    """The single Integer of a Java-serialized ``Object[]`` key (its last four bytes); None for the
    serialized null (``aced000570``, nothing read yet)."""
    if not hex_text or hex_text == "aced000570":
        return None
    return int.from_bytes(bytes.fromhex(hex_text)[-4:], "big", signed=True)


def _json_int_key(text: str | None) -> int | None:
    return json.loads(text)[0] if text else None


def _progress(offset: dict[str, Any], key: Any) -> tuple[Any, ...]:
    return (
        offset.get("snapshot"),
        offset.get("incremental_snapshot_collections"),
        offset.get("incremental_snapshot_correlation_id"),
        key(offset.get("incremental_snapshot_primary_key")),
        key(offset.get("incremental_snapshot_maximum_key")),
    )


def test_incremental_offsets_follow_debeziums(mysql_server: LocalMySQLServer, tmp_path: Path) -> None:
    """Every offset state Debezium stored during the ``insert_insert`` snapshot (sampled from its
    offset file) is one of ours, in the same order: the collections list and correlation id
    verbatim, ``snapshot: INCREMENTAL`` on the snapshot rows, the same last and maximum keys (ours as
    JSON, Debezium's Java-serialized)."""
    spec = CASES["insert_insert"]
    engine, memory = _start(mysql_server, tmp_path, "insert_insert")
    try:
        engine.catch_up()
        run_statements(mysql_server, spec.signals)
        engine.catch_up()
        assert engine.streaming is not None
        deadline = time.monotonic() + 60
        while engine.streaming.signals.incremental.running:
            assert time.monotonic() < deadline
            engine.catch_up()
    finally:
        engine.close()
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`")
    ours = [_progress(r.offset.to_map(), _json_int_key) for r in memory.records if r.offset is not None]
    stored = json.loads(recording("incremental/insert_insert.offsets.json").read_text())
    theirs = [
        _progress(e["value"], _java_int_key)
        for e in stored
        if "snapshot" not in e["value"] or e["value"]["snapshot"] != "INITIAL"
    ]
    position = 0
    for state in theirs:
        while position < len(ours) and ours[position] != state:
            position += 1
        assert position < len(ours), f"Debezium's offset state {state} is not among ours (in order): {ours}"
