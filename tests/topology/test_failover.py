"""Failover between GTID replicas: a primary with two replicas (log_slave_updates) on loopback; the
connector follows replica 1 under a mixed write load, replica 1 is killed, and the same connector
configuration pointed at replica 2 resumes by GTID: the replayed output equals the primary's tables
with nothing lost. A stored position another server cannot serve stops with a message saying why."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer
from sink.memory import MemorySink

# Three servers and `mysql-cdc run` as a subprocess (its own `_start`): slow by the fast tier's rule.
pytestmark = pytest.mark.slow

TRANSACTIONS = 1500


def _options(server_id: int) -> list[str]:
    base = [o for o in DEFAULT_SERVER_OPTIONS if not o.startswith("--server-id")]
    return [*base, f"--server-id={server_id}", "--log-slave-updates", "--sync-binlog=0"]


def _replicate(replica: LocalMySQLServer, primary: LocalMySQLServer, rotations: int = 0) -> None:
    # The replica's own start-up (its users) must not become GTIDs of its own: a clean binlog, then
    # everything from the primary's first event. ``rotations`` extra binlog files make its file
    # names and positions differ from the other replica's, as they do between real servers.
    replica.execute(
        "STOP SLAVE",
        "RESET SLAVE ALL",
        "RESET MASTER",
        *["FLUSH BINARY LOGS"] * rotations,
        "SET GLOBAL gtid_slave_pos = ''",
        f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={primary.port}, "
        f"MASTER_USER='{primary.admin.user}', MASTER_PASSWORD='{primary.admin.password}', "
        "MASTER_USE_GTID=slave_pos",
        "START SLAVE",
    )


def _caught_up(replica: LocalMySQLServer, primary: LocalMySQLServer, timeout: float = 120) -> None:
    ((position,),) = primary.query("SELECT @@global.gtid_binlog_pos")
    ((result,),) = replica.query(f"SELECT MASTER_GTID_WAIT('{position}', {timeout})")
    if result != 0:
        status = replica.query("SHOW SLAVE STATUS")
        raise AssertionError(f"replica did not reach {position}: {status}")


def _start(config: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "connector.cli", "run", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
        start_new_session=True,
    )


def _config(server: LocalMySQLServer, tmp_path: Path, out: Path) -> Path:
    props = server.connector_properties(
        **{
            "topic.prefix": "fo",
            "database.include.list": "fo",
            "sink.type": "jsonl",
            "sink.jsonl.path": str(out),
            "data.dir": str(tmp_path),
            "max.batch.size": "128",
            "poll.interval.ms": "100",
            "connect.max.attempts": "1",
        }
    )
    path = tmp_path / f"connector-{server.port}.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def _records(out: Path) -> list[dict[str, Any]]:
    data = out.read_bytes() if out.exists() else b""
    data = data[: data.rfind(b"\n") + 1]  # a line being written right now
    return [orjson.loads(line) for line in data.splitlines()]


def _replay(records: list[dict[str, Any]]) -> dict[str, dict[int, dict[str, Any]]]:
    tables: dict[str, dict[int, dict[str, Any]]] = {"t1": {}, "t2": {}}
    for record in records:
        table = record["topic"].rpartition(".")[2]
        if table not in tables or record["value"] is None:
            continue
        payload = record["value"]["payload"]
        if payload["op"] == "d":
            tables[table].pop(payload["before"]["id"], None)
        else:
            tables[table][payload["after"]["id"]] = payload["after"]
    return tables


def _tables(server: LocalMySQLServer) -> dict[str, dict[int, dict[str, Any]]]:
    return {
        "t1": {i: {"id": i, "v": v} for i, v in server.query("SELECT id, v FROM fo.t1")},
        "t2": {i: {"id": i, "s": s} for i, s in server.query("SELECT id, s FROM fo.t2")},
    }


def _write_load(primary: LocalMySQLServer, stop_after: int, progress: list[int]) -> None:
    rng = random.Random(15)
    with primary.connect("fo", autocommit=False) as conn, conn.cursor() as cur:
        for n in range(1, stop_after + 1):
            # Mixed transactions: several rows events in one transaction, updates and deletes.
            cur.execute("INSERT INTO t1 VALUES (%s, %s)", (n, n))
            cur.execute("INSERT INTO t2 VALUES (%s, %s)", (n, f"s{n}"))
            if n % 3 == 0:
                cur.execute("UPDATE t1 SET v = v + 1 WHERE id > %s", (n - 5,))
            if n % 7 == 0:
                cur.execute("DELETE FROM t2 WHERE id = %s", (rng.randint(1, n),))
            conn.commit()
            progress.append(n)


def test_failover_to_another_replica_resumes_by_gtid_and_loses_nothing(tmp_path):
    with (
        LocalMySQLServer(options=_options(1)) as primary,
        LocalMySQLServer(options=_options(2)) as replica1,
        LocalMySQLServer(options=_options(3)) as replica2,
    ):
        primary.execute(
            "CREATE DATABASE fo",
            "CREATE TABLE fo.t1 (id INT PRIMARY KEY, v INT NOT NULL)",
            "CREATE TABLE fo.t2 (id INT PRIMARY KEY, s VARCHAR(20))",
        )
        _replicate(replica1, primary)
        _replicate(replica2, primary, rotations=2)
        _caught_up(replica1, primary)
        _caught_up(replica2, primary)

        out = tmp_path / "events.jsonl"
        log = tmp_path / "connector.log"
        proc = _start(_config(replica1, tmp_path, out), log)
        progress: list[int] = []
        writer = threading.Thread(target=_write_load, args=(primary, TRANSACTIONS, progress))
        writer.start()
        try:
            deadline = time.monotonic() + 120
            while len(_records(out)) < 1500 or len(progress) < TRANSACTIONS // 3:
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                assert proc.poll() is None, log.read_text()[-3000:]
                time.sleep(0.05)
            # Replica 1 dies (SIGKILL), mid-stream; so does the connector following it.
            assert replica1._proc is not None
            os.killpg(replica1._proc.pid, signal.SIGKILL)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            delivered_from_replica1 = len(_records(out))

            # The same configuration, pointed at replica 2 once it has what replica 1 had.
            _caught_up(replica2, primary)
            proc = _start(_config(replica2, tmp_path, out), log)
            writer.join()
            _caught_up(replica2, primary)
            expected = _tables(primary)
            deadline = time.monotonic() + 180
            while _replay(_records(out)) != expected:
                assert time.monotonic() < deadline, "the replayed output does not reach the primary's tables"
                assert proc.poll() is None, log.read_text()[-3000:]
                time.sleep(0.2)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=60)
            writer.join()
        assert _replay(_records(out)) == _tables(primary) == _tables(replica2)
        total = len(_records(out))

        # The primary dies too; replica 2 is promoted and takes writes of its own (new GTIDs); the
        # connector (stopped above), restarted against it, goes on from its GTID position.
        assert primary._proc is not None
        os.killpg(primary._proc.pid, signal.SIGKILL)
        replica2.execute("STOP SLAVE", "RESET SLAVE ALL")
        _write_more(replica2, range(TRANSACTIONS + 1, TRANSACTIONS + 201))
        proc = _start(_config(replica2, tmp_path, out), log)
        try:
            expected = _tables(replica2)
            deadline = time.monotonic() + 120
            while _replay(_records(out)) != expected:
                assert time.monotonic() < deadline, "the output does not reach the promoted primary's tables"
                assert proc.poll() is None, log.read_text()[-3000:]
                time.sleep(0.2)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=60)
        print(
            f"\nrecords from replica 1 before it died: {delivered_from_replica1}; "
            f"total after failover to replica 2: {total}; after its promotion: {len(_records(out))}"
        )


def _write_more(server: LocalMySQLServer, ids: range) -> None:
    with server.connect("fo") as conn, conn.cursor() as cur:
        for n in ids:
            cur.execute("INSERT INTO t1 VALUES (%s, %s)", (n, n))
            cur.execute("UPDATE t2 SET s = CONCAT(s, '+') WHERE id = %s", (n - TRANSACTIONS,))


def test_a_server_without_the_stored_gtids_is_refused_naming_why(tmp_path):
    with LocalMySQLServer() as first, LocalMySQLServer() as other:
        first.execute("CREATE DATABASE fo", "CREATE TABLE fo.t1 (id INT PRIMARY KEY, v INT NOT NULL)")
        for i in range(20):
            first.execute(f"INSERT INTO fo.t1 VALUES ({i}, {i})")

        def engine_for(server: LocalMySQLServer) -> Engine:
            props = server.connector_properties(
                **{"topic.prefix": "fo", "database.include.list": "fo", "data.dir": str(tmp_path)}
            )
            return Engine(ConnectorConfig.from_mapping(props), sinks=[MemorySink()])

        engine = engine_for(first)
        engine.catch_up()
        engine.close()
        # An unrelated server (not a replica of the same primary) has not got these GTIDs.
        engine = engine_for(other)
        with pytest.raises(Exception) as info:
            try:
                engine.prepare()
            finally:
                engine.close()
        message = str(info.value)
        assert "has not got the transactions" in message and "not a replica of the same primary" in message
        assert "snapshot.mode=when_needed" in message
        assert "bogus" not in message
