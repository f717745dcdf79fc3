"""Crash tests: ``mysql-cdc run`` with the Spark sink is SIGKILLed (with its JVM) while it writes
Delta tables, and restarted. Some kills land at chosen points, through the test-only fault point
``MYSQL_CDC_TEST_KILL_AT`` (``sink/spark/faults.py``): between two tables' commits of one batch,
right after all of a batch's commits, in a deferred MERGE, in a table's creation, after a
compaction's commit; others at random. Afterwards each changelog holds every change MySQL
committed exactly once, compared with the writer's own log of its changes and the rows they left
(never with the connector's output), the current state equals ``SELECT *`` and ``verify`` reports every table equal.
"""

from __future__ import annotations

import io
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.cli.verify import run_verify
from connector.config import ConnectorConfig
from connector.engine import Engine
from sink.spark import SparkSink, in_snapshot
from sink.spark.faults import KILL_AT_ENV
from tests.connector.crash_support import (
    kill,
    log_tail,
    start_connector,
    stop,
    wait_for,
    wait_killed,
    write_config,
)
from tests.sink.connector_process import lag_bytes
from tests.sink.spark_crash_support import (
    C_DDL,
    TABLES_DDL,
    Writer,
    assert_changelog_exact,
    assert_current_is_mysql,
    binlog_end,
    committed_past,
    delta_commits,
    last_operation,
    latest_meta,
    log_versions,
    newest_batch,
    prefill,
    skipped_in_log,
    snapshot_done,
)
from tests.sink.spark_support import spark_for_tests

PREFILL_A, PREFILL_B = 3000, 600


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> SparkSession:
    return spark_for_tests(tmp_path_factory.mktemp("spark-crash"))


def spark_props(server: Any, db: str, tmp_path: Path, prefix: str, **extra: str) -> dict[str, str]:
    return server.connector_properties(
        **{
            "topic.prefix": prefix,
            "database.include.list": db,
            "data.dir": str(tmp_path / "data"),
            "skipped.operations": "none",
            "poll.interval.ms": "100",
            "sink.type": "spark",
            "sink.spark.warehouse": str(tmp_path / "wh"),
            "sink.spark.master": "local[2]",
            "sink.spark.conf.spark.sql.shuffle.partitions": "2",
            "sink.spark.batch.max.interval.ms": "1000",
            **extra,
        }
    )


def killed_at(spec: str, config: Path, log: Path) -> Any:
    """The connector, to SIGKILL itself at ``spec`` (``MYSQL_CDC_TEST_KILL_AT``)."""
    return start_connector(config, log, {KILL_AT_ENV: spec})


def catch_up_here(props: dict[str, str]) -> None:
    """Run the connector in this process, on the test's warm Spark (no JVM start), until it has
    committed all the server has logged, then close it."""
    connector_config = ConnectorConfig.from_mapping(props)
    engine = Engine(connector_config, sinks=[SparkSink.from_config(connector_config)])
    try:
        engine.catch_up(timeout=900)
    finally:
        engine.close()


def appended_rows(metrics: dict[str, Any]) -> int:
    """The rows a changelog append wrote, from its commit's metrics: Spark names them
    ``numOutputRows``, delta-rs (sink.spark.changelog.appends=auto) ``num_added_rows``."""
    return int(metrics["numOutputRows"] if "numOutputRows" in metrics else metrics["num_added_rows"])


def run_to_end(props: dict[str, str], config: Path, log: Path) -> None:
    """Start the connector with no kill point, let it commit all the server has logged, stop it."""
    connector_config = ConnectorConfig.from_mapping(props)
    proc = start_connector(config, log)
    try:
        wait_for(lambda: lag_bytes(connector_config) == 0, 300, "the last change", 1.0, proc, log)
    finally:
        assert stop(proc) == 0, log_tail(log)


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


def kill_at_random(proc: Any, wh: Path, log: Path, rng: random.Random) -> None:
    before = delta_commits(wh)
    wait_for(lambda: delta_commits(wh) > before, 180, "a streaming commit", 0.02, proc, log)
    time.sleep(rng.uniform(0, 1.5))  # inside a batch's commits, between them, or after
    kill(proc)


@pytest.mark.slow
@pytest.mark.timeout(2700)  # eleven starts of the connector, each starting Spark anew
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
    config, log = write_config(props, tmp_path / "connector.properties"), tmp_path / "connector.log"
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
    wait_for(lambda: snapshot_done(wh), 300, "the snapshot to complete", 0.1, proc, log)

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

    def create_c() -> None:
        mysql_server.execute(C_DDL, database=db)
        writer.use_c = True

    points = [
        ("commit:_changelog", None, between),  # the batch's first changelog commit
        ("batch:", None, after_all),  # every commit of the batch, nothing else
        (f"merge:/{db}/b", None, in_merge_of_b),  # a deferred MERGE, before its commit
        ("create:/c_changelog", create_c, in_create),
        ("compact:/a_changelog", None, compacted),
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
        proc = start_connector(config, log)
        before_last = delta_commits(wh)
        wait_for(lambda: delta_commits(wh) > before_last, 180, "progress after the last kill", 0.1, proc, log)
    finally:
        writer.stop_event.set()
        writer.join()
        stop(proc)
    assert writer.error is None, writer.error
    assert "c" in {t for t, *_ in writer.log}

    # 3. Catch up with everything written, then compare with the writer's log and MySQL.
    connector_config = ConnectorConfig.from_mapping(props)
    engine = Engine(connector_config, sinks=[SparkSink.from_config(connector_config)])
    try:
        engine.catch_up(timeout=900)
    finally:
        engine.close()
    out = io.StringIO()
    assert run_verify(connector_config, [], out) == 0, out.getvalue()
    for table, snapshot_rows in (("a", PREFILL_A), ("b", PREFILL_B), ("c", 0)):
        assert_changelog_exact(spark, tables / f"{table}_changelog", table, writer.log, snapshot_rows)
        assert_current_is_mysql(spark, tables / table, mysql_server, db, table)
    assert sum(1 for t, *_ in writer.log if t == "a") > 50


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
