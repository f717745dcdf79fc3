"""End to end: a real server, the connector's engine, the Spark sink, ``verify``.

A mixed workload is snapshotted and streamed — inserts, updates, deletes, primary-key changes,
truncate, ADD/DROP COLUMN — over tables of several type families (integer, composite date +
unsigned bigint and string keys, no key). Afterwards ``verify`` must find every current-state table
equal to MySQL, and each changelog must hold exactly the change events the engine emitted, in
binlog order.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from connector.cli.verify import run_verify
from connector.config import ConnectorConfig
from connector.engine import Engine
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink
from sink.spark import SparkSink
from sink.spark.session import delta_jars
from tests.sink.delta_readers import read_with_delta_rs, read_with_plain_pyspark
from tests.sink.spark_workload import TABLES, Workload


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
        work.add_tier_column()
        work.run(40)
        mysql_server.execute("ALTER TABLE accounts DROP COLUMN photo", database=db)
        work.dropped.add("photo")
        work.run(40)
        mysql_server.execute("ALTER TABLE accounts RENAME COLUMN opened TO opened_on", database=db)
        mysql_server.execute("ALTER TABLE audit MODIFY n BIGINT", database=db)  # widening
        work.run(30)
        work.truncate_ledger()
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
        # ... and the changelog, read in binlog order, gives them in that order (snapshot reads share
        # one position: their order is the table scan's, which a Delta table does not keep).
        assert binlog_order([e for e in changelog if e[0] != "r"]) == streamed, table
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
