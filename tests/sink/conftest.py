"""Fixtures of the sink tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sink.spark_cluster import SparkCluster, standalone_cluster


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """A Spark standalone master with one worker (1 core, 1g) on loopback, for the module's tests."""
    with standalone_cluster(tmp_path_factory.mktemp("spark-cluster")) as cluster:
        yield cluster
