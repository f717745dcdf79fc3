"""The golden tests run on a server of their own.

Debezium's recordings were made on a server that held only the workload's databases. What the
snapshot emits depends on which databases exist (it also snapshots the DDL of other databases, and
its very last record carries ``source.snapshot=last``), so sharing the session server with the other
tests' databases would change the records being compared.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connector.testing.local_server import LocalMySQLServer, local_server


@pytest.fixture(scope="package")
def mysql_server() -> Iterator[LocalMySQLServer]:
    with local_server() as server:
        yield server
