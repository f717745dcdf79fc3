"""Crash tests in a Delta table's creation: ``mysql-cdc run`` with the Spark sink SIGKILLs itself
(with its JVM) through the test-only fault point ``MYSQL_CDC_TEST_KILL_AT=create:...``
(``sink/spark/faults.py``) after Delta made the table's log directories and before its commit 0, in
the snapshot and while streaming. Every restart recovers by itself, with the snapshot rows in the
changelogs exactly once and the current state equal to MySQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from tests.connector.crash_support import wait_for, wait_killed
from tests.sink.spark_crash_support import (
    assert_verified,
    binlog_end,
    committed_past,
    connector_files,
    delta_commits,
    killed_at,
    log_versions,
    run_until,
    snapshot_done,
    spark_props,
)


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
    config_file, log_file = connector_files(props, tmp_path)
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
    # (its batch's other commits complete before SIGTERM stops the connector)
    run_until(config_file, log_file, lambda: committed_past(wh, last), "the last change", 0.1)

    assert_verified(props)
    for table, key, snapshot_rows in (("a", "id", rows_a), ("b", "k", rows_b), ("c", "id", 0)):
        rows = spark.read.format("delta").load(str(tables / f"{table}_changelog")).collect()
        reads = [r[key] for r in rows if r["__op"] == "r"]
        assert sorted(reads) == sorted(set(reads)) and len(reads) == snapshot_rows, table
        assert len({(r["__file"], r["__pos"]) for r in rows if r["__op"] == "r"}) <= 1, table
        changes = sorted((r["__op"], r[key]) for r in rows if r["__op"] != "r")
        expected = {"a": [("u", 3)], "b": [("d", "k4")], "c": [("c", 1), ("c", 2), ("c", 3)]}[table]
        assert changes == expected, table
