"""Two connectors streaming from one server: with the same ``database.server.id`` the server lets
only one stream at a time, so they disconnect each other and the reconnect warnings name the
property; with their own ids (what ``connector_properties`` gives each engine) both stream."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from connector.testing.local_server import LocalMySQLServer
from tests.connector.incremental_support import grant_signal_table, make_engine
from tests.connector.signal_support import FAST, running, streamed


def items_db(server: LocalMySQLServer, name: str) -> str:
    server.execute(f"CREATE DATABASE {name}")
    grant_signal_table(server, name)
    server.execute("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40), qty INT)", database=name)
    return name


def test_a_second_connector_with_the_same_server_id_is_told_to_change_it(
    fresh_mysql_server: LocalMySQLServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = fresh_mysql_server
    first, second = items_db(server, "first"), items_db(server, "second")
    same = {"database.server.id": "6100", **FAST}
    engine_a, memory_a = make_engine(server, first, tmp_path / "a", **same)
    with running(engine_a) as run_a:
        # Streaming first: with snapshot.mode=no_data, a row written before the snapshot's binlog
        # position is in no event (on a loaded machine the insert once came first).
        run_a.wait(lambda: engine_a.metrics.connected, "the first connector's binlog stream")
        server.execute("INSERT INTO items VALUES (1, 'a', 1)", database=first)
        run_a.wait(streamed(memory_a, "items", 1), "the first connector's insert")
        engine_b, _ = make_engine(server, second, tmp_path / "b", **same)
        with (
            caplog.at_level(logging.WARNING, logger="connector.sources.streaming"),
            running(engine_b) as run_b,
        ):
            run_b.wait(
                lambda: any("database.server.id=6100" in r.getMessage() for r in caplog.records),
                "a reconnect warning naming database.server.id",
            )
    warning = next(r.getMessage() for r in caplog.records if "database.server.id=6100" in r.getMessage())
    assert "another replica streaming" in warning and "its own database.server.id" in warning


def test_connectors_of_the_test_servers_each_get_their_own_server_id(
    fresh_mysql_server: LocalMySQLServer, tmp_path: Path
) -> None:
    server = fresh_mysql_server
    first, second = items_db(server, "first"), items_db(server, "second")
    ids = {server.connector_properties()["database.server.id"] for _ in range(3)}
    assert len(ids) == 3
    engine_a, memory_a = make_engine(server, first, tmp_path / "a", **FAST)
    engine_b, memory_b = make_engine(server, second, tmp_path / "b", **FAST)
    with running(engine_a) as run_a, running(engine_b) as run_b:
        run_a.wait(lambda: engine_a.metrics.connected, "the first connector's binlog stream")
        run_b.wait(lambda: engine_b.metrics.connected, "the second connector's binlog stream")
        server.execute("INSERT INTO items VALUES (1, 'a', 1)", database=first)
        server.execute("INSERT INTO items VALUES (1, 'b', 1)", database=second)
        run_a.wait(streamed(memory_a, "items", 1), "the first connector's insert")
        run_b.wait(streamed(memory_b, "items", 1), "the second connector's insert")
