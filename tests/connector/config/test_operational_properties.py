"""Properties that used to be accepted and ignored, each changing behaviour on a real server:
snapshot.delay.ms, database.connectionTimeZone, database.initial.statements, max.queue.size,
event.processing.failure.handling.mode and connect.keep.alive.interval.ms."""

from __future__ import annotations

import logging
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from connector.config import ConfigError, ConnectorConfig
from connector.dispatch.dispatcher import EventProcessingError
from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink


def make(
    server: MySQLServerHandle, db: str, data_dir: Path, sink: MemorySink | None = None, **extra: str
) -> tuple[Engine, MemorySink]:
    memory = sink or MemorySink()
    props = server.connector_properties(
        **{
            "topic.prefix": "ops",
            "database.include.list": db,
            "data.dir": str(data_dir),
            "poll.interval.ms": "100",
            **extra,
        }
    )
    return Engine(ConnectorConfig.from_mapping(props), sinks=[memory]), memory


def data(memory: MemorySink) -> list[ChangeRecord]:
    return [r for r in memory.records if r.kind == RecordKind.DATA]


@contextmanager
def running(engine: Engine) -> Iterator[list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            engine.run()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield errors
    finally:
        engine.stop()
        thread.join(30)
        assert not thread.is_alive()


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# -- snapshot.delay.ms ------------------------------------------------------------------------------
@pytest.mark.parametrize("delay_ms", [0, 1500])
def test_snapshot_delay_ms_delays_the_first_snapshot_record(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, delay_ms: int
) -> None:
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)", database=unique_db
    )
    engine, memory = make(
        mysql_server,
        unique_db,
        tmp_path,
        **{"snapshot.delay.ms": str(delay_ms), "snapshot.mode": "initial_only"},
    )
    started = time.monotonic()
    engine.run()
    elapsed = time.monotonic() - started
    assert [r.op for r in data(memory)] == ["r"]
    if delay_ms:
        assert elapsed >= delay_ms / 1000
    else:
        assert elapsed < 1.5


def test_stop_ends_the_snapshot_delay(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=unique_db)
    engine, memory = make(mysql_server, unique_db, tmp_path, **{"snapshot.delay.ms": "60000"})
    started = time.monotonic()
    with running(engine) as errors:
        time.sleep(1.0)
    assert time.monotonic() - started < 10
    assert errors and "snapshot.delay.ms" in str(errors[0])
    assert not data(memory)


# -- database.connectionTimeZone --------------------------------------------------------------------
def test_connection_time_zone_sets_the_session_zone_and_timestamps_stay_utc(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, ts TIMESTAMP(0) NULL, zone VARCHAR(10))",
        "SET time_zone = '+00:00'",
        database=db,
    )
    with mysql_server.connect(db) as conn, conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("INSERT INTO t VALUES (1, '2024-03-01 12:00:00', NULL)")
    override = f"SELECT id, ts, @@session.time_zone AS zone FROM {db}.t"
    results = {}
    for zone in ("SERVER", "+05:30", "-03:00"):
        engine, memory = make(
            mysql_server,
            db,
            tmp_path / zone.replace(":", ""),
            **{
                "database.connectionTimeZone": zone,
                "snapshot.mode": "initial_only",
                "snapshot.select.statement.overrides": f"{db}.t",
                f"snapshot.select.statement.overrides.{db}.t": override,
            },
        )
        engine.run()
        (row,) = data(memory)
        results[zone] = row.after
    # TIMESTAMP values are UTC whatever the session zone; session-dependent SQL sees the zone.
    assert {r["ts"] for r in results.values()} == {"2024-03-01T12:00:00Z"}
    assert results["SERVER"]["zone"] == "+00:00"  # snapshot sessions read in UTC
    assert results["+05:30"]["zone"] == "+05:30"
    assert results["-03:00"]["zone"] == "-03:00"


def test_connection_time_zone_with_daylight_saving_is_refused(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    with pytest.raises(
        ConfigError, match="database.connectionTimeZone: expected SERVER, UTC or a fixed offset"
    ):
        make(mysql_server, unique_db, tmp_path, **{"database.connectionTimeZone": "Europe/Paris"})


# -- database.initial.statements --------------------------------------------------------------------
def test_initial_statements_run_on_every_sql_connection(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY)",
        "INSERT INTO t VALUES (1)",
        "CREATE TABLE opened (n INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(20))",
        database=db,
    )
    mysql_server.execute(f"GRANT INSERT ON {db}.opened TO '{mysql_server.connector.user}'@'%'")
    statements = f"INSERT INTO {db}.opened (note) VALUES ('a;;b'); SET @cdc_marker = 1"
    engine, memory = make(
        mysql_server,
        db,
        tmp_path,
        **{
            "database.initial.statements": statements,
            "snapshot.mode": "initial_only",
            "table.include.list": f"{db}.t",
        },
    )
    engine.run()
    assert [r.op for r in data(memory)] == ["r"]
    notes = [row[0] for row in mysql_server.query("SELECT note FROM opened", database=db)]
    # the start-up probe, the snapshot's connection(s): each ran the statements, ';;' kept as ';'
    assert len(notes) >= 2 and set(notes) == {"a;b"}


def test_a_failing_initial_statement_names_the_property(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    engine, _ = make(mysql_server, unique_db, tmp_path, **{"database.initial.statements": "SELEC 1"})
    with pytest.raises(ConfigError, match=r"database.initial.statements: statement 'SELEC 1' failed"):
        engine.run()


# -- max.queue.size ---------------------------------------------------------------------------------
class RecordingSink(MemorySink):
    """Remembers how many records were handed over between two flushes, and every batch size."""

    def __init__(self) -> None:
        super().__init__()
        self.unflushed = 0
        self.most_unflushed = 0
        self.batches: list[int] = []

    def send(self, records: Sequence[ChangeRecord]) -> None:
        self.batches.append(len(records))
        self.unflushed += len(records)
        self.most_unflushed = max(self.most_unflushed, self.unflushed)
        super().send(records)

    def flush(self) -> None:
        self.unflushed = 0
        super().flush()


@pytest.mark.parametrize(
    ("queue", "keeps_records", "bound"),
    [("60", True, 60), ("100000", True, None), ("60", False, None)],
    ids=["kept-records-fill-the-queue", "large-queue", "sink-takes-the-records"],
)
def test_max_queue_size_bounds_the_records_the_connector_holds(
    mysql_server: MySQLServerHandle,
    unique_db: str,
    tmp_path: Path,
    queue: str,
    keeps_records: bool,
    bound: int | None,
) -> None:
    """Records kept until the flush (here for on_delivered, as for an exactly-once transaction)
    count against max.queue.size: a full queue flushes the sinks before reading on. Records a sink
    has taken are its own, as Debezium's queue ends where the producer takes a record: they force
    no flush (only offset.flush.interval.ms does)."""
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    sink = RecordingSink()
    delivered: list[int] = []
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "ops",
            "database.include.list": db,
            "data.dir": str(tmp_path),
            "max.batch.size": "20",
            "max.queue.size": queue,
            "offset.flush.interval.ms": "600000",
            "poll.interval.ms": "600000",
            "tombstones.on.delete": "false",
        }
    )
    engine = Engine(
        ConnectorConfig.from_mapping(props),
        sinks=[sink],
        on_delivered=(lambda batch: delivered.append(len(batch))) if keeps_records else None,
    )
    engine.catch_up()
    values = ",".join(f"({i})" for i in range(1000))
    mysql_server.execute(f"INSERT INTO t VALUES {values}", database=db)  # one rows event or a few
    engine.catch_up()
    engine.close()
    assert len(data(sink)) == 1000
    assert max(sink.batches) <= 20  # max.batch.size even for one large rows event
    if bound is not None:
        assert sink.most_unflushed <= bound
        assert max(delivered) <= bound  # what on_delivered was handed at each flush
    else:
        assert sink.most_unflushed >= 1000  # nothing forced a flush before the end


def test_max_queue_size_must_exceed_max_batch_size() -> None:
    props = {
        "database.hostname": "127.0.0.1",
        "database.user": "u",
        "database.server.id": "1",
        "topic.prefix": "p",
        "max.batch.size": "100",
        "max.queue.size": "100",
    }
    with pytest.raises(ConfigError, match="max.queue.size: must be larger than max.batch.size"):
        ConnectorConfig.from_mapping(props)


# -- event.processing.failure.handling.mode ----------------------------------------------------------
def _unconvertible_rows(server: MySQLServerHandle, db: str) -> None:
    # The history never sees the ALTER (schema.history.internal.ddl.filter), so the connector still
    # believes d is a DATE while the binlog carries text: those rows cannot be converted.
    server.execute("ALTER TABLE t MODIFY d VARCHAR(20)", database=db)
    server.execute("INSERT INTO t VALUES (2, 'not a date')", database=db)
    server.execute("CREATE TABLE later (id INT PRIMARY KEY)", "INSERT INTO later VALUES (7)", database=db)


FILTER = {"schema.history.internal.ddl.filter": "ALTER TABLE t MODIFY d VARCHAR.*"}


def test_event_processing_failure_fail_stops_naming_the_position(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY, d DATE)", database=db)
    engine, _ = make(mysql_server, db, tmp_path, **FILTER)
    engine.catch_up()
    _unconvertible_rows(mysql_server, db)
    with pytest.raises(EventProcessingError, match=r"binlog event for .*\.t at .*:\d+") as info:
        engine.catch_up()
    assert "event.processing.failure.handling.mode=warn" in str(info.value)
    engine.close()


@pytest.mark.parametrize("mode", ["warn", "skip", "ignore"])
def test_event_processing_failure_warn_and_skip_go_on(
    mysql_server: MySQLServerHandle,
    unique_db: str,
    tmp_path: Path,
    mode: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY, d DATE)", database=db)
    engine, memory = make(
        mysql_server, db, tmp_path, **FILTER, **{"event.processing.failure.handling.mode": mode}
    )
    engine.catch_up()
    with caplog.at_level(logging.WARNING, logger="connector.dispatch.dispatcher"):
        _unconvertible_rows(mysql_server, db)
        engine.catch_up()
    engine.close()
    streamed = [(r.table_id.table if r.table_id else None, r.op) for r in data(memory)]
    assert streamed == [("later", "c")]  # the bad event skipped, the stream goes on
    warned = "event.processing.failure.handling.mode=warn" in caplog.text
    assert warned == (mode == "warn")


# -- connect.keep.alive.interval.ms -----------------------------------------------------------------
class FreezingProxy:
    """A loopback TCP proxy whose ``freeze()`` silently stops forwarding on the connections open at
    that moment (a dead network path that never closes); later connections work."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.frozen: set[int] = set()
        self.generation = 0
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        self.frozen.add(self.generation)
        self.generation += 1

    def close(self) -> None:
        self._stop = True
        self.listener.close()

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            threading.Thread(target=self._pump, args=(client, upstream, self.generation), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket, generation: int) -> None:
        with a, b:
            while not self._stop:
                ready, _, _ = select.select([a, b], [], [], 0.1)
                if generation in self.frozen:
                    continue  # swallow nothing, forward nothing: the path is silent
                for s in ready:
                    chunk = s.recv(65536)
                    if not chunk:
                        return
                    (b if s is a else a).sendall(chunk)


def test_keep_alive_interval_detects_a_silent_connection_and_reconnects(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = unique_db
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    proxy = FreezingProxy((mysql_server.host, mysql_server.port))
    try:
        engine, memory = make(
            mysql_server,
            db,
            tmp_path,
            **{"database.port": str(proxy.port), "connect.keep.alive.interval.ms": "1500"},
        )
        engine.catch_up()
        with caplog.at_level(logging.WARNING), running(engine) as errors:
            mysql_server.execute("INSERT INTO t VALUES (1)", database=db)
            wait_until(lambda: len(data(memory)) == 1, 10, "the first insert")
            proxy.freeze()
            mysql_server.execute("INSERT INTO t VALUES (2)", database=db)
            wait_until(lambda: len(data(memory)) == 2 or bool(errors), 20, "the insert after the freeze")
        assert not errors
        assert "replication connection lost" in caplog.text
        assert [r.after["id"] for r in data(memory) if r.after] == [1, 2]
    finally:
        proxy.close()


# -- a key value the representation cannot hold (issue 25) ---------------------------------------------
def test_a_time_key_connect_mode_cannot_hold_stops_again_after_a_restart_until_passed_with_warn(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    """TIME 517:51:04.77 is no time of day: with time.precision.mode=connect the key has no value to
    give it that another row could not have (Debezium stops too). The stored offset stays before the
    event, so a restart stops there again; only event.processing.failure.handling.mode=warn passes it,
    and the rows around it are delivered with their own keys."""
    db = unique_db
    mysql_server.execute("CREATE TABLE tk (c1 TIME(2) PRIMARY KEY, v INT)", database=db)
    connect = {"time.precision.mode": "connect"}
    engine, _ = make(mysql_server, db, tmp_path, **connect)
    engine.catch_up()
    mysql_server.execute(
        "INSERT INTO tk VALUES ('02:00:00', 1)",
        "INSERT INTO tk VALUES ('517:51:04.77', 2)",
        "INSERT INTO tk VALUES ('03:00:00', 3)",
        database=db,
    )
    for _ in range(2):  # the first run, then a restart from the stored offset
        with pytest.raises(
            EventProcessingError, match=r"column 'c1' is NOT NULL .*time\.precision\.mode=connect"
        ):
            engine.catch_up()
        engine.close()
        engine, memory = make(mysql_server, db, tmp_path, **connect)
    engine.close()
    engine, memory = make(
        mysql_server, db, tmp_path, **connect, **{"event.processing.failure.handling.mode": "warn"}
    )
    engine.catch_up()
    engine.close()
    keys = [r.key for r in memory.records if r.kind == RecordKind.DATA and r.table_id.table == "tk"]
    # 03:00 now (02:00 again too if its offset was not stored before the stop); never a stand-in key.
    assert {"c1": 10_800_000} in keys and all(k in ({"c1": 7_200_000}, {"c1": 10_800_000}) for k in keys), (
        keys
    )
