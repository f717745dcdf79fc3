"""Crash tests at chosen points: ``mysql-cdc run`` with the Spark sink SIGKILLs itself (with its
JVM) through the test-only fault point ``MYSQL_CDC_TEST_KILL_AT`` (``sink/spark/faults.py``): between
two tables' commits of one batch; right after a batch whose changelog appends landed while the
current-state MERGEs were deferred. Kills in a table's creation are in ``test_spark_crash_create.py``,
between a snapshot's last batch's commits in ``test_spark_crash_snapshots.py``, the repeated kills
under a live writer in ``test_spark_crash.py`` (modules of their own, so that ``--dist loadfile``
spreads them over the workers).
Afterwards each changelog holds every change MySQL committed exactly once, compared with the
writer's own log of its changes and the rows they left (never with the connector's output), the
current state equals ``SELECT *`` and ``verify`` reports every table equal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from tests.connector.crash_support import wait_killed
from tests.sink.spark_crash_support import (
    TABLES_DDL,
    Writer,
    appended_rows,
    assert_tables_exact,
    assert_verified,
    catch_up_here,
    connector_files,
    killed_at,
    log_versions,
    newest_batch,
    prefill,
    run_to_end,
    skipped_in_log,
    spark_props,
)


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
    config, log = connector_files(props, tmp_path)
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
    assert_tables_exact(spark, mysql_server, db, wh, writer, rows)
    assert_verified(props)


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
    config, log = connector_files(props, tmp_path)
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
    assert_tables_exact(spark, mysql_server, db, wh, writer, rows)
    assert_verified(props)
