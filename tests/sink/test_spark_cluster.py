"""The connector as the driver of a Spark standalone cluster: ``mysql-cdc run`` with
``sink.spark.master=spark://...`` (a master and one worker on loopback) snapshots and streams a
mixed workload into Delta tables whose tasks run on the cluster's executor. Afterwards ``verify``
finds every keyed table equal to MySQL and each changelog holds every emitted event exactly once.

The test process has its own local SparkSession (to read the tables and for ``verify``) and a
process has one SparkContext, so the connector runs as a subprocess.
"""

from __future__ import annotations

import io
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import LongType

from connector.cli.verify import run_verify
from mysql_cdc_base.table_id import TableId
from sink.spark import settings_from_config
from tests.sink.connector_process import ConnectorProcess
from tests.sink.spark_cluster import SparkCluster
from tests.sink.spark_workload import TABLES, Workload

KEYED = ("accounts", "ledger", "places")


def emitted(jsonl: Path, db: str) -> dict[str, list[tuple[Any, ...]]]:
    """The change events the connector emitted, per table, as changelog rows identify them."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for line in jsonl.read_text().splitlines():
        value = json.loads(line)["value"]
        payload = value.get("payload", value) if isinstance(value, dict) else None
        if not payload or "op" not in payload:
            continue  # tombstones and schema changes
        s = payload["source"]
        if s.get("db") == db and s.get("table"):
            entry = (payload["op"], s["file"], s["pos"], s["row"], s.get("snapshot") or "false")
            out.setdefault(s["table"], []).append(entry)
    return out


def changelog(spark: SparkSession, location: str) -> list[tuple[Any, ...]]:
    rows = spark.read.format("delta").load(location).select("__op", "__file", "__pos", "__row", "__snapshot")
    return [tuple(r) for r in rows.collect()]


@pytest.mark.slow
def test_connector_as_driver_of_a_standalone_cluster_writes_delta_tables_equal_to_mysql(
    spark: SparkSession, spark_cluster: SparkCluster, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(*TABLES, database=db)
    work = Workload(mysql_server, db, seed=7)
    work.run(40)  # before the connector starts: the snapshot reads these rows
    snapshot_accounts = len(work.accounts)

    props = mysql_server.connector_properties(
        **{
            "name": "cluster",
            "topic.prefix": "cluster",
            "database.include.list": db,
            "data.dir": str(tmp_path / "data"),
            "skipped.operations": "none",
            "poll.interval.ms": "100",
            "sink.type": "spark,jsonl",
            "sink.jsonl.path": str(tmp_path / "events.jsonl"),
            "sink.spark.warehouse": str(tmp_path / "wh"),
            "sink.spark.master": spark_cluster.master_url,
            "sink.spark.batch.max.interval.ms": "2000",
            "sink.spark.conf.spark.app.name": f"mysql-cdc-{db}",
            "sink.spark.conf.spark.cores.max": "1",
            "sink.spark.conf.spark.executor.memory": "512m",
            "sink.spark.conf.spark.sql.shuffle.partitions": "2",
        }
    )
    # The executors' Python workers: this interpreter (the machine's own python3 need not have
    # pyspark's dependencies or the same version).
    connector = ConnectorProcess(props, tmp_path, env={"PYSPARK_PYTHON": sys.executable})
    try:
        connector.wait_caught_up(timeout=300)  # the snapshot
        work.run(60)
        work.add_tier_column()
        work.run(30)
        work.truncate_ledger()
        work.run(30)
        connector.wait_caught_up(timeout=300)
    finally:
        status = connector.stop()
    assert status == 0, connector.log()

    # The connector's application ran its tasks on the cluster's executor.
    registered = re.findall(
        rf"Registered app {re.escape(f'mysql-cdc-{db}')} with ID (app-\S+)",
        spark_cluster.master_log.read_text(),
    )
    assert len(registered) == 1, spark_cluster.logs()
    app_id = registered[0]
    assert app_id in spark_cluster.applications(), spark_cluster.logs()
    executor_log = spark_cluster.executor_logs(app_id)
    assert re.search(r"Finished task .* in stage", executor_log), executor_log[-4000:]

    out = io.StringIO()
    assert run_verify(connector.config, [], out) == 0, out.getvalue()
    report = out.getvalue()
    for table in KEYED:
        assert f"{db}.{table}: EQUAL" in report, report

    settings = settings_from_config(connector.config)
    events = emitted(tmp_path / "events.jsonl", db)
    assert set(events) == {*KEYED, "audit"}
    for table, expected in events.items():
        location = settings.location(settings.names(TableId(db, table))[1])
        got = changelog(spark, location)
        assert Counter(got) == Counter(expected), table  # every emitted event, exactly once
        streamed = [e for e in expected if e[0] != "r"]  # (snapshot reads share one position)
        assert len(set(streamed)) == len(streamed), table  # the connector ran once: no replays
    ops = Counter(op for op, *_ in events["accounts"])
    assert set(ops) == {"r", "c", "u", "d"}, ops
    assert ops["r"] == snapshot_accounts
    assert "t" in {op for op, *_ in events["ledger"]}
    # Delta has no interval type: TIME is kept as BIGINT microseconds (verify compared the values).
    ledger = spark.read.format("delta").load(settings.location(settings.names(TableId(db, "ledger"))[0]))
    assert ledger.schema["took"].dataType == LongType()
