"""Signals on a real server, through every channel (source, kafka, file, in-process): incremental
snapshots they start, read-only snapshots that write nothing, malformed signals that are skipped,
``log`` and ``set-binlog-position``.

The engine runs on its own thread (``engine.run()``), as in production: the kafka, file and
in-process channels are read between binlog events and on the server's idle heartbeats, which a
``catch_up`` that has nothing to read never sees.
"""

from __future__ import annotations

import json
import logging
import random
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.sources.incremental import IncrementalSnapshot
from connector.sources.signals import SignalError
from connector.testing.local_server import LocalMySQLServer, MySQLServerHandle
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.records import RecordKind
from sink.memory import MemorySink
from tests.connector.incremental_support import (
    data_records,
    fill,
    grant_signal_table,
    make_engine,
    payload,
    replay,
    send_signal,
)
from tests.connector.signal_support import FAST, running, streamed, table_state
from tests.kafka_support import KafkaBroker

ROWS = 250


def snapshot_rows(memory: MemorySink, table: str) -> list[dict[str, Any]]:
    """The ``after`` images of the ``op: r`` records of ``table``, in order."""
    return [payload(r)["after"] for r in data_records(memory.records, table) if payload(r)["op"] == "r"]


def snapshot_done(engine: Engine, memory: MemorySink, table: str, rows: int) -> Callable[[], bool]:
    def done() -> bool:
        streaming = engine.streaming
        return (
            streaming is not None
            and not streaming.signals.incremental.running
            and len(snapshot_rows(memory, table)) >= rows
        )

    return done


def logged(caplog: pytest.LogCaptureFixture, *parts: str) -> Callable[[], bool]:
    """A log line holding every one of ``parts``."""
    return lambda: any(all(p in r.getMessage() for p in parts) for r in list(caplog.records))


def execute(db: str, *tables: str) -> dict[str, Any]:
    return {"data-collections": [f"{db}.{t}" for t in tables], "type": "incremental"}


@pytest.fixture
def shop(mysql_server: MySQLServerHandle, unique_db: str) -> str:
    """``orders`` with ROWS rows, an empty ``items``, and the signal table with its grant."""
    grant_signal_table(mysql_server, unique_db)
    mysql_server.execute(
        "CREATE TABLE orders (id INT PRIMARY KEY, name VARCHAR(40), qty INT)",
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40), qty INT)",
        database=unique_db,
    )
    fill(mysql_server, unique_db, ROWS)
    mysql_server.execute("INSERT INTO items VALUES (1, 'item-1', 1), (2, 'item-2', 2)", database=unique_db)
    return unique_db


def assert_full_snapshot(memory: MemorySink, table: str = "orders", rows: int = ROWS) -> None:
    images = snapshot_rows(memory, table)
    assert [image["id"] for image in images] == list(range(1, rows + 1))
    marks = {
        payload(r)["source"]["snapshot"]
        for r in data_records(memory.records, table)
        if payload(r)["op"] == "r"
    }
    assert marks == {"incremental"}


# -- 1. every channel starts an incremental snapshot ------------------------------------------------
def test_source_channel_signal_row_starts_an_incremental_snapshot(mysql_server, shop, tmp_path):
    db = shop
    engine, memory = make_engine(mysql_server, db, tmp_path, **FAST, **{"signal.enabled.channels": "source"})
    with running(engine) as run:
        run.wait(lambda: engine.streaming is not None, "streaming")
        send_signal(mysql_server, db, "src-1", "execute-snapshot", execute(db, "orders"))
        run.wait(snapshot_done(engine, memory, "orders", ROWS), "the snapshot of orders")
    assert_full_snapshot(memory)
    assert snapshot_rows(memory, "items") == []
    signal_rows = [payload(r)["after"] for r in data_records(memory.records, "dbz_signal")]
    assert signal_rows[0]["id"] == "src-1"


def test_kafka_channel_reads_records_keyed_by_the_topic_prefix_and_commits_them(
    mysql_server, shop, tmp_path, kafka_broker: KafkaBroker
):
    db = shop
    topic, group = kafka_broker.unique("signals"), kafka_broker.unique("signal-group")
    kafka_broker.create_topic(topic, 1)
    props = {
        **FAST,
        "signal.enabled.channels": "kafka",
        "signal.kafka.topic": topic,
        "signal.kafka.bootstrap.servers": str(kafka_broker),
        "signal.kafka.groupId": group,
        "signal.kafka.poll.timeout.ms": "50",
        "signal.poll.interval.ms": "100",
    }
    producer = KafkaProducer(bootstrap_servers=str(kafka_broker), acks="all")
    try:

        def produce(key: bytes, value: dict[str, Any]) -> None:
            producer.send(topic, key=key, value=json.dumps(value).encode()).get(timeout=30)

        # Another connector's signal (its own topic.prefix as key) is not ours: never acted on.
        produce(b"someone-else", {"type": "execute-snapshot", "data": execute(db, "items")})
        produce(b"inc", {"type": "execute-snapshot", "data": execute(db, "orders")})
        engine, memory = make_engine(mysql_server, db, tmp_path, **props)
        with running(engine) as run:
            run.wait(snapshot_done(engine, memory, "orders", ROWS), "the snapshot of orders")
        assert_full_snapshot(memory)
        assert snapshot_rows(memory, "items") == []

        # Both records were read and the group committed past them.
        probe = KafkaConsumer(bootstrap_servers=str(kafka_broker), group_id=group, enable_auto_commit=False)
        try:
            assert probe.committed(TopicPartition(topic, 0)) == 2
        finally:
            probe.close()

        # A restarted engine starts after the committed records: only the new signal is carried out.
        produce(b"inc", {"type": "execute-snapshot", "data": execute(db, "items")})
        engine, memory = make_engine(mysql_server, db, tmp_path, **props)
        with running(engine) as run:
            run.wait(snapshot_done(engine, memory, "items", 2), "the snapshot of items")
        assert [image["id"] for image in snapshot_rows(memory, "items")] == [1, 2]
        assert snapshot_rows(memory, "orders") == []
    finally:
        producer.close()


def test_file_channel_consumes_complete_lines_and_keeps_a_partial_one(mysql_server, shop, tmp_path, caplog):
    db = shop
    caplog.set_level(logging.INFO, logger="connector")
    signals = tmp_path / "signals.jsonl"
    first = {"id": "file-1", "type": "execute-snapshot", "data": execute(db, "orders")}
    partial = '{"id": "file-2", "type": "log", '
    signals.write_text(json.dumps(first) + "\n" + partial)
    engine, memory = make_engine(
        mysql_server,
        db,
        tmp_path / "data",
        **FAST,
        **{"signal.enabled.channels": "file", "signal.file": str(signals), "signal.poll.interval.ms": "100"},
    )
    with running(engine) as run:
        run.wait(snapshot_done(engine, memory, "orders", ROWS), "the snapshot of orders")
        # The complete line was taken out of the file; the line still being written stays.
        assert signals.read_text() == partial
        with signals.open("a") as fh:
            fh.write('"data": {"message": "file line finished"}}\n')
        run.wait(logged(caplog, "file line finished", "signal file-2"), "the completed line's log signal")
        run.wait(lambda: signals.read_text() == "", "the file to be emptied")
    assert_full_snapshot(memory)


def test_in_process_channel_takes_signals_from_the_engine_api(mysql_server, shop, tmp_path):
    db = shop
    engine, memory = make_engine(
        mysql_server,
        db,
        tmp_path,
        **FAST,
        **{"signal.enabled.channels": "in-process", "signal.poll.interval.ms": "0"},
    )
    with running(engine) as run:
        run.wait(lambda: engine.streaming is not None, "streaming")
        first = engine.signal("execute-snapshot", execute(db, "orders"))
        run.wait(snapshot_done(engine, memory, "orders", ROWS), "the snapshot of orders")
        engine.signals.send("execute-snapshot", execute(db, "items"), "in-process-2")
        run.wait(snapshot_done(engine, memory, "items", 2), "the snapshot of items")
    assert_full_snapshot(memory)
    assert [image["id"] for image in snapshot_rows(memory, "items")] == [1, 2]
    # The snapshot carries the id of the signal that asked for it, as Debezium's offsets do.
    first_row = next(r for r in data_records(memory.records, "orders") if payload(r)["op"] == "r")
    assert first_row.offset["incremental_snapshot_correlation_id"] == first
    # Only an enabled channel takes signals.
    source_only, _ = make_engine(mysql_server, db, tmp_path / "other")
    with pytest.raises(ConfigError, match="in-process"):
        source_only.signal("log", {"message": "nobody listens"})
    source_only.close()


# -- 2. read.only: GTID watermarks, nothing written ------------------------------------------------
_WRITE = re.compile(rb"^\s*(/\*.*?\*/\s*)*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE | re.DOTALL)


@pytest.fixture
def logged_server() -> Iterator[LocalMySQLServer]:
    """A server of the test's own with the general query log in ``mysql.general_log``: every
    statement of every client, by user."""
    with LocalMySQLServer() as server:
        server.execute("SET GLOBAL log_output = 'TABLE'", "SET GLOBAL general_log = 1")
        yield server


def connector_statements(server: MySQLServerHandle) -> list[bytes]:
    rows = server.query(
        "SELECT argument FROM mysql.general_log WHERE command_type = 'Query' "
        f"AND user_host LIKE '{server.connector.user}[%'"
    )
    return [bytes(r[0]) if not isinstance(r[0], str) else r[0].encode() for r in rows]


def read_only_shop(server: MySQLServerHandle, rows: int) -> str:
    """``shop.orders`` with ``rows`` rows and no signal table: a read-only snapshot needs none."""
    server.execute(
        "CREATE DATABASE shop", "CREATE TABLE shop.orders (id INT PRIMARY KEY, name VARCHAR(40), qty INT)"
    )
    fill(server, "shop", rows)
    return "shop"


def read_only_engine(server: MySQLServerHandle, data_dir: Path, **extra: Any) -> tuple[Engine, MemorySink]:
    memory = MemorySink()
    props = {
        "topic.prefix": "inc",
        "database.include.list": "shop",
        "data.dir": str(data_dir),
        "snapshot.mode": "no_data",
        "incremental.snapshot.chunk.size": "100",
        **FAST,
        **{k: str(v) for k, v in extra.items()},
    }
    return Engine(ConnectorConfig.from_mapping(server.connector_properties(**props)), sinks=[memory]), memory


def assert_no_writes(server: MySQLServerHandle) -> None:
    statements = connector_statements(server)
    # The log holds the connector's statements (else the check below would prove nothing): the
    # watermark reads and the chunk reads.
    assert any(b"gtid_binlog_pos" in s for s in statements), statements[:20]
    assert any(b"`shop`.`orders`" in s and s.lstrip().upper().startswith(b"SELECT") for s in statements)
    writes = [s for s in statements if _WRITE.match(s)]
    assert writes == [], f"the read-only connector wrote: {writes[:5]}"


@pytest.mark.slow  # a minute of writer races (timed out at 60 s once on a loaded machine)
def test_read_only_snapshot_races_with_writers_writes_nothing_and_replays_to_the_table(
    logged_server, tmp_path
):
    server = logged_server
    rows, chunk = 3000, 50
    db = read_only_shop(server, rows)
    engine, memory = read_only_engine(
        server,
        tmp_path,
        **{
            "read.only": "true",
            "signal.enabled.channels": "in-process",
            "signal.poll.interval.ms": "0",
            "incremental.snapshot.chunk.size": chunk,
        },
    )
    stop = threading.Event()
    committed = [0, 0]  # each writer's transactions (a write that changed no row is none)

    def caught_up() -> bool:
        """Whether the stream is at most 100 of the writers' transactions behind them: each window
        closes only once the stream passes it, so writers that outrun a loaded machine's stream
        would hold the snapshot back for as long as they write."""
        return sum(committed) - engine.metrics.streaming.committed_transactions <= 100

    def writer(seed: int, snapshot: IncrementalSnapshot) -> None:
        rnd = random.Random(seed)
        next_id = rows + 1 + seed * 1_000_000
        with server.connect(db) as conn, conn.cursor() as cur:  # the admin user: not the connector's
            # A few hundred writes a second while the stream keeps up, half of them to the rows of
            # the chunk being read or the next one.
            while not stop.wait(0.003):
                if not caught_up():
                    continue
                done = snapshot.emitted_key[0] if snapshot.emitted_key else 0
                key = done + rnd.randint(1, 2 * chunk) if rnd.random() < 0.5 else rnd.randint(1, rows)
                roll = rnd.random()
                if roll < 0.5:
                    cur.execute("UPDATE orders SET qty = qty + 1, name = %s WHERE id = %s", (f"w{seed}", key))
                elif roll < 0.7:
                    cur.execute("DELETE FROM orders WHERE id = %s", (key,))
                elif roll < 0.85:
                    cur.execute("REPLACE INTO orders VALUES (%s, %s, 1)", (key, f"back{seed}"))
                else:
                    cur.execute("INSERT INTO orders VALUES (%s, %s, 2)", (next_id, f"new{seed}"))
                    next_id += 1
                committed[seed] += cur.rowcount > 0

    with running(engine) as run:
        run.wait(lambda: engine.streaming is not None, "streaming")
        assert engine.streaming is not None
        incremental = engine.streaming.signals.incremental
        writers = [threading.Thread(target=writer, args=(n, incremental)) for n in range(2)]
        for thread in writers:
            thread.start()
        try:
            engine.signal("execute-snapshot", execute(db, "orders"), "ro-1")
            run.wait(
                lambda: incremental.progress.chunks > 0 and not incremental.running,
                "the read-only snapshot",
                timeout=180,
            )
        finally:
            stop.set()
            for thread in writers:
                thread.join()
        marker = rows + 10_000_000
        server.execute(f"INSERT INTO orders VALUES ({marker}, 'last', 0)", database=db)
        run.wait(streamed(memory, "orders", marker), "the last insert")
    records = data_records(memory.records, "orders")
    snapshot = [r for r in records if payload(r)["op"] == "r"]
    assert len(snapshot) > rows // 3
    assert {payload(r)["source"]["snapshot"] for r in snapshot} == {"incremental"}
    assert replay(records) == table_state(server, db)
    assert_no_writes(server)


def test_read_only_snapshot_completes_on_heartbeats_alone(logged_server, tmp_path, caplog):
    """No transaction at all after the signal: the windows close on the server's idle heartbeats
    (the stream has passed the high watermark: nothing was written after it)."""
    server = logged_server
    db = read_only_shop(server, ROWS)
    signals = tmp_path / "signals.jsonl"
    engine, memory = read_only_engine(
        server,
        tmp_path / "data",
        **{
            "read.only": "true",
            "heartbeat.interval.ms": "100",
            "signal.enabled.channels": "file",
            "signal.file": str(signals),
            "signal.poll.interval.ms": "100",
        },
    )
    with running(engine) as run:
        run.wait(lambda: engine.streaming is not None, "streaming")
        before = server.query("SELECT @@global.gtid_binlog_pos")[0][0]
        signals.write_text(
            json.dumps({"id": "ro-file", "type": "execute-snapshot", "data": execute(db, "orders")}) + "\n"
        )
        run.wait(snapshot_done(engine, memory, "orders", ROWS), "the snapshot of orders")
        after = server.query("SELECT @@global.gtid_binlog_pos")[0][0]
    assert after == before  # no transaction was written while the snapshot ran
    assert_full_snapshot(memory)
    heartbeats = [r for r in memory.records if r.kind == RecordKind.HEARTBEAT]
    assert heartbeats, "heartbeat.interval.ms=100 emits heartbeat records"
    assert_no_writes(server)


# -- 3. malformed signals are logged and skipped ---------------------------------------------------
def test_malformed_signals_are_logged_with_the_reason_and_skipped_on_every_channel(
    mysql_server, shop, tmp_path, caplog, kafka_broker: KafkaBroker
):
    db = shop
    caplog.set_level(logging.INFO, logger="connector")
    topic = kafka_broker.unique("signals")
    kafka_broker.create_topic(topic, 1)
    signals = tmp_path / "signals.jsonl"
    engine, memory = make_engine(
        mysql_server,
        db,
        tmp_path / "data",
        **FAST,
        **{
            "signal.enabled.channels": "source,kafka,file,in-process",
            "signal.kafka.topic": topic,
            "signal.kafka.bootstrap.servers": str(kafka_broker),
            "signal.kafka.poll.timeout.ms": "20",
            "signal.file": str(signals),
            "signal.poll.interval.ms": "50",
        },
    )
    producer = KafkaProducer(bootstrap_servers=str(kafka_broker), acks="all")
    bad_source = {
        "bad-json": ("execute-snapshot", "{not json"),
        "bad-type": ("frobnicate", "{}"),
        "bad-list": ("execute-snapshot", json.dumps({"data-collections": f"{db}.orders"})),
        "bad-table": ("execute-snapshot", json.dumps(execute(db, "no_such_table"))),
        "bad-kind": ("execute-snapshot", json.dumps({**execute(db, "orders"), "type": "sideways"})),
        "bad-blocking": ("execute-snapshot", json.dumps({"type": "blocking"})),
        "bad-log": ("log", "{}"),
    }
    expected = [
        ("bad-json", "its data is not valid JSON"),
        ("bad-type", "unknown type 'frobnicate'"),
        ("bad-list", "data-collections must be a JSON list"),
        (f"{db}.no_such_table", "skipped: no such table is known"),
        ("bad-kind", "unknown snapshot type 'sideways'"),
        ("bad-blocking", "a blocking snapshot needs a non-empty data-collections list"),
        ("bad-log", "a log signal needs data.message"),
        (str(signals), "line 1 skipped"),
        (str(signals), "line 2 skipped: a line must be a JSON object"),
        (str(signals), 'line 3 skipped: it has no "type"'),
        (f"{topic} offset 0", "skipped"),
        (f"{topic} offset 1", 'skipped: the value must be a JSON object {"type", "data"}'),
        ("in-process-bad", "unknown type 'no-such-action'"),
    ]
    try:
        with running(engine) as run:
            run.wait(lambda: engine.streaming is not None, "streaming")
            with mysql_server.connect(db) as conn, conn.cursor() as cur:
                for signal_id, (kind, data) in bad_source.items():
                    cur.execute("INSERT INTO dbz_signal VALUES (%s, %s, %s)", (signal_id, kind, data))
            signals.write_text('{"id": "f1", "type": \n[1, 2]\n{"id": "f3", "data": {}}\n')
            producer.send(topic, key=b"inc", value=b"not json at all").get(timeout=30)
            producer.send(topic, key=b"inc", value=b'["a", "list"]').get(timeout=30)
            engine.signal("no-such-action", {}, "in-process-bad")
            # Bad data is refused to an in-process sender at once.
            with pytest.raises(SignalError, match="not valid JSON"):
                engine.signal("log", "{oops")
            for parts in expected:
                run.wait(logged(caplog, *parts), f"the log line {parts}")
            # Still streaming, and a valid signal after all of them still works.
            mysql_server.execute("INSERT INTO items VALUES (3, 'after-bad-signals', 3)", database=db)
            run.wait(streamed(memory, "items", 3), "the insert after the bad signals")
            producer.send(
                topic,
                key=b"inc",
                value=json.dumps({"type": "execute-snapshot", "data": execute(db, "orders")}).encode(),
            ).get(timeout=30)
            run.wait(snapshot_done(engine, memory, "orders", ROWS), "the snapshot of orders")
    finally:
        producer.close()
    assert_full_snapshot(memory)
    assert snapshot_rows(memory, "items") == []
    # Each rejection is a warning, not an error: nothing stopped.
    rejections = [r for r in caplog.records if "skipped" in r.getMessage()]
    assert rejections and {r.levelno for r in rejections} == {logging.WARNING}


# -- 4. log ------------------------------------------------------------------------------------------
def test_log_signal_logs_the_message_with_the_offset(mysql_server, shop, tmp_path, caplog):
    db = shop
    caplog.set_level(logging.INFO, logger="connector")
    engine, memory = make_engine(mysql_server, db, tmp_path, **FAST)
    with running(engine) as run:
        run.wait(lambda: engine.streaming is not None, "streaming")
        send_signal(mysql_server, db, "log-1", "log", {"message": "hello"})
        run.wait(logged(caplog, "hello", "signal log-1"), "the log line")
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("hello")]
    # The offset of the signal: inside its transaction, where a restart would read it again.
    signal_record = next(
        r for r in data_records(memory.records, "dbz_signal") if payload(r)["after"]["id"] == "log-1"
    )
    file, pos = signal_record.offset["file"], signal_record.offset["pos"]
    assert f"binlog file '{file}', pos={pos}" in line
    assert signal_record.offset["gtids"] in line
    # Nothing else happens: no snapshot.
    assert snapshot_rows(memory, "orders") == []


# -- 5. set-binlog-position -------------------------------------------------------------------------
def binlog_position(server: MySQLServerHandle) -> tuple[str, int]:
    file, pos = server.query("SHOW MASTER STATUS" if server.is_mariadb else "SHOW BINARY LOG STATUS")[0][:2]
    return str(file), int(pos)


def gtid_position(server: MySQLServerHandle) -> str:
    variable = "gtid_binlog_pos" if server.is_mariadb else "gtid_executed"
    return str(server.query(f"SELECT @@global.{variable}")[0][0]).replace("\n", "")


def item_ops(memory: MemorySink) -> list[tuple[str, int]]:
    """(op, id) of every ``items`` record, in order."""
    out = []
    for record in data_records(memory.records, "items"):
        body = payload(record)
        out.append((body["op"], (body["after"] or body["before"])["id"]))
    return out


def insert_items(server: MySQLServerHandle, db: str, *ids: int) -> None:
    for item in ids:  # one transaction each
        server.execute(f"INSERT INTO items VALUES ({item}, 'item-{item}', {item})", database=db)


def test_set_binlog_position_by_file_and_position_skips_forward(mysql_server, shop, tmp_path):
    """A restart with the signal waiting: the stream starts where the signal says, past the events
    before it (which it would otherwise read from the stored offset)."""
    db = shop
    props = {**FAST, "signal.enabled.channels": "in-process", "signal.poll.interval.ms": "0"}
    engine, memory = make_engine(mysql_server, db, tmp_path, **props)
    with running(engine) as run:
        run.wait(lambda: engine.streaming is not None, "streaming")
    insert_items(mysql_server, db, 10, 11, 12)  # while the connector is down
    file, pos = binlog_position(mysql_server)
    insert_items(mysql_server, db, 13, 14)

    engine, memory = make_engine(mysql_server, db, tmp_path, **props)
    engine.signal("set-binlog-position", {"binlog_filename": file, "binlog_position": pos})
    with running(engine) as run:
        run.wait(streamed(memory, "items", 14), "item 14")
        insert_items(mysql_server, db, 15)
        run.wait(streamed(memory, "items", 15), "item 15")
    assert item_ops(memory) == [("c", 13), ("c", 14), ("c", 15)]

    # The stored offset is past the skipped events: a plain restart does not read them either.
    engine, memory = make_engine(mysql_server, db, tmp_path, **props)
    with running(engine) as run:
        insert_items(mysql_server, db, 16)
        run.wait(streamed(memory, "items", 16), "item 16")
    assert item_ops(memory) == [("c", 16)]


def test_set_binlog_position_rewinds_a_running_stream(mysql_server, shop, tmp_path, caplog):
    """Moving back re-reads the events after the position, by file and position and (MariaDB) by
    GTID position; the signal row a rewind reads again is not carried out a second time."""
    db = shop
    caplog.set_level(logging.INFO, logger="connector")
    engine, memory = make_engine(
        mysql_server,
        db,
        tmp_path,
        **FAST,
        **{"signal.enabled.channels": "source,in-process", "signal.poll.interval.ms": "0"},
    )
    with running(engine) as run:
        # Item 20 must be streamed, not read by the snapshot the engine starts with.
        run.wait(lambda: engine.streaming is not None, "streaming")
        insert_items(mysql_server, db, 20)
        file, pos = binlog_position(mysql_server)
        gtids = gtid_position(mysql_server)
        insert_items(mysql_server, db, 21, 22)
        run.wait(streamed(memory, "items", 22), "item 22")

        # Through the signal table: the stream goes back to before item 21 and reads 21 and 22
        # again, then the signal row, which it has carried out already.
        send_signal(
            mysql_server,
            db,
            "rewind-1",
            "set-binlog-position",
            {"binlog_filename": file, "binlog_position": pos},
        )
        insert_items(mysql_server, db, 23)
        run.wait(streamed(memory, "items", 23), "item 23")
        insert_items(mysql_server, db, 24)
        run.wait(streamed(memory, "items", 24), "item 24")
        expected = [("c", 20), ("c", 21), ("c", 22), ("c", 21), ("c", 22), ("c", 23), ("c", 24)]
        assert item_ops(memory) == expected
        run.wait(logged(caplog, "rewind-1", "already carried out"), "the replayed signal skipped")

        if mysql_server.is_mariadb:
            engine.signal("set-binlog-position", {"gtid_set": gtids}, "rewind-2")
            run.wait(lambda: item_ops(memory).count(("c", 24)) == 2, "item 24 read again")
            insert_items(mysql_server, db, 25)
            run.wait(streamed(memory, "items", 25), "item 25")
            assert item_ops(memory) == [*expected, ("c", 21), ("c", 22), ("c", 23), ("c", 24), ("c", 25)]


def test_set_binlog_position_with_bad_data_is_skipped(mysql_server, shop, tmp_path, caplog):
    db = shop
    caplog.set_level(logging.INFO, logger="connector")
    engine, memory = make_engine(
        mysql_server,
        db,
        tmp_path,
        **FAST,
        **{"signal.enabled.channels": "in-process", "signal.poll.interval.ms": "0"},
    )
    with running(engine) as run:
        run.wait(lambda: engine.streaming is not None, "streaming")
        file, pos = binlog_position(mysql_server)
        stem = file.rpartition(".")[0]
        cases = {
            "both": ({"binlog_filename": file, "binlog_position": pos, "gtid_set": "0-1-1"}, "not both"),
            "no-position": ({"binlog_filename": file}, "needs binlog_filename and binlog_position"),
            "bad-name": ({"binlog_filename": "binlog", "binlog_position": 4}, "is not a binlog file name"),
            "bad-number": ({"binlog_filename": file, "binlog_position": "four"}, "is not a number"),
            "too-early": ({"binlog_filename": file, "binlog_position": 1}, "before the first event"),
            "no-file": ({"binlog_filename": f"{stem}.999999", "binlog_position": 4}, f"{stem}.999999"),
            "past-end": ({"binlog_filename": file, "binlog_position": pos + 1_000_000}, "cannot stream from"),
            "mid-event": ({"binlog_filename": file, "binlog_position": 5}, "cannot stream from"),
            "bad-gtids": ({"gtid_set": "not a gtid set"}, "is not a GTID set"),
        }
        for signal_id, (data, _) in cases.items():
            engine.signal("set-binlog-position", data, signal_id)
        for signal_id, (_, reason) in cases.items():
            run.wait(logged(caplog, f"signal {signal_id}", reason), f"{signal_id} refused")
        # Nothing moved: the stream goes on from where it was.
        insert_items(mysql_server, db, 30)
        run.wait(streamed(memory, "items", 30), "item 30")
    assert item_ops(memory) == [("c", 30)]
