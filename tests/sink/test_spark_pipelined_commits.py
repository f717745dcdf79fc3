"""The Spark sink commits a full batch in the background while ``send`` goes on buffering the next:
the engine is not held up by Spark, the committed offset never runs ahead of what the Delta tables
hold, batches commit in order, and a failure in the background stops the sink at its next call.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from sink.base import SinkError
from sink.spark.writer import DeltaWriter
from tests.sink.spark_orders import Model, changelog_ids, current_rows, data_ids, workload
from tests.sink.spark_support import Emitter, new_sink, spark_for_tests

GATE_TIMEOUT = 120  # seconds: a commit held back longer means the test has failed anyway


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> SparkSession:
    return spark_for_tests(tmp_path_factory.mktemp("spark-pipelined"))


def test_sending_goes_on_while_a_full_batch_is_committed(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(17)
    em, model = Emitter(), Model()
    first = workload(em, model, rng, 40)
    second = workload(em, model, rng, 40)
    sink = new_sink(tmp_path / "wh", batch_max_events=len(first))
    gate, committing = threading.Event(), threading.Event()
    original = DeltaWriter.append_changelog

    def held_back(self: DeltaWriter, *args: Any) -> None:
        committing.set()
        assert gate.wait(GATE_TIMEOUT), "the commit was never released"
        original(self, *args)

    monkeypatch.setattr(DeltaWriter, "append_changelog", held_back)
    sink.send(first)  # a full batch: handed to the committer, which now waits at the gate
    assert committing.wait(GATE_TIMEOUT)
    assert sink.committed_offset() is None  # nothing is committed yet, so nothing is claimed
    sink.send(second[: len(second) // 2])  # buffered while the first batch is in flight
    assert not gate.is_set()  # both calls returned with the commit still held back
    gate.set()
    sink.send(second[len(second) // 2 :])  # the second full batch waits for the first
    sink.flush()
    assert sink.committed_offset() == second[-1].offset
    assert current_rows(spark) == model.expected()
    assert changelog_ids(spark) == data_ids(first + second)  # each event once, in order
    sink.close()


def test_a_failure_in_the_background_stops_the_sink_and_the_restart_completes_the_batch(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(19)
    em, model = Emitter(), Model()
    first = workload(em, model, rng, 20)
    second = workload(em, model, rng, 30)
    sink = new_sink(tmp_path / "wh", batch_max_events=len(second))
    sink.send(first)
    sink.flush()
    failed = threading.Event()

    def crash(*args: Any) -> None:
        failed.set()
        raise OSError("simulated crash while a background commit merges")

    with monkeypatch.context() as patch:
        patch.setattr(DeltaWriter, "apply_rows", crash)
        sink.send(second)  # returns: the batch fails in the background
        assert failed.wait(GATE_TIMEOUT)
        with pytest.raises(SinkError, match="simulated crash"):
            sink.flush()
        with pytest.raises(SinkError, match="restart"):
            sink.send(second)
    assert sink.committed_offset() == first[-1].offset  # never past the failed batch

    restarted = new_sink(tmp_path / "wh")
    assert restarted.committed_offset() == first[-1].offset
    restarted.send(first + second)  # the engine replays from its stored offset or earlier
    restarted.flush()
    assert current_rows(spark) == model.expected()
    assert changelog_ids(spark) == data_ids(first + second)
