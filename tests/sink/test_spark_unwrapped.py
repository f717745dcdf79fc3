"""The Spark sink on records unwrapped by ExtractNewRecordState (``transforms``): the current-state
table equals the MySQL table and the changelog holds every change, whichever way deletes arrive
(``__deleted`` with ``rewrite``, a null value with the row schema in the default ``tombstone`` mode,
a real tombstone with ``delete-to-tombstone``). Records come from the connector's own event code
(the fake connector, which applies the same transform chain as the engine) into a real local Spark."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from connector.records.conversion import ConverterSettings
from connector.testing.fake import FakeConnector
from mysql_cdc_base.table_id import TableId
from sink.spark import SparkSink, SparkSinkSettings, read_current_state
from sink.spark_mapping import METADATA_NAMES
from sink.spark_reader import debezium_changelog, read_jsonl_values

UNWRAP = "io.debezium.transforms.ExtractNewRecordState"
MODES = {
    "rewrite": {"delete.tombstone.handling.mode": "rewrite", "add.fields": "op,source.ts_ms,file,pos,row"},
    "tombstone": {},
    "delete-to-tombstone": {"delete.tombstone.handling.mode": "delete-to-tombstone"},
}


@pytest.mark.parametrize("mode", list(MODES))
def test_spark_tables_from_unwrapped_records(spark: SparkSession, tmp_path: Path, mode: str) -> None:
    props = {"transforms": "unwrap", "transforms.unwrap.type": UNWRAP}
    props.update({f"transforms.unwrap.{k}": v for k, v in MODES[mode].items()})
    fake = FakeConnector(
        "CREATE TABLE orders (id INT PRIMARY KEY, qty INT, note VARCHAR(20))",
        database="shop",
        topic_prefix="srv",
        properties=props,
    )
    sink = SparkSink(
        SparkSinkSettings(str(tmp_path), master="local[2]", converter_settings=ConverterSettings())
    )
    fake.add_sink(sink)
    try:
        fake.insert(
            "orders", {"id": 1, "qty": 5, "note": "a"}, {"id": 2, "qty": 1, "note": None}, {"id": 3, "qty": 7}
        )
        fake.update("orders", {"id": 2, "qty": 1, "note": None}, {"qty": 9})
        fake.delete("orders", {"id": 1, "qty": 5, "note": "a"})
    finally:
        fake.close()
    current = read_current_state(spark, sink.settings, TableId("shop", "orders"))
    assert current is not None
    rows = sorted(tuple(r) for r in current.select("id", "qty", "note").collect())
    assert rows == [(2, 9, None), (3, 7, None)]  # what MySQL holds now
    changelog = spark.table("shop.orders_changelog")
    assert "__op" in changelog.columns and changelog.columns.count("__op") == 1
    history = [
        (r["id"], r["__deleted"], r["__op"])
        for r in changelog.orderBy("__file", "__pos", "__row").select("id", "__deleted", "__op").collect()
    ]
    ops = ["c", "c", "c", "u", "d"] if mode == "rewrite" else [None, None, None, None, "d"]
    expected = [
        (1, False, ops[0]),
        (2, False, ops[1]),
        (3, False, ops[2]),
        (2, False, ops[3]),
        (1, True, "d"),
    ]
    if mode != "rewrite":  # without add.fields the rows carry no position to order them by
        history, expected = sorted(history, key=repr), sorted(expected, key=repr)
    assert history == expected
    if mode == "rewrite":  # the metadata columns come from add.fields
        positions = changelog.select("__file", "__pos").distinct().collect()
        assert all(r["__file"] == "mysql-bin.000001" and r["__pos"] for r in positions)


def test_spark_reader_reads_unwrapped_jsonl_values(spark: SparkSession, tmp_path: Path) -> None:
    """``spark_reader.debezium_changelog`` on the jsonl sink's output of unwrapped records (rewrite
    mode with op and position fields added): typed rows, metadata columns, deletes from ``__deleted``."""
    fake = FakeConnector(
        "CREATE TABLE orders (id INT PRIMARY KEY, qty INT, price DECIMAL(8,2))",
        database="shop",
        topic_prefix="srv",
        properties={
            "transforms": "unwrap",
            "transforms.unwrap.type": UNWRAP,
            "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
            "transforms.unwrap.add.fields": "op,file,pos,row",
        },
    )
    path = tmp_path / "events.jsonl"
    fake.publish_to_jsonl(path)
    fake.insert("orders", {"id": 1, "qty": 5, "price": Decimal("1.25")}, {"id": 2, "qty": 1})
    fake.delete("orders", {"id": 1, "qty": 5, "price": Decimal("1.25")})
    fake.close()
    tables = debezium_changelog(read_jsonl_values(spark, str(path)))
    assert list(tables) == ["shop.orders"]
    frame = tables["shop.orders"]
    assert frame.columns == ["id", "qty", "price", *METADATA_NAMES]
    rows = [
        (r["id"], r["qty"], r["price"], r["__op"], r["__deleted"], r["__file"])
        for r in frame.orderBy("__pos", "__row").collect()
    ]
    assert rows == [
        (1, 5, Decimal("1.25"), "c", False, "mysql-bin.000001"),
        (2, 1, None, "c", False, "mysql-bin.000001"),
        (1, 5, Decimal("1.25"), "d", True, "mysql-bin.000001"),
    ]
