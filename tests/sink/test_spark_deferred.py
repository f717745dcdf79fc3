"""Deferred current-state MERGEs (``sink.spark.merge.interval.ms``, sink/spark/deferred.py): the
changelog is appended every batch, the current state folds the changes later; a crash in between
loses nothing and applies nothing twice, in process (a sink dropped without close) and as a
SIGKILL of ``mysql-cdc run`` at the deferred MERGE (``MYSQL_CDC_TEST_KILL_AT=merge:...``)."""

from __future__ import annotations

import io
import random
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.cli.verify import run_verify
from connector.config import ConfigError, ConnectorConfig
from sink.spark import SparkSink, in_snapshot
from sink.spark.deferred import fold
from sink.spark.faults import KILL_AT_ENV
from tests.connector.crash_support import kill, start_connector, wait_for, wait_killed
from tests.sink.spark_crash_support import latest_meta
from tests.sink.spark_orders import (
    AUDIT,
    ORDERS,
    Model,
    changelog_ids,
    current_rows,
    data_ids,
    random_order,
    workload,
)
from tests.sink.spark_support import BASE_PROPS, Emitter, new_sink


@pytest.mark.timeout(1800)  # three sinks on a loaded machine
def test_current_state_lags_until_due_and_a_crash_replays_the_unmerged_changes(
    spark: SparkSession, tmp_path: Path
) -> None:
    rng = random.Random(17)
    em, model = Emitter(), Model()
    first = workload(em, model, rng, 30)
    sink = new_sink(tmp_path / "wh", batch_max_events=20, merge_interval_ms=3_600_000)
    sink.send(first)
    sink.flush()  # every deferred MERGE: the current state is exact
    assert current_rows(spark) == model.expected()
    merged = model.expected()

    second = workload(em, model, rng, 60)
    sink.send(second)  # full batches of 20 are committed while sending
    sink._cadence.wait()
    # The changelog holds what was committed so far, the current state none of it yet.
    held = changelog_ids(spark)
    assert len(held) > len(data_ids(first))
    assert current_rows(spark) == merged
    # The resume point stays before the changes the current state has not folded.
    assert sink.committed_offset() == first[-1].offset

    # A crash: dropped without close; the engine replays from the resume point, in other cuts.
    restarted = new_sink(tmp_path / "wh", merge_interval_ms=3_600_000)
    assert restarted.committed_offset() == first[-1].offset
    for start in range(0, len(second), 13):
        restarted.send(second[start : start + 13])
    restarted.flush()
    assert current_rows(spark) == model.expected()
    assert changelog_ids(spark) == data_ids(first + second)  # no event twice, none missing
    assert restarted.committed_offset() == second[-1].offset
    restarted.close()


@pytest.mark.timeout(1800)
def test_a_due_merge_runs_while_no_event_comes_and_close_merges_the_rest(
    spark: SparkSession, tmp_path: Path
) -> None:
    rng = random.Random(23)
    em, model = Emitter(), Model()
    first = workload(em, model, rng, 10)
    sink = new_sink(tmp_path / "wh", batch_max_events=1000, merge_interval_ms=1000)
    sink.send(first)
    sink.flush()
    now = [0.0]
    sink._merges._clock = lambda: now[0]
    records = workload(em, model, rng, 40)
    sink.send(records)
    sink._cadence.drain()  # one batch: its current-state steps are deferred
    assert current_rows(spark) != model.expected()
    sink.commit_due()  # not due yet
    sink._cadence.wait()
    assert current_rows(spark) != model.expected()
    now[0] = 1.0
    sink.commit_due()  # the periodic offset flush: the MERGEs are due, the worker runs them
    sink._cadence.wait()
    assert current_rows(spark) == model.expected()
    assert sink.committed_offset() == records[-1].offset
    sink.close()

    more = workload(em, model, rng, 10)
    slow = new_sink(tmp_path / "wh", merge_interval_ms=3_600_000)
    slow.send(first + records + more)
    slow._cadence.drain()
    assert current_rows(spark) != model.expected()
    slow.close()
    assert current_rows(spark) == model.expected()
    assert changelog_ids(spark) == data_ids(first + records + more)


@pytest.mark.timeout(1800)
def test_an_interrupted_second_snapshot_restores_only_the_tables_it_wrote(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A current state whose MERGE is deferred keeps the first snapshot's commit as its newest one.
    A second snapshot, interrupted before writing to it (a restart whose offset store still held
    the first snapshot's offset takes it again), must not restore that table to its version
    before the first snapshot: only what the interrupted snapshot wrote is undone."""
    rng = random.Random(29)
    em, model = Emitter(), Model()
    wh = tmp_path / "wh"
    model.rows = {k: random_order(rng, k) for k in range(1, 21)}
    snapshot = em.snapshot_rows(AUDIT, [["snapshot", 1]]) + em.snapshot_rows(
        ORDERS, list(model.rows.values()), last=True
    )
    snapshotted = model.expected()
    sink = new_sink(wh)  # merge.interval.ms at its default: streamed MERGEs wait
    sink.send(snapshot)
    sink._cadence.drain()
    streamed = workload(em, model, rng, 20)
    sink.send(streamed)
    sink._cadence.drain()
    assert current_rows(spark) == snapshotted  # the streamed changes wait for their MERGE
    del sink  # a crash

    again = new_sink(wh)
    again.send(em.snapshot_rows(AUDIT, [["snapshot", 2]]))  # a second snapshot, then a crash
    again._cadence.drain()
    del again

    restarted = new_sink(wh)
    assert current_rows(spark) == snapshotted  # not restored to before the first snapshot
    assert changelog_ids(spark) == data_ids(snapshot + streamed)
    restarted.send(streamed)  # the replay from the resume point
    restarted.flush()
    assert current_rows(spark) == model.expected()
    assert changelog_ids(spark) == data_ids(snapshot + streamed)
    assert sorted(
        tuple(r) for r in spark.sql("SELECT what, n FROM shop.audit_changelog WHERE __op = 'r'").collect()
    ) == [("snapshot", 1)]
    restarted.close()


def test_folding_steps_keeps_the_net_effect() -> None:
    from pyspark.sql.types import IntegerType, StructField, StructType

    from sink.spark.batch import RowsStep

    schema = StructType([StructField("id", IntegerType()), StructField("v", IntegerType())])
    a = RowsStep(schema, ("id",), {(1,): (1, 1), (2,): (2, 2)}, False, None, inserts_only=True)
    b = RowsStep(schema, ("id",), {(2,): None, (3,): (3, 3)}, False, None, inserts_only=False)
    both = fold(a, b)
    assert both is not None and both.net == {(1,): (1, 1), (2,): None, (3,): (3, 3)}
    assert not both.inserts_only
    truncated = RowsStep(schema, ("id",), {(4,): (4, 4)}, True, None)
    assert fold(a, truncated) is truncated
    other = RowsStep(StructType([StructField("id", IntegerType())]), ("id",), {}, False, None)
    assert fold(a, other) is None


def test_merge_properties_are_checked(tmp_path: Path) -> None:
    props = {**BASE_PROPS, "sink.spark.warehouse": str(tmp_path)}
    for key, bad in (("sink.spark.merge.interval.ms", "-1"), ("sink.spark.merge.max.rows", "0")):
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            SparkSink.from_config(ConnectorConfig.from_mapping({**props, key: bad}))
    sink = SparkSink.from_config(
        ConnectorConfig.from_mapping(
            {**props, "sink.spark.merge.interval.ms": "0", "sink.spark.merge.max.rows": "7"}
        )
    )
    assert sink.settings.merge_interval_ms == 0 and sink.settings.merge_max_rows == 7
    assert not sink._merges.enabled


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_sigkill_during_a_deferred_merge_loses_and_doubles_nothing(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
        "INSERT INTO a VALUES " + ", ".join(f"({i}, 'v{i}', 0)" for i in range(1, 41)),
        database=db,
    )
    wh = tmp_path / "wh"
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "deferred",
            "database.include.list": db,
            "data.dir": str(tmp_path / "data"),
            "skipped.operations": "none",
            "poll.interval.ms": "100",
            "offset.flush.interval.ms": "500",
            "sink.type": "spark",
            "sink.spark.warehouse": str(wh),
            "sink.spark.master": "local[2]",
            "sink.spark.conf.spark.sql.shuffle.partitions": "2",
            "sink.spark.batch.max.interval.ms": "500",
            "sink.spark.merge.interval.ms": "4000",
        }
    )
    config_file = tmp_path / "connector.properties"
    config_file.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    log_file = tmp_path / "connector.log"
    proc = start_connector(config_file, log_file, {KILL_AT_ENV: f"merge:/{db}/a"})

    def snapshot_done() -> bool:
        meta = latest_meta(wh)
        return meta is not None and meta["batch_offset"] is not None and not in_snapshot(meta["batch_offset"])

    changes = 0

    def change(*statements: str) -> None:
        nonlocal changes
        mysql_server.execute(*statements, database=db)
        changes += len(statements)

    try:
        wait_for(snapshot_done, 300, "the snapshot to complete", 0.1, proc, log_file)
        for i in range(1, 21):  # streamed in several batches, their MERGE deferred
            change(f"UPDATE a SET n = n + 1 WHERE id = {i}", f"INSERT INTO a VALUES ({100 + i}, 'new', {i})")
            if i % 5 == 0:
                change(f"DELETE FROM a WHERE id = {30 + i // 5}")
    except BaseException:
        kill(proc)
        raise
    wait_killed(proc, log_file)  # killed at the deferred MERGE of a
    current = spark.read.format("delta").load(str(wh / db / "a"))
    assert current.count() == 40 and current.where("n > 0").count() == 0  # nothing folded yet
    held = spark.read.format("delta").load(str(wh / db / "a_changelog")).where("__op != 'r'").count()
    assert 0 < held <= changes

    # Restarted without the kill point: it resumes before the unmerged changes, and goes on.
    change("UPDATE a SET v = 'last' WHERE id = 1")
    proc = start_connector(config_file, log_file)
    try:
        wait_for(
            lambda: _changelog_changes(spark, wh / db) >= changes, 300, "the last change", 1.0, proc, log_file
        )
    finally:
        proc.send_signal(signal.SIGTERM)  # close merges everything
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            kill(proc)
    assert proc.returncode == 0, log_file.read_text(errors="replace")[-4000:]

    rows = spark.read.format("delta").load(str(wh / db / "a_changelog")).collect()
    positions = [(r["__file"], r["__pos"], r["__row"], r["__op"]) for r in rows if r["__op"] != "r"]
    assert len(positions) == len(set(positions)) == changes  # none doubled, none missing
    state = spark.read.format("delta").load(str(wh / db / "a")).collect()
    mine = sorted((r["id"], r["v"], r["n"]) for r in state)
    assert mine == sorted(tuple(r) for r in mysql_server.query(f"SELECT id, v, n FROM {db}.a"))
    out = io.StringIO()
    assert run_verify(ConnectorConfig.from_mapping(props), [], out) == 0, out.getvalue()


def _changelog_changes(spark: SparkSession, tables: Path) -> int:
    try:
        return spark.read.format("delta").load(str(tables / "a_changelog")).where("__op != 'r'").count()
    except Exception:  # noqa: BLE001 - not readable yet
        return 0
