"""End to end: a real server, the connector's engine, the Spark sink, ``verify``.

A mixed workload is snapshotted and streamed — inserts, updates, deletes, primary-key changes,
truncate, ADD/DROP COLUMN — over tables of several type families (integer, composite date +
unsigned bigint and string keys, no key). Afterwards ``verify`` must find every current-state table
equal to MySQL, and each changelog must hold exactly the change events the engine emitted, in
binlog order.
"""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.cli.verify import run_verify
from connector.config import ConnectorConfig
from connector.engine import Engine
from sink.memory import MemorySink
from sink.records import ChangeRecord, RecordKind
from sink.spark import SparkSink
from sink.spark.session import delta_jars
from tests.sink.delta_readers import read_with_delta_rs, read_with_plain_pyspark
from tests.sink.test_spark_support import spark_for_tests

TABLES = [
    """CREATE TABLE accounts (
         id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, balance DECIMAL(12,2), opened DATE,
         updated DATETIME(3), flags SET('vip','new','closed'), status ENUM('open','frozen'), meta JSON,
         photo BLOB)""",
    """CREATE TABLE ledger (
         day DATE, seq BIGINT UNSIGNED, at TIMESTAMP(6) NULL, took TIME(6), ratio FLOAT, amount DOUBLE,
         bits BIT(5), PRIMARY KEY (day, seq))""",
    """CREATE TABLE places (code CHAR(8) PRIMARY KEY, pt POINT, area GEOMETRY, built YEAR, note TEXT)""",
    """CREATE TABLE audit (msg TEXT, n INT)""",
]


class Workload:
    """Random DML that keeps track of the keys each table holds."""

    def __init__(self, server: Any, db: str, seed: int) -> None:
        self.server, self.db, self.rng = server, db, random.Random(seed)
        self.accounts: set[int] = set()
        self.ledger: set[tuple[str, int]] = set()
        self.places: set[str] = set()
        self.next_id = 1
        self.extra_columns = ""  # values for columns added by ALTER TABLE
        self.dropped: set[str] = set()  # columns dropped by ALTER TABLE

    def account_row(self, key: int) -> str:
        r = self.rng
        return (
            f"({key}, 'acct {key} {r.choice(['ü', 'x', ''])}', {r.randint(-(10**8), 10**8) / 100:.2f}, "
            f"'{r.randint(1990, 2030)}-0{r.randint(1, 9)}-1{r.randint(0, 9)}', "
            f"'2024-05-0{r.randint(1, 9)} 10:11:12.{r.randint(0, 999):03d}', "
            f"'{r.choice(['vip', 'new,closed', ''])}', '{r.choice(['open', 'frozen'])}', "
            f'\'{{"n": {r.randint(0, 9)}, "tags": ["a", "b"]}}\'' + self.photo() + self.extra_columns + ")"
        )

    def photo(self) -> str:
        return f", X'{self.rng.randbytes(6).hex()}'" if "photo" not in self.dropped else ""

    def ledger_row(self, key: tuple[str, int]) -> str:
        r = self.rng
        return (
            f"('{key[0]}', {key[1]}, '2023-0{r.randint(1, 9)}-1{r.randint(0, 9)} 0{r.randint(0, 9)}:00:00."
            f"{r.randint(0, 999999):06d}', '{r.choice(['-838:59:59', '12:00:00.5', '00:00:01'])}', "
            f"{r.choice(['1.5', '-0.25', '3.4e38'])}, {r.random() * 1e6}, b'{r.randint(0, 31):05b}')"
        )

    def place_row(self, key: str) -> str:
        r = self.rng
        return (
            f"('{key}', ST_GeomFromText('POINT({r.randint(-90, 90)} {r.randint(-90, 90)})'), "
            f"ST_GeomFromText('LINESTRING(0 0, {r.randint(1, 9)} 1)', 4326), {r.randint(1901, 2155)}, "
            f"'{r.choice(['é', 'plain', ''])}')"
        )

    def statements(self, count: int) -> list[str]:
        r, out = self.rng, []
        for _ in range(count):
            roll = r.random()
            if roll < 0.35 or not self.accounts:
                keys = [self.next_id + i for i in range(r.randint(1, 3))]
                self.next_id += len(keys)
                self.accounts.update(keys)
                out.append("INSERT INTO accounts VALUES " + ", ".join(self.account_row(k) for k in keys))
                ledger_key = (
                    f"2024-01-{r.randint(10, 28)}",
                    r.choice([r.randint(0, 10**6), 2**64 - 1 - r.randint(0, 99)]),
                )
                if ledger_key not in self.ledger:
                    self.ledger.add(ledger_key)
                    out.append("INSERT INTO ledger VALUES " + self.ledger_row(ledger_key))
                code = f"P{r.randint(0, 10**6):07d}"
                if code not in self.places:
                    self.places.add(code)
                    out.append("INSERT INTO places VALUES " + self.place_row(code))
                out.append(f"INSERT INTO audit VALUES ('insert {keys}', {len(keys)})")
            elif roll < 0.6:
                key = r.choice(sorted(self.accounts))
                out.append(
                    f"UPDATE accounts SET balance = balance + 1.25, name = CONCAT(name, '+'), "
                    f"flags = '{r.choice(['vip', 'closed', ''])}' WHERE id = {key}"
                )
            elif roll < 0.7 and self.ledger:
                day, seq = r.choice(sorted(self.ledger))
                out.append(
                    f"UPDATE ledger SET took = '-00:00:01.5', ratio = -ratio WHERE day = '{day}' AND seq = {seq}"
                )
            elif roll < 0.8:
                key = r.choice(sorted(self.accounts))
                self.accounts.discard(key)
                out.append(f"DELETE FROM accounts WHERE id = {key}")
            elif roll < 0.9:
                key = r.choice(sorted(self.accounts))
                new = self.next_id
                self.next_id += 1
                self.accounts.discard(key)
                self.accounts.add(new)
                out.append(f"UPDATE accounts SET id = {new} WHERE id = {key}")  # primary-key change
            elif self.places:
                old = r.choice(sorted(self.places))
                self.places.discard(old)
                new_code = "Q" + old[1:]
                self.places.add(new_code)
                out.append(f"UPDATE places SET code = '{new_code}', note = 'moved' WHERE code = '{old}'")
        return out

    def run(self, count: int, per_transaction: int = 3) -> None:
        statements = self.statements(count)
        with self.server.connect(self.db) as conn, conn.cursor() as cur:
            for start in range(0, len(statements), per_transaction):
                cur.execute("BEGIN")
                for sql in statements[start : start + per_transaction]:
                    cur.execute(sql)
                cur.execute("COMMIT")


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> SparkSession:
    return spark_for_tests(tmp_path_factory.mktemp("spark-e2e"))


def changelog_of(spark: SparkSession, db: str, table: str) -> list[tuple[Any, ...]]:
    rows = spark.sql(
        f"SELECT __op, __file, __pos, __row, __snapshot FROM `{db}`.`{table}_changelog`"
    ).collect()
    return [tuple(r) for r in rows]


def emitted(records: list[ChangeRecord], table: str) -> list[tuple[Any, ...]]:
    out = []
    for r in records:
        if r.kind is RecordKind.DATA and r.table_id is not None and r.table_id.table == table:
            s = r.source or {}
            out.append((r.op, s["file"], s["pos"], s["row"], s.get("snapshot") or "false"))
    return out


def binlog_order(entries: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    # Snapshot reads first (they share the snapshot position), then binlog position; the delete
    # half of a primary-key change comes before its create.
    return sorted(entries, key=lambda e: (e[0] != "r", e[1], e[2], e[3], e[0] != "d"))


def test_snapshot_and_stream_a_mixed_workload_into_spark(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(*TABLES, database=db)
    work = Workload(mysql_server, db, seed=42)
    work.run(60)  # rows that exist before the connector starts: the snapshot reads them
    snapshot_accounts = len(work.accounts)

    config = ConnectorConfig.from_mapping(
        mysql_server.connector_properties(
            **{
                "topic.prefix": "e2e",
                "database.include.list": db,
                "data.dir": str(tmp_path / "data"),
                "skipped.operations": "none",
                "poll.interval.ms": "100",
                "max.batch.size": "300",
                "sink.type": "spark",
                "sink.spark.warehouse": str(tmp_path / "wh"),
                "sink.spark.master": "local[2]",
            }
        )
    )
    memory = MemorySink()
    engine = Engine(config, sinks=[memory, SparkSink.from_config(config)])
    try:
        engine.catch_up(timeout=180)
        work.run(120)
        engine.catch_up(timeout=180)
        # Schema evolution in the middle of the stream.
        mysql_server.execute("ALTER TABLE accounts ADD COLUMN tier INT NOT NULL DEFAULT 1", database=db)
        work.extra_columns = ", 3"
        work.run(40)
        mysql_server.execute("ALTER TABLE accounts DROP COLUMN photo", database=db)
        work.dropped.add("photo")
        work.run(40)
        mysql_server.execute("ALTER TABLE accounts RENAME COLUMN opened TO opened_on", database=db)
        mysql_server.execute("ALTER TABLE audit MODIFY n BIGINT", database=db)  # widening
        work.run(30)
        mysql_server.execute("TRUNCATE TABLE ledger", database=db)
        work.ledger.clear()
        work.run(40)
        engine.catch_up(timeout=180)
    finally:
        engine.close()

    out = io.StringIO()
    assert run_verify(config, [], out) == 0, out.getvalue()
    report = out.getvalue()
    for table in ("accounts", "ledger", "places"):
        assert f"{db}.{table}: EQUAL" in report
    assert "audit" not in report  # no key: changelog only

    for table in ("accounts", "ledger", "places", "audit"):
        expected = emitted(memory.records, table)
        changelog = changelog_of(spark, db, table)
        assert sorted(changelog) == sorted(expected), table  # every event, exactly once
        streamed = [e for e in expected if e[0] != "r"]
        assert streamed == binlog_order(streamed), table  # the engine emits in binlog order ...
        assert binlog_order(changelog) == binlog_order(expected), table  # ... and so does the changelog
    accounts_ops = {op for op, *_ in changelog_of(spark, db, "accounts")}
    assert accounts_ops == {"r", "c", "u", "d"}
    assert sum(1 for e in changelog_of(spark, db, "accounts") if e[0] == "r") == snapshot_accounts
    assert ("t",) in {(e[0],) for e in changelog_of(spark, db, "ledger")}
    columns = [f.name for f in spark.table(f"`{db}`.`accounts`").schema.fields]
    assert "photo" not in columns and "opened" not in columns  # MySQL's columns, renamed and dropped
    assert columns[3] == "opened_on" and columns[-1] == "tier"
    changelog_columns = {f.name for f in spark.table(f"`{db}`.`accounts_changelog`").schema.fields}
    assert {"tier", "photo", "opened", "opened_on", "__op", "__deleted"} <= changelog_columns

    # Readers without this project: a plain PySpark process with delta-spark (by name, by path,
    # time travel) and delta-rs read the same rows.
    names = {
        f"`{db}`.`{t}`": str(tmp_path / "wh" / db / t)
        for t in ("accounts", "ledger", "places", "accounts_changelog", "audit_changelog")
    }
    plain = read_with_plain_pyspark(delta_jars(), names)
    for name, path in names.items():
        ours = sorted(repr(tuple(r)) for r in spark.read.format("delta").load(path).collect())
        assert plain[name]["by_name"] == ours == plain[name]["by_path"], name
        assert plain[name]["version"] > 0 and plain[name]["version0"] == [], name  # version 0: created empty
        rs_rows = read_with_delta_rs(path)
        assert len(rs_rows) == len(ours), name
    for table, key in (("accounts", ["id", "name", "balance"]), ("ledger", ["day", "seq", "took"])):
        path = str(tmp_path / "wh" / db / table)
        spark_keys = sorted(
            tuple(str(r[k]) for k in key) for r in spark.read.format("delta").load(path).collect()
        )
        rs_keys = sorted(tuple(str(r[k]) for k in key) for r in read_with_delta_rs(path))
        assert rs_keys == spark_keys, table
    # The current-state tables carry Delta's Change Data Feed.
    feed = spark.read.format("delta").option("readChangeFeed", "true").option("startingVersion", 0)
    kinds = {r["_change_type"] for r in feed.load(str(tmp_path / "wh" / db / "ledger")).collect()}
    assert {"insert", "delete"} <= kinds
