"""Golden notifications: the initial and incremental snapshot notifications (``sink`` and ``log``
channels) compared with what real Debezium 3.6.3 emitted for the same tables, signals and properties
(``tests/golden/debezium/notify/<case>.jsonl`` and ``<case>.log.txt``, recorded by ``python -m
tests.golden.record_notify``).

Every record is compared (data, markers, schema changes and the notification records in their
places). Beyond ``compare.py``'s per-run fields and the incremental test's markers, a notification's
``timestamp`` is per run, and the initial snapshot's notification ids are random UUIDs (Debezium's
too): both are blanked on both sides. The incremental snapshot's ids are the signal's id and are
compared verbatim.
"""

from __future__ import annotations

import logging
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
from tests.golden.record_incremental import BASE_PROPS, DB, SETUP
from tests.golden.record_notify import CASES, NOTIFY_TOPIC
from tests.golden.test_golden_incremental import normalise_markers
from tests.golden.workloads import golden_config, run_statements

KNOWN: list[Known] = [
    Known(
        "signal table scanned",
        "our initial snapshot reads the signal table's rows (an empty table, read first); Debezium "
        "leaves the signal table out of the data scan (its notifications list it only among the "
        "captured tables), so its first orders row is the snapshot's 'first' and ours the "
        "table's 'first_in_data_collection'. Not a notification difference; the notifications "
        "themselves leave the signal table out as Debezium's do",
        r"\.value\.payload\.source\.snapshot",
        lambda ours, theirs: (ours, theirs) == ("first_in_data_collection", "first"),
    )
]
_RECORDER_ONLY = ("max.batch.size", "offset.flush.interval.ms")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_LOGGED = re.compile(r"\[Notification Service\]  \{id='([^']*)', (.*), timestamp=\d+\}$")


def normalise_notifications(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for record in records:
        if record.get("topic") != NOTIFY_TOPIC:
            continue
        for part in ("key", "value"):
            payload = record[part]["payload"]
            if _UUID.match(payload["id"]):
                payload["id"] = "<uuid>"
            if "timestamp" in payload:
                payload["timestamp"] = 0
    return records


def logged(lines: list[str]) -> list[str]:
    """The log channel's notifications, ids that are UUIDs and timestamps blanked."""
    out = []
    for line in lines:
        match = _LOGGED.search(line)
        if match:
            ident = "<uuid>" if _UUID.match(match.group(1)) else match.group(1)
            out.append(f"{ident} {match.group(2)}")
    return out


def run_case(
    server: LocalMySQLServer, tmp_path: Path, case: str, extra: dict[str, str] | None = None
) -> tuple[Engine, MemorySink]:
    """The recorded workload on our engine, up to the end of the incremental snapshot."""
    spec = CASES[case]
    server.execute(f"DROP DATABASE IF EXISTS `{DB}`", f"CREATE DATABASE `{DB}` CHARSET utf8mb4")
    run_statements(server, (*SETUP, *spec.setup))
    server.execute(f"GRANT INSERT, DELETE ON `{DB}`.`dbz_signal` TO '{server.connector.user}'@'%'")
    props = {
        k: v for k, v in {**BASE_PROPS, **spec.props, **(extra or {})}.items() if k not in _RECORDER_ONLY
    }
    memory = MemorySink()
    engine = Engine(golden_config(server, tmp_path, props), sinks=[memory])
    try:
        engine.catch_up()
        run_statements(server, spec.statements)
        engine.catch_up()
        assert engine.streaming is not None
        deadline = time.monotonic() + 60
        while engine.streaming.signals.incremental.running:
            assert time.monotonic() < deadline, "the incremental snapshot did not finish"
            engine.catch_up()
        engine.delivery.flush()
    except BaseException:
        engine.close()
        server.execute(f"DROP DATABASE IF EXISTS `{DB}`")
        raise
    return engine, memory


@pytest.mark.parametrize("case", ["initial_incremental", "stop"])
def test_golden_notifications(
    mysql_server: LocalMySQLServer, tmp_path: Path, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="connector.notifications.service")
    engine, memory = run_case(mysql_server, tmp_path, case)
    engine.close()
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`")
    ours = normalise_notifications(
        normalise_markers(own_database(load(jsonl_line(r) for r in memory.records), DB))
    )
    theirs = normalise_notifications(
        normalise_markers(own_database(load(recording(f"notify/{case}.jsonl").read_bytes().splitlines()), DB))
    )
    outcome = compare(f"notify/{case}.jsonl", ours, theirs, KNOWN)
    assert outcome.ok, "\n".join(outcome.problems)
    ours_logged = logged([r.getMessage() for r in caplog.records])
    theirs_logged = logged(recording(f"notify/{case}.log.txt").read_text().splitlines())
    assert ours_logged == theirs_logged
