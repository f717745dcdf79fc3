"""The scale-out pipeline end to end: two MySQL servers, a connector for each writing into the real
Kafka broker, and ``mysql-cdc spark-apply`` as the driver of a Spark standalone cluster (a master
and a worker on loopback, started with pyspark's ``spark-class``). The job lands both servers'
tables in one warehouse, each equal to ``SELECT *`` on its server, and its tasks ran on the
cluster's executor."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from mysql_cdc_base.table_id import TableId
from tests.kafka_support import KafkaBroker
from tests.sink.connector_process import ConnectorProcess
from tests.sink.spark_apply_support import (
    KEYED,
    ApplyJob,
    changelog_events,
    connector_props,
    job_properties,
    kafka_events,
    verify_against_mysql,
)
from tests.sink.spark_cluster import SparkCluster
from tests.sink.spark_workload import TABLES, Workload


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_two_servers_through_kafka_land_in_one_warehouse_on_a_standalone_cluster_equal_to_mysql(
    spark: SparkSession,
    spark_cluster: SparkCluster,
    mysql_server: Any,
    fresh_mysql_server: Any,
    unique_db: str,
    kafka_broker: KafkaBroker,
    tmp_path: Path,
) -> None:
    # The same database name on both servers: the topic prefix keeps their tables apart.
    db = unique_db
    fresh_mysql_server.execute(f"CREATE DATABASE `{db}`")
    servers = {kafka_broker.unique("east"): mysql_server, kafka_broker.unique("west"): fresh_mysql_server}
    workloads, connectors = {}, {}
    for seed, (prefix, server) in enumerate(servers.items()):
        server.execute(*TABLES, database=db)
        workloads[prefix] = Workload(server, db, seed=20 + seed)
        workloads[prefix].run(30)
    try:
        for prefix, server in servers.items():
            workdir = tmp_path / prefix
            workdir.mkdir()
            connectors[prefix] = ConnectorProcess(
                connector_props(server, db, prefix, kafka_broker, workdir), workdir
            )
        for prefix in servers:
            connectors[prefix].wait_caught_up(timeout=300)
            workloads[prefix].run(40)
        for prefix in servers:
            connectors[prefix].wait_caught_up(timeout=300)
    finally:
        for connector in connectors.values():
            assert connector.stop() == 0, connector.log()

    app_name = f"spark-apply-{kafka_broker.namespace}"
    job = ApplyJob(
        job_properties(
            kafka_broker,
            list(servers),
            tmp_path / "job",
            **{
                "sink.spark.master": spark_cluster.master_url,
                "sink.spark.conf.spark.app.name": app_name,
                "sink.spark.conf.spark.cores.max": "1",
                "sink.spark.conf.spark.executor.memory": "512m",
                "spark.apply.max.offsets.per.trigger": "400",
            },
        ),
        tmp_path / "job",
        # The executors' Python workers: this interpreter.
        env={"PYSPARK_PYTHON": sys.executable},
    )
    try:
        job.wait_caught_up(kafka_broker, timeout=900)
    finally:
        assert job.stop() == 0, job.log()

    # The job's application ran its tasks (the Kafka reads) on the cluster's executor.
    registered = re.findall(
        rf"Registered app {re.escape(app_name)} with ID (app-\S+)", spark_cluster.master_log.read_text()
    )
    assert len(registered) == 1, spark_cluster.logs()
    executor_log = spark_cluster.executor_logs(registered[0])
    assert re.search(r"Finished task .* in stage", executor_log), executor_log[-4000:]

    for prefix in servers:
        config = connectors[prefix].config
        report = verify_against_mysql(spark, job.settings, prefix, config, [TableId(db, t) for t in KEYED])
        for table in KEYED:
            assert f"{db}.{table}: EQUAL" in report, (prefix, report)
        events = kafka_events(kafka_broker, prefix, db)
        for table, expected in events.items():
            changelog = job.settings.sink_settings(prefix).location(
                job.settings.sink_settings(prefix).names(TableId(db, table))[1]
            )
            assert Counter(changelog_events(spark, changelog)) == Counter(expected), (prefix, table)
    # Catalog names carry the prefix: the two servers' tables do not clash.
    names = {job.settings.sink_settings(p).names(TableId(db, "accounts"))[0] for p in servers}
    assert len(names) == 2, names
