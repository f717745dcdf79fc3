"""How the Spark sink writes a batch to a current-state table: appended when every key in it is new
to the table (MySQL inserted it, or an initial snapshot read it into an empty table), merged
otherwise, so that the table never holds a key twice, whatever the batch holds; and a MERGE reads
only the files whose key range the batch touches."""

from __future__ import annotations

from pathlib import Path

import orjson
from pyspark.sql import SparkSession

from ddl.model import JdbcType
from tests.sink.spark_support import Emitter, col, make_table, new_sink

J = JdbcType
ITEMS = make_table(
    "app",
    "items",
    [col("id", "INT", J.INTEGER, optional=False), col("qty", "INT", J.INTEGER)],
    primary_key=["id"],
)


def operations(spark: SparkSession, warehouse: Path) -> list[tuple[str, str | None]]:
    """The current-state table's commits, oldest first: (operation, write mode)."""
    history = spark.sql(f"DESCRIBE HISTORY delta.`{warehouse / 'app' / 'items'}`").collect()
    return [
        (r["operation"], (r["operationParameters"] or {}).get("mode"))
        for r in sorted(history, key=lambda r: r["version"])
    ]


def rows(spark: SparkSession) -> list[tuple[int, int]]:
    return sorted((r["id"], r["qty"]) for r in spark.table("app.items").collect())


def test_batches_of_new_keys_are_appended_and_others_merged(spark: SparkSession, tmp_path: Path) -> None:
    em = Emitter()
    sink = new_sink(tmp_path / "wh")
    sink.send(em.insert(ITEMS, [1, 10], [2, 20]))
    sink.flush()
    # New keys only, though one is updated and one deleted inside the batch.
    sink.send(
        [*em.insert(ITEMS, [3, 30], [4, 40]), *em.update(ITEMS, [3, 30], [3, 31]), *em.delete(ITEMS, [4, 40])]
    )
    sink.flush()
    sink.send([*em.insert(ITEMS, [5, 50]), *em.update(ITEMS, [1, 10], [1, 11])])  # 1 is in the table
    sink.flush()
    sink.send(em.delete(ITEMS, [2, 20]))
    sink.flush()
    assert rows(spark) == [(1, 11), (3, 31), (5, 50)]
    data_commits = [op for op in operations(spark, tmp_path / "wh") if op[0] != "CREATE TABLE"]
    assert data_commits == [("WRITE", "Append"), ("WRITE", "Append"), ("MERGE", None), ("MERGE", None)]


def test_a_snapshot_into_a_table_with_rows_merges(spark: SparkSession, tmp_path: Path) -> None:
    """A second snapshot (snapshot.mode=always, or a blocking one) reads rows the table holds."""
    em = Emitter()
    sink = new_sink(tmp_path / "wh")
    sink.send([*em.snapshot_rows(ITEMS, [[1, 10], [2, 20]], last=True)])
    sink.flush()
    sink.send(em.insert(ITEMS, [3, 30]))
    sink.flush()
    again = Emitter(pos=em.pos + 1000)
    sink.send(again.snapshot_rows(ITEMS, [[1, 12], [3, 30], [4, 40]], last=True))
    sink.flush()
    assert rows(spark) == [(1, 12), (2, 20), (3, 30), (4, 40)]
    data_commits = [op for op in operations(spark, tmp_path / "wh") if op[0] != "CREATE TABLE"]
    assert data_commits == [("WRITE", "Append"), ("WRITE", "Append"), ("MERGE", None)]


def test_custom_message_keys_are_always_merged(spark: SparkSession, tmp_path: Path) -> None:
    """With message.key.columns a key need not be unique in MySQL: an insert may meet its key."""
    em = Emitter()
    sink = new_sink(tmp_path / "wh", keys_are_primary=False)
    sink.send(em.insert(ITEMS, [1, 10]))
    sink.flush()
    sink.send(em.insert(ITEMS, [1, 11]))  # another MySQL row with the same message key
    sink.flush()
    assert rows(spark) == [(1, 11)]
    data_commits = [op for op in operations(spark, tmp_path / "wh") if op[0] != "CREATE TABLE"]
    assert data_commits == [("MERGE", None), ("MERGE", None)]


def test_a_merge_skips_files_outside_the_batch_key_range(spark: SparkSession, tmp_path: Path) -> None:
    """The files of keys 1-3 are gone from storage: a MERGE that read them would fail."""
    em = Emitter()
    sink = new_sink(tmp_path / "wh")
    for first in (1, 101, 201):  # three appends: files with key ranges 1-3, 101-103, 201-203
        sink.send(em.insert(ITEMS, *[[k, 0] for k in range(first, first + 3)]))
        sink.flush()
    table = tmp_path / "wh" / "app" / "items"
    first_append = min(
        (p for p in (table / "_delta_log").glob("*.json") if '"operation":"WRITE"' in p.read_text()),
        key=lambda p: p.name,
    )
    added = [
        orjson.loads(line)["add"]["path"]
        for line in first_append.read_text().splitlines()
        if line.startswith('{"add"')
    ]
    assert added
    for name in added:
        (table / name).unlink()
    sink.send([*em.update(ITEMS, [102, 0], [102, 5]), *em.delete(ITEMS, [103, 0])])
    sink.flush()
    kept = spark.table("app.items").where("id > 100").collect()
    assert sorted((r["id"], r["qty"]) for r in kept) == [(101, 0), (102, 5), (201, 0), (202, 0), (203, 0)]
