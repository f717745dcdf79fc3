"""Shared fixtures: a real, throwaway MySQL-compatible server per session or per test.

By default the server is a local ``mariadbd``/``mysqld`` started in a temp datadir (see
``connector.testing.local_server``). With ``MYSQL_CDC_TEST_TARGET=docker`` and a working Docker engine, the
same tests run against the MySQL 8.4 service of ``docker-compose.yml`` instead (pytest-docker).
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connector.testing.local_server import (
    ExternalMySQLServer,
    LocalMySQLServer,
    MySQLServerHandle,
    local_server,
    scratch_database,
)

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

REPO = Path(__file__).resolve().parents[1]


def docker_target() -> bool:
    """True when the tests run against the docker-compose services instead of local processes."""
    return os.environ.get("MYSQL_CDC_TEST_TARGET", "local") == "docker"


@pytest.fixture(scope="session")
def docker_compose_file() -> str:
    return str(REPO / "docker-compose.yml")


def _external_server(docker_services: Any) -> ExternalMySQLServer:
    server = ExternalMySQLServer("127.0.0.1", int(docker_services.port_for("mysql", 3306)))

    def responsive() -> bool:
        try:
            server.query("SELECT 1")
            return True
        except Exception:  # noqa: BLE001 - not up yet
            return False

    docker_services.wait_until_responsive(timeout=180.0, pause=1.0, check=responsive)
    return server


@pytest.fixture(scope="session")
def mysql_server(request: pytest.FixtureRequest) -> Iterator[MySQLServerHandle]:
    """One server for the whole session; tests must use their own database names.

    A local throwaway server by default; the docker-compose MySQL 8.4 with
    MYSQL_CDC_TEST_TARGET=docker (pytest-docker starts and stops the stack)."""
    if docker_target():
        yield _external_server(request.getfixturevalue("docker_services"))
        return
    with local_server() as server:
        yield server


@pytest.fixture
def fresh_mysql_server() -> Iterator[LocalMySQLServer]:
    """A server of the test's own (for tests that restart it, purge binlogs or change settings).

    Always a local process, also in the Docker run: such tests need to control the server's life."""
    with local_server() as server:
        yield server


@pytest.fixture
def unique_db(mysql_server: MySQLServerHandle, request: pytest.FixtureRequest) -> Iterator[str]:
    """A database name unique to the test, created empty and dropped afterwards."""
    with scratch_database(mysql_server, request.node.name, "t_") as name:
        yield name
    leaked = binlog_dumps_left(mysql_server, _REPORTED_DUMPS)
    _REPORTED_DUMPS.update(dump[0] for dump in leaked)
    if leaked:
        warnings.warn(
            LeakedReplicaWarning(f"{request.node.nodeid} left binlog dumps streaming: {leaked}"), stacklevel=1
        )


_REPORTED_DUMPS: set[Any] = set()  # the dump threads' ids warned about: each once, at the test that left it


class LeakedReplicaWarning(UserWarning):
    """A test left a connector streaming from the shared server after it ended."""


def binlog_dumps_left(
    server: MySQLServerHandle, reported: set[Any], wait_s: float = 5.0
) -> list[tuple[Any, ...]]:
    """The shared server's binlog dump threads (but the ``reported`` ones) still there ``wait_s``
    after a test: a connector the
    test did not stop (its dump ends within a moment of the connector's disconnect). Such a
    connector kept the next test's connector from streaming while both used one server id."""
    deadline = time.monotonic() + wait_s
    while True:
        dumps = [
            tuple(row[:6])
            for row in server.query("SHOW PROCESSLIST")
            if str(row[4]).startswith("Binlog Dump") and row[0] not in reported
        ]
        if not dumps or time.monotonic() > deadline:
            return dumps
        time.sleep(0.1)


from tests.kafka_support import (  # noqa: E402, F401
    acl_kafka,
    kafka_broker,
    kafka_cluster,
    local_acl_kafka,
    local_kafka_broker,
    mock_kafka,
)

# The longest test modules, started first when the suite runs in parallel (`pytest -n 3 --dist
# loadfile`, .ci/run): a worker that picked one of them last would finish long after the others.
# The slowest modules of a parallel run, longest first; order within each module is unchanged.
# xdist hands files out in this order only with --no-loadscope-reorder (pyproject.toml addopts):
# by default it reorders them by their number of tests, which put these few-test files last.
SLOW_FIRST: tuple[str, ...] = (
    "tests/sink/test_spark_apply_crash.py",
    "tests/sink/test_spark_crash.py",
    "tests/sink/test_spark_crash_snapshots.py",
    "tests/sink/test_spark_e2e.py",
    "tests/sink/test_spark_maintenance.py",
    "tests/sink/test_spark_crash_points.py",
    "tests/sink/test_spark_crash_create.py",
    "tests/sink/test_spark_apply.py",
    "tests/connector/sources/test_incremental_crash.py",
    "tests/sink/test_spark_deferred.py",
    "tests/sink/test_spark_incremental.py",
    "tests/sink/test_spark_cluster.py",
    "tests/sink/test_spark_apply_cluster.py",
    "tests/sink/test_spark_sink.py",
    "tests/connector/delivery/test_kafka_exactly_once_chaos.py",
    "tests/connector/delivery/test_kafka_exactly_once.py",
    "tests/sink/test_spark_apply_schema.py",
    "tests/sink/test_spark_replays.py",
    "tests/connector/delivery/test_kafka_exactly_once_broker_loss.py",
    "tests/connector/delivery/test_kafka_broker_loss.py",
    "tests/test_docs.py",
    "tests/connector/metrics/test_grafana_dashboard.py",
    "tests/connector/delivery/test_kafka_engine.py",
    "tests/sink/test_spark_apply_input.py",
    "tests/connector/sources/test_online_schema_change.py",
)


# The fast tier (`pytest -m "not slow"`, docs/development.md) leaves out every test that needs one of
# these: a Spark session or Spark cluster, a real Kafka broker (the in-process librdkafka mock
# `mock_kafka` stays fast), or Java (the binlog client and JSON renderer compiled and run per module).
SLOW_FIXTURES: frozenset[str] = frozenset(
    {
        "spark",
        "spark_cluster",
        "kafka_broker",
        "local_kafka_broker",
        "kafka_cluster",
        "acl_kafka",
        "local_acl_kafka",
        "java_texts",
        "comparisons",
    }
)

# ... and every test in a module that imports one of these helpers: the first three start
# `mysql-cdc run` (or Prometheus) as a subprocess and wait on it, the last two start a Spark session
# (a Spark sink that has rows to write starts one, whether or not the test uses the `spark` fixture).
SLOW_HELPERS: frozenset[str] = frozenset(
    {
        "tests.sink.connector_process.ConnectorProcess",
        "tests.connector.crash_support.start_connector",
        "tests.connector.prometheus_support.Prometheus",
        "tests.sink.spark_support.new_sink",
        "tests.sink.spark_support.spark_for_tests",
    }
)


def _qualified(value: object) -> str:
    return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"


def is_slow(item: pytest.Item) -> bool:
    """The rule of the fast tier: marked `slow` by hand, using a slow fixture, or in a module that
    imports a slow helper (see SLOW_FIXTURES and SLOW_HELPERS)."""
    if item.get_closest_marker("slow") is not None:
        return True
    if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    module = getattr(item, "module", None)
    return module is not None and any(_qualified(v) in SLOW_HELPERS for v in vars(module).values())


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item) and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
    rank = {path: n for n, path in enumerate(SLOW_FIRST)}

    def module_rank(item: pytest.Item) -> int:
        return rank.get(Path(str(item.fspath)).relative_to(REPO).as_posix(), len(rank))

    items.sort(key=module_rank)  # stable: the rest keep their collection order
