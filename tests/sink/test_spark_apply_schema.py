"""Columns renamed, dropped and retyped mid-stream, against a real server, the real Kafka broker and
real Spark: the current-state Delta table equals MySQL's ``SELECT *`` column by column, under the
in-process sink (``sink.type=spark``) and under ``spark-apply`` (the job reads the same connector's
Kafka topics). Rows not written since a rename must keep their values under the new name.

One Spark session for the module, and the job runs in it (``apply_stream``, the code of
``mysql-cdc spark-apply``) rather than in a process of its own: one JVM for the whole module.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.config import ConnectorConfig
from connector.engine import Engine
from ddl.model import JdbcType
from mysql_cdc_base.table_id import TableId
from sink.spark import settings_from_config
from sink.spark.apply import MicroBatchApplier, apply_settings, apply_stream
from tests.kafka_support import KafkaBroker
from tests.sink.spark_apply_support import (
    committed_offsets,
    connector_props,
    end_offsets,
    job_properties,
    table_paths,
)
from tests.sink.spark_support import Emitter, col, make_table, new_sink

BIG = 2**40  # only fits the retyped column (INT -> BIGINT)
PADDING_TABLES = 16


def stream_schema_changes(server: Any, db: str, engine: Engine) -> None:
    """Rename, drop, retype and widen ``items``' columns, with rows written before and after each
    change and rows left untouched since (ids 3 and 5 are never written after the snapshot/insert)."""
    steps = [
        ["INSERT INTO items VALUES (4, 'four', 4, 'n4', 'l4'), (5, 'five', 5, 'n5', 'l5')",
         "UPDATE items SET qty = 10 WHERE id = 1"],
        ["ALTER TABLE items RENAME COLUMN name TO title",
         "INSERT INTO items VALUES (6, 'six', 6, 'n6', 'l6')",
         "UPDATE items SET qty = 20 WHERE id = 2"],
        ["ALTER TABLE items DROP COLUMN note",
         "INSERT INTO items VALUES (7, 'seven', 7, 'l7')"],
        ["ALTER TABLE items MODIFY qty BIGINT",
         f"INSERT INTO items VALUES (8, 'eight', {BIG}, 'l8')",
         f"UPDATE items SET qty = {BIG + 4} WHERE id = 4"],
        ["ALTER TABLE items MODIFY label VARCHAR(40)",
         "INSERT INTO items VALUES (9, 'nine', 9, 'a label longer than eight')"],
    ]  # fmt: skip
    for statements in steps:
        server.execute(*statements, database=db)
        engine.catch_up(timeout=120)  # each change in a batch (and Kafka transaction) of its own


def mysql_rows(server: Any, db: str, table: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    with server.connect(db) as conn, conn.cursor() as cur:
        cur.execute(f"SELECT * FROM `{table}` ORDER BY 1")
        return [d[0] for d in cur.description], [tuple(r) for r in cur.fetchall()]


def assert_equals_mysql(spark: SparkSession, path: str, server: Any, db: str, table: str) -> None:
    columns, expected = mysql_rows(server, db, table)
    frame = spark.read.format("delta").load(path)
    assert frame.columns == columns, path
    got = [tuple(r) for r in frame.orderBy(columns[0]).collect()]
    assert got == expected, path


def run_job(
    spark: SparkSession, props: dict[str, str], broker: str, timeout: float = 300
) -> MicroBatchApplier:
    """``apply_stream`` until every subscribed record is applied or the job stops; the applier."""
    settings = apply_settings(props)
    query = apply_stream(spark, settings)
    applier: MicroBatchApplier = query.applier  # type: ignore[attr-defined]
    pattern = re.compile(settings.topics_regex or "|".join(re.escape(t) for t in settings.topics))
    checkpoint = Path(settings.checkpoint_location)
    deadline = time.monotonic() + timeout
    try:
        while query.isActive and time.monotonic() < deadline:
            done = committed_offsets(checkpoint)
            ends = end_offsets(broker, pattern)
            if done is not None and ends and all(done.get(tp, -1) >= end for tp, end in ends.items()):
                break
            time.sleep(0.5)
        else:
            if query.isActive:
                raise AssertionError(f"the job did not apply every record within {timeout:.0f}s")
    finally:
        query.stop()
    return applier


def start_connector(
    server: Any, db: str, prefix: str, broker: KafkaBroker, tmp_path: Path, **extra: str
) -> Engine:
    server.execute(
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(10), qty INT, note VARCHAR(20), label VARCHAR(8))",
        "INSERT INTO items VALUES (1, 'one', 1, 'n1', 'l1'), (2, 'two', 2, 'n2', 'l2'), (3, 'three', 3, 'n3', 'l3')",
        # The schema change topic is every table's: with more tables, a table's changes sit further
        # down it than in the table's own topic.
        *(f"CREATE TABLE other_{i} (id INT PRIMARY KEY)" for i in range(PADDING_TABLES)),
        database=db,
    )
    config = ConnectorConfig.from_mapping(connector_props(server, db, prefix, broker, tmp_path, **extra))
    engine = Engine(config)
    engine.catch_up(timeout=180)  # the snapshot (rows 1-3)
    return engine


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_renamed_dropped_and_retyped_columns_keep_every_rows_values_in_process_and_in_spark_apply(
    spark: SparkSession, mysql_server: Any, unique_db: str, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    db, prefix = unique_db, kafka_broker.unique("cols")
    engine = start_connector(
        mysql_server,
        db,
        prefix,
        kafka_broker,
        tmp_path,
        **{
            "sink.type": "kafka,spark",
            "sink.spark.warehouse": str(tmp_path / "in-process"),
        },
    )
    try:
        stream_schema_changes(mysql_server, db, engine)
    finally:
        engine.close()
    columns, _ = mysql_rows(mysql_server, db, "items")
    assert columns == ["id", "title", "qty", "label"]

    in_process = settings_from_config(engine.config)
    current = in_process.location(in_process.names(TableId(db, "items"))[0])
    assert_equals_mysql(spark, current, mysql_server, db, "items")

    # Few records per micro-batch: Spark's Kafka source shares them among the topics in proportion
    # to what each has waiting, so the table's records after a change arrive micro-batches before
    # the schema change topic's record of it.
    props = job_properties(
        kafka_broker,
        [prefix],
        tmp_path / "job",
        **{"spark.apply.max.offsets.per.trigger": "8", "spark.apply.trigger.interval.ms": "100"},
    )
    applier = run_job(spark, props, kafka_broker)
    assert applier.error is None, applier.error
    assert applier.early_topics > 0  # topics applied while Spark read the rest of their micro-batch
    current, _ = table_paths(apply_settings(props), prefix, TableId(db, "items"))
    assert_equals_mysql(spark, current, mysql_server, db, "items")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_spark_apply_without_the_schema_change_topic_stops_at_a_rename_naming_table_column_and_setting(
    spark: SparkSession, mysql_server: Any, unique_db: str, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    db, prefix = unique_db, kafka_broker.unique("norename")
    engine = start_connector(mysql_server, db, prefix, kafka_broker, tmp_path)
    try:
        stream_schema_changes(mysql_server, db, engine)
    finally:
        engine.close()
    props = job_properties(
        kafka_broker, [prefix], tmp_path / "job", **{"spark.apply.max.offsets.per.trigger": "3"}
    )
    del props["topics.regex"]
    props["topics"] = f"{prefix}.{db}.items"  # the table's topic alone
    applier = run_job(spark, props, kafka_broker)
    error = str(applier.error)
    assert applier.error is not None
    assert f"{db}.items" in error and "name" in error and "title" in error, error
    assert f"add the schema change topic {prefix} to topics" in error, error
    # Nothing after the rename is applied: the table keeps the old column, with its values.
    current, _ = table_paths(apply_settings(props), prefix, TableId(db, "items"))
    frame = spark.read.format("delta").load(current)
    assert "name" in frame.columns and "title" not in frame.columns
    assert frame.where("name IS NULL").count() == 0


def test_a_rename_the_in_process_sink_cannot_apply_yet_survives_a_restart_before_the_tables_next_event(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A table with a column whose Spark type its schema change event does not make certain
    (GEOMETRY): its new row type waits for its next event, but the rename is applied at once, so a
    restart after a batch that moved the resume point past the schema change loses nothing."""
    v1 = make_table(
        "rs",
        "items",
        [
            col("id", "INT", JdbcType.INTEGER, optional=False),
            col("name", "VARCHAR", JdbcType.VARCHAR, length=10),
            col("g", "GEOMETRY", JdbcType.OTHER),
        ],
        ["id"],
    )
    v2 = make_table("rs", "items", [v1.columns[0], v1.columns[1].with_(name="title"), v1.columns[2]], ["id"])
    other = make_table("rs", "other", [col("id", "INT", JdbcType.INTEGER, optional=False)], ["id"])
    em = Emitter()
    sink = new_sink(tmp_path / "wh")
    sink.send(em.insert(v1, [1, "one", None], [2, "two", None]))
    sink.flush()
    sink.send([*em.ddl(v2, "ALTER TABLE items RENAME COLUMN name TO title"), *em.insert(other, [1])])
    sink.flush()
    sink.close()

    sink = new_sink(tmp_path / "wh")  # a restart: resumes after the rename
    sink.send(em.insert(v2, [3, "three", None]))
    sink.flush()
    sink.close()
    frame = spark.table("rs.items")
    assert frame.columns == ["id", "title", "g"]
    assert sorted(tuple(r) for r in frame.collect()) == [
        (1, "one", None),
        (2, "two", None),
        (3, "three", None),
    ]
