"""Crash tests: ``mysql-cdc run`` with the Spark sink is killed with SIGKILL while Delta commits are
being written — during the initial snapshot, then nine times while a writer keeps changing the
tables — and restarted each time. Afterwards ``verify`` must report every table equal to MySQL and
each changelog must hold every change exactly once: no two rows share a binlog position and
operation, and per key the changelog's operations, in binlog order, are exactly the writer's.

A second test kills the connector while it creates Delta tables, at chosen points (the test-only
``MYSQL_CDC_TEST_KILL_AT`` of ``sink/spark/writer.py``): each restart must recover by itself.
"""

from __future__ import annotations

import glob
import io
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.cli.verify import run_verify
from connector.config import ConnectorConfig
from connector.engine import Engine
from sink.spark import SparkSink, in_snapshot
from sink.spark.writer import KILL_AT_ENV
from tests.sink.spark_support import spark_for_tests

PREFILL_A, PREFILL_B = 3000, 600


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> SparkSession:
    return spark_for_tests(tmp_path_factory.mktemp("spark-crash"))


class Writer(threading.Thread):
    """One connection, small transactions; logs the (table, op, key) of every committed change."""

    def __init__(self, server: Any, db: str, seed: int) -> None:
        super().__init__(daemon=True)
        self.server, self.db, self.rng = server, db, random.Random(seed)
        self.stop_event = threading.Event()
        self.log: list[tuple[str, str, Any]] = []
        self.a_keys = set(range(1, PREFILL_A + 1))
        self.b_keys = {(f"k{i % 50}", i) for i in range(PREFILL_B)}
        self.next_a = PREFILL_A + 1
        self.error: BaseException | None = None

    def change(self, cur: Any) -> list[tuple[str, str, Any]]:
        r = self.rng
        roll = r.random()
        if roll < 0.3:
            key = self.next_a
            self.next_a += 1
            cur.execute("INSERT INTO a VALUES (%s, %s, %s)", (key, f"v{key}", r.randint(-(10**12), 10**12)))
            self.a_keys.add(key)
            return [("a", "c", key)]
        if roll < 0.55:
            key = r.choice(tuple(self.a_keys))
            cur.execute("UPDATE a SET n = n + 1, v = CONCAT(LEFT(v, 10), '*') WHERE id = %s", (key,))
            return [("a", "u", key)]
        if roll < 0.65:
            key = r.choice(tuple(self.a_keys))
            cur.execute("DELETE FROM a WHERE id = %s", (key,))
            self.a_keys.discard(key)
            return [("a", "d", key)]
        if roll < 0.75:
            key = r.choice(tuple(self.a_keys))
            new = self.next_a
            self.next_a += 1
            cur.execute("UPDATE a SET id = %s WHERE id = %s", (new, key))
            self.a_keys.discard(key)
            self.a_keys.add(new)
            return [("a", "d", key), ("a", "c", new)]
        if roll < 0.9 or not self.b_keys:
            k = (f"k{r.randint(0, 49)}", r.randint(0, 10**6))
            if k in self.b_keys:
                cur.execute("UPDATE b SET amount = amount - 0.01 WHERE k = %s AND i = %s", k)
                return [("b", "u", k)]
            cur.execute("INSERT INTO b VALUES (%s, %s, %s)", (*k, f"{r.randint(0, 10**7) / 100:.2f}"))
            self.b_keys.add(k)
            return [("b", "c", k)]
        k = r.choice(tuple(self.b_keys))
        cur.execute("DELETE FROM b WHERE k = %s AND i = %s", k)
        self.b_keys.discard(k)
        return [("b", "d", k)]

    def run(self) -> None:
        try:
            with self.server.connect(self.db) as conn, conn.cursor() as cur:
                while not self.stop_event.is_set():
                    cur.execute("BEGIN")
                    done: list[tuple[str, str, Any]] = []
                    for _ in range(self.rng.randint(1, 4)):
                        done += self.change(cur)
                    cur.execute("COMMIT")
                    self.log += done
                    time.sleep(0.05)
        except BaseException as exc:  # surfaced by the test
            self.error = exc


def delta_commits(wh: Path) -> int:
    """How many Delta commits the warehouse's tables hold (read from their logs, as any reader can)."""
    return len(glob.glob(str(wh / "*" / "*" / "_delta_log" / "*.json")))


def latest_meta(wh: Path) -> dict[str, Any] | None:
    """The sink's newest commit record (``userMetadata``) over all tables."""
    newest: dict[str, Any] | None = None
    for path in glob.glob(str(wh / "*" / "*" / "_delta_log" / "*.json")):
        for line in Path(path).read_text().splitlines():
            info = json.loads(line).get("commitInfo") or {}
            meta = json.loads(info.get("userMetadata") or "{}").get("mysql_cdc")
            if meta and (newest is None or (meta["batch"], meta["seq"]) > (newest["batch"], newest["seq"])):
                newest = meta
    return newest


def start_connector(
    config_file: Path, log_file: Path, extra_env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", **(extra_env or {})}
    with open(log_file, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "connector.cli", "run", "--config", str(config_file)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=Path(__file__).parents[2],
        )


def wait_for(
    condition: Any, timeout: float, what: str, proc: subprocess.Popen[bytes], log_file: Path
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(
                f"connector exited ({proc.returncode}) while waiting for {what}:\n"
                + log_file.read_text(errors="replace")[-4000:]
            )
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out waiting for {what}:\n" + log_file.read_text(errors="replace")[-4000:]
            )
        time.sleep(0.02)


def kill(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.timeout(2700)  # ten restarts of the connector, each starting Spark anew
def test_sigkill_during_spark_batches_loses_and_duplicates_nothing(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)",
        "CREATE TABLE b (k VARCHAR(10), i INT, amount DECIMAL(10,2), PRIMARY KEY (k, i))",
        "INSERT INTO a VALUES " + ", ".join(f"({i}, 'v{i}', {i * 7})" for i in range(1, PREFILL_A + 1)),
        "INSERT INTO b VALUES " + ", ".join(f"('k{i % 50}', {i}, {i / 100:.2f})" for i in range(PREFILL_B)),
        database=db,
    )
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "crash",
            "database.include.list": db,
            "data.dir": str(tmp_path / "data"),
            "skipped.operations": "none",
            "poll.interval.ms": "100",
            "max.batch.size": "400",
            "sink.type": "spark",
            "sink.spark.warehouse": str(tmp_path / "wh"),
            "sink.spark.master": "local[2]",
            "sink.spark.conf.spark.sql.shuffle.partitions": "2",
            "sink.spark.batch.max.events": "500",
        }
    )  # the snapshot spans several Spark commits
    config_file = tmp_path / "connector.properties"
    config_file.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    log_file = tmp_path / "connector.log"
    wh = tmp_path / "wh"
    rng = random.Random(99)
    kills = {"snapshot": 0, "batch": 0}

    def snapshot_running() -> bool:
        meta = latest_meta(wh)
        return meta is not None and in_snapshot(meta["batch_offset"])

    # 1. Killed in the middle of the snapshot (after its first committed batch): it must restart.
    proc = start_connector(config_file, log_file)
    wait_for(snapshot_running, 180, "a committed snapshot batch", proc, log_file)
    time.sleep(rng.uniform(0, 0.5))
    if snapshot_running():
        kills["snapshot"] += 1
    kill(proc)
    proc = start_connector(config_file, log_file)

    def snapshot_done() -> bool:
        meta = latest_meta(wh)
        return meta is not None and not in_snapshot(meta["batch_offset"]) and meta["batch_offset"] is not None

    wait_for(snapshot_done, 300, "the snapshot to complete", proc, log_file)
    assert kills["snapshot"] == 1

    # 2. A writer runs; the connector is killed at random points of its commits, nine times.
    writer = Writer(mysql_server, db, seed=5)
    writer.start()
    try:
        for _ in range(9):
            before = delta_commits(wh)
            wait_for(lambda: delta_commits(wh) > before, 180, "a streaming commit", proc, log_file)  # noqa: B023
            time.sleep(rng.uniform(0, 1.5))  # inside a batch's commits, between them, or after
            kills["batch"] += 1
            kill(proc)
            time.sleep(rng.uniform(0.2, 1.0))  # changes pile up while the connector is down
            proc = start_connector(config_file, log_file)
        before = delta_commits(wh)
        wait_for(lambda: delta_commits(wh) > before, 180, "progress after the last restart", proc, log_file)
    finally:
        writer.stop_event.set()
        writer.join()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            kill(proc)
    assert writer.error is None, writer.error
    assert kills["batch"] == 9

    # 3. Catch up with everything written, then compare.
    config = ConnectorConfig.from_mapping(props)
    engine = Engine(config, sinks=[SparkSink.from_config(config)])
    try:
        engine.catch_up(timeout=900)
    finally:
        engine.close()
    out = io.StringIO()
    assert run_verify(config, [], out) == 0, out.getvalue()

    for table, key_columns in (("a", ["id"]), ("b", ["k", "i"])):
        keys = ", ".join(key_columns)
        rows = spark.sql(
            f"SELECT __op, __file, __pos, __row, __snapshot, {keys} FROM `{db}`.`{table}_changelog`"
        ).collect()
        # zero duplicates: one row per binlog position and operation
        positions = [(r["__file"], r["__pos"], r["__row"], r["__op"]) for r in rows if r["__op"] != "r"]
        assert len(positions) == len(set(positions)), f"{table}: duplicated changes"
        # the snapshot is in the changelog once: all reads from one snapshot, each key once
        reads = [r for r in rows if r["__op"] == "r"]
        assert len({(r["__file"], r["__pos"]) for r in reads}) == 1, f"{table}: reads of several snapshots"
        read_keys = [tuple(r[c] for c in key_columns) for r in reads]
        assert len(read_keys) == len(set(read_keys)) == (PREFILL_A if table == "a" else PREFILL_B)
        # zero gaps, right order: per key, the changelog's ops in binlog order are the writer's
        streamed = sorted(
            (r for r in rows if r["__op"] != "r"),
            key=lambda r: (r["__file"], r["__pos"], r["__row"], r["__op"] != "d"),
        )
        got: dict[Any, list[str]] = defaultdict(list)
        for r in streamed:
            key = r[key_columns[0]] if len(key_columns) == 1 else tuple(r[c] for c in key_columns)
            got[key].append(r["__op"])
        expected: dict[Any, list[str]] = defaultdict(list)
        for t, op, key in writer.log:
            if t == table:
                expected[key].append(op)
        assert dict(got) == dict(expected), f"{table}: changelog differs from the writer's changes"
        assert sum(len(v) for v in expected.values()) > 20, table


def log_versions(table_dir: Path) -> list[int]:
    """The committed versions in a table's Delta log (its ``NNN.json`` commit files)."""
    return sorted(int(p.stem) for p in (table_dir / "_delta_log").glob("*.json"))


def killed_at(point: str, config_file: Path, log_file: Path) -> subprocess.Popen[bytes]:
    """Start the connector that SIGKILLs itself in the create of the Delta table whose path ends
    with ``point``, after Delta made the table's log directories, before its commit 0."""
    spec = f"create:{point}"
    with open(log_file, "ab") as log:
        log.write(f"--- start, {KILL_AT_ENV}={spec}\n".encode())
    return start_connector(config_file, log_file, {KILL_AT_ENV: spec})


def binlog_end(server: Any) -> tuple[str, int]:
    """The server's binlog file and position: where its next transaction starts."""
    try:
        row = server.query("SHOW BINARY LOG STATUS")[0]  # MySQL 8.4 and later
    except Exception:  # noqa: BLE001 - MariaDB and older MySQL
        row = server.query("SHOW MASTER STATUS")[0]
    return str(row[0]), int(row[1])


def wait_killed(proc: subprocess.Popen[bytes], log_file: Path) -> None:
    try:
        proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        kill(proc)
        raise AssertionError("the kill point was never reached:\n" + log_file.read_text()[-4000:]) from None
    assert proc.returncode == -signal.SIGKILL, log_file.read_text(errors="replace")[-4000:]


@pytest.mark.slow
@pytest.mark.timeout(900)  # three kills and a last run, each starting Spark anew
def test_sigkill_while_creating_delta_tables_recovers_without_help(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    """Killed while a Delta table is created (Delta made its log directories, not its commit 0): a
    changelog, a current state after its changelog was created, other tables created without a
    data commit, in the snapshot (its first batch creates every table, from the tables'
    structures) and while streaming. Every restart goes on by itself, and in the end the snapshot
    rows are in the changelogs exactly once and the current state equals MySQL."""
    db = unique_db
    rows_a, rows_b = 30, 20
    mysql_server.execute(
        "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20))",
        "CREATE TABLE b (k VARCHAR(10) PRIMARY KEY, n INT)",
        "INSERT INTO a VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, rows_a + 1)),
        "INSERT INTO b VALUES " + ", ".join(f"('k{i}', {i})" for i in range(rows_b)),
        database=db,
    )
    wh = tmp_path / "wh"
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "create",
            "database.include.list": db,
            "data.dir": str(tmp_path / "data"),
            "skipped.operations": "none",
            "poll.interval.ms": "100",
            "sink.type": "spark",
            "sink.spark.warehouse": str(wh),
            "sink.spark.master": "local[2]",
            "sink.spark.conf.spark.sql.shuffle.partitions": "2",
            "sink.spark.batch.max.interval.ms": "1000",
        }
    )
    config_file = tmp_path / "connector.properties"
    config_file.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    log_file = tmp_path / "connector.log"
    tables = wh / db

    # 1. The very first create, killed between Delta's log directories and its commit 0: the
    #    warehouse holds a_changelog/_delta_log/_staged_commits and no commit (the user's report).
    wait_killed(killed_at(f"/{db}/a_changelog", config_file, log_file), log_file)
    assert (tables / "a_changelog" / "_delta_log" / "_staged_commits").is_dir()
    assert delta_commits(wh) == 0

    # 2. The same for the last table the snapshot creates, b's current state: b's changelog and
    #    a's tables are created (commit 0: no data, no commit record of the sink's) and no more.
    wait_killed(killed_at(f"/{db}/b", config_file, log_file), log_file)
    for table in ("a_changelog", "a", "b_changelog"):
        assert log_versions(tables / table) == [0], table
    assert (tables / "b" / "_delta_log" / "_staged_commits").is_dir()
    assert log_versions(tables / "b") == []

    # 3. The snapshot completes; a table created while streaming is killed at its current state's
    #    create, its changelog created, while the other tables hold their rows.
    proc = killed_at(f"/{db}/c", config_file, log_file)

    def snapshot_done() -> bool:
        meta = latest_meta(wh)
        return meta is not None and meta["batch_offset"] is not None and not in_snapshot(meta["batch_offset"])

    wait_for(snapshot_done, 300, "the snapshot to complete", proc, log_file)
    mysql_server.execute(
        "CREATE TABLE c (id INT PRIMARY KEY, s VARCHAR(10))",
        "INSERT INTO c VALUES (1, 'x'), (2, 'y')",
        "UPDATE a SET v = 'changed' WHERE id = 3",
        "DELETE FROM b WHERE k = 'k4'",
        database=db,
    )
    wait_killed(proc, log_file)
    assert log_versions(tables / "c_changelog") == [0]
    assert (tables / "c" / "_delta_log" / "_staged_commits").is_dir()
    assert log_versions(tables / "c") == []

    # 4. No kill point: the connector recovers on its own and streams on, to a last change.
    last = binlog_end(mysql_server)
    mysql_server.execute("INSERT INTO c VALUES (3, 'last')", database=db)
    proc = start_connector(config_file, log_file)

    def last_change_committing() -> bool:
        meta = latest_meta(wh)
        offset = (meta or {}).get("batch_offset") or {}
        return (str(offset.get("file")), int(offset.get("pos") or 0)) >= last

    try:
        # (its batch's other commits complete before SIGTERM stops the connector)
        wait_for(last_change_committing, 300, "the last change", proc, log_file)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            kill(proc)
    assert proc.returncode == 0, log_file.read_text(errors="replace")[-4000:]

    out = io.StringIO()
    assert run_verify(ConnectorConfig.from_mapping(props), [], out) == 0, out.getvalue()
    for table, key, snapshot_rows in (("a", "id", rows_a), ("b", "k", rows_b), ("c", "id", 0)):
        rows = spark.read.format("delta").load(str(tables / f"{table}_changelog")).collect()
        reads = [r[key] for r in rows if r["__op"] == "r"]
        assert sorted(reads) == sorted(set(reads)) and len(reads) == snapshot_rows, table
        assert len({(r["__file"], r["__pos"]) for r in rows if r["__op"] == "r"}) <= 1, table
        changes = sorted((r["__op"], r[key]) for r in rows if r["__op"] != "r")
        expected = {"a": [("u", 3)], "b": [("d", "k4")], "c": [("c", 1), ("c", 2), ("c", 3)]}[table]
        assert changes == expected, table
