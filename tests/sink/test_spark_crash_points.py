"""Crash tests at chosen points: ``mysql-cdc run`` with the Spark sink SIGKILLs itself (with its
JVM) through the test-only fault point ``MYSQL_CDC_TEST_KILL_AT`` (``sink/spark/faults.py``): between
two tables' commits of one batch; right after a batch whose changelog appends landed while the
current-state MERGEs were deferred; in a table's creation. The repeated kills under a live writer
are in ``test_spark_crash.py`` (a module of its own, so that xdist runs the two on two workers).
Afterwards each changelog holds every change MySQL committed exactly once, compared with the
writer's own log of its changes and the rows they left (never with the connector's output), the
current state equals ``SELECT *`` and ``verify`` reports every table equal.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.cli.verify import run_verify
from connector.config import ConnectorConfig
from tests.connector.crash_support import log_tail, start_connector, stop, wait_for, wait_killed, write_config
from tests.sink.spark_crash_support import (
    TABLES_DDL,
    Writer,
    appended_rows,
    assert_changelog_exact,
    assert_current_is_mysql,
    binlog_end,
    catch_up_here,
    committed_past,
    delta_commits,
    killed_at,
    log_versions,
    newest_batch,
    prefill,
    run_to_end,
    skipped_in_log,
    snapshot_complete,
    snapshot_done,
    spark_props,
)
from tests.sink.spark_support import spark_for_tests


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> SparkSession:
    return spark_for_tests(tmp_path_factory.mktemp("spark-crash-points"))


@pytest.mark.slow
@pytest.mark.timeout(900)  # the snapshot here, then two starts of the connector
def test_sigkill_between_two_tables_commits_of_one_batch_replays_only_what_each_lacks(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    """Transactions over two tables, one batch: the connector dies right after the first
    changelog commit of that batch lands, while the batch's other tables do not hold it. The
    replay skips, table by table, exactly the events each table holds (what the sink says it
    skipped equals what the killed batch's commits wrote), and appends the rest once."""
    db, rows = unique_db, 20
    mysql_server.execute(*TABLES_DDL, *prefill(rows, rows), database=db)
    wh = tmp_path / "wh"
    props = spark_props(mysql_server, db, tmp_path, "between")
    config, log = write_config(props, tmp_path / "connector.properties"), tmp_path / "connector.log"
    catch_up_here(props)  # the snapshot, in this process: one JVM start less
    writer = Writer(mysql_server, db, seed=3, rows_a=rows, rows_b=rows)
    writer.write(60)  # while the connector is down: its next batch spans both tables
    assert {t for t, *_ in writer.log} == {"a", "b"}

    wait_killed(killed_at("commit:_changelog", config, log), log)
    batch, of, landed = newest_batch(wh)
    # The batch writes the two changelogs; the current states' MERGEs are deferred (the default
    # sink.spark.merge.interval.ms), so they are not in it.
    assert of == 2 and 1 <= len(landed) < of, (batch, of, sorted(landed))  # between two tables
    held = {f"{db}.{t}": appended_rows(i["operationMetrics"]) for t, i in landed.items() if "_changelog" in t}
    assert held and all(n > 0 for n in held.values()), landed

    skipped_before = skipped_in_log(log.read_text())
    run_to_end(props, config, log)
    skipped = skipped_in_log(log.read_text())
    assert skipped_before == {}
    # What the sink says it skipped: for each table that holds the killed batch, its events (a
    # changelog: one row each), and nothing for the tables that did not.
    assert set(skipped) == {f"{db}.{t}" for t in landed}, (skipped, sorted(landed))
    assert {name: skipped[name] for name in held} == held
    for table in ("a", "b"):
        assert_changelog_exact(spark, wh / db / f"{table}_changelog", table, writer.log, rows)
        assert_current_is_mysql(spark, wh / db / table, mysql_server, db, table)
    out = io.StringIO()
    assert run_verify(ConnectorConfig.from_mapping(props), [], out) == 0, out.getvalue()


def assert_exact(spark: SparkSession, server: Any, db: str, wh: Path, writer: Writer, rows: int) -> None:
    for table in ("a", "b"):
        assert_changelog_exact(spark, wh / db / f"{table}_changelog", table, writer.log, rows)
        assert_current_is_mysql(spark, wh / db / table, server, db, table)


@pytest.mark.slow
@pytest.mark.timeout(600)  # one start of the connector
def test_sigkill_after_changelog_appends_with_deferred_merges_recovers_in_this_process(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    """The killed batch holds both changelogs' appends and no current-state commit: only the
    changelogs hold its changes. An ``Engine`` in this process (the repeated-SIGKILL test's last
    recovery) re-derives them from the resume point the commits recorded, as a restarted
    connector does (the between-commits test above recovers that way, MERGEs deferred too)."""
    db, rows = unique_db, 20
    mysql_server.execute(*TABLES_DDL, *prefill(rows, rows), database=db)
    wh, tables = tmp_path / "wh", tmp_path / "wh" / unique_db
    # MERGEs deferred far longer than the test: only a flush (the catch-up's end) folds them.
    props = spark_props(mysql_server, db, tmp_path, "deferred", **{"sink.spark.merge.interval.ms": "3600000"})
    config, log = write_config(props, tmp_path / "connector.properties"), tmp_path / "connector.log"
    catch_up_here(props)  # the snapshot
    snapshot_versions = {t: log_versions(tables / t) for t in ("a", "b")}
    writer = Writer(mysql_server, db, seed=11, rows_a=rows, rows_b=rows)
    writer.write(40)  # while the connector is down: its next batch spans both tables
    wait_killed(killed_at("batch:", config, log), log)
    _, of, landed = newest_batch(wh)
    assert of == 2 and sorted(landed) == ["a_changelog", "b_changelog"], (of, sorted(landed))
    assert {t: log_versions(tables / t) for t in ("a", "b")} == snapshot_versions  # no MERGE yet
    writer.write(20)  # more after the kill: the replay is more than the killed batch
    catch_up_here(props)
    assert_exact(spark, mysql_server, db, wh, writer, rows)
    out = io.StringIO()
    assert run_verify(ConnectorConfig.from_mapping(props), [], out) == 0, out.getvalue()


@pytest.mark.slow
@pytest.mark.timeout(600)  # two starts of the connector
def test_sigkill_between_the_table_commits_of_a_snapshots_last_batch_takes_the_snapshot_again(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    """The snapshot's last batch (here its only one) is killed after its first changelog commit.
    That batch ends at the completed snapshot's offset, outside the snapshot, but its reads are in
    no binlog: no replay can give them to the tables that miss them. The restart rolls the snapshot
    back and takes it again. (It used to stream on from the snapshot's position: a current state
    missed the batch's reads for good, and a snapshot taken again doubled them in the changelog
    that held them; the repeated-SIGKILL test met it as b's current state 150 rows short.)"""
    db, rows = unique_db, 20
    mysql_server.execute(*TABLES_DDL, *prefill(rows, rows), database=db)
    wh = tmp_path / "wh"
    props = spark_props(mysql_server, db, tmp_path, "snaplast")
    config, log = write_config(props, tmp_path / "connector.properties"), tmp_path / "connector.log"
    wait_killed(killed_at("commit:_changelog", config, log), log)
    _, of, landed = newest_batch(wh)
    assert snapshot_done(wh) and 1 <= len(landed) < of, (of, sorted(landed))  # its last batch

    proc = start_connector(config, log)
    try:
        wait_for(lambda: snapshot_complete(wh), 300, "the snapshot's last batch", 0.2, proc, log)
    finally:
        assert stop(proc) == 0, log_tail(log)
    # No writes meanwhile: each changelog holds the snapshot's reads once, no change.
    assert_exact(spark, mysql_server, db, wh, Writer(mysql_server, db, 0, rows, rows), rows)
    assert "the snapshot starts again" in log.read_text()
    out = io.StringIO()
    assert run_verify(ConnectorConfig.from_mapping(props), [], out) == 0, out.getvalue()


@pytest.mark.slow
@pytest.mark.timeout(900)  # three kills and a last run, each starting Spark anew
def test_sigkill_while_creating_delta_tables_recovers_without_help(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    """Killed while a Delta table is created (Delta made its log directories, not its commit 0): a
    changelog, a current state after its changelog was created, other tables created without a
    data commit, in the snapshot (its first batch creates every table, from the tables'
    structures) and while streaming. Every restart goes on by itself, and in the end the snapshot
    rows are in the changelogs exactly once and the current state equals MySQL."""
    db = unique_db
    rows_a, rows_b = 30, 20
    mysql_server.execute(
        "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20))",
        "CREATE TABLE b (k VARCHAR(10) PRIMARY KEY, n INT)",
        "INSERT INTO a VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, rows_a + 1)),
        "INSERT INTO b VALUES " + ", ".join(f"('k{i}', {i})" for i in range(rows_b)),
        database=db,
    )
    wh = tmp_path / "wh"
    props = spark_props(mysql_server, db, tmp_path, "create")
    config_file = write_config(props, tmp_path / "connector.properties")
    log_file = tmp_path / "connector.log"
    tables = wh / db

    # 1. The very first create, killed between Delta's log directories and its commit 0: the
    #    warehouse holds a_changelog/_delta_log/_staged_commits and no commit (the user's report).
    wait_killed(killed_at(f"create:/{db}/a_changelog", config_file, log_file), log_file)
    assert (tables / "a_changelog" / "_delta_log" / "_staged_commits").is_dir()
    assert delta_commits(wh) == 0

    # 2. The same for the last table the snapshot creates, b's current state: b's changelog and
    #    a's tables are created (commit 0: no data, no commit record of the sink's) and no more.
    wait_killed(killed_at(f"create:/{db}/b", config_file, log_file), log_file)
    for table in ("a_changelog", "a", "b_changelog"):
        assert log_versions(tables / table) == [0], table
    assert (tables / "b" / "_delta_log" / "_staged_commits").is_dir()
    assert log_versions(tables / "b") == []

    # 3. The snapshot completes; a table created while streaming is killed at its current state's
    #    create, its changelog created, while the other tables hold their rows.
    proc = killed_at(f"create:/{db}/c", config_file, log_file)

    wait_for(lambda: snapshot_done(wh), 300, "the snapshot to complete", 0.1, proc, log_file)
    mysql_server.execute(
        "CREATE TABLE c (id INT PRIMARY KEY, s VARCHAR(10))",
        "INSERT INTO c VALUES (1, 'x'), (2, 'y')",
        "UPDATE a SET v = 'changed' WHERE id = 3",
        "DELETE FROM b WHERE k = 'k4'",
        database=db,
    )
    wait_killed(proc, log_file)
    assert log_versions(tables / "c_changelog") == [0]
    assert (tables / "c" / "_delta_log" / "_staged_commits").is_dir()
    assert log_versions(tables / "c") == []

    # 4. No kill point: the connector recovers on its own and streams on, to a last change.
    last = binlog_end(mysql_server)
    mysql_server.execute("INSERT INTO c VALUES (3, 'last')", database=db)
    proc = start_connector(config_file, log_file)

    try:
        # (its batch's other commits complete before SIGTERM stops the connector)
        wait_for(lambda: committed_past(wh, last), 300, "the last change", 0.1, proc, log_file)
    finally:
        assert stop(proc) == 0, log_tail(log_file)

    out = io.StringIO()
    assert run_verify(ConnectorConfig.from_mapping(props), [], out) == 0, out.getvalue()
    for table, key, snapshot_rows in (("a", "id", rows_a), ("b", "k", rows_b), ("c", "id", 0)):
        rows = spark.read.format("delta").load(str(tables / f"{table}_changelog")).collect()
        reads = [r[key] for r in rows if r["__op"] == "r"]
        assert sorted(reads) == sorted(set(reads)) and len(reads) == snapshot_rows, table
        assert len({(r["__file"], r["__pos"]) for r in rows if r["__op"] == "r"}) <= 1, table
        changes = sorted((r["__op"], r[key]) for r in rows if r["__op"] != "r")
        expected = {"a": [("u", 3)], "b": [("d", "k4")], "c": [("c", 1), ("c", 2), ("c", 3)]}[table]
        assert changes == expected, table
