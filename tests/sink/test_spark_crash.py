"""Crash test: ``mysql-cdc run`` with the Spark sink is SIGKILLed (with its JVM) again and again
under a live writer while it writes Delta tables, and restarted. Some kills land at chosen points,
through the test-only fault point ``MYSQL_CDC_TEST_KILL_AT`` (``sink/spark/faults.py``): between two
tables' commits of one batch, right after all of a batch's commits, in a deferred MERGE, in a
table's creation, after a compaction's commit, after a checkpoint; others at random. Afterwards each changelog holds
every change MySQL committed exactly once, compared with the writer's own log of its changes and
the rows they left (never with the connector's output), the current state equals ``SELECT *`` and
``verify`` reports every table equal. The single kills at chosen points are in
``test_spark_crash_points.py``, ``..._snapshots.py`` and ``..._create.py`` (modules of their own:
xdist runs them on other workers).
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sink.spark import in_snapshot
from tests.connector.crash_support import (
    kill,
    log_tail,
    start_connector,
    stop,
    wait_for,
    wait_killed,
)
from tests.sink.spark_crash_support import (
    C_DDL,
    TABLES_DDL,
    Writer,
    assert_changelog_exact,
    assert_current_is_mysql,
    assert_verified,
    catch_up_here,
    connector_files,
    delta_commits,
    killed_at,
    last_operation,
    latest_meta,
    log_versions,
    newest_batch,
    prefill,
    snapshot_complete,
    spark_props,
)

# The snapshot spans four Spark commits (sink.spark.batch.max.events=500): enough to be killed
# after its first and resume; more rows only lengthen every catch-up.
PREFILL_A, PREFILL_B = 1500, 300


def kill_at_random(proc: Any, wh: Path, log: Path, rng: random.Random) -> None:
    before = delta_commits(wh)
    wait_for(lambda: delta_commits(wh) > before, 180, "a streaming commit", 0.02, proc, log)
    time.sleep(rng.uniform(0, 1.5))  # inside a batch's commits, between them, or after
    kill(proc)


@pytest.mark.slow
@pytest.mark.timeout(2700)  # ten starts of the connector, each starting Spark anew
def test_repeated_sigkills_lose_and_duplicate_nothing(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(*TABLES_DDL, *prefill(PREFILL_A, PREFILL_B), database=db)
    props = spark_props(
        mysql_server,
        db,
        tmp_path,
        "crash",
        **{
            "max.batch.size": "400",
            "sink.spark.batch.max.events": "500",  # the snapshot spans several Spark commits
            "sink.spark.optimize.interval.commits": "4",  # compactions while streaming
            "sink.spark.merge.interval.ms": "3000",  # deferred MERGEs while streaming
        },
    )
    config, log = connector_files(props, tmp_path)
    wh, tables = tmp_path / "wh", tmp_path / "wh" / db
    rng = random.Random(99)

    def snapshot_running() -> bool:
        meta = latest_meta(wh)
        return meta is not None and in_snapshot(meta["batch_offset"])

    # 1. Killed in the middle of the snapshot (after its first committed batch): it must restart.
    proc = start_connector(config, log)
    wait_for(snapshot_running, 180, "a committed snapshot batch", 0.02, proc, log)
    time.sleep(rng.uniform(0, 0.5))
    assert snapshot_running()
    kill(proc)
    proc = start_connector(config, log)
    # (its last batch in every table: the writer's changes all come after the snapshot's reads)
    wait_for(lambda: snapshot_complete(wh), 300, "the snapshot to complete", 0.1, proc, log)

    # 2. A writer runs; the connector is killed at chosen points and at random ones.
    writer = Writer(mysql_server, db, seed=5, rows_a=PREFILL_A, rows_b=PREFILL_B)
    writer.start()

    def between() -> None:
        _, of, landed = newest_batch(wh)
        assert 1 <= len(landed) < of, (of, sorted(landed))

    def after_all() -> None:
        _, of, landed = newest_batch(wh)
        assert len(landed) == of, (of, sorted(landed))

    def in_merge_of_b() -> None:
        assert re.search(rf"killing the process at merge of \S*/{db}/b\n", log.read_text()), log_tail(log)

    def in_create() -> None:
        assert (tables / "c_changelog" / "_delta_log" / "_staged_commits").is_dir()
        assert log_versions(tables / "c_changelog") == []

    def compacted() -> None:
        assert last_operation(tables / "a_changelog") == "OPTIMIZE"

    def checkpointed() -> None:  # a checkpoint written, the expired log entries not yet removed
        log_dir = tables / "a_changelog" / "_delta_log"
        newest = max(int(p.name.split(".")[0]) for p in log_dir.glob("*.checkpoint.parquet"))
        assert newest == log_versions(tables / "a_changelog")[-1], newest

    def create_c() -> None:
        mysql_server.execute(C_DDL, database=db)
        writer.use_c = True

    points = [
        ("commit:_changelog", None, between),  # the batch's first changelog commit
        ("batch:", None, after_all),  # every commit of the batch, nothing else
        (f"merge:/{db}/b", None, in_merge_of_b),  # a deferred MERGE, before its commit
        ("create:/c_changelog", create_c, in_create),
        ("compact:/a_changelog", None, compacted),  # before delta-rs checkpoints it
        ("checkpoint:/a_changelog", None, checkpointed),  # between a checkpoint and the log cleanup
    ]
    try:
        kill_at_random(proc, wh, log, rng)
        for n, (spec, before, check) in enumerate(points):
            if before is not None:
                before()
            wait_killed(killed_at(spec, config, log), log, timeout=600)
            check()
            if n == 2:
                kill_at_random(start_connector(config, log), wh, log, rng)
    finally:
        writer.stop_event.set()
        writer.join()
        stop(proc)
    assert writer.error is None, writer.error
    assert "c" in {t for t, *_ in writer.log}

    # 3. Recover from the last kill (right after a checkpoint of delta-rs's) in this process, on the
    #    test's warm Spark (one JVM start less, the same recovery code), with the writer stopped:
    #    the catch-up reads to the binlog's end, then folds every deferred MERGE. Then compare with
    #    the writer's log and MySQL. (A first try of this once left b's current state 150 rows
    #    short: not the in-process catch-up but a real gap, shown again by this test once its
    #    first random kill landed between the table commits of the snapshot's last batch; the
    #    restart streamed on without b's snapshot rows. Now it takes the snapshot again:
    #    test_spark_crash_snapshots.py kills there on purpose.)
    catch_up_here(props)
    for table, snapshot_rows in (("a", PREFILL_A), ("b", PREFILL_B), ("c", 0)):
        assert_changelog_exact(spark, tables / f"{table}_changelog", table, writer.log, snapshot_rows)
        assert_current_is_mysql(spark, tables / table, mysql_server, db, table)
    assert_verified(props)
    assert sum(1 for t, *_ in writer.log if t == "a") > 50
