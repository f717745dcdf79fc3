"""Debezium's streaming options against a real server: ``binlog.buffer.size`` (rolled-back rows in the
binlog), ``streaming.delay.ms``, ``skip.messages.without.change`` (its metric) and
``event.converting.failure.handling.mode`` (a custom converter that fails). The records themselves
are compared with real Debezium's in ``tests/golden/test_golden_modes.py`` (cases ``savepoints``,
``savepoint_rollback_buffered``, ``skip_unchanged``) and ``test_golden_fidelity.py``
(``invalid_dates_*``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connector.records.conversion.registry import ValueConversionError
from connector.records.custom_converters import CONVERTERS, CustomConversion, register_converter
from connector.sources.transaction_buffer import RolledBackRowsEmitted
from connector.testing.local_server import MySQLServerHandle
from connector.transforms.base import Options
from ddl.model import Column, Table
from mysql_cdc_base.connect import ConnectSchema
from mysql_cdc_base.records import RecordKind
from tests.connector.sources.test_streaming import make_engine
from tests.connector.streaming_support import data

MIXED = (
    "CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
    "CREATE TABLE m (id INT PRIMARY KEY, v INT) ENGINE=MyISAM",
)


def run_in_one_session(server: MySQLServerHandle, db: str, *statements: str) -> None:
    with server.connect(db) as conn, conn.cursor() as cur:
        for sql in statements:
            cur.execute(sql)


def rolled_back_to_savepoint(rows_before: int) -> tuple[str, ...]:
    """A transaction whose binlog holds a row rolled back to a savepoint (it also writes MyISAM)."""
    before = tuple(f"INSERT INTO t VALUES ({100 + n}, {n})" for n in range(rows_before))
    return (
        "BEGIN",
        *before,
        "SAVEPOINT a",
        "INSERT INTO t VALUES (4, 4)",
        "INSERT INTO m VALUES (2, 2)",
        "ROLLBACK TO SAVEPOINT a",
        "INSERT INTO t VALUES (5, 5)",
        "COMMIT",
    )


def test_without_a_buffer_a_rollback_over_emitted_rows_stops_naming_the_setting(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    mysql_server.execute(*MIXED, database=unique_db)
    engine, _ = make_engine(mysql_server, unique_db, tmp_path)
    engine.catch_up()
    run_in_one_session(mysql_server, unique_db, *rolled_back_to_savepoint(1))
    with pytest.raises(RolledBackRowsEmitted) as stopped:
        engine.catch_up()
    engine.close()
    message = str(stopped.value)
    assert "binlog.buffer.size" in message and "ROLLBACK TO a" in message and "mysql-bin." in message


def test_a_transaction_longer_than_the_buffer_commits_whole_and_a_rollback_in_it_stops(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    mysql_server.execute(*MIXED, database=unique_db)
    engine, memory = make_engine(
        mysql_server,
        unique_db,
        tmp_path,
        **{"binlog.buffer.size": "4", "provide.transaction.metadata": "true"},
    )
    engine.catch_up()
    # 10 single-row inserts: about 30 events, far past the 4 the buffer holds; the savepoint is set
    # after the buffer filled, and nothing after it is rolled back.
    long_commit = (
        "BEGIN",
        *(f"INSERT INTO t VALUES ({n}, {n})" for n in range(10, 20)),
        "SAVEPOINT late",
        "INSERT INTO t VALUES (20, 20)",
        "COMMIT",
    )
    run_in_one_session(mysql_server, unique_db, *long_commit)
    engine.catch_up()
    rows = data(memory.records, "t")
    assert [r.after["id"] for r in rows if r.after] == list(range(10, 21))
    ends = [
        r.value for r in memory.records if r.kind == RecordKind.TRANSACTION and r.value["status"] == "END"
    ]
    assert [e["event_count"] for e in ends] == [11]  # one transaction, not cut by the buffer

    # Now a rollback to a savepoint set before the buffer filled: its rows were handed on.
    run_in_one_session(
        mysql_server,
        unique_db,
        *rolled_back_to_savepoint(0)[:1],
        *(f"INSERT INTO m VALUES ({n}, 0)" for n in range(30, 31)),
        "SAVEPOINT early",
        *(f"INSERT INTO t VALUES ({n}, {n})" for n in range(40, 48)),
        ("INSERT INTO m VALUES (31, 0)"),
        "ROLLBACK TO SAVEPOINT early",
        "COMMIT",
    )
    with pytest.raises(RolledBackRowsEmitted) as stopped:
        engine.catch_up()
    engine.close()
    assert "binlog.buffer.size=4" in str(stopped.value)
    assert not mysql_server.query("SELECT id FROM t WHERE id >= 40", unique_db)


def test_a_buffered_rollback_to_a_savepoint_drops_exactly_the_rolled_back_rows(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    mysql_server.execute(*MIXED, database=unique_db)
    engine, memory = make_engine(mysql_server, unique_db, tmp_path, **{"binlog.buffer.size": "1000"})
    engine.catch_up()
    run_in_one_session(mysql_server, unique_db, *rolled_back_to_savepoint(3))
    engine.catch_up()
    engine.close()
    emitted = sorted(r.after["id"] for r in data(memory.records, "t") if r.after)
    assert emitted == sorted(row[0] for row in mysql_server.query("SELECT id FROM t", unique_db))
    assert 4 not in emitted and emitted == [5, 100, 101, 102]


def test_streaming_waits_streaming_delay_ms_after_the_snapshot(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=unique_db)
    engine, _ = make_engine(mysql_server, unique_db, tmp_path, **{"streaming.delay.ms": "1500"})
    started = time.monotonic()
    engine.prepare()
    waited = time.monotonic() - started
    engine.close()
    assert waited >= 1.5

    # A stop ends the wait at once.
    engine, _ = make_engine(mysql_server, unique_db, tmp_path / "again", **{"streaming.delay.ms": "60000"})
    threading.Timer(0.5, engine.stop).start()
    started = time.monotonic()
    engine.prepare()
    engine.close()
    assert time.monotonic() - started < 20


def test_skipped_unchanged_updates_are_counted_as_debezium_does(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    mysql_server.execute(
        "CREATE TABLE items (id INT PRIMARY KEY, qty INT, note VARCHAR(10))",
        "INSERT INTO items VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')",
        database=unique_db,
    )
    props = {"skip.messages.without.change": "true", "column.exclude.list": f"{unique_db}.items.note"}
    engine, memory = make_engine(mysql_server, unique_db, tmp_path, **props)
    engine.catch_up()
    mysql_server.execute(
        "UPDATE items SET note = 'x'",  # one rows event, three unchanged rows
        "UPDATE items SET qty = 9, note = 'y' WHERE id = 2",
        database=unique_db,
    )
    engine.catch_up()
    figures = engine.metrics.streaming_figures()
    engine.close()
    updates = [r for r in data(memory.records, "items") if r.op == "u"]
    assert [(u.after, u.source["row"]) for u in updates] == [({"id": 2, "qty": 9}, 0)]
    assert figures["NumberOfUnchangedEventsSkipped"] == 3

    engine, _ = make_engine(mysql_server, unique_db, tmp_path / "off")
    assert engine.metrics.streaming_figures()["NumberOfUnchangedEventsSkipped"] == -1
    engine.close()


class FailsOnOdd:
    """A custom converter that fails on odd values of the selected INT column."""

    def __init__(self, options: Options) -> None:
        self.selector = options.get_regex("selector")

    def converter_for(self, column: Column, table: Table) -> CustomConversion | None:
        name = f"{table.id.database}.{table.id.table}.{column.name}"
        if self.selector is None or not self.selector.fullmatch(name):
            return None
        return CustomConversion(ConnectSchema("int32"), _even_only)


def _even_only(value: Any) -> int:
    if value % 2:
        raise ValueError("odd")
    return int(value) // 2


@pytest.fixture
def fails_on_odd() -> Iterator[dict[str, str]]:
    register_converter("com.example.FailsOnOdd", FailsOnOdd)
    yield {"converters": "half", "half.type": "com.example.FailsOnOdd", "half.selector": r".*\.t\.n"}
    CONVERTERS.pop("com.example.FailsOnOdd")


@pytest.mark.parametrize("mode", ["warn", "skip"])
def test_a_failing_converter_writes_null_and_logs_under_warn_and_skip(
    mysql_server: MySQLServerHandle,
    unique_db: str,
    tmp_path: Path,
    fails_on_odd: dict[str, str],
    mode: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, n INT)",
        "INSERT INTO t VALUES (1, 4), (2, 5)",
        database=unique_db,
    )
    props = {**fails_on_odd, "event.converting.failure.handling.mode": mode}
    engine, memory = make_engine(mysql_server, unique_db, tmp_path, **props)
    with caplog.at_level(logging.DEBUG, logger="connector.records.conversion.registry"):
        engine.catch_up()
        mysql_server.execute("INSERT INTO t VALUES (3, 7), (4, 8)", database=unique_db)
        engine.catch_up()
    engine.close()
    assert [r.after for r in data(memory.records, "t")] == [
        {"id": 1, "n": 2},
        {"id": 2, "n": None},  # snapshot
        {"id": 3, "n": None},  # binlog
        {"id": 4, "n": 4},
    ]
    logged = [r for r in caplog.records if f"{unique_db}.t.n" in r.getMessage()]
    assert len(logged) == 2
    assert {r.levelno for r in logged} == {logging.WARNING if mode == "warn" else logging.DEBUG}
    assert all("5" not in r.getMessage().split("ValueError")[0] for r in logged)  # no value logged


def test_a_failing_converter_stops_the_connector_under_fail(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, fails_on_odd: dict[str, str]
) -> None:
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, n INT)", "INSERT INTO t VALUES (1, 3)", database=unique_db
    )
    props = {**fails_on_odd, "event.converting.failure.handling.mode": "fail"}
    engine, _ = make_engine(mysql_server, unique_db, tmp_path, **props)
    with pytest.raises(ValueConversionError) as stopped:
        engine.catch_up()
    engine.close()
    assert f"{unique_db}.t.n" in str(stopped.value)
    assert "event.converting.failure.handling.mode" in str(stopped.value)
