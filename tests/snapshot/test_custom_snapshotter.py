"""The custom snapshotter SPI against a real server: each method of the three plugins changes what
the connector does as documented, with plugins loaded by module path and through the entry points
of an installed distribution."""

from __future__ import annotations

import importlib
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from connector.config import ConnectorConfig
from connector.embedded.api import EmbeddedEngine
from connector.engine import Engine
from connector.errors import PrerequisiteError
from connector.testing.fake import FakeConnector
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.records import ChangeRecord, RecordKind
from mysql_cdc_base.table_id import TableId
from sink.memory import MemorySink
from snapshot.errors import SnapshotError
from snapshot.settings import SnapshotSettings
from tests.snapshot.conftest import (
    GeneralLog,
    RecordingListener,
    SnapshotterFactory,
    fill_rows,
    purge_binlogs,
)
from tests.snapshot.spi_plugins import calls, write_guide_example, write_plugin_dist

PLUGINS = "tests.snapshot.spi_plugins"


def props_for(server: LocalMySQLServer, db: str, data_dir: Path, **extra: str) -> dict[str, str]:
    return server.connector_properties(
        **{
            "topic.prefix": "spi",
            "database.include.list": db,
            "data.dir": str(data_dir),
            "poll.interval.ms": "50",
            **extra,
        }
    )


def flags(calls_file: Path, name: str = f"{PLUGINS}:FlagSnapshotter", **answers: str) -> dict[str, str]:
    """``snapshot.mode=custom`` with ``FlagSnapshotter``'s answers (``on_data_error`` →
    ``snapshot.mode.custom.on.data.error``)."""
    return {
        "snapshot.mode": "custom",
        "snapshot.mode.custom.name": name,
        "snapshot.mode.custom.calls.file": str(calls_file),
        **{f"snapshot.mode.custom.{k.replace('_', '.')}": v for k, v in answers.items()},
    }


def run_once(props: dict[str, str], *sql: str, server: LocalMySQLServer | None = None) -> list[ChangeRecord]:
    """One engine start; ``sql`` runs once the start-up is done, and is streamed."""
    memory = MemorySink()
    engine = Engine(ConnectorConfig.from_mapping(props), sinks=[memory])
    try:
        engine.catch_up(60)
        if sql and server is not None:
            server.execute(*sql)
            engine.catch_up(60)
    finally:
        engine.close()
    return memory.records


def data(records: Sequence[ChangeRecord]) -> list[ChangeRecord]:
    return [r for r in records if r.kind == RecordKind.DATA]


def ops(records: Sequence[ChangeRecord]) -> list[tuple[str | None, str, Any]]:
    return [
        (r.op, r.table_id.table if r.table_id else "", (r.after or r.before or {}).get("id"))
        for r in data(records)
    ]


def created_tables(records: Sequence[ChangeRecord]) -> list[str]:
    """The tables whose CREATE TABLE the snapshot's schema change records carry."""
    out = []
    for r in records:
        if r.kind == RecordKind.SCHEMA_CHANGE and r.value is not None:
            ddl = str(r.value.get("ddl", ""))
            if ddl.startswith("CREATE TABLE"):
                out.append(ddl.split("`")[1])
    return out


@pytest.fixture
def tables(mysql_server: LocalMySQLServer, unique_db: str) -> str:
    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.t (id INT PRIMARY KEY, v VARCHAR(20))",
        f"INSERT INTO `{unique_db}`.t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        f"CREATE TABLE `{unique_db}`.u (id INT PRIMARY KEY)",
        f"INSERT INTO `{unique_db}`.u VALUES (10), (20)",
    )
    return unique_db


@pytest.fixture
def plugin_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = write_plugin_dist(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    return site


# -- Snapshotter -------------------------------------------------------------------------------------
def test_should_snapshot_data_false_takes_a_schema_only_snapshot(mysql_server, tables, tmp_path):
    log = tmp_path / "calls.jsonl"
    props = props_for(mysql_server, tables, tmp_path, **flags(log, data="false"))
    records = run_once(props, f"INSERT INTO `{tables}`.t VALUES (4, 'd')", server=mysql_server)
    assert ops(records) == [("c", "t", 4)]  # no rows read; the stream goes on from the snapshot
    assert sorted(created_tables(records)) == ["t", "u"]  # the structure was read
    assert calls(log) == [["configure"], ["snapshot_completed"]]

    # The same plugin answering "first" for data reads the rows (the difference is the answer).
    other = tmp_path / "other"
    records = run_once(props_for(mysql_server, tables, other, **flags(log, data="first")))
    assert [(op, t) for op, t, _ in ops(records)] == [("r", "t")] * 4 + [("r", "u")] * 2


def test_no_schema_and_no_data_means_no_snapshot_and_streaming_from_the_stored_offset(
    mysql_server, tables, tmp_path
):
    assert len(data(run_once(props_for(mysql_server, tables, tmp_path)))) == 5  # initial
    mysql_server.execute(f"INSERT INTO `{tables}`.u VALUES (30)")  # while stopped
    log = tmp_path / "calls.jsonl"
    props = props_for(mysql_server, tables, tmp_path, **flags(log, data="false", schema="false"))
    records = run_once(props)
    assert ops(records) == [("c", "u", 30)]
    assert created_tables(records) == []
    assert calls(log) == [["configure"]]  # no snapshot: neither hook


@pytest.mark.parametrize(("from_snapshot", "expected_after_rows"), [("true", []), ("false", [("c", "t", 4)])])
def test_streaming_starts_from_the_snapshot_or_from_the_stored_offset(
    mysql_server, tables, tmp_path, from_snapshot, expected_after_rows
):
    run_once(props_for(mysql_server, tables, tmp_path))  # initial: offset stored
    mysql_server.execute(f"INSERT INTO `{tables}`.t VALUES (4, 'd')")  # while stopped
    log = tmp_path / "calls.jsonl"
    props = props_for(
        mysql_server, tables, tmp_path, **flags(log, data="true", schema="true", from_snapshot=from_snapshot)
    )
    records = run_once(props, f"INSERT INTO `{tables}`.u VALUES (30)", server=mysql_server)
    rows = [("r", "t", i) for i in (1, 2, 3, 4)] + [("r", "u", 10), ("r", "u", 20)]
    # From the snapshot: row 4 is only in the snapshot. From the stored offset: its insert is
    # streamed again after the snapshot rows.
    assert ops(records) == rows + expected_after_rows + [("c", "u", 30)]
    assert calls(log) == [["configure"], ["snapshot_completed"]]


def test_should_stream_false_ends_the_start_after_the_snapshot(mysql_server, tables, tmp_path):
    log = tmp_path / "calls.jsonl"
    props = props_for(mysql_server, tables, tmp_path, **flags(log, stream="false"))
    records = run_once(props, f"INSERT INTO `{tables}`.t VALUES (4, 'd')", server=mysql_server)
    assert [op for op, _, _ in ops(records)] == ["r"] * 5  # the insert after it is not read
    assert calls(log) == [["configure"], ["snapshot_completed"]]


@pytest.mark.parametrize("rebuild", ["true", "false"])
def test_should_snapshot_on_schema_error_rebuilds_a_lost_history_or_stops(
    mysql_server, tables, tmp_path, rebuild
):
    run_once(props_for(mysql_server, tables, tmp_path))
    (tmp_path / "schema-history.jsonl").unlink()
    mysql_server.execute(f"INSERT INTO `{tables}`.t VALUES (4, 'd')")  # while stopped
    log = tmp_path / "calls.jsonl"
    props = props_for(
        mysql_server,
        tables,
        tmp_path,
        **flags(log, data="false", schema="false", on_schema_error=rebuild, from_snapshot="false"),
    )
    if rebuild == "false":
        with pytest.raises(SnapshotError, match="schema history is missing"):
            run_once(props)
        return
    records = run_once(props)
    assert ops(records) == [("c", "t", 4)]  # structures read again, pinned at the stored offset
    assert sorted(created_tables(records)) == ["t", "u"]
    assert calls(log) == [["configure"], ["snapshot_completed"]]


@pytest.mark.parametrize("resnapshot", ["true", "false"])
def test_should_snapshot_on_data_error_starts_over_after_a_purge_or_stops(
    fresh_mysql_server, tmp_path, resnapshot
):
    server = fresh_mysql_server
    server.execute(
        "CREATE DATABASE own", "CREATE TABLE own.t (id INT PRIMARY KEY)", "INSERT INTO own.t VALUES (1)"
    )
    run_once(props_for(server, "own", tmp_path))
    server.execute("INSERT INTO own.t VALUES (2)")
    purge_binlogs(server)
    log = tmp_path / "calls.jsonl"
    props = props_for(server, "own", tmp_path, **flags(log, on_data_error=resnapshot))
    if resnapshot == "false":
        with pytest.raises(SnapshotError, match="no longer available"):
            run_once(props)
        return
    assert ops(run_once(props)) == [("r", "t", 1), ("r", "t", 2)]  # a first start again
    assert calls(log) == [["configure"], ["snapshot_completed"]]


def test_snapshot_aborted_is_called_once_when_the_snapshot_connection_is_killed(
    mysql_server, unique_db, tmp_path
):
    mysql_server.execute(f"CREATE TABLE `{unique_db}`.slow (id INT PRIMARY KEY)")
    fill_rows(mysql_server, f"`{unique_db}`.slow (id)", 200)
    log = tmp_path / "calls.jsonl"
    marker = f"SLEEP(0.05) = 0 AND '{unique_db}' <> ''"
    props = props_for(
        mysql_server,
        unique_db,
        tmp_path,
        **flags(log),
        **{
            "snapshot.query.mode": "custom",
            "snapshot.query.mode.custom.name": f"{PLUGINS}:WhereQuery",
            "snapshot.query.mode.custom.where": marker,
        },
    )
    killed: list[int] = []

    def kill_the_scan() -> None:
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            rows = mysql_server.query(
                "SELECT id FROM information_schema.processlist "
                f"WHERE info LIKE '%{unique_db}%' AND info LIKE 'SELECT%' AND id <> CONNECTION_ID()"
            )
            for (thread_id,) in rows:
                mysql_server.execute(f"KILL {int(thread_id)}")
                killed.append(int(thread_id))
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_scan)
    killer.start()
    try:
        with pytest.raises(Exception) as failure:
            run_once(props)
    finally:
        killer.join()
    assert killed, "the snapshot's SELECT was never seen running"
    assert any(m in str(failure.value) for m in ("Lost connection", "killed", "gone away")), failure.value
    assert calls(log) == [["configure"], ["snapshot_aborted"]]


# -- SnapshotQuery -----------------------------------------------------------------------------------
def test_a_none_query_skips_the_tables_rows_but_not_its_structure(
    mysql_server, tables, tmp_path, plugin_dist
):
    log = tmp_path / "queries.jsonl"
    props = props_for(
        mysql_server,
        tables,
        tmp_path,
        **{
            "snapshot.query.mode": "custom",
            "snapshot.query.mode.custom.name": "dist-where",  # an entry point of the test distribution
            "snapshot.query.mode.custom.skip": "t",
            "snapshot.query.mode.custom.calls.file": str(log),
        },
    )
    records = run_once(props, f"UPDATE `{tables}`.t SET v = 'z' WHERE id = 1", server=mysql_server)
    assert ops(records) == [("r", "u", 10), ("r", "u", 20), ("u", "t", 1)]
    snapshot_rows = data(records)[:2]
    assert [r.source["snapshot"] for r in snapshot_rows] == ["first", "last"]  # type: ignore[index]
    assert sorted(created_tables(records)) == ["t", "u"]
    assert calls(log) == [
        ["snapshot_query", f"{tables}.t", ["*"]],
        ["snapshot_query", f"{tables}.u", ["*"]],
    ]


def test_the_fake_skips_the_same_table_as_the_connector(mysql_server, tables, tmp_path, plugin_dist):
    plugins = {
        "snapshot.query.mode": "custom",
        "snapshot.query.mode.custom.name": "dist-where",
        "snapshot.query.mode.custom.skip": "t",
    }
    real = data(run_once(props_for(mysql_server, tables, tmp_path, **plugins)))
    fake = FakeConnector(
        ["CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))", "CREATE TABLE u (id INT PRIMARY KEY)"],
        database=tables,
        topic_prefix="spi",
        properties=plugins,
    )
    faked = fake.snapshot({"t": [(1, "a"), (2, "b"), (3, "c")], "u": [(10,), (20,)]})

    def seen(records: Sequence[ChangeRecord]) -> list[tuple[str, Any, Any]]:
        return [(r.topic, r.after, (r.source or {}).get("snapshot")) for r in records]

    assert (
        seen(faked)
        == seen(real)
        == [
            (f"spi.{tables}.u", {"id": 10}, "first"),
            (f"spi.{tables}.u", {"id": 20}, "last"),
        ]
    )


def test_a_custom_where_reads_only_the_matching_rows(mysql_server, tables, tmp_path):
    props = props_for(
        mysql_server,
        tables,
        tmp_path,
        **{
            "table.include.list": f"{tables}\\.t",
            "snapshot.query.mode": "custom",
            "snapshot.query.mode.custom.name": f"{PLUGINS}:WhereQuery",
            "snapshot.query.mode.custom.where": "id > 1",
        },
    )
    assert ops(run_once(props)) == [("r", "t", 2), ("r", "t", 3)]
    # snapshot.select.statement.overrides still wins over the query, as in Debezium.
    overridden = run_once(
        {
            **props,
            "data.dir": str(tmp_path / "2"),
            "snapshot.select.statement.overrides": f"{tables}.t",
            f"snapshot.select.statement.overrides.{tables}.t": f"SELECT * FROM `{tables}`.t WHERE id = 1",
        }
    )
    assert ops(overridden) == [("r", "t", 1)]


# -- SnapshotLock ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [f"{PLUGINS}:MarkedGlobalLock", "dist-lock"])
def test_the_custom_lock_statement_is_what_the_server_runs(
    mysql_server, tables, tmp_path, make_snapshotter: SnapshotterFactory, plugin_dist, name
):
    general_log = GeneralLog(mysql_server)
    config = ConnectorConfig.from_mapping(
        props_for(
            mysql_server,
            tables,
            tmp_path,
            **{
                "snapshot.locking.mode": "custom",
                "snapshot.locking.mode.custom.name": name,
                "snapshot.lock.timeout.ms": "3000",
            },
        )
    )
    listener = RecordingListener()
    make_snapshotter(SnapshotSettings.from_config(config), captured=lambda t: t.database == tables).run(
        listener
    )
    sent = general_log.statements(make_snapshotter.connection_ids)
    lock = "FLUSH TABLES WITH READ LOCK /* spi-lock 3s */"
    assert lock in sent and "FLUSH TABLES WITH READ LOCK" not in sent
    # The minimal workflow around it: the lock, the consistent snapshot, released after the structure.
    assert (
        sent.index(lock)
        < sent.index("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        < sent.index("UNLOCK TABLES")
    )
    assert sent.index("UNLOCK TABLES") < next(i for i, s in enumerate(sent) if s.startswith("SELECT * FROM"))
    assert len(listener.rows(TableId(tables, "t"))) == 3


def test_a_lock_plugin_returning_none_takes_no_lock(
    mysql_server, tables, tmp_path, make_snapshotter: SnapshotterFactory
):
    general_log = GeneralLog(mysql_server)
    config = ConnectorConfig.from_mapping(
        props_for(
            mysql_server,
            tables,
            tmp_path,
            **{"snapshot.locking.mode": "custom", "snapshot.locking.mode.custom.name": f"{PLUGINS}:NoLock"},
        )
    )
    listener = RecordingListener()
    make_snapshotter(SnapshotSettings.from_config(config), captured=lambda t: t.database == tables).run(
        listener
    )
    sent = general_log.statements(make_snapshotter.connection_ids)
    assert not [s for s in sent if s.upper().startswith(("FLUSH", "LOCK", "UNLOCK"))], sent
    assert "START TRANSACTION WITH CONSISTENT SNAPSHOT" not in sent  # as snapshot.locking.mode=none
    assert len(listener.rows()) == 5


def test_a_lock_plugin_returning_none_needs_no_lock_grant(mysql_server, tables, tmp_path):
    user = mysql_server.create_user(
        "spi_no_lock_grant", "pw-spi", "SELECT, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT"
    )
    props = {
        **props_for(mysql_server, tables, tmp_path),
        "database.user": user.user,
        "database.password": user.password,
    }
    with pytest.raises(PrerequisiteError, match="RELOAD"):
        run_once(props)  # the built-in minimal mode needs RELOAD or LOCK TABLES
    no_lock = {
        **props,
        "data.dir": str(tmp_path / "no-lock"),
        "snapshot.locking.mode": "custom",
        "snapshot.locking.mode.custom.name": f"{PLUGINS}:NoLock",
    }
    assert len(data(run_once(no_lock))) == 5


# -- the snapshots guide's worked example, embedded --------------------------------------------
@pytest.fixture
def shop_snapshots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The guide's example module, imported from docs/guides/snapshots-signals.md's own text."""
    example = write_guide_example(tmp_path / "site")
    monkeypatch.syspath_prepend(str(example.parent))
    yield importlib.import_module(example.stem)
    sys.modules.pop(example.stem, None)


def test_first_capture_snapshotter_with_recent_rows_query(mysql_server, unique_db, tmp_path, shop_snapshots):
    db = unique_db
    mysql_server.execute(
        f"CREATE TABLE `{db}`.orders (id INT PRIMARY KEY, created_at DATETIME NOT NULL)",
        f"INSERT INTO `{db}`.orders VALUES (1, NOW() - INTERVAL 40 DAY), (2, NOW() - INTERVAL 2 DAY)",
        f"CREATE TABLE `{db}`.refunds (id INT PRIMARY KEY, created_at DATETIME NOT NULL)",
        f"INSERT INTO `{db}`.refunds VALUES (7, NOW() - INTERVAL 90 DAY), (8, NOW())",
    )
    properties: dict[str, Any] = {
        **props_for(mysql_server, db, tmp_path),
        "offset.storage": "file",
        "schema.history.internal": "file",
        "snapshot.mode": "custom",
        "snapshot.mode.custom.name": shop_snapshots.FirstCaptureSnapshotter,  # classes, embedded
        "snapshot.mode.custom.state.file": str(tmp_path / "snapshotted.txt"),
        "snapshot.query.mode": "custom",
        "snapshot.query.mode.custom.name": shop_snapshots.RecentRowsQuery,
        "table.include.list": f"{db}\\.orders",
    }

    def start(include: str) -> list[ChangeRecord]:
        with EmbeddedEngine({**properties, "table.include.list": include}) as engine:
            return [r for r in engine.drain() if r.kind == RecordKind.DATA]

    assert ops(start(f"{db}\\.orders")) == [("r", "orders", 2)]  # the last 30 days only
    mysql_server.execute(f"INSERT INTO `{db}`.orders VALUES (3, NOW())")  # while stopped
    # refunds is captured for the first time: its recent rows are read, orders' are not again, and
    # the stream continues from the stored offset (order 3 is not lost).
    assert ops(start(f"{db}\\.orders,{db}\\.refunds")) == [("r", "refunds", 8), ("c", "orders", 3)]
    assert (tmp_path / "snapshotted.txt").read_text().split() == [f"{db}.orders", f"{db}.refunds"]
