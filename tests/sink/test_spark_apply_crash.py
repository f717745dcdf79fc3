"""``mysql-cdc spark-apply`` against a real MySQL server, the real Kafka broker and real Spark: a job
whose driver is SIGKILLed again and again, while a writer keeps writing, still applies every event
exactly once (compared with the events in Kafka) and its current state equals MySQL."""

from __future__ import annotations

import random
import threading
import time
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
    table_paths,
    verify_against_mysql,
)
from tests.sink.spark_workload import TABLES, Workload


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_a_job_whose_driver_is_killed_five_times_applies_every_event_exactly_once(
    spark: SparkSession, mysql_server: Any, unique_db: str, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    db, prefix = unique_db, kafka_broker.unique("crash")
    mysql_server.execute(*TABLES, database=db)
    work = Workload(mysql_server, db, seed=5)
    work.run(40)
    connector = ConnectorProcess(connector_props(mysql_server, db, prefix, kafka_broker, tmp_path), tmp_path)
    job = ApplyJob(
        job_properties(
            kafka_broker,
            [prefix],
            tmp_path / "job",
            # Micro-batches of up to 1,000 records: the writer keeps writing while the job is down, and
            # catching up 100 records at a time (one MERGE per table each) took 20 minutes loaded.
            **{"spark.apply.max.offsets.per.trigger": "1000", "spark.apply.trigger.interval.ms": "300"},
        ),
        tmp_path / "job",
    )
    stop_writing = threading.Event()

    def keep_writing() -> None:  # while the job is killed and restarted
        while not stop_writing.is_set():
            work.run(3)
            time.sleep(1.0)

    writer = threading.Thread(target=keep_writing, daemon=True)
    rng = random.Random(3)
    kills = 0
    try:
        connector.wait_caught_up(timeout=300)
        writer.start()
        for _ in range(5):
            # Mid-run: after a micro-batch or two of this start, at a random moment of the next.
            job.wait_for_batches(job.committed_batches() + rng.randint(1, 2), timeout=600)
            time.sleep(rng.uniform(0.0, 3.0))
            job.kill()
            kills += 1
            job.start()
        stop_writing.set()
        writer.join(timeout=120)
        work.add_tier_column()
        work.run(20)
        connector.wait_caught_up(timeout=300)
        job.wait_caught_up(kafka_broker, timeout=900)
    finally:
        stop_writing.set()
        assert connector.stop() == 0, connector.log()
        job_status = job.stop()
    assert job_status == 0, job.log()
    assert kills == 5 and job.starts == 6

    report = verify_against_mysql(
        spark, job.settings, prefix, connector.config, [TableId(db, t) for t in KEYED]
    )
    for table in KEYED:
        assert f"{db}.{table}: EQUAL" in report, report
    events = kafka_events(kafka_broker, prefix, db)
    assert set(events) == {*KEYED, "audit"}
    for table, expected in events.items():
        _, changelog = table_paths(job.settings, prefix, TableId(db, table))
        got = changelog_events(spark, changelog)
        assert Counter(got) == Counter(expected), table  # no event missing, none twice
