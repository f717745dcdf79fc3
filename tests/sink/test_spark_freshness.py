"""How fresh the current state is: a reader gets the exact current state at the changelog's newest
commit from the changelog alone (``current_state_of_changelog``), also while the current-state
table is a batch behind it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sink.base import SinkError
from sink.spark.writer import DeltaWriter
from sink.spark_reader import current_state_of_changelog
from tests.sink.spark_orders import Model, current_rows, workload
from tests.sink.spark_support import Emitter, new_sink


def from_changelog(spark: SparkSession, wh: Path) -> list[tuple[Any, ...]]:
    changelog = spark.read.format("delta").load(str(wh / "shop" / "orders_changelog"))
    return sorted(tuple(r) for r in current_state_of_changelog(changelog, ["id"]).collect())


def test_the_changelog_alone_gives_the_exact_current_state_even_a_batch_ahead(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(17)
    em, model = Emitter(), Model()
    wh = tmp_path / "wh"
    sink = new_sink(wh)
    for _ in range(3):  # inserts, updates, deletes, key changes, truncates
        sink.send(workload(em, model, rng, 40))
        sink.flush()
    assert from_changelog(spark, wh) == current_rows(spark) == model.expected()

    # The changelog commits the next batch, the current-state table does not (yet).
    before = current_rows(spark)

    def behind(*args: Any) -> None:
        raise OSError("the current-state commit has not happened yet")

    with monkeypatch.context() as patch:
        patch.setattr(DeltaWriter, "apply_rows", behind)
        sink.send(workload(em, model, rng, 30))
        with pytest.raises(SinkError):
            sink.flush()
    assert current_rows(spark) == before != model.expected()
    assert from_changelog(spark, wh) == model.expected()
