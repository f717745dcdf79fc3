"""Current-state commits by delta-rs (``sink.spark.current.commits=auto``,
``sink/spark/rust_merges.py``) on a local warehouse: the MERGEs and insert-only appends are
delta-rs's commits, with the sink's commit metadata and Delta transaction identifier; the current
state equals MySQL's (the model) for plain Spark and for delta-rs; the change data feed Spark reads
replays to the same rows; a restart resumes after the last batch; ``spark`` keeps them in Spark."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable as RustDeltaTable
from deltalake import write_deltalake
from pyspark.sql import SparkSession

from connector.config import ConfigError, ConnectorConfig
from sink.spark.commits import CommitMeta
from sink.spark.rust_merges import key_predicate
from sink.spark.settings import settings_from_config
from tests.sink.spark_orders import Model, current_rows, workload
from tests.sink.spark_support import BASE_PROPS, Emitter, new_sink


def commits(path: Path) -> list[dict[str, Any]]:
    """Each version's commitInfo and txn actions, oldest first."""
    found = []
    for entry in sorted((path / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in entry.read_text().splitlines()]
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        found.append({"info": info, "txn": [a["txn"] for a in actions if "txn" in a]})
    return found


def engine(commit: dict[str, Any]) -> str:
    return str(commit["info"].get("engineInfo", "")).split(":")[0].split("/")[0]


def run_batches(sink: Any, rng: random.Random, batches: int, changes: int) -> tuple[Model, list[Any]]:
    em, model, sent = Emitter(), Model(), []
    try:
        for _ in range(batches):
            records = workload(em, model, rng, changes)
            sent.extend(records)
            sink.send(records)
            sink.flush()
    finally:
        sink.close()
    return model, sent


def replay_change_feed(spark: SparkSession, path: Path) -> list[tuple[Any, ...]]:
    """The current state rebuilt from the table's change data feed (Spark's reader)."""
    feed = (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", 0)
        .load(str(path))
        .orderBy("_commit_version")
        .collect()
    )
    state: dict[Any, tuple[Any, ...]] = {}
    for version in sorted({r["_commit_version"] for r in feed}):
        changes = [r for r in feed if r["_commit_version"] == version]
        for r in changes:  # deletes and pre-images first: a key change deletes one key, adds another
            if r["_change_type"] in ("delete", "update_preimage"):
                state.pop(r["id"], None)
        for r in changes:
            if r["_change_type"] in ("insert", "update_postimage"):
                state[r["id"]] = tuple(v for k, v in r.asDict().items() if not k.startswith("_"))
    return sorted(state.values())


def test_current_state_merges_are_delta_rs_commits_that_spark_and_delta_rs_read(
    spark: SparkSession, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    sink = new_sink(wh)
    model, sent = run_batches(sink, random.Random(21), batches=4, changes=30)
    current = wh / "shop" / "orders"
    data = [c for c in commits(current) if c["info"].get("operation") in ("MERGE", "WRITE")]
    merges = [c for c in data if c["info"]["operation"] == "MERGE"]
    # A truncate (an overwrite) stays Spark's; every other data commit is delta-rs's.
    engines = {(c["info"]["operationParameters"].get("mode"), engine(c)) for c in data}
    assert merges and engines <= {
        (None, "delta-rs"),
        ("Append", "delta-rs"),
        ("Overwrite", "Apache-Spark"),
    }, engines
    # Each MERGE carries the sink's metadata (recovery reads it) and its Delta transaction.
    for c in merges:
        meta = CommitMeta.from_json(c["info"]["userMetadata"], 0)
        assert meta is not None and meta.kind == "current"
        assert [t["appId"] for t in c["txn"]] == [sink.settings.app_id]
    expected = model.expected()
    assert current_rows(spark) == expected
    rust_rows = RustDeltaTable(str(current)).to_pyarrow_table().to_pylist()
    assert sorted(tuple(r.values()) for r in rust_rows) == expected
    # The change data feed Spark reads replays to the same rows.
    assert replay_change_feed(spark, current) == expected
    # A restart resumes after the last batch: recovery read the delta-rs commits' metadata.
    assert new_sink(wh).committed_offset() == sent[-1].offset


def test_current_commits_spark_keeps_every_merge_in_spark(spark: SparkSession, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    model, _ = run_batches(new_sink(wh, current_commits="spark"), random.Random(22), batches=3, changes=20)
    data = [c for c in commits(wh / "shop" / "orders") if c["info"].get("operation") in ("MERGE", "WRITE")]
    assert data and all(engine(c) == "Apache-Spark" for c in data), [engine(c) for c in data]
    assert current_rows(spark) == model.expected()


@pytest.mark.parametrize("value", ["auto", "spark"])
def test_current_commits_takes_its_values(value: str, tmp_path: Path) -> None:
    props = {**BASE_PROPS, "sink.spark.warehouse": str(tmp_path), "sink.spark.current.commits": value}
    assert settings_from_config(ConnectorConfig.from_mapping(props)).current_commits == value


def test_a_bad_current_commits_value_names_the_key(tmp_path: Path) -> None:
    props = {**BASE_PROPS, "sink.spark.warehouse": str(tmp_path), "sink.spark.current.commits": "rust"}
    with pytest.raises(ConfigError, match="sink.spark.current.commits"):
        settings_from_config(ConnectorConfig.from_mapping(props))


def test_a_composite_key_with_a_nullable_column_merges_in_delta_rs(tmp_path: Path) -> None:
    """The key condition of a two-column key, one of them nullable, is parsed by delta-rs as meant
    (unparenthesised, ``IS NOT DISTINCT FROM`` swallowed the ``AND`` after it, and every MERGE of
    such a table fell back to Spark): rows match by both columns, a null key part included."""
    path = str(tmp_path / "pairs")
    write_deltalake(
        path,
        pa.table(
            {
                "k": pa.array(["a", None, "b"], pa.string()),
                "i": pa.array([1, 2, 3], pa.int32()),
                "v": pa.array([10, 20, 30], pa.int64()),
            }
        ),
    )
    changes = pa.table(
        {
            "k": pa.array([None, "b", "c", "a"], pa.string()),
            "i": pa.array([2, 3, 4, 9], pa.int32()),
            "v": pa.array([21, 31, 41, 91], pa.int64()),
        }
    )
    predicate = key_predicate(["k", "i"], nullable={"k"})
    (
        RustDeltaTable(path)
        .merge(changes, predicate, source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    rows = {(r["k"], r["i"]): r["v"] for r in RustDeltaTable(path).to_pyarrow_table().to_pylist()}
    assert rows == {("a", 1): 10, (None, 2): 21, ("b", 3): 31, ("c", 4): 41, ("a", 9): 91}
