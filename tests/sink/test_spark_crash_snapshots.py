"""Crash tests of snapshots under the Spark sink: ``mysql-cdc run`` SIGKILLs itself (with its JVM)
through the test-only fault point ``MYSQL_CDC_TEST_KILL_AT`` (``sink/spark/faults.py``) between the
table commits of a snapshot's last batch, an initial snapshot's and a blocking one's (signalled
mid-stream). That batch's reads are in no binlog: the restart rolls the snapshot back and takes it
again. Afterwards each changelog holds every change MySQL committed once, compared with the
writer's own log (never with the connector's output), each snapshot's reads once, the current
state equals ``SELECT *`` and ``verify`` reports every table equal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from tests.connector.crash_support import wait_killed
from tests.connector.incremental_support import grant_signal_table, send_signal
from tests.sink.spark_crash_support import (
    TABLES_DDL,
    Writer,
    assert_tables_exact,
    assert_verified,
    catch_up_here,
    connector_files,
    killed_at,
    latest_meta,
    newest_batch,
    prefill,
    run_to_end,
    run_until,
    snapshot_complete,
    snapshot_done,
    spark_props,
)


@pytest.mark.slow
@pytest.mark.timeout(1200)  # two starts of the connector (a loaded machine: 500 s seen)
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
    config, log = connector_files(props, tmp_path)
    wait_killed(killed_at("commit:_changelog", config, log), log)
    _, of, landed = newest_batch(wh)
    assert snapshot_done(wh) and 1 <= len(landed) < of, (of, sorted(landed))  # its last batch

    run_until(config, log, lambda: snapshot_complete(wh), "the snapshot's last batch")
    # No writes meanwhile: each changelog holds the snapshot's reads once, no change.
    assert_tables_exact(spark, mysql_server, db, wh, Writer(mysql_server, db, 0, rows, rows), rows)
    assert "the snapshot starts again" in log.read_text()
    assert_verified(props)


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the initial snapshot here (twice), then two starts of the connector
def test_sigkill_between_the_table_commits_of_a_blocking_snapshots_last_batch_takes_it_again(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    """Mid-stream, a blocking snapshot of both tables is signalled (the ``source`` channel), and
    more transactions follow the signal. The connector dies after the first changelog commit of
    that snapshot's last batch (here its only one: the signal, every read, then streamed changes
    after the snapshot, so the batch ends outside it). The restart restores the tables the snapshot
    wrote, reads the signal again and takes the snapshot again, then streams on: each changelog
    holds the initial snapshot's reads once, the blocking snapshot's reads once (the rows MySQL
    held when it was taken again), and every streamed change once."""
    db, rows = unique_db, 20
    grant_signal_table(mysql_server, db)
    mysql_server.execute(*TABLES_DDL, *prefill(rows, rows), database=db)
    wh = tmp_path / "wh"
    signals = {"signal.data.collection": f"{db}.dbz_signal"}
    props = spark_props(mysql_server, db, tmp_path, "blocking", **signals)
    config, log = connector_files(props, tmp_path)
    writer = Writer(mysql_server, db, seed=5, rows_a=rows, rows_b=rows)
    catch_up_here(props)  # the initial snapshot, in this process (no JVM start)
    writer.write(20)
    catch_up_here(props)  # the stream before the signal: a batch outside any snapshot
    before = latest_meta(wh)
    assert before is not None and not before.get("snapshot"), before
    signal = {"data-collections": [f"{db}.a", f"{db}.b"], "type": "blocking"}
    send_signal(mysql_server, db, "sig-blocking", "execute-snapshot", signal)
    writer.write(10)  # streamed after the snapshot, in its last batch

    wait_killed(killed_at("commit:/a_changelog", config, log), log)
    meta = latest_meta(wh)
    _, of, landed = newest_batch(wh)
    # The blocking snapshot's last batch: it holds reads (``snapshot``) and ends outside the
    # snapshot; killed between its tables' commits.
    assert meta is not None and meta.get("snapshot") and snapshot_done(wh), meta
    assert "a_changelog" in landed and 1 <= len(landed) < of, (of, sorted(landed))

    writer.write(20)  # while the connector is down: the snapshot taken again reads these rows
    blocking = {t: dict(writer.rows[t]) for t in ("a", "b")}
    run_to_end(props, config, log)
    assert "the snapshot starts again" in log.read_text()
    assert_tables_exact(spark, mysql_server, db, wh, writer, rows, blocking)
    assert_verified(props)
