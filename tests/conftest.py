"""Shared fixtures: a real, throwaway MySQL-compatible server per session or per test.

By default the server is a local ``mariadbd``/``mysqld`` started in a temp datadir (see
``connector.local_server``). With ``MYSQL_CDC_TEST_TARGET=docker`` and a working Docker engine, the
same tests run against the MySQL 8.4 service of ``docker-compose.yml`` instead (pytest-docker).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from connector.local_server import LocalMySQLServer

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


@pytest.fixture(scope="session")
def mysql_server() -> Iterator[LocalMySQLServer]:
    """One server for the whole session; tests must use their own database names."""
    server = LocalMySQLServer()
    server.start()
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture
def fresh_mysql_server() -> Iterator[LocalMySQLServer]:
    """A server of the test's own (for tests that restart it, purge binlogs or change settings)."""
    server = LocalMySQLServer()
    server.start()
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture
def unique_db(mysql_server: LocalMySQLServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """A database name unique to the test, created empty and dropped afterwards."""
    import re

    name = "t_" + re.sub(r"[^0-9a-zA-Z]+", "_", request.node.name)[:50].lower()
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{name}`", f"CREATE DATABASE `{name}`")
    try:
        yield name
    finally:
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{name}`")
