"""Debezium's metrics on metrics.port, scraped during a snapshot and while streaming, and /health."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from connector.config import ConnectorConfig
from connector.embedded.api import EmbeddedEngine
from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer, MySQLServerHandle, free_port
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


class GatedSink(MemorySink):
    """A sink whose ``send`` blocks while the gate is closed (a slow or stuck downstream)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()

        self.let_through = 0  # sends that pass a closed gate

    def send(self, records: Sequence[ChangeRecord]) -> None:
        if not self.gate.is_set():
            if self.let_through:
                self.let_through -= 1
            else:
                self.waiting.set()
                self.gate.wait(60)
        super().send(records)


def scrape(port: int) -> Samples:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def value(samples: Samples, attribute: str, context: str, **labels: str) -> float:
    wanted = {"context": context, "plugin": "mysql", **labels}
    found = [
        v
        for (name, lbls), v in samples.items()
        if name == f"debezium_metrics_{attribute}" and wanted.items() <= dict(lbls).items()
    ]
    assert len(found) == 1, (attribute, context, labels, found)
    return found[0]


def text_value(samples: Samples, attribute: str, context: str) -> str:
    for (name, labels), _ in samples.items():
        if name == f"debezium_metrics_{attribute}" and ("context", context) in labels:
            return dict(labels)["value"]
    raise AssertionError(attribute)


def health(port: int) -> tuple[int, dict[str, bool]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
    except urllib.error.URLError:
        return 0, {}  # nothing listens


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def make(server: MySQLServerHandle, db: str, tmp: Path, sink: MemorySink, **extra: str) -> tuple[Engine, int]:
    port = free_port()
    props = server.connector_properties(
        **{
            "topic.prefix": "met",
            "database.include.list": db,
            "data.dir": str(tmp),
            "poll.interval.ms": "100",
            "metrics.port": str(port),
            "max.batch.size": "100",
            **extra,
        }
    )
    return Engine(ConnectorConfig.from_mapping(props), sinks=[sink]), port


@contextmanager
def running(engine: Engine, sink: MemorySink | None = None) -> Iterator[list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            engine.run()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield errors
    finally:
        if isinstance(sink, GatedSink):
            sink.gate.set()  # a failed assertion must not leave the engine stuck in the sink
        engine.stop()
        thread.join(60)
        assert not thread.is_alive()


def data(memory: MemorySink) -> list[ChangeRecord]:
    return [r for r in memory.records if r.kind == RecordKind.DATA]


def test_scrape_during_the_snapshot_and_while_streaming(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE big (id INT PRIMARY KEY)",
        "INSERT INTO big SELECT seq FROM seq_1_to_3000",
        "CREATE TABLE small (id INT PRIMARY KEY, v INT)",
        "INSERT INTO small VALUES (1, 1), (2, 2)",
        database=db,
    )
    sink = GatedSink()
    sink.gate.clear()  # hold the snapshot mid-way: after its first records, which go out at once
    sink.let_through = 1
    engine, port = make(mysql_server, db, tmp_path, sink)
    with running(engine, sink) as errors:
        assert sink.waiting.wait(30), errors
        during = scrape(port)
        assert value(during, "SnapshotRunning", "snapshot") == 1
        assert value(during, "SnapshotCompleted", "snapshot") == 0
        assert value(during, "TotalTableCount", "snapshot") == 2
        assert value(during, "RemainingTableCount", "snapshot") >= 1
        scanned = value(during, "RowsScanned", "snapshot", table=f"{db}.big")
        assert 0 < scanned < 3000
        assert value(during, "QueueTotalCapacity", "snapshot") == 8192
        assert value(during, "QueueRemainingCapacity", "snapshot") < 8192
        assert health(port) == (200, {"live": True, "ready": True})
        sink.gate.set()
        wait_until(lambda: value(scrape(port), "Connected", "streaming") == 1, 30, "streaming")

        after = scrape(port)
        assert value(after, "SnapshotRunning", "snapshot") == 0
        assert value(after, "SnapshotCompleted", "snapshot") == 1
        assert value(after, "RemainingTableCount", "snapshot") == 0
        assert value(after, "RowsScanned", "snapshot", table=f"{db}.big") == 3000
        assert value(after, "RowsScanned", "snapshot", table=f"{db}.small") == 2
        assert value(after, "TotalNumberOfEventsSeen", "snapshot") == len(data(sink)) == 3002
        assert value(after, "ChangesApplied", "schema-history") >= 3  # CREATE DATABASE + 2 tables

        # streaming: values move with what is delivered
        mysql_server.execute(
            "INSERT INTO small VALUES (3, 3), (4, 4)",
            "UPDATE small SET v = 0 WHERE id = 1",
            "DELETE FROM small WHERE id = 2",
            "ALTER TABLE small ADD COLUMN w INT",
            database=db,
        )
        wait_until(lambda: len(data(sink)) == 3006, 30, "the streamed changes")
        streaming = scrape(port)
        assert value(streaming, "TotalNumberOfCreateEventsSeen", "streaming") == 2
        assert value(streaming, "TotalNumberOfUpdateEventsSeen", "streaming") == 1
        assert value(streaming, "TotalNumberOfDeleteEventsSeen", "streaming") == 1
        assert value(streaming, "TotalNumberOfEventsSeen", "streaming") == 4
        assert value(streaming, "NumberOfCommittedTransactions", "streaming") >= 3
        assert value(streaming, "ChangesApplied", "schema-history") >= 4
        assert value(streaming, "BinlogPosition", "streaming") > 0
        status = mysql_server.query("SHOW MASTER STATUS")[0]
        assert text_value(streaming, "BinlogFilename", "streaming") == status[0]
        assert value(streaming, "MilliSecondsSinceLastEvent", "streaming") >= 0

        # lag grows while the sink is blocked and returns to ~0 once it drains
        sink.gate.clear()
        sink.waiting.clear()
        mysql_server.execute(*(f"INSERT INTO big VALUES ({3000 + i})" for i in range(1, 300)), database=db)
        assert sink.waiting.wait(30)
        first = value(scrape(port), "MilliSecondsBehindSource", "streaming")
        time.sleep(1.2)
        second = value(scrape(port), "MilliSecondsBehindSource", "streaming")
        assert second >= first + 1000
        sink.gate.set()
        wait_until(
            lambda: value(scrape(port), "MilliSecondsBehindSource", "streaming") == 0, 30, "lag back to 0"
        )
        wait_until(lambda: len(data(sink)) == 3305, 30, "the blocked inserts")
        flushed = scrape(port)
        sink_labels = frozenset({("sink", "GatedSink")})
        # every record the sink was flushed with: data rows plus schema changes
        assert flushed[("mysql_cdc_sink_records_total", sink_labels)] == len(sink.records)
        assert flushed[("mysql_cdc_sink_flushes_total", sink_labels)] >= 1
        assert flushed[("mysql_cdc_sink_flush_seconds_total", sink_labels)] > 0
    assert not errors


def test_health_flips_when_the_server_goes_away(fresh_mysql_server: LocalMySQLServer, tmp_path: Path) -> None:
    server = fresh_mysql_server
    server.execute("CREATE DATABASE hdb", "CREATE TABLE hdb.t (id INT PRIMARY KEY)")
    sink = MemorySink()
    engine, port = make(server, "hdb", tmp_path, sink, **{"connect.max.attempts": "50"})
    with running(engine):
        # streaming, not still snapshotting (also ready, but a lost server would end the snapshot)
        wait_until(lambda: engine.metrics.connected and not engine.metrics.snapshot_running, 30, "streaming")
        assert health(port) == (200, {"live": True, "ready": True})
        server.stop()
        wait_until(lambda: health(port)[0] == 503, 30, "not ready")
        status, body = health(port)
        assert body == {"live": True, "ready": False}
        assert value(scrape(port), "Connected", "streaming") == 0
        assert value(scrape(port), "NumberOfDisconnects", "streaming") >= 1
        server.start()
        wait_until(lambda: health(port)[0] == 200, 60, "ready again")
    assert health(port) == (0, {})  # the endpoint goes with the engine


def test_metrics_are_off_by_default_and_the_embedded_engine_has_the_same_figures(
    mysql_server: MySQLServerHandle, unique_db: str
) -> None:
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)", database=unique_db
    )
    props = mysql_server.connector_properties(**{"topic.prefix": "emb", "database.include.list": unique_db})
    with EmbeddedEngine(props) as engine:
        engine.wait_for(table="t", op="r")
        mysql_server.execute("INSERT INTO t VALUES (2)", database=unique_db)
        engine.wait_for(table="t", op="c")
        figures = engine.metrics.figures()
        assert engine.engine._metrics_server is None
    assert figures["snapshot"]["SnapshotCompleted"] is True
    assert figures["snapshot"]["RowsScanned"] == {f"{unique_db}.t": 1}
    assert figures["streaming"]["TotalNumberOfCreateEventsSeen"] == 1
    assert figures["schema-history"]["Status"] == "RUNNING"


def test_metrics_host_is_the_address_bound(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    sink = MemorySink()
    engine, port = make(mysql_server, unique_db, tmp_path, sink, **{"metrics.host": "127.0.0.2"})
    try:
        engine.catch_up()
        with urllib.request.urlopen(f"http://127.0.0.2:{port}/metrics", timeout=5) as response:
            assert b"debezium_metrics_TotalNumberOfEventsSeen" in response.read()
        assert health(port) == (0, {})  # nothing on 127.0.0.1
    finally:
        engine.close()


PROGRESS = re.compile(
    r"streaming: (?P<rate>[\d.]+) events/s, (?P<seen>\d+) events seen, (?P<delivered>\d+) records "
    r"delivered, MilliSecondsBehindSource=(?P<lag>\d+), binlog (?P<file>\S+):(?P<pos>\d+)"
    r"(; incremental snapshot: (?P<incremental>.*))?$"
)


def progress_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, str]]:
    found = [PROGRESS.match(r.getMessage()) for r in caplog.records if r.name == "connector.metrics"]
    return [m.groupdict() for m in found if m]


def test_progress_line_while_streaming(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="connector.metrics")
    mysql_server.execute("CREATE TABLE p (id INT PRIMARY KEY)", database=unique_db)
    memory = MemorySink()
    engine, _ = make(
        mysql_server,
        unique_db,
        tmp_path,
        memory,
        **{"progress.interval.ms": "200", "offset.flush.interval.ms": "100"},
    )
    with running(engine, memory) as errors:
        wait_until(lambda: engine.metrics.connected, 30, "streaming")
        before = engine.delivery.delivered
        mysql_server.execute(*(f"INSERT INTO p VALUES ({i})" for i in range(50)), database=unique_db)
        wait_until(lambda: engine.delivery.delivered >= before + 50, 30, "the 50 rows flushed")
        delivered = engine.delivery.delivered
        file, pos, _ = engine.metrics.binlog_position()

        def settled() -> bool:
            lines = progress_lines(caplog)
            last = lines[-1] if lines else {}
            return (last.get("seen"), last.get("delivered"), last.get("file"), last.get("pos")) == (
                "50",
                str(delivered),
                file,
                str(pos),
            )

        wait_until(settled, 5, "a progress line with the 50 rows, the records and the binlog position")
        seen_lines = len(progress_lines(caplog))
        wait_until(lambda: len(progress_lines(caplog)) > seen_lines, 5, "an idle interval's line")
    assert not errors
    lines = progress_lines(caplog)
    assert len(lines) >= 2
    assert any(float(line["rate"]) > 0 for line in lines)  # the rows moved the rate...
    assert float(lines[-1]["rate"]) == 0  # ...and an idle interval shows none
    assert (lines[-1]["seen"], lines[-1]["file"], lines[-1]["pos"]) == ("50", file, str(pos))
    assert [int(line["seen"]) for line in lines] == sorted(int(line["seen"]) for line in lines)
    assert 0 <= int(lines[-1]["lag"]) < 60_000

    # off unless configured; `mysql-cdc run` passes 10000 as the default, an explicit value wins
    props = dict(engine.config.raw)
    props.pop("progress.interval.ms")
    config = ConnectorConfig.from_mapping(props)
    assert Engine(config, sinks=[MemorySink()])._progress_interval_ms == 0
    assert Engine(config, sinks=[MemorySink()], progress_interval_ms=10_000)._progress_interval_ms == 10_000
    explicit = ConnectorConfig.from_mapping({**props, "progress.interval.ms": "0"})
    assert Engine(explicit, sinks=[MemorySink()], progress_interval_ms=10_000)._progress_interval_ms == 0


def test_progress_line_and_log_show_incremental_snapshot_rows_and_chunks(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE dbz_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048))",
        "CREATE TABLE big (id INT PRIMARY KEY, v INT)",
        "INSERT INTO big VALUES " + ",".join(f"({i}, {i})" for i in range(1, 251)),
        f"GRANT INSERT, DELETE ON `{db}`.`dbz_signal` TO '{mysql_server.connector.user}'@'%'",
        database=db,
    )
    memory = MemorySink()
    engine, _ = make(
        mysql_server,
        db,
        tmp_path,
        memory,
        **{
            "progress.interval.ms": "200",
            "snapshot.mode": "no_data",
            "signal.data.collection": f"{db}.dbz_signal",
            "incremental.snapshot.chunk.size": "100",
        },
    )
    with running(engine, memory) as errors:
        wait_until(lambda: engine.metrics.connected, 30, "streaming")
        mysql_server.execute(
            f"""INSERT INTO dbz_signal VALUES ('p-1', 'execute-snapshot', '{{"data-collections": ["{db}.big"]}}')""",
            database=db,
        )
        expected = f"{db}.big 250 rows/4 chunks"  # three chunks of rows and the empty one
        wait_until(
            lambda: any(line.get("incremental") == expected for line in progress_lines(caplog)),
            30,
            "a progress line with the incremental snapshot's rows and chunks",
        )
    assert not errors
    assert f"incremental snapshot of {db}.big completed: 250 rows" in caplog.text
