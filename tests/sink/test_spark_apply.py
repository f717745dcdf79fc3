"""``mysql-cdc spark-apply`` against a real MySQL server, the real Kafka broker and real Spark:
the job's tables equal, row for row, those the in-process sink builds from the same binlog range.
(The job whose driver is SIGKILLed again and again is in ``test_spark_apply_crash.py``: a module of
its own, so that ``--dist loadfile`` runs the two long tests on two workers.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from mysql_cdc_base.table_id import TableId
from sink.spark import settings_from_config
from tests.kafka_support import KafkaBroker
from tests.sink.connector_process import ConnectorProcess
from tests.sink.spark_apply_support import (
    KEYED,
    ApplyJob,
    connector_props,
    job_properties,
    rows_of,
    table_paths,
    wait_stored_through_marker,
)
from tests.sink.spark_workload import TABLES, Workload


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_tables_applied_from_kafka_equal_the_in_process_sinks_tables_of_the_same_binlog_range(
    spark: SparkSession, mysql_server: Any, unique_db: str, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    db, prefix = unique_db, kafka_broker.unique("same")
    mysql_server.execute(*TABLES, database=db)
    work = Workload(mysql_server, db, seed=11)
    work.run(30)
    # One connector run feeds both: Kafka (for the job) and the in-process Delta sink.
    props = connector_props(
        mysql_server,
        db,
        prefix,
        kafka_broker,
        tmp_path,
        **{
            "sink.type": "kafka,spark",
            "sink.spark.warehouse": str(tmp_path / "in-process"),
            "sink.spark.batch.max.interval.ms": "1000",
            "sink.spark.conf.spark.sql.shuffle.partitions": "2",
        },
    )
    connector = ConnectorProcess(props, tmp_path)
    try:
        connector.wait_caught_up(timeout=300)
        work.run(50)
        work.add_tier_column()
        work.run(30)
        work.truncate_ledger()
        work.run(20)
        wait_stored_through_marker(connector, mysql_server, db, timeout=300)
    finally:
        assert connector.stop() == 0, connector.log()

    job = ApplyJob(
        job_properties(
            kafka_broker, [prefix], tmp_path / "job", **{"spark.apply.max.offsets.per.trigger": "150"}
        ),
        tmp_path / "job",
    )
    try:
        job.wait_caught_up(kafka_broker, timeout=600)
    finally:
        assert job.stop() == 0, job.log()

    in_process = settings_from_config(connector.config)
    for table in (*KEYED, "audit"):
        table_id = TableId(db, table)
        current, changelog = table_paths(job.settings, prefix, table_id)
        names = in_process.names(table_id)
        pairs = [(changelog, in_process.location(names[1]))]
        if table in KEYED:
            pairs.append((current, in_process.location(names[0])))
        for ours, theirs in pairs:
            a = spark.read.format("delta").load(ours)
            b = spark.read.format("delta").load(theirs)
            assert [(f.name, f.dataType) for f in a.schema.fields] == [
                (f.name, f.dataType) for f in b.schema.fields
            ], (table, ours)
            assert rows_of(a, a.columns) == rows_of(b, b.columns), (table, ours)
            assert a.count() > 0, (table, ours)
