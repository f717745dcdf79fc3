"""Debezium heartbeats of the stream (``heartbeat.interval.ms``; reference digest 1.10, 3f), through
the in-memory binlog: the interval is checked after every event and idle tick, and the record carries
the offset at that moment."""

from __future__ import annotations

from connector.testing.event_source import Begin, Commit, Idle, insert, transaction
from mysql_cdc_base.records import RecordKind
from tests.connector.dispatch.stream_support import in_memory, of_kind, offset_map, shape

T = "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))"
EVERY_SECOND = {"heartbeat.interval.ms": "1000"}


def test_no_heartbeats_by_default() -> None:
    binlog = in_memory(T)
    binlog.write(Idle(60_000), transaction(insert("inventory.t", {"id": 1, "name": "a"})), Idle(60_000))
    assert of_kind(binlog.run(), RecordKind.HEARTBEAT) == []


def test_a_heartbeat_once_the_interval_has_passed() -> None:
    binlog = in_memory(T, properties=EVERY_SECOND)
    binlog.write(transaction(insert("inventory.t", {"id": 1, "name": "a"})), Idle(600), Idle(600), Idle(300))
    records = binlog.run()
    assert shape(records) == ["c", "heartbeat"]
    heartbeat = records[1]
    assert (heartbeat.topic, heartbeat.key, heartbeat.partition) == (
        "__debezium-heartbeat.fake",
        {"serverName": "fake"},
        0,
    )
    assert (
        heartbeat.key_schema is not None
        and heartbeat.key_schema.name == "io.debezium.connector.common.ServerNameKey"
    )
    assert (
        heartbeat.value_schema is not None
        and heartbeat.value_schema.name == "io.debezium.connector.common.Heartbeat"
    )
    assert list(heartbeat.value) == ["ts_ms"]
    # The offset now: after the committed transaction.
    assert heartbeat.offset == binlog.recorder.advanced[-1]


def test_a_heartbeat_inside_a_transaction_carries_its_restart_point() -> None:
    binlog = in_memory(T, properties=EVERY_SECOND)
    binlog.write(Begin(), insert("inventory.t", {"id": 1, "name": "a"}), Idle(1500), Commit())
    records = binlog.run()
    assert shape(records) == ["c", "heartbeat"]
    begin = binlog.events[0]
    # BEGIN, TABLE_MAP and the rows event are done (digest 3b).
    assert {k: v for k, v in offset_map(records[1]).items() if k in ("file", "pos", "event", "row")} == {
        "file": begin.file,
        "pos": begin.start_pos,
        "event": 3,
    }


def test_heartbeat_topic_prefix() -> None:
    binlog = in_memory(T, properties={**EVERY_SECOND, "topic.heartbeat.prefix": "hb"})
    binlog.write(Idle(2000))
    assert [r.topic for r in binlog.run()] == ["hb.fake"]
