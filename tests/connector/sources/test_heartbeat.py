"""Heartbeats (heartbeat.interval.ms, heartbeat.action.query, topic.heartbeat.prefix) on a real server:
the engine streams in a background thread while the test writes, as a deployed connector would."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import CONNECTOR_GRANTS, MySQLServerHandle
from mysql_cdc_base.position import BinlogPosition
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink

HEARTBEAT_KEY = {
    "type": "struct",
    "fields": [{"type": "string", "optional": False, "field": "serverName"}],
    "optional": False,
    "name": "io.debezium.connector.common.ServerNameKey",
    "version": 1,
}
HEARTBEAT_VALUE = {
    "type": "struct",
    "fields": [{"type": "int64", "optional": False, "field": "ts_ms"}],
    "optional": False,
    "name": "io.debezium.connector.common.Heartbeat",
    "version": 1,
}


def make(server: MySQLServerHandle, db: str, data_dir: Path, **extra: str) -> tuple[Engine, MemorySink]:
    memory = MemorySink()
    props = server.connector_properties(
        **{
            "topic.prefix": "hb",
            "database.include.list": db,
            "data.dir": str(data_dir),
            "poll.interval.ms": "100",
            **extra,
        }
    )
    return Engine(ConnectorConfig.from_mapping(props), sinks=[memory]), memory


@contextmanager
def streaming(engine: Engine) -> Iterator[None]:
    engine.catch_up()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            engine.run()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield
    finally:
        engine.stop()
        thread.join(30)
        assert not thread.is_alive() and not errors, errors


def heartbeats(memory: MemorySink) -> list[ChangeRecord]:
    return [r for r in memory.records if r.kind == RecordKind.HEARTBEAT]


def position(offset: Any) -> tuple[int, int]:
    return BinlogPosition(offset["file"], 0).file_number, int(offset["pos"])


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_heartbeats_carry_the_offset_past_changes_of_tables_not_captured(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE idle (id INT PRIMARY KEY)", "CREATE TABLE busy (id INT PRIMARY KEY)", database=db
    )
    engine, memory = make(
        mysql_server, db, tmp_path, **{"heartbeat.interval.ms": "150", "table.include.list": f"{db}.idle"}
    )
    with streaming(engine):
        with mysql_server.connect(db) as conn, conn.cursor() as cur:
            for i in range(40):
                cur.execute("INSERT INTO busy VALUES (%s)", (i,))
                time.sleep(0.03)
        end = mysql_server.query("SHOW MASTER STATUS")[0]
        wait_until(
            lambda: any(
                position(r.offset) >= (BinlogPosition(end[0], 0).file_number, end[1])
                for r in heartbeats(memory)
            ),
            10,
            "a heartbeat at the end of the writes",
        )
    beats = heartbeats(memory)
    assert not [r for r in memory.records if r.kind == RecordKind.DATA]  # nothing captured changed
    assert len(beats) >= 5  # ~1.2 s of writes at 150 ms
    positions = [position(r.offset) for r in beats]
    assert positions == sorted(positions) and len(set(positions)) >= 4  # the offset moves with the binlog
    stored = engine.offsets.load()
    assert stored is not None and position(stored) == (BinlogPosition(end[0], 0).file_number, end[1])
    beat = beats[0]
    assert beat.topic == "__debezium-heartbeat.hb" and beat.partition == 0 and beat.headers == ()
    assert beat.key == {"serverName": "hb"}
    assert orjson.loads(beat.key_bytes() or b"") == {"schema": HEARTBEAT_KEY, "payload": {"serverName": "hb"}}
    value = orjson.loads(beat.value_bytes() or b"")
    assert value["schema"] == HEARTBEAT_VALUE and list(value["payload"]) == ["ts_ms"]
    assert abs(value["payload"]["ts_ms"] - time.time() * 1000) < 60_000  # wall clock, not event time


def test_idle_stream_still_beats_and_topic_prefix_is_configurable(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    engine, memory = make(
        mysql_server,
        db,
        tmp_path,
        **{"heartbeat.interval.ms": "200", "topic.heartbeat.prefix": "beats", "topic.delimiter": "_"},
    )
    with streaming(engine):
        # no writes at all: the server's binlog heartbeat events (poll.interval.ms) drive the timer
        wait_until(lambda: len(heartbeats(memory)) >= 3, 10, "three heartbeats on an idle stream")
    beats = heartbeats(memory)
    assert {r.topic for r in beats} == {"beats_hb"}
    assert len({position(r.offset) for r in beats}) == 1


def test_no_heartbeats_by_default(mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path) -> None:
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    engine, memory = make(mysql_server, db, tmp_path)
    with streaming(engine):
        mysql_server.execute("INSERT INTO t VALUES (1)", database=db)
        time.sleep(1.0)
    assert heartbeats(memory) == []
    assert [r.op for r in memory.records if r.kind == RecordKind.DATA] == ["c"]


def test_action_query_runs_on_its_own_connection_at_each_heartbeat(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE heartbeat (id INT PRIMARY KEY, ts TIMESTAMP(3))",
        "INSERT INTO heartbeat VALUES (1, NOW(3))",
        database=db,
    )
    # The documented grants plus write access to the heartbeat table, as Debezium's docs advise.
    user = f"hb_{db}"[:32]
    mysql_server.execute(f"DROP USER IF EXISTS '{user}'@'%'")
    credentials = mysql_server.create_user(user, "hb-pass", CONNECTOR_GRANTS)
    mysql_server.execute(f"GRANT UPDATE ON `{db}`.heartbeat TO '{user}'@'%'")
    try:
        engine, memory = make(
            mysql_server,
            db,
            tmp_path,
            **{
                "database.user": credentials.user,
                "database.password": credentials.password,
                "heartbeat.interval.ms": "200",
                "heartbeat.action.query": f"UPDATE `{db}`.heartbeat SET ts = NOW(3) WHERE id = 1",
            },
        )
        with streaming(engine):
            wait_until(
                lambda: len([r for r in memory.records if r.op == "u"]) >= 3,
                15,
                "three heartbeat-table updates",
            )
    finally:
        mysql_server.execute(f"DROP USER IF EXISTS '{user}'@'%'")
    updates = [r for r in memory.records if r.op == "u"]
    assert all(r.table_id is not None and r.table_id.table == "heartbeat" for r in updates)
    assert len(heartbeats(memory)) >= 3


def test_failing_action_query_is_logged_and_heartbeats_go_on(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    engine, memory = make(
        mysql_server,
        db,
        tmp_path,
        **{"heartbeat.interval.ms": "200", "heartbeat.action.query": f"UPDATE `{db}`.t SET id = id"},
    )
    with caplog.at_level(logging.ERROR, logger="connector.sources.heartbeat"), streaming(engine):
        # the connector user may not write: every run fails, the stream carries on
        wait_until(lambda: len(heartbeats(memory)) >= 3, 10, "three heartbeats")
    failures = [r for r in caplog.records if "heartbeat.action.query failed" in r.getMessage()]
    assert len(failures) >= 3 and "UPDATE command denied" in failures[0].getMessage()
    assert mysql_server.connector.password not in caplog.text


def test_snapshot_is_followed_by_a_heartbeat_with_its_offset(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    # Debezium emits one heartbeat right after the snapshot completes (heartbeats on).
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    engine, memory = make(mysql_server, db, tmp_path, **{"heartbeat.interval.ms": "60000"})
    engine.prepare()
    assert engine.streaming is not None
    start = engine.streaming.offset()
    engine.delivery.flush()
    engine.close()
    (beat,) = heartbeats(memory)
    assert beat.offset == start and position(start) == position(engine.offsets.load())
