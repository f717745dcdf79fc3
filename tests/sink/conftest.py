"""Fixtures of the sink tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from tests.sink.spark_cluster import SparkCluster, standalone_cluster
from tests.sink.spark_support import spark_for_tests


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """A Spark standalone master with one worker (1 core, 1g) on loopback, for the module's tests."""
    with standalone_cluster(tmp_path_factory.mktemp("spark-cluster")) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def spark(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> SparkSession:
    """The test process's local SparkSession, with a warehouse root named after the module."""
    module = request.module.__name__.rsplit(".", 1)[-1]
    return spark_for_tests(tmp_path_factory.mktemp(module))
