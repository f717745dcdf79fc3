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
from sink.memory import MemorySink
from sink.records import jsonl_line
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


@pytest.mark.parametrize("case", list(CASES))
def test_golden_signalled_snapshots(mysql_server: LocalMySQLServer, tmp_path: Path, case: str) -> None:
    spec = CASES[case]
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`", f"CREATE DATABASE `{DB}` CHARSET utf8mb4")
    run_statements(mysql_server, SETUP)
    mysql_server.execute(
        f"GRANT INSERT, DELETE ON `{DB}`.`dbz_signal` TO '{mysql_server.connector.user}'@'%'"
    )
    props = {k: v for k, v in {**BASE_PROPS, **spec.props}.items() if k not in _RECORDER_ONLY}
    memory = MemorySink()
    engine = Engine(golden_config(mysql_server, tmp_path, props), sinks=[memory])
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
