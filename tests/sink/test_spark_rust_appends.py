"""Changelog appends committed by delta-rs (``sink.spark.changelog.appends=auto``,
``sink/spark/rust_appends.py``) on a local warehouse: the commits are delta-rs's, they carry the
sink's commit metadata that recovery reads, plain Spark and delta-rs read the same rows as from
Spark's appends, an append that adds a column goes to Spark, and ``spark`` keeps every append in
Spark."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from deltalake import DeltaTable as RustDeltaTable
from pyspark.sql import SparkSession

from connector.config import ConfigError, ConnectorConfig
from ddl.model import ChangeType
from sink.spark.commits import CommitMeta
from sink.spark.rust_appends import local_path
from sink.spark.settings import settings_from_config
from tests.sink.spark_orders import J, Model, changelog_ids, current_rows, data_ids, workload
from tests.sink.spark_support import BASE_PROPS, Emitter, col, make_table, new_sink


def append_engines(path: Path) -> list[str]:
    """The engine of each data append to the table, oldest first."""
    history = RustDeltaTable(str(path)).history()
    return [
        str(h.get("engineInfo", ""))
        for h in sorted(history, key=lambda h: int(h["version"]))
        if h.get("operation") == "WRITE" and (h.get("operationParameters") or {}).get("mode") == "Append"
    ]


def test_local_path_of_file_uris_only() -> None:
    assert local_path("file:/tmp/wh") == "/tmp/wh"
    assert local_path("file:///tmp/w%20h") == "/tmp/w h"
    assert local_path("/tmp/wh") == "/tmp/wh"
    assert local_path("s3a://bucket/wh") is None
    assert local_path("hdfs://nn:8020/wh") is None


def test_changelog_appends_are_delta_rs_commits_that_recovery_and_both_readers_take(
    spark: SparkSession, tmp_path: Path
) -> None:
    rng = random.Random(11)
    em, model = Emitter(), Model()
    wh = tmp_path / "wh"
    sink = new_sink(wh)
    sent = []
    try:
        for _ in range(3):
            records = workload(em, model, rng, 25)
            sent.extend(records)
            sink.send(records)
            sink.flush()
    finally:
        sink.close()
    changelog = wh / "shop" / "orders_changelog"
    engines = append_engines(changelog)
    assert len(engines) >= 3 and all(e.startswith("delta-rs") for e in engines), engines
    # The commit metadata of the newest append, as Spark's DESCRIBE HISTORY gives it to recovery.
    (newest,) = spark.sql(f"DESCRIBE HISTORY delta.`{changelog}` LIMIT 1").collect()
    meta = CommitMeta.from_json(newest["userMetadata"], int(newest["version"]))
    assert meta is not None and meta.kind == "changelog"
    # Both readers see every change once, and the current state MERGEd by Spark after them.
    assert changelog_ids(spark) == data_ids(sent)
    assert RustDeltaTable(str(changelog)).to_pyarrow_table().num_rows == len(data_ids(sent))
    assert current_rows(spark) == model.expected()
    # A restart resumes after the last batch: recovery read the delta-rs commits' metadata.
    assert new_sink(wh).committed_offset() == sent[-1].offset


def test_an_append_that_adds_a_column_is_sparks_and_the_next_is_delta_rs_again(
    spark: SparkSession, tmp_path: Path
) -> None:
    em = Emitter()
    v1 = make_table(
        "evo", "t", [col("id", "INT", J.INTEGER, optional=False), col("n", "INT", J.INTEGER)], ["id"]
    )
    v2 = make_table("evo", "t", [*v1.columns, col("note", "VARCHAR", J.VARCHAR, length=10)], ["id"])
    wh = tmp_path / "wh"
    sink = new_sink(wh)
    try:
        for records in (
            [
                *em.ddl(v1, "CREATE TABLE t (id INT PRIMARY KEY, n INT)", ChangeType.CREATE),
                *em.insert(v1, (1, 10)),
            ],
            em.insert(v1, (2, 20)),
            [*em.ddl(v2, "ALTER TABLE t ADD COLUMN note VARCHAR(10)"), *em.insert(v2, (3, 30, "new"))],
            em.insert(v2, (4, 40, "next")),
        ):
            sink.send(records)
            sink.flush()
    finally:
        sink.close()
    changelog = wh / "evo" / "t_changelog"
    engines = [e.split(":")[0].split("/")[0] for e in append_engines(changelog)]
    # The append that brings the new column is Spark's (mergeSchema); the table then matches again.
    assert engines == ["delta-rs", "delta-rs", "Apache-Spark", "delta-rs"], engines
    rows = spark.sql("SELECT id, n, note FROM evo.t_changelog ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(1, 10, None), (2, 20, None), (3, 30, "new"), (4, 40, "next")]
    assert [tuple(r) for r in spark.table("evo.t").orderBy("id").collect()] == [
        (1, 10, None),
        (2, 20, None),
        (3, 30, "new"),
        (4, 40, "next"),
    ]


def test_appends_spark_keeps_every_append_in_spark(spark: SparkSession, tmp_path: Path) -> None:
    rng = random.Random(12)
    em, model = Emitter(), Model()
    wh = tmp_path / "wh"
    sink = new_sink(wh, changelog_appends="spark")
    sent = []
    try:
        for _ in range(2):
            records = workload(em, model, rng, 10)
            sent.extend(records)
            sink.send(records)
            sink.flush()
    finally:
        sink.close()
    engines = append_engines(wh / "shop" / "orders_changelog")
    assert engines and all("Apache-Spark" in e for e in engines), engines
    assert changelog_ids(spark) == data_ids(sent)


def test_the_property_reaches_the_settings_and_a_bad_value_names_it(tmp_path: Path) -> None:
    def settings(value: str) -> str:
        props = {**BASE_PROPS, "sink.spark.warehouse": str(tmp_path), "sink.spark.changelog.appends": value}
        return settings_from_config(ConnectorConfig.from_mapping(props)).changelog_appends

    assert settings("spark") == "spark"
    assert settings("AUTO") == "auto"
    with pytest.raises(ConfigError, match="sink.spark.changelog.appends"):
        settings("delta-rs")
