"""Shared by the Spark sink's crash tests: a writer that keeps its own log of what MySQL committed
(every change with the row it leaves), and readings of the warehouse's Delta logs (JSON files, as
any reader sees them) and of the connector's log."""

from __future__ import annotations

import glob
import io
import json
import random
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from connector.cli.verify import run_verify
from connector.config import ConnectorConfig
from connector.engine import Engine
from sink.spark import SparkSink, in_snapshot
from sink.spark.faults import KILL_AT_ENV
from tests.connector.crash_support import log_tail, start_connector, stop, wait_for, write_config
from tests.sink.connector_process import lag_bytes

# (table, op, key, row): the row a create or update leaves, or the row a delete removes.
Change = tuple[str, str, Any, tuple[Any, ...]]
KEYS = {"a": ("id",), "b": ("k", "i"), "c": ("id",)}
TABLES_DDL = (
    "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)",
    "CREATE TABLE b (k VARCHAR(10), i INT, amount DECIMAL(10,2), PRIMARY KEY (k, i))",
)
C_DDL = "CREATE TABLE c (id INT PRIMARY KEY, s VARCHAR(20))"


def prefill(rows_a: int, rows_b: int) -> tuple[str, ...]:
    return (
        "INSERT INTO a VALUES " + ", ".join(f"({i}, 'v{i}', {i * 7})" for i in range(1, rows_a + 1)),
        "INSERT INTO b VALUES " + ", ".join(f"('k{i % 50}', {i}, {i / 100:.2f})" for i in range(rows_b)),
    )


class Writer(threading.Thread):
    """One connection; transactions of 1-4 statements over a, b (and c once ``use_c``); keeps
    ``log``, its own record of each committed change and the row values it leaves."""

    def __init__(self, server: Any, db: str, seed: int, rows_a: int, rows_b: int) -> None:
        super().__init__(daemon=True)
        self.server, self.db, self.rng = server, db, random.Random(seed)
        self.stop_event = threading.Event()
        self.log: list[Change] = []
        self.rows: dict[str, dict[Any, tuple[Any, ...]]] = {
            "a": {i: (i, f"v{i}", i * 7) for i in range(1, rows_a + 1)},
            "b": {(f"k{i % 50}", i): (f"k{i % 50}", i, Decimal(f"{i / 100:.2f}")) for i in range(rows_b)},
            "c": {},
        }
        self.next_id = rows_a + 1
        self.use_c = False
        self.error: BaseException | None = None

    def _put(self, cur: Any, table: str, op: str, key: Any, row: tuple[Any, ...] | None) -> list[Change]:
        rows = self.rows[table]
        marks = ", ".join(["%s"] * (len(row) if row else 0))
        where = " AND ".join(f"{c} = %s" for c in KEYS[table])
        key_values = key if isinstance(key, tuple) else (key,)
        if op == "c":
            assert row is not None
            cur.execute(f"INSERT INTO {table} VALUES ({marks})", row)
        elif op == "u":
            assert row is not None
            sets = {"a": "v = %s, n = %s", "b": "amount = %s", "c": "s = %s"}[table]
            cur.execute(f"UPDATE {table} SET {sets} WHERE {where}", (*row[len(key_values) :], *key_values))
        else:
            row = rows.pop(key)
            cur.execute(f"DELETE FROM {table} WHERE {where}", key_values)
            return [(table, "d", key, row)]
        rows[key] = row
        return [(table, op, key, row)]

    def change(self, cur: Any) -> list[Change]:
        r, a = self.rng, self.rows["a"]
        roll = r.random()
        if self.use_c and roll < 0.15:
            key = self.next_id
            self.next_id += 1
            return self._put(cur, "c", "c", key, (key, f"s{key}"))
        if roll < 0.3 or len(a) < 5:
            key = self.next_id
            self.next_id += 1
            return self._put(cur, "a", "c", key, (key, f"v{key}", r.randint(-(10**12), 10**12)))
        if roll < 0.55:
            key = r.choice(tuple(a))
            return self._put(cur, "a", "u", key, (key, a[key][1][:10] + "*", a[key][2] + 1))
        if roll < 0.62:
            return self._put(cur, "a", "d", r.choice(tuple(a)), None)
        if roll < 0.7:  # a key change: MySQL logs one update, the changelog a delete and a create
            old, new = r.choice(tuple(a)), self.next_id
            self.next_id += 1
            row = a.pop(old)
            cur.execute("UPDATE a SET id = %s WHERE id = %s", (new, old))
            a[new] = (new, *row[1:])
            return [("a", "d", old, row), ("a", "c", new, a[new])]
        b = self.rows["b"]
        if roll < 0.9 or not b:
            k = (f"k{r.randint(0, 49)}", r.randint(0, 10**6))
            amount = Decimal(f"{r.randint(0, 10**7) / 100:.2f}")
            return self._put(cur, "b", "u" if k in b else "c", k, (*k, amount))
        return self._put(cur, "b", "d", r.choice(tuple(b)), None)

    def transaction(self, cur: Any) -> None:
        cur.execute("BEGIN")
        done: list[Change] = []
        for _ in range(self.rng.randint(1, 4)):
            done += self.change(cur)
        cur.execute("COMMIT")
        self.log += done

    def write(self, transactions: int) -> None:
        with self.server.connect(self.db) as conn, conn.cursor() as cur:
            for _ in range(transactions):
                self.transaction(cur)

    def run(self) -> None:
        try:
            with self.server.connect(self.db) as conn, conn.cursor() as cur:
                while not self.stop_event.is_set():
                    self.transaction(cur)
                    # ~5 transactions/s: a restarted connector on a loaded machine catches up
                    # (at 20/s it fell minutes behind, and a kill point waited for a late DDL)
                    time.sleep(0.2)
        except BaseException as exc:  # surfaced by the test
            self.error = exc


# -- the warehouse's Delta logs ------------------------------------------------------------------
def commit_infos(wh: Path) -> list[tuple[str, int, dict[str, Any]]]:
    """(table directory name, version, commitInfo) of every commit in the warehouse."""
    out = []
    for path in glob.glob(str(wh / "*" / "*" / "_delta_log" / "*.json")):
        for line in Path(path).read_text().splitlines():
            info = json.loads(line).get("commitInfo")
            if info is not None:
                out.append((Path(path).parents[1].name, int(Path(path).stem), info))
    return out


def sink_meta(info: dict[str, Any]) -> dict[str, Any] | None:
    return json.loads(info.get("userMetadata") or "{}").get("mysql_cdc")


def delta_commits(wh: Path) -> int:
    """How many Delta commits the warehouse's tables hold."""
    return len(glob.glob(str(wh / "*" / "*" / "_delta_log" / "*.json")))


def latest_meta(wh: Path) -> dict[str, Any] | None:
    """The sink's newest commit record (``userMetadata``) over all tables."""
    metas = [m for _, _, info in commit_infos(wh) if (m := sink_meta(info)) is not None]
    return max(metas, key=lambda m: (m["batch"], m["seq"]), default=None)


def newest_batch(wh: Path) -> tuple[int, int, dict[str, dict[str, Any]]]:
    """(batch, the number of Delta tables it writes, commitInfo of each table whose final commit
    of that batch landed) of the sink's newest batch."""
    meta = latest_meta(wh)
    assert meta is not None, "no commit of the sink's yet"
    landed = {
        table: info
        for table, _, info in commit_infos(wh)
        if (m := sink_meta(info)) is not None and m["batch"] == meta["batch"] and m.get("final", True)
    }
    return meta["batch"], meta["of"], landed


def last_operation(table_dir: Path) -> str:
    versions = sorted((table_dir / "_delta_log").glob("*.json"), key=lambda p: int(p.stem))
    infos = [json.loads(line).get("commitInfo") for line in versions[-1].read_text().splitlines()]
    return next(info["operation"] for info in infos if info)


def log_versions(table_dir: Path) -> list[int]:
    """The committed versions in a table's Delta log (its ``NNN.json`` commit files)."""
    return sorted(int(p.stem) for p in (table_dir / "_delta_log").glob("*.json"))


def snapshot_done(wh: Path) -> bool:
    meta = latest_meta(wh)
    return meta is not None and meta["batch_offset"] is not None and not in_snapshot(meta["batch_offset"])


def snapshot_complete(wh: Path) -> bool:
    """Has the snapshot's last batch (the first whose end is outside the snapshot) landed in every
    table it writes? (A kill between its table commits takes the snapshot again.)"""
    if not snapshot_done(wh):
        return False
    _, of, landed = newest_batch(wh)
    return len(landed) == of


def binlog_end(server: Any) -> tuple[str, int]:
    """The server's binlog file and position: where its next transaction starts."""
    try:
        row = server.query("SHOW BINARY LOG STATUS")[0]  # MySQL 8.4 and later
    except Exception:  # noqa: BLE001 - MariaDB and older MySQL
        row = server.query("SHOW MASTER STATUS")[0]
    return str(row[0]), int(row[1])


def committed_past(wh: Path, end: tuple[str, int]) -> bool:
    """Has the sink committed a batch that reaches the binlog position ``end``?"""
    offset = (latest_meta(wh) or {}).get("batch_offset") or {}
    return (str(offset.get("file")), int(offset.get("pos") or 0)) >= end


# -- the connector's log ------------------------------------------------------------------------
_SKIPPED = re.compile(r"replayed events skipped, the Delta tables already hold them: (.*)$", re.M)


def skipped_in_log(text: str) -> dict[str, int]:
    """What the sink says it skipped on replays, per Delta table (summed over its log lines)."""
    out: dict[str, int] = defaultdict(int)
    for match in _SKIPPED.finditer(text):
        for item in match.group(1).split(", "):
            name, _, count = item.rpartition("=")
            out[name] += int(count)
    return dict(out)


# -- what the Delta tables hold, against the writer's log ----------------------------------------
def assert_changelog_exact(
    spark: SparkSession,
    table_dir: Path,
    table: str,
    log: list[Change],
    snapshot_rows: int,
    blocking: dict[Any, tuple[Any, ...]] | None = None,
) -> None:
    """No change twice, none missing: per key, the changelog's (op, row) in binlog order are the
    writer's, and the snapshot's reads are each key once, from one snapshot. With ``blocking`` (the
    rows, by key, MySQL held when a blocking snapshot read them), a second snapshot's reads (at a
    later position) are exactly those rows, each once."""
    columns = [f.name for f in spark.read.format("delta").load(str(table_dir)).schema if f.name[:2] != "__"]
    rows = spark.read.format("delta").load(str(table_dir)).collect()
    key_columns = KEYS[table]
    positions = [(r["__file"], r["__pos"], r["__row"], r["__op"]) for r in rows if r["__op"] != "r"]
    assert len(positions) == len(set(positions)), f"{table}: changes held twice"
    snapshots = sorted({(r["__file"], r["__pos"]) for r in rows if r["__op"] == "r"})
    assert len(snapshots) <= (1 if blocking is None else 2), f"{table}: reads of {snapshots}"
    if blocking is not None:
        later = [r for r in rows if r["__op"] == "r" and (r["__file"], r["__pos"]) == snapshots[-1]]
        read = sorted((_key(r, key_columns), tuple(r[c] for c in columns)) for r in later)
        assert read == sorted(blocking.items()), f"{table}: the blocking snapshot's reads"
        rows = [r for r in rows if r["__op"] != "r" or (r["__file"], r["__pos"]) != snapshots[-1]]
    reads = [tuple(r[c] for c in key_columns) for r in rows if r["__op"] == "r"]
    assert len(reads) == len(set(reads)) == snapshot_rows, f"{table}: snapshot rows"
    streamed = sorted(
        (r for r in rows if r["__op"] != "r"),
        key=lambda r: (r["__file"], r["__pos"], r["__row"], r["__op"] != "d"),
    )
    got: dict[Any, list[tuple[str, tuple[Any, ...]]]] = defaultdict(list)
    for r in streamed:
        got[_key(r, key_columns)].append((r["__op"], tuple(r[c] for c in columns)))
    expected: dict[Any, list[tuple[str, tuple[Any, ...]]]] = defaultdict(list)
    for t, op, key, row in log:
        if t == table:
            expected[key].append((op, row))
    missing = {k: v for k, v in expected.items() if got.get(k) != v}
    assert not missing, f"{table}: {len(missing)} keys differ from the writer's log, e.g. " + str(
        [(k, v, got.get(k)) for k, v in list(missing.items())[:3]]
    )
    assert set(got) == set(expected), f"{table}: changes the writer never made"


def _key(row: Any, key_columns: tuple[str, ...]) -> Any:
    return row[key_columns[0]] if len(key_columns) == 1 else tuple(row[c] for c in key_columns)


def assert_current_is_mysql(spark: SparkSession, table_dir: Path, server: Any, db: str, table: str) -> None:
    """The current-state table equals ``SELECT *``, column by column."""
    delta = sorted(tuple(r) for r in spark.read.format("delta").load(str(table_dir)).collect())
    mysql = sorted(tuple(r) for r in server.query(f"SELECT * FROM {table}", database=db))
    assert delta == mysql, f"{table}: the current state differs from SELECT *"


# -- running the connector ----------------------------------------------------------------------
def spark_props(server: Any, db: str, tmp_path: Path, prefix: str, **extra: str) -> dict[str, str]:
    return server.connector_properties(
        **{
            "topic.prefix": prefix,
            "database.include.list": db,
            "data.dir": str(tmp_path / "data"),
            "skipped.operations": "none",
            "poll.interval.ms": "100",
            "sink.type": "spark",
            "sink.spark.warehouse": str(tmp_path / "wh"),
            "sink.spark.master": "local[2]",
            "sink.spark.conf.spark.sql.shuffle.partitions": "2",
            "sink.spark.batch.max.interval.ms": "1000",
            **extra,
        }
    )


def killed_at(spec: str, config: Path, log: Path) -> Any:
    """The connector, to SIGKILL itself at ``spec`` (``MYSQL_CDC_TEST_KILL_AT``)."""
    return start_connector(config, log, {KILL_AT_ENV: spec})


def catch_up_here(props: dict[str, str]) -> None:
    """Run the connector in this process, on the test's warm Spark (no JVM start), until it has
    committed all the server has logged, then close it."""
    connector_config = ConnectorConfig.from_mapping(props)
    engine = Engine(connector_config, sinks=[SparkSink.from_config(connector_config)])
    try:
        engine.catch_up(timeout=900)
    finally:
        engine.close()


def appended_rows(metrics: dict[str, Any]) -> int:
    """The rows a changelog append wrote, from its commit's metrics: Spark names them
    ``numOutputRows``, delta-rs (sink.spark.changelog.appends=auto) ``num_added_rows``."""
    return int(metrics["numOutputRows"] if "numOutputRows" in metrics else metrics["num_added_rows"])


def connector_files(props: dict[str, str], tmp_path: Path) -> tuple[Path, Path]:
    """The connector's properties file (written) and its log file."""
    return write_config(props, tmp_path / "connector.properties"), tmp_path / "connector.log"


def run_until(config: Path, log: Path, done: Callable[[], bool], what: str, interval: float = 0.2) -> None:
    """Start the connector with no kill point, wait until ``done``, stop it (SIGTERM: its batch's
    other commits complete first); it must exit cleanly."""
    proc = start_connector(config, log)
    try:
        wait_for(done, 300, what, interval, proc, log)
    finally:
        assert stop(proc) == 0, log_tail(log)


def run_to_end(props: dict[str, str], config: Path, log: Path) -> None:
    """Start the connector with no kill point, let it commit all the server has logged, stop it."""
    connector_config = ConnectorConfig.from_mapping(props)
    run_until(config, log, lambda: lag_bytes(connector_config) == 0, "the last change", 1.0)


def assert_verified(props: dict[str, str]) -> None:
    """``mysql-cdc verify`` reports every table equal to MySQL."""
    out = io.StringIO()
    assert run_verify(ConnectorConfig.from_mapping(props), [], out) == 0, out.getvalue()


def assert_tables_exact(
    spark: SparkSession,
    server: Any,
    db: str,
    wh: Path,
    writer: Writer,
    rows: int,
    blocking: dict[str, dict[Any, tuple[Any, ...]]] | None = None,
) -> None:
    """Tables ``a`` and ``b`` (``rows`` initial snapshot rows each) of ``db`` in the warehouse
    ``wh``: each changelog exact against the writer's log (``blocking``: the rows a blocking
    snapshot read, per table), each current state equal to MySQL."""
    for table in ("a", "b"):
        later = None if blocking is None else blocking[table]
        assert_changelog_exact(spark, wh / db / f"{table}_changelog", table, writer.log, rows, later)
        assert_current_is_mysql(spark, wh / db / table, server, db, table)
