"""Replays after crashes that land between the Delta commits of one batch: each table keeps what it
holds, however the replays are cut, and a replayed MERGE is recognised by Delta's transaction id.

A crash is a sink dropped without ``close()`` after a commit failed (or after its batch committed):
the Delta logs are all the restarted sink has, exactly as after a SIGKILL.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sink.base import SinkError
from sink.spark.batch import TableBatch
from sink.spark.commits import CommitMeta, last_commit
from sink.spark.writer import DeltaWriter, txn_version
from tests.sink.spark_orders import (
    ORDERS,
    Model,
    changelog_ids,
    current_rows,
    data_ids,
    random_order,
    workload,
)
from tests.sink.spark_support import Emitter, new_sink


def test_a_second_crash_after_a_shorter_replay_still_skips_what_each_table_holds(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Crash 1 lands after the changelogs committed a batch and before the current state did; the
    replay's first batch is shorter than the crashed one and completes; crash 2 follows it. The
    second replay must still skip, in the changelog, the rest of the batch it committed before
    crash 1 (the newest event any table holds, not the newest complete batch, bounds the replay)."""
    rng = random.Random(21)
    em, model = Emitter(), Model()
    first = workload(em, model, rng, 10)
    sink = new_sink(tmp_path / "wh")
    sink.send(first)
    sink.flush()
    second = workload(em, model, rng, 30)

    def crash(*args: Any) -> None:
        raise OSError("simulated crash between the changelog and current-state commits")

    with monkeypatch.context() as patch:
        patch.setattr(DeltaWriter, "apply_rows", crash)
        sink.send(second)
        with pytest.raises(SinkError, match="simulated crash"):
            sink.flush()
    assert changelog_ids(spark) == data_ids(first + second)  # crash 1: the changelog holds `second`

    cut = len(second) // 3
    restarted = new_sink(tmp_path / "wh")
    assert restarted.committed_offset() == first[-1].offset
    restarted.send(first + second[:cut])  # replayed from the engine's offset, a shorter batch
    restarted.flush()
    assert restarted.committed_offset() == second[cut - 1].offset
    assert changelog_ids(spark) == data_ids(first + second)  # the changelog skipped all of it

    # Crash 2, right after that batch: the engine resumes from its offset, inside `second`.
    third = workload(em, model, rng, 10)
    again = new_sink(tmp_path / "wh")
    assert again.committed_offset() == second[cut - 1].offset
    again.send(second[cut:] + third)
    again.flush()
    # The changelog held second[cut:] already: nothing of it is appended again.
    assert changelog_ids(spark) == data_ids(first + second + third)
    assert again.events_skipped >= len(
        [r for r in second[cut:] if r.table_id and r.table_id.table == "orders"]
    )
    assert current_rows(spark) == model.expected()


def _txn_actions(path: Path, version: int) -> list[dict[str, Any]]:
    entry = path / "_delta_log" / f"{version:020d}.json"
    return [a["txn"] for a in map(json.loads, entry.read_text().splitlines()) if "txn" in a]


def test_a_replayed_merge_is_recognised_by_its_delta_transaction(spark: SparkSession, tmp_path: Path) -> None:
    """A current-state MERGE commits a ``txn`` action (the sink's app id, the batch's version);
    the same MERGE made again (a replayed batch) is recognised by Delta and commits nothing."""
    rng = random.Random(4)
    em, model = Emitter(), Model()
    sink = new_sink(tmp_path / "wh")
    for changes in (20, 20):  # the first batch into an empty table appends; the second MERGEs
        sink.send(workload(em, model, rng, changes))
        sink.flush()
    path = tmp_path / "wh" / "shop" / "orders"
    meta, version = last_commit(spark, str(path))
    assert meta is not None and meta.kind == "current"
    merged = [v for v in range(version + 1) if _txn_actions(path, v)]
    assert merged, "no MERGE commit carries a Delta transaction id"
    txn = _txn_actions(path, merged[-1])[0]
    assert txn["appId"] == sink.settings.app_id

    # Replay the last MERGE with its own commit record: Delta finds the transaction and skips it.
    mergeds = [m for m in (CommitMeta.from_json(_user_metadata(path, v), v) for v in merged) if m]
    replayed = mergeds[-1]
    assert txn["version"] == txn_version(replayed)
    before = current_rows(spark)
    step = _a_merge_step(em, model, rng, sink)
    DeltaWriter(spark, sink.settings.app_id, "rewrite").apply_rows(str(path), step, replayed)
    assert last_commit(spark, str(path))[1] == version  # no new version
    assert current_rows(spark) == before


def _user_metadata(path: Path, version: int) -> str | None:
    entry = path / "_delta_log" / f"{version:020d}.json"
    for action in map(json.loads, entry.read_text().splitlines()):
        if "commitInfo" in action:
            return action["commitInfo"].get("userMetadata")
    return None


def _a_merge_step(em: Emitter, model: Model, rng: random.Random, sink: Any) -> Any:
    """A batch's MERGE step (an update of a row the table holds), built by the sink's own batch code."""
    key = next(iter(model.rows))
    records = em.update(ORDERS, model.rows[key], random_order(rng, key))
    state = sink._state_for(ORDERS.id)
    tb = TableBatch(state)
    record = records[0]
    tb.add(record, sink._schema_info(record.value_schema), ("id",), None, False, True)
    tb.finish()
    return tb.steps[-1]
