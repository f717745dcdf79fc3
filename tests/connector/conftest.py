"""Fixtures shared by the connector tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connector.testing.local_server import MySQLServerHandle
from tests.connector.incremental_support import grant_signal_table


@pytest.fixture
def orders(mysql_server: MySQLServerHandle, unique_db: str) -> Iterator[str]:
    grant_signal_table(mysql_server, unique_db)
    mysql_server.execute(
        "CREATE TABLE orders (id INT PRIMARY KEY, name VARCHAR(40), qty INT)", database=unique_db
    )
    yield unique_db
