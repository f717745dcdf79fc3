"""Which Delta tables exist: ``mysql-cdc snapshot --table`` and the include/exclude lists decide.

A table the snapshot does not read (``--table``, i.e. ``snapshot.include.collection.list``) gets
no empty Delta tables, which would look like a table MySQL holds no rows of: its tables come with
its first streamed change. An excluded table never gets any."""

from __future__ import annotations

import io
from pathlib import Path

from pyspark.sql import SparkSession

from connector.cli.snapshot import snapshot_command
from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from sink.spark import SparkSink


def delta_tables(wh: Path) -> set[str]:
    """``database/table`` of every Delta table in the warehouse (a directory with a commit)."""
    return {
        f"{log.parent.parent.name}/{log.parent.name}"
        for log in wh.glob("*/*/_delta_log")
        if any(log.glob("*.json"))
    }


def rows(spark: SparkSession, wh: Path, db: str, table: str) -> list[tuple[object, ...]]:
    frame = spark.read.format("delta").load(str(wh / db / table))
    return sorted(tuple(r) for r in frame.collect())


def test_snapshot_of_one_table_creates_only_its_delta_tables_and_excluded_tables_get_none(
    spark: SparkSession, mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(20))",
        "CREATE TABLE orders (id INT PRIMARY KEY, amount INT)",
        "CREATE TABLE audit (id INT PRIMARY KEY, what VARCHAR(20))",
        "INSERT INTO customers VALUES (1, 'ann'), (2, 'bob')",
        "INSERT INTO orders VALUES (10, 5), (11, 6)",
        "INSERT INTO audit VALUES (1, 'x')",
        database=db,
    )
    wh = tmp_path / "wh"
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "filters",
            "database.include.list": db,
            "table.exclude.list": f"{db}\\.audit",
            "data.dir": str(tmp_path / "data"),
            "sink.type": "spark",
            "sink.spark.warehouse": str(wh),
            "sink.spark.merge.interval.ms": "0",
        }
    )
    config = ConnectorConfig.from_mapping(props)
    assert snapshot_command(config, [f"{db}.customers"], out=io.StringIO()) == 0
    assert delta_tables(wh) == {f"{db}/customers", f"{db}/customers_changelog"}
    assert rows(spark, wh, db, "customers") == [(1, "ann"), (2, "bob")]

    # Streaming from the snapshot's position: orders' tables come with its first change, and hold
    # what was streamed (its older rows were never snapshotted, as --table asked).
    mysql_server.execute(
        "INSERT INTO orders VALUES (12, 7)",
        "INSERT INTO audit VALUES (2, 'y')",
        "UPDATE customers SET name = 'cid' WHERE id = 1",
        database=db,
    )
    engine = Engine(config, sinks=[SparkSink.from_config(config)])
    try:
        engine.catch_up(timeout=600)
    finally:
        engine.close()
    assert delta_tables(wh) == {
        f"{db}/customers",
        f"{db}/customers_changelog",
        f"{db}/orders",
        f"{db}/orders_changelog",
    }
    assert rows(spark, wh, db, "orders") == [(12, 7)]
    assert rows(spark, wh, db, "customers") == [(1, "cid"), (2, "bob")]
