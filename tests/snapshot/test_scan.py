"""Reading rows: markers, batches, overrides, parallel readers sharing one consistent view, skipped
late tables, cancellation, schema statements, and memory that does not grow with the table."""

from __future__ import annotations

import gc
import io
import logging
import re
import time
import tracemalloc

import pymysql
import pytest

from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.table_id import TableId
from snapshot.progress import LogProgress, RichProgress, auto_progress
from snapshot.rows.scan import SnapshotCancelled
from snapshot.snapshotter import SnapshotError, SnapshotSettings
from tests.snapshot.conftest import RecordingListener, fill_rows


def only(db: str):
    return lambda t: t.database == db


@pytest.fixture
def four_tables(mysql_server: LocalMySQLServer, unique_db: str) -> list[TableId]:
    db = unique_db
    mysql_server.execute(
        f"CREATE TABLE `{db}`.t1 (id INT PRIMARY KEY, v VARCHAR(8))",
        f"INSERT INTO `{db}`.t1 VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        f"CREATE TABLE `{db}`.t2 (id INT PRIMARY KEY)",
        f"INSERT INTO `{db}`.t2 VALUES (10)",
        f"CREATE TABLE `{db}`.t3 (id INT PRIMARY KEY)",
        f"CREATE TABLE `{db}`.t4 (id INT PRIMARY KEY)",
        f"INSERT INTO `{db}`.t4 VALUES (40), (41)",
    )
    return [TableId(db, f"t{i}") for i in range(1, 5)]


@pytest.mark.parametrize("fetch_size", [1, 2, None])
def test_markers_follow_debezium(make_snapshotter, unique_db, four_tables, fetch_size):
    t1, t2, t3, t4 = four_tables
    listener = RecordingListener()
    make_snapshotter(SnapshotSettings(fetch_size=fetch_size), captured=only(unique_db)).run(listener)
    assert listener.markers(t1) == ["first", "true", "last_in_data_collection"]
    assert listener.markers(t2) == ["last_in_data_collection"]  # single row: "last" wins over "first"
    assert listener.markers(t3) == []
    assert listener.markers(t4) == ["first_in_data_collection", "last"]
    assert listener.rows(t1) == [(1, "a"), (2, "b"), (3, "c")]
    kinds = [e[0] for e in listener.events]
    assert kinds[0] == "position" and kinds[-1] == "complete"
    # Per table: start, its rows, end; tables in name order; empty tables reported too.
    assert [(e[0], e[1]) for e in listener.events if e[0] in ("start", "end")] == [
        (k, t) for t in four_tables for k in ("start", "end")
    ]
    assert [e[2] for e in listener.events if e[0] == "end"] == [3, 1, 0, 2]


def test_last_table_empty_leaves_no_last_marker(make_snapshotter, unique_db, four_tables):
    # The engine rewrites its buffered last record to "last" (Debezium does the same).
    t1, t2, t3, _ = four_tables
    listener = RecordingListener()
    make_snapshotter(captured=lambda t: t in (t1, t2, t3)).run(listener)
    assert "last" not in listener.markers()
    assert listener.markers()[-1] == "last_in_data_collection"


def test_single_row_snapshot_is_last(make_snapshotter, four_tables):
    listener = RecordingListener()
    make_snapshotter(captured=lambda t: t == four_tables[1]).run(listener)
    assert listener.markers() == ["last"]


def test_schema_statements_in_debezium_order(make_snapshotter, mysql_server, unique_db, four_tables):
    listener = RecordingListener()
    make_snapshotter(captured=only(unique_db)).run(listener, data=False)
    ddl = [e for e in listener.events if e[0] == "ddl"]
    charset, collation = mysql_server.query(
        f"SELECT default_character_set_name, default_collation_name FROM information_schema.schemata "
        f"WHERE schema_name = '{unique_db}'"
    )[0]
    server_cs, server_coll = mysql_server.query("SELECT @@character_set_server, @@collation_server")[0]
    assert ddl[0] == ("ddl", "", f"SET character_set_server={server_cs}, collation_server={server_coll};")
    mine = [(db, text) for _, db, text in ddl if db == unique_db]
    assert mine[:4] == [(unique_db, f"DROP TABLE IF EXISTS `{unique_db}`.`t{i}`") for i in range(1, 5)]
    assert mine[4:7] == [
        (unique_db, f"DROP DATABASE IF EXISTS `{unique_db}`"),
        (unique_db, f"CREATE DATABASE `{unique_db}` CHARSET {charset} COLLATE {collation}"),
        (unique_db, f"USE `{unique_db}`"),
    ]
    created = [text for _, text in mine[7:]]
    assert created == [
        mysql_server.query(f"SHOW CREATE TABLE `{unique_db}`.`t{i}`")[0][1] for i in range(1, 5)
    ]
    # data=False (no_data / recovery): position and structure, no rows.
    assert listener.position is not None and not listener.started_tables()
    assert listener.events[-1] == ("complete",) and listener.sql_mode is not None


def test_schema_of_other_databases_unless_store_only_captured(
    make_snapshotter, mysql_server, unique_db, four_tables
):
    other = unique_db[:40] + "_other"
    mysql_server.execute(
        f"DROP DATABASE IF EXISTS `{other}`",
        f"CREATE DATABASE `{other}`",
        f"CREATE TABLE `{other}`.x (id INT)",
    )
    try:
        everything = RecordingListener()
        make_snapshotter(captured=lambda t: t == four_tables[0]).run(everything, data=False)
        assert f"CREATE DATABASE `{other}`" in " ".join(everything.ddl())
        assert not any(d.startswith("DROP TABLE IF EXISTS `mysql`") for d in everything.ddl())  # builtin
        tables_only = RecordingListener()
        make_snapshotter(
            SnapshotSettings(store_only_captured_tables_ddl=True), captured=lambda t: t == four_tables[0]
        ).run(tables_only, data=False)
        assert [d for d in tables_only.ddl() if d.startswith("DROP TABLE")] == [
            f"DROP TABLE IF EXISTS `{unique_db}`.`t1`"
        ]
        dbs_only = RecordingListener()
        make_snapshotter(
            SnapshotSettings(store_only_captured_databases_ddl=True), captured=lambda t: t == four_tables[0]
        ).run(dbs_only, data=False)
        assert [d for d in dbs_only.ddl() if d.startswith("DROP TABLE")] == [
            f"DROP TABLE IF EXISTS `{unique_db}`.`t{i}`" for i in range(1, 5)
        ]
    finally:
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{other}`")


def test_select_override_and_projection(make_snapshotter, unique_db, four_tables):
    t1, _, _, t4 = four_tables
    settings = SnapshotSettings(select_overrides={t1: f"SELECT id, v FROM `{unique_db}`.t1 WHERE id >= 2"})
    listener = RecordingListener()
    make_snapshotter(
        settings, captured=lambda t: t in (t1, t4), projection=lambda t: ["id"] if t == t4 else None
    ).run(listener)
    assert listener.rows(t1) == [(2, "b"), (3, "c")]
    assert listener.markers(t1) == ["first", "last_in_data_collection"]
    assert [e[2] for e in listener.events if e[0] == "start"] == [None, 2]  # no estimate for overrides
    assert listener.rows(t4) == [(40,), (41,)]


def test_include_collection_list_and_table_include_order(make_snapshotter, unique_db, four_tables):
    import re

    t1, t2, t3, t4 = four_tables
    settings = SnapshotSettings(
        include_collections=(re.compile(rf"{unique_db}\.t[124]"),),
        table_include_order=(re.compile(rf"{unique_db}\.t4"), re.compile(rf"{unique_db}\..*")),
    )
    listener = RecordingListener()
    make_snapshotter(settings, captured=only(unique_db)).run(listener)
    assert listener.started_tables() == [t4, t1, t2]
    assert listener.markers(t4)[0] == "first" and listener.markers(t2)[-1] == "last"


def test_tables_argument_restricts_rows_not_schema(make_snapshotter, unique_db, four_tables):
    listener = RecordingListener()
    make_snapshotter(captured=only(unique_db)).run(listener, tables=[four_tables[3]])
    assert listener.started_tables() == [four_tables[3]]
    assert len([d for d in listener.ddl() if d.startswith("CREATE TABLE")]) >= 4
    with pytest.raises(SnapshotError, match="not captured or not found"):
        make_snapshotter(captured=only(unique_db)).run(
            RecordingListener(), tables=[TableId(unique_db, "nope")]
        )


def test_tables_created_after_the_snapshot_started_are_skipped(
    make_snapshotter, mysql_server, unique_db, four_tables
):
    def at_first_table(table_id, estimate, ts):
        if table_id == four_tables[0]:
            mysql_server.execute(
                f"CREATE TABLE `{unique_db}`.late (id INT PRIMARY KEY)",
                f"INSERT INTO `{unique_db}`.late VALUES (1)",
            )

    listener = RecordingListener(hooks={"on_table_start": at_first_table})
    make_snapshotter(captured=only(unique_db)).run(listener)
    assert listener.started_tables() == four_tables
    assert not any("late" in d for d in listener.ddl())


@pytest.fixture
def big_tables(mysql_server: LocalMySQLServer, unique_db: str) -> list[TableId]:
    ids = []
    for name in ("p1", "p2", "p3"):
        mysql_server.execute(f"CREATE TABLE `{unique_db}`.{name} (id INT PRIMARY KEY)")
        fill_rows(mysql_server, f"`{unique_db}`.{name}", 20000)
        ids.append(TableId(unique_db, name))
    return ids


def test_parallel_readers_share_one_consistent_view(make_snapshotter, mysql_server, unique_db, big_tables):
    def after_unlock(table_id, estimate, ts):
        if table_id == big_tables[0]:
            # Committed after the position: no reader may see these rows.
            for t in big_tables:
                mysql_server.execute(
                    f"INSERT INTO `{t.database}`.{t.table} VALUES (1000000)",
                    f"DELETE FROM `{t.database}`.{t.table} WHERE id = 1",
                )

    listener = RecordingListener(hooks={"on_table_start": after_unlock})
    factory = make_snapshotter
    factory(SnapshotSettings(max_threads=3, fetch_size=500), captured=only(unique_db)).run(listener)
    for t in big_tables:
        assert sorted(v[0] for v in listener.rows(t)) == list(range(1, 20001))
        markers = listener.markers(t)
        assert markers.count("true") == 19998
    assert len(set(factory.connection_ids)) == 3
    rows = [e for e in listener.events if e[0] == "row"]
    assert rows[0][3] == "first" and rows[0][1] == big_tables[0]
    assert rows[-1][3] == "last" and rows[-1][1] == big_tables[2]
    # Callbacks stay on the caller's thread even though three connections read at once.
    assert len(listener.thread_ids) == 1
    # The three scans overlapped in time (tables interleave in the callbacks).
    tables_in_order = [e[1] for e in rows]
    switches = sum(1 for a, b in zip(tables_in_order, tables_in_order[1:], strict=False) if a != b)
    assert switches > 2


def test_parallel_reader_error_stops_the_snapshot(make_snapshotter, unique_db, big_tables):
    settings = SnapshotSettings(
        max_threads=2, select_overrides={big_tables[1]: f"SELECT * FROM `{unique_db}`.no_such_table"}
    )
    with pytest.raises(pymysql.err.ProgrammingError, match="no_such_table"):
        make_snapshotter(settings, captured=only(unique_db)).run(RecordingListener())


def test_cancel_releases_locks_without_reading_the_rest(
    make_snapshotter, mysql_server, unique_db, big_tables
):
    holder: dict[str, object] = {}

    def on_row(table_id, values, marker):
        if values[0] == 100:
            holder["snapshotter"].cancel()  # type: ignore[attr-defined]

    snapshotter = make_snapshotter(
        SnapshotSettings(locking_mode="extended", fetch_size=50), captured=only(unique_db)
    )
    holder["snapshotter"] = snapshotter
    listener = RecordingListener(hooks={"on_row": on_row})
    started = time.monotonic()
    with pytest.raises(SnapshotCancelled):
        snapshotter.run(listener)
    assert len(listener.rows()) < 1000
    # The global lock of the extended mode went away with the connection.
    mysql_server.execute(f"INSERT INTO `{unique_db}`.p1 VALUES (2000000)")
    assert time.monotonic() - started < 10


def test_listener_error_aborts_and_releases_the_lock(make_snapshotter, mysql_server, unique_db, big_tables):
    def boom(table_id, values, marker):
        if values[0] == 10:
            raise RuntimeError("sink down")

    with pytest.raises(RuntimeError, match="sink down"):
        make_snapshotter(SnapshotSettings(locking_mode="extended"), captured=only(unique_db)).run(
            RecordingListener(hooks={"on_row": boom})
        )
    mysql_server.execute(f"INSERT INTO `{unique_db}`.p2 VALUES (2000000)")  # would block if still locked


class _Counter:
    rows = 0

    def on_schema_statement(self, ddl, database):
        pass

    def on_position(self, position):
        pass

    def on_table_start(self, table_id, estimated_rows, source_ts_ms):
        pass

    def on_row(self, table_id, values, marker):
        self.rows += 1

    def on_table_end(self, table_id, rows):
        pass

    def on_complete(self):
        pass


def test_memory_does_not_grow_with_the_table(make_snapshotter, mysql_server, unique_db):
    """40,000 rows of 1 kB (40 MB of row data): the streaming scan's peak Python allocation stays
    under 8 MB, while reading the same table into a buffered result needs far more."""
    mysql_server.execute(f"CREATE TABLE `{unique_db}`.wide (id INT PRIMARY KEY, payload TEXT)")
    fill_rows(mysql_server, f"`{unique_db}`.wide", 40000, payload_bytes=1000)
    counter = _Counter()
    snapshotter = make_snapshotter(captured=only(unique_db))
    gc.collect()
    tracemalloc.start()
    try:
        snapshotter.run(counter)
        _, streaming_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        with mysql_server.connect() as conn, conn.cursor() as cur:  # the control: a buffered read
            cur.execute(f"SELECT * FROM `{unique_db}`.wide")
            assert len(cur.fetchall()) == 40000
        _, buffered_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert counter.rows == 40000
    assert streaming_peak < 8 * 1024 * 1024, streaming_peak
    assert buffered_peak > 40 * 1024 * 1024, buffered_peak


def test_log_progress_lines(make_snapshotter, unique_db, big_tables, caplog):
    caplog.set_level(logging.INFO, logger="snapshot.progress")
    progress = LogProgress(interval=0.0)
    make_snapshotter(
        SnapshotSettings(fetch_size=5000), captured=lambda t: t == big_tables[0], progress=progress
    ).run(_Counter())
    lines = [r.getMessage() for r in caplog.records if r.name == "snapshot.progress"]
    assert (
        lines[0].startswith("Snapshot of 1 tables, about ") and "rows by the servers' estimates" in lines[0]
    )
    assert lines[1] == f"Exporting data from table '{big_tables[0]}' (1 of 1 tables)"
    assert any("Exported 5000 of " in line and str(big_tables[0]) in line for line in lines)
    assert "Finished exporting 20000 records" in lines[-1]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal(make_snapshotter, unique_db, big_tables):
    assert isinstance(auto_progress(io.StringIO()), LogProgress)
    terminal = _Terminal()
    chosen = auto_progress(terminal)
    chosen.close()
    assert isinstance(chosen, RichProgress)
    progress = RichProgress(terminal, width=200)
    make_snapshotter(captured=lambda t: t == big_tables[0], progress=progress).run(_Counter())
    output = terminal.getvalue()
    assert str(big_tables[0]) in output and "20000/20000" in output and "rows/s" in output


def test_the_progress_bars_show_all_tables_with_the_time_remaining_above_each_table(
    make_snapshotter, unique_db, big_tables
):
    terminal = _Terminal()
    progress = RichProgress(terminal, width=200)
    make_snapshotter(captured=lambda t: t in big_tables[:2], progress=progress).run(_Counter())
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue())  # colours, cursor moves
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    overall = [n for n, line in enumerate(lines) if line.startswith("all 2 tables")]
    assert overall and "40000/40000" in lines[overall[-1]], lines[-4:]
    # The last frame: the overall bar, then one bar per table.
    assert [str(t) in lines[overall[-1] + 1 + n] for n, t in enumerate(big_tables[:2])] == [True, True]
    # The overall bar had a time remaining while the tables were read (rich's "-:--:--" until known).
    assert any(re.search(r"\d:\d\d:\d\d$", lines[n]) for n in overall), [lines[n] for n in overall]
