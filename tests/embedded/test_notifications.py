"""Notifications on every channel at once: one incremental snapshot that is started, paused,
resumed, partly stopped and completed is told, state by state, as records on the sink topic, as log
lines, on the metrics endpoint's ``/notifications`` (the jmx channel) and to the embedded API's
callback (the in-process channel); all four tell the same notifications in the same order."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import urllib.request
from collections.abc import Callable

import pytest

from connector.notifications import Notification
from mysql_cdc_base.errors import ConfigError

STATES = ["STARTED", "IN_PROGRESS", "PAUSED", "ABORTED", "RESUMED", "TABLE_SCAN_COMPLETED", "COMPLETED"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_every_incremental_snapshot_state_on_every_channel(
    cdc_mysql, cdc_database, cdc_engine_factory, caplog: pytest.LogCaptureFixture
) -> None:
    db = cdc_database
    cdc_mysql.execute(
        "CREATE TABLE big (id INT PRIMARY KEY, n INT)",
        "INSERT INTO big VALUES " + ",".join(f"({i}, {i})" for i in range(1, 201)),
        "CREATE TABLE small (id INT PRIMARY KEY)",
        "INSERT INTO small VALUES (1), (2)",
        database=db,
    )
    caplog.set_level(logging.INFO, logger="connector.notifications.service")
    port = free_port()
    received: list[Notification] = []
    lock = threading.Lock()

    def types() -> list[str]:
        with lock:
            return [n.type for n in received if n.aggregate_type == "Incremental Snapshot"]

    def on_notification(item: Notification) -> None:
        with lock:
            received.append(item)

    engine = cdc_engine_factory(
        {
            "snapshot.mode": "no_data",
            "read.only": "true",  # GTID watermarks: windows close with heartbeats, slowly enough to pause
            "heartbeat.interval.ms": "100",
            "incremental.snapshot.chunk.size": "10",
            "notification.enabled.channels": "sink,log,jmx,in-process",
            "notification.sink.topic.name": "cdc-notifications",
            "metrics.port": str(port),
        },
        on_notification=on_notification,
    )
    engine.signal("execute-snapshot", {"data-collections": [f"{db}.big", f"{db}.small"]}, "snap-1")
    wait_until(lambda: "IN_PROGRESS" in types(), "IN_PROGRESS")
    engine.signal("pause-snapshot", {})
    wait_until(lambda: "PAUSED" in types(), "PAUSED")
    engine.signal("stop-snapshot", {"data-collections": [f"{db}.small"], "type": "incremental"})
    wait_until(lambda: "ABORTED" in types(), "ABORTED")
    engine.signal("resume-snapshot", {})
    wait_until(lambda: "COMPLETED" in types(), "COMPLETED")

    told = types()
    assert [t for t in STATES if t in told] == STATES
    assert told.index("PAUSED") < told.index("ABORTED") < told.index("RESUMED") < told.index("COMPLETED")
    with lock:
        callback = [n.to_json() for n in received]
    assert {n["id"] for n in callback if n["aggregate_type"] == "Incremental Snapshot"} == {"snap-1"}
    aborted = next(n for n in callback if n["type"] == "ABORTED")
    assert aborted["additional_data"]["data_collections"] == f"{db}.small"
    done = next(n for n in callback if n["type"] == "TABLE_SCAN_COMPLETED")
    assert done["additional_data"]["scanned_collection"] == f"{db}.big"
    assert done["additional_data"]["total_rows_scanned"] == "200"
    assert done["additional_data"]["status"] == "SUCCEEDED"

    # jmx: the metrics endpoint
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/notifications", timeout=10) as response:
        assert json.loads(response.read()) == callback
    # log: one line each, Debezium's wording
    lines = [r.getMessage() for r in caplog.records if "[Notification Service]" in r.getMessage()]
    assert lines == [f"[Notification Service]  {n}" for n in received]
    # sink: the records on the notification topic, schema'd as Debezium's
    engine.drain()
    sunk = [r for r in engine.events if r.topic == "cdc-notifications"]
    assert [r.value for r in sunk] == callback
    assert [r.key for r in sunk] == [{"id": n["id"]} for n in callback]
    assert {r.value_schema.name for r in sunk} == {"io.debezium.connector.common.Notification"}


def test_sink_channel_needs_a_topic_and_channels_are_checked(cdc_mysql, cdc_engine_factory) -> None:
    with pytest.raises(ConfigError, match="notification.sink.topic.name"):
        cdc_engine_factory({"notification.enabled.channels": "sink"})
    with pytest.raises(ConfigError, match="notification.enabled.channels"):
        cdc_engine_factory({"notification.enabled.channels": "log,smoke-signals"})


def test_a_callback_needs_the_in_process_channel(cdc_mysql, cdc_engine_factory) -> None:
    with pytest.raises(ConfigError, match="in-process"):
        cdc_engine_factory({"notification.enabled.channels": "log"}, on_notification=print)
