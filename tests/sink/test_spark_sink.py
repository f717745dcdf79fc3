"""The Spark sink against a real local Spark: changelog and current-state tables, exactly-once
commits across restarts and injected crashes, snapshot rollback, schema evolution, atomic reads.

Events are built by the connector's own event builder from real table models and converters;
expected table contents come from a plain Python model of the MySQL table fed the same changes.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import DecimalType, LongType, StringType

from connector.config import ConfigError, ConnectorConfig
from ddl.model import ChangeType
from mysql_cdc_base.records import ChangeRecord
from sink.base import SinkError
from sink.spark import SparkSink, read_current_state, session_settings
from sink.spark.evolution import renames_in_ddl
from sink.spark.session import quiet_log4j2
from sink.spark.writer import DeltaWriter
from tests.sink.spark_orders import (
    AUDIT,
    ORDERS,
    J,
    Model,
    changelog_ids,
    current_rows,
    data_ids,
    random_order,
    workload,
)
from tests.sink.spark_support import BASE_PROPS, Emitter, col, make_table, new_sink


def test_tables_follow_the_events_batch_by_batch(spark: SparkSession, tmp_path: Path) -> None:
    rng = random.Random(7)
    em, model = Emitter(), Model()
    sink = new_sink(tmp_path / "wh", batch_max_events=40)
    sent: list[ChangeRecord] = []
    for changes in (60, 5, 35):
        records = workload(em, model, rng, changes)
        sent += records
        delta_before = sink.delta_seconds
        sink.send(records)  # full batches of 40 are committed while sending
        sink.flush()
        assert current_rows(spark) == model.expected()
        assert changelog_ids(spark) == data_ids(sent)
        assert sink.delta_seconds > delta_before  # the benchmark's Delta time counts each batch
    assert sink.commits_written > 3
    # The keyless table has a changelog only.
    assert spark.table("shop.audit_changelog").count() == len(data_ids(sent, "audit"))
    assert not spark.catalog.tableExists("shop.audit")
    # Changelog rows carry the image (before for deletes) and the metadata.
    deletes = spark.sql(
        "SELECT id, __deleted, __snapshot FROM shop.orders_changelog WHERE __op = 'd'"
    ).collect()
    assert deletes and all(
        r["id"] is not None and r["__deleted"] and r["__snapshot"] == "false" for r in deletes
    )
    assert sink.committed_offset() == sent[-1].offset
    sink.close()


def test_restart_resumes_from_the_commit_and_skips_replayed_events(
    spark: SparkSession, tmp_path: Path
) -> None:
    rng = random.Random(11)
    em, model = Emitter(), Model()
    first = workload(em, model, rng, 30)
    sink = new_sink(tmp_path / "wh")
    sink.send(first)
    sink.flush()
    # A crash: the sink object is dropped without close(); the engine's own offset store lags,
    # so everything is sent again after the restart, followed by new changes.
    second = workload(em, model, rng, 20)
    restarted = new_sink(tmp_path / "wh")
    assert restarted.committed_offset() == first[-1].offset
    restarted.send(first + second)
    restarted.flush()
    assert restarted.events_skipped == len(first)
    assert current_rows(spark) == model.expected()
    assert changelog_ids(spark) == data_ids(first + second)


def test_a_failed_commit_leaves_its_table_as_it_was_and_the_restart_completes_it(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(3)
    em, model = Emitter(), Model()
    first = workload(em, model, rng, 20)
    sink = new_sink(tmp_path / "wh")
    sink.send(first)
    sink.flush()
    changelog_before = changelog_ids(spark)
    second = workload(em, model, rng, 20)

    def power_cut(*args: Any) -> None:
        raise OSError("simulated crash while writing the changelog's commit")

    with monkeypatch.context() as patch:  # every writer of the sink (the tables are written side by side)
        patch.setattr(DeltaWriter, "append_changelog", power_cut)
        sink.send(second)
        with pytest.raises(SinkError, match="simulated crash"):
            sink.flush()
        with pytest.raises(SinkError, match="restart"):
            sink.send(second)
    assert changelog_ids(spark) == changelog_before  # nothing of the failed commit is visible

    restarted = new_sink(tmp_path / "wh")
    assert restarted.committed_offset() == first[-1].offset  # the batch is not complete
    restarted.send(first + second)  # the engine replays from its lagging offset store
    restarted.flush()
    assert current_rows(spark) == model.expected()
    assert changelog_ids(spark) == data_ids(first + second)


def test_crash_between_the_commits_of_a_batch_is_completed_on_restart(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The changelog committed the batch, the current state did not: each table knows its own
    offset, so the replay fills the current state and leaves the changelog alone."""
    rng = random.Random(5)
    em, model = Emitter(), Model()
    first = workload(em, model, rng, 15)
    sink = new_sink(tmp_path / "wh")
    sink.send(first)
    sink.flush()
    second = workload(em, model, rng, 25)

    def crash(*args: Any) -> None:
        raise OSError("simulated crash after the changelog commits")

    with monkeypatch.context() as patch:
        patch.setattr(DeltaWriter, "apply_rows", crash)
        sink.send(second)
        with pytest.raises(SinkError):
            sink.flush()
    assert changelog_ids(spark) == data_ids(first + second)  # the changelog has the batch

    restarted = new_sink(tmp_path / "wh")
    assert restarted.committed_offset() == first[-1].offset  # the batch is not complete
    # The engine replays from its lagging offset store, cut into batches differently.
    replay = first + second
    for start in range(0, len(replay), 17):
        restarted.send(replay[start : start + 17])
        restarted.flush()
    assert current_rows(spark) == model.expected()
    assert changelog_ids(spark) == data_ids(replay)  # no event twice
    assert restarted.committed_offset() == second[-1].offset


def test_interrupted_snapshot_is_rolled_back_and_redone_once(spark: SparkSession, tmp_path: Path) -> None:
    rows = [[i, i, "1.00", "2024-01-01 00:00:00", None] for i in range(1, 31)]
    em = Emitter()
    sink = new_sink(tmp_path / "wh")
    sink.send(em.snapshot_rows(ORDERS, rows[:20]))
    sink.flush()  # committed, but the snapshot is not finished
    assert spark.table("shop.orders").count() == 20

    restarted = new_sink(tmp_path / "wh")
    offset = restarted.committed_offset()
    assert offset is not None and offset["snapshot"] == "INITIAL"  # the engine must snapshot again
    assert spark.table("shop.orders").count() == 0  # restored to its version before the snapshot
    assert spark.table("shop.orders_changelog").count() == 0
    again = Emitter()
    snapshot = again.snapshot_rows(ORDERS, rows, last=True)
    restarted.send(snapshot[:10])
    restarted.flush()
    restarted.send(snapshot[10:])
    restarted.flush()
    assert "snapshot" not in (restarted.committed_offset() or {})
    assert spark.table("shop.orders").count() == 30
    ops = spark.sql("SELECT __op, __snapshot, count(*) n FROM shop.orders_changelog GROUP BY 1, 2").collect()
    assert {(r["__op"], r["__snapshot"]): r["n"] for r in ops} == {
        ("r", "first_in_data_collection"): 1,
        ("r", "true"): 28,
        ("r", "last"): 1,
    }


def test_schema_evolution(spark: SparkSession, tmp_path: Path) -> None:
    v1 = make_table(
        "shop",
        "items",
        [
            col("id", "INT", J.INTEGER, optional=False),
            col("a", "INT", J.INTEGER),
            col("b", "VARCHAR", J.VARCHAR, length=10),
        ],
        ["id"],
    )
    em = Emitter()
    sink = new_sink(tmp_path / "wh")
    sink.send(em.insert(v1, [1, 10, "x"], [2, 20, "y"]))
    sink.flush()

    # ADD COLUMN ... NOT NULL DEFAULT 7, known from the schema change event alone.
    v2 = make_table(
        "shop",
        "items",
        [*v1.columns, col("c", "INT", J.INTEGER, optional=False, has_default=True, default_expression="7")],
        ["id"],
    )
    sink.send(em.ddl(v2, "ALTER TABLE items ADD COLUMN c INT NOT NULL DEFAULT 7"))
    sink.flush()
    assert current_rows(spark, "shop.items") == [(1, 10, "x", 7), (2, 20, "y", 7)]

    # a INT -> BIGINT (widening), then DROP b, then RENAME c TO d, all in one batch with data.
    v3 = make_table(
        "shop", "items", [v1.columns[0], col("a", "BIGINT", J.BIGINT), v1.columns[2], v2.columns[3]], ["id"]
    )
    v4 = make_table("shop", "items", [v3.columns[0], v3.columns[1], v3.columns[3]], ["id"])
    v5 = make_table("shop", "items", [v4.columns[0], v4.columns[1], v4.columns[2].with_(name="d")], ["id"])
    batch = [
        *em.ddl(v3, "ALTER TABLE items MODIFY a BIGINT"),
        *em.insert(v3, [3, 2**40, "z", 8]),
        *em.ddl(v4, "ALTER TABLE items DROP COLUMN b"),
        *em.update(v4, [1, 10, 7], [1, 11, 7]),
        *em.ddl(v5, "ALTER TABLE items RENAME COLUMN `c` TO `d`"),
        *em.insert(v5, [4, 4, 9]),
    ]
    sink.send(batch)
    sink.flush()
    current = spark.table("shop.items")
    # MySQL's columns in MySQL's order: b dropped, c renamed to d (its values kept).
    assert [f.name for f in current.schema.fields] == ["id", "a", "d"]
    assert current.schema["a"].dataType == LongType()
    assert current_rows(spark, "shop.items") == [(1, 11, 7), (2, 20, 7), (3, 2**40, 8), (4, 4, 9)]
    # The changelog keeps its history: b and c stay (null from their end on), d is new.
    changelog = spark.sql("SELECT id, a, b, c, d, __op FROM shop.items_changelog ORDER BY __pos").collect()
    assert [tuple(r) for r in changelog] == [
        (1, 10, "x", None, None, "c"),
        (2, 20, "y", None, None, "c"),
        (3, 2**40, "z", 8, None, "c"),
        (1, 11, None, 7, None, "u"),
        (4, 4, None, None, 9, "c"),
    ]

    # An incompatible change (BIGINT -> VARCHAR): the current state converts as MySQL does, the
    # changelog keeps every earlier value, as text.
    v6 = make_table(
        "shop", "items", [v5.columns[0], col("a", "VARCHAR", J.VARCHAR, length=20), v5.columns[2]], ["id"]
    )
    sink.send([*em.ddl(v6, "ALTER TABLE items MODIFY a VARCHAR(20)"), *em.insert(v6, [5, "five", 1])])
    sink.flush()
    assert spark.table("shop.items").schema["a"].dataType == StringType()
    assert current_rows(spark, "shop.items")[-2:] == [(4, "4", 9), (5, "five", 1)]
    texts = [r["a"] for r in spark.sql("SELECT a FROM shop.items_changelog ORDER BY __pos").collect()]
    assert texts == ["10", "20", str(2**40), "11", "4", "five"]
    # Every commit of the sink carries the offset of the last event the table holds (table
    # maintenance, which changes no data, makes commits of its own).
    history = spark.sql(f"DESCRIBE HISTORY delta.`{tmp_path / 'wh' / 'shop' / 'items'}`").collect()
    maintenance = ("CREATE TABLE", "OPTIMIZE", "VACUUM START", "VACUUM END")
    assert all(
        '"mysql_cdc"' in (h["userMetadata"] or "") for h in history if h["operation"] not in maintenance
    )
    assert any(h["operation"] == "OPTIMIZE" for h in history)  # more than ten commits: compacted


def test_column_mapping_evolves_in_place(spark: SparkSession, tmp_path: Path) -> None:
    """sink.spark.schema.evolution=column-mapping: rename, drop and widening are Delta metadata
    commits (no rewrite), with Delta's column mapping and type widening."""
    v1 = make_table(
        "cm",
        "t",
        [col("id", "INT", J.INTEGER, optional=False), col("a", "INT", J.INTEGER), col("b", "INT", J.INTEGER)],
        ["id"],
    )
    v2 = make_table(
        "cm", "t", [v1.columns[0], col("a", "BIGINT", J.BIGINT), v1.columns[2].with_(name="c")], ["id"]
    )
    v3 = make_table("cm", "t", [v2.columns[0], v2.columns[1]], ["id"])
    em = Emitter()
    sink = new_sink(tmp_path / "wh", evolution="column-mapping")
    sink.send(em.insert(v1, [1, 1, 10], [2, 2, 20]))
    sink.flush()
    sink.send(
        [
            *em.ddl(v2, "ALTER TABLE t MODIFY a BIGINT, RENAME COLUMN b TO c"),
            *em.insert(v2, [3, 2**40, 30]),
            *em.ddl(v3, "ALTER TABLE t DROP COLUMN c"),
            *em.insert(v3, [4, 4]),
        ]
    )
    sink.flush()
    frame = spark.table("cm.t")
    assert [f.name for f in frame.schema.fields] == ["id", "a"]
    assert frame.schema["a"].dataType == LongType()
    assert sorted(tuple(r) for r in frame.collect()) == [(1, 1), (2, 2), (3, 2**40), (4, 4)]
    history = spark.sql(f"DESCRIBE HISTORY delta.`{tmp_path / 'wh' / 'cm' / 't'}`").collect()
    operations = [r["operation"] for r in history]
    assert "RENAME COLUMN" in operations and "DROP COLUMNS" in operations
    overwrites = [r for r in history if (r["operationParameters"] or {}).get("mode") == "Overwrite"]
    assert not overwrites  # nothing was rewritten (inserts of new keys are appends)
    properties = {r["key"]: r["value"] for r in spark.sql("SHOW TBLPROPERTIES cm.t").collect()}
    assert properties["delta.columnMapping.mode"] == "name"


def test_decimal_widening_and_default_fill_types(spark: SparkSession, tmp_path: Path) -> None:
    v1 = make_table(
        "db2",
        "m",
        [col("id", "INT", J.INTEGER, optional=False), col("p", "DECIMAL", J.DECIMAL, length=5, scale=2)],
        ["id"],
    )
    v2 = make_table(
        "db2",
        "m",
        [
            v1.columns[0],
            col("p", "DECIMAL", J.DECIMAL, length=12, scale=4),
            col("s", "VARCHAR", J.VARCHAR, length=5, optional=False),
        ],
        ["id"],
    )
    em = Emitter()
    sink = new_sink(tmp_path / "wh")
    sink.send(em.insert(v1, [1, "-999.99"]) + em.insert(v2, [2, "12345678.1234", "ok"]))
    sink.flush()
    frame = spark.table("db2.m")
    assert frame.schema["p"].dataType == DecimalType(12, 4)
    # A NOT NULL column without default is filled the way MySQL fills it: the type's zero value.
    assert current_rows(spark, "db2.m") == [
        (1, Decimal("-999.9900"), ""),
        (2, Decimal("12345678.1234"), "ok"),
    ]


def test_readers_never_see_half_a_batch(spark: SparkSession, tmp_path: Path) -> None:
    em = Emitter()
    sink = new_sink(tmp_path / "wh")
    batch_size, batches = 25, 6
    seen: list[tuple[int, int]] = []
    done = threading.Event()

    def reader() -> None:
        while not done.is_set():
            frame = read_current_state(spark, sink.settings, ORDERS.id)
            if frame is not None:  # one query: one table version
                row = frame.selectExpr("count(*) AS n", "count_if(qty = 1) AS flipped").first()
                assert row is not None
                seen.append((row["n"], row["flipped"]))

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        key = 0
        for _ in range(batches):
            rows = []
            for _ in range(batch_size):
                key += 1
                rows.append([key, 0, "0.00", "2024-01-01 00:00:00", None])
            # Each batch inserts 25 rows and flips every earlier row's qty from 0 to 1.
            updates: list[ChangeRecord] = []
            for k in range(1, key - batch_size + 1):
                updates += (
                    em.update(
                        ORDERS,
                        [k, 0, "0.00", "2024-01-01 00:00:00", None],
                        [k, 1, "0.00", "2024-01-01 00:00:00", None],
                    )
                    if k > key - 2 * batch_size
                    else []
                )
            sink.send(em.insert(ORDERS, *rows) + updates)
            sink.flush()
    finally:
        done.set()
        thread.join()
    assert seen, "the reader ran"
    for total, flipped in seen:
        assert total % batch_size == 0 and flipped == max(0, total - batch_size), (total, flipped)


def test_renames_are_read_from_ddl() -> None:
    assert renames_in_ddl("ALTER TABLE t RENAME COLUMN a TO b, CHANGE COLUMN `c x` d INT") == [
        ("a", "b"),
        ("c x", "d"),
    ]
    assert renames_in_ddl("ALTER TABLE t CHANGE c c BIGINT") == []


@pytest.fixture
def props(tmp_path: Path) -> Iterator[dict[str, str]]:
    yield {**BASE_PROPS, "sink.type": "spark", "sink.spark.warehouse": str(tmp_path / "wh")}


def test_configuration(props: dict[str, str]) -> None:
    sink = SparkSink.from_config(
        ConnectorConfig.from_mapping(
            {
                **props,
                "sink.spark.batch.max.events": "7",
                "sink.spark.conf.spark.sql.shuffle.partitions": "3",
                "sink.spark.changelog.name.format": "cdc.{database}__{table}",
            }
        )
    )
    assert sink.settings.batch_max_events == 7
    assert sink.settings.conf == {"spark.sql.shuffle.partitions": "3"}
    assert sink.settings.master == "local[*]"
    missing = {k: v for k, v in props.items() if k != "sink.spark.warehouse"}
    with pytest.raises(ConfigError, match="sink.spark.warehouse"):
        SparkSink.from_config(ConnectorConfig.from_mapping(missing))
    with pytest.raises(ConfigError, match="sink.spark.table.name.format"):
        SparkSink.from_config(
            ConnectorConfig.from_mapping({**props, "sink.spark.table.name.format": "{db}.x"})
        )
    with pytest.raises(ConfigError, match="sink.spark.schema.evolution"):
        SparkSink.from_config(ConnectorConfig.from_mapping({**props, "sink.spark.schema.evolution": "yes"}))


def test_schema_change_event_creates_empty_tables(spark: SparkSession, tmp_path: Path) -> None:
    table = make_table("fresh", "t", [col("id", "INT", J.INTEGER, optional=False)], ["id"])
    sink = new_sink(tmp_path / "wh")
    sink.send(Emitter().ddl(table, "CREATE TABLE t (id INT PRIMARY KEY)", ChangeType.CREATE))
    sink.flush()
    assert spark.table("fresh.t").count() == 0
    assert spark.table("fresh.t_changelog").count() == 0


def root_log_level(spark: SparkSession) -> str:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    return str(jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel().toString())


def test_session_is_quiet_and_on_loopback_unless_configured(spark: SparkSession, tmp_path: Path) -> None:
    """The session the sink creates: no progress bars, no UI, driver on loopback, Spark logging at
    ERROR from the JVM's start (no banners); sink.spark.conf.* and sink.spark.log.level win."""
    conf = spark.sparkContext.getConf()
    quiet = {
        "spark.ui.showConsoleProgress": "false",
        "spark.ui.enabled": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
    }
    assert {key: conf.get(key) for key in quiet} == quiet
    assert root_log_level(spark) == "ERROR"
    assert f"-Dlog4j2.configurationFile=file:{quiet_log4j2()}" in str(
        conf.get("spark.driver.extraJavaOptions")
    )

    user = {"spark.ui.showConsoleProgress": "true", "spark.driver.host": "192.0.2.7"}
    assert session_settings(user) == {**session_settings(), **user}
    assert session_settings()["spark.driver.bindAddress"] == "127.0.0.1"

    props = {**BASE_PROPS, "sink.type": "spark", "sink.spark.warehouse": str(tmp_path / "wh")}
    sink = SparkSink.from_config(ConnectorConfig.from_mapping({**props, "sink.spark.log.level": "info"}))
    try:
        assert sink.spark is spark  # the process's session, its level set as asked
        assert root_log_level(spark) == "INFO"
    finally:
        spark.sparkContext.setLogLevel("ERROR")
    with pytest.raises(ConfigError, match="sink.spark.log.level"):
        ConnectorConfig.from_mapping({**props, "sink.spark.log.level": "loud"})


def test_a_warehouse_of_the_old_parquet_layout_is_refused(spark: SparkSession, tmp_path: Path) -> None:
    (tmp_path / "wh" / "_mysql_cdc" / "commits").mkdir(parents=True)
    (tmp_path / "wh" / "_mysql_cdc" / "commits" / f"{1:020d}.json").write_text("{}")
    with pytest.raises(SinkError, match=r"_mysql_cdc/commits.*sink.spark.warehouse to a new location"):
        new_sink(tmp_path / "wh")


def test_only_a_provably_uncommitted_delta_log_is_replaced(spark: SparkSession, tmp_path: Path) -> None:
    """A ``_delta_log`` without a committed version is no table: the sink creates the table over
    it when it holds only what a killed create leaves (Delta's log directories, a temporary file
    of commit 0), and stops without removing anything when it holds a file Delta reads as a log
    file (here a staged commit, which a commit coordinator may have accepted)."""
    table = make_table("half", "t", [col("id", "INT", J.INTEGER, optional=False)], ["id"])
    wh = tmp_path / "wh"
    for name in ("t", "t_changelog"):
        staged = wh / "half" / name / "_delta_log" / "_staged_commits"
        staged.mkdir(parents=True)
    (wh / "half" / "t" / "_delta_log" / f".{0:020d}.json.3f1c.tmp").write_text("{}")
    sink = new_sink(wh)
    sink.send(Emitter().insert(table, [1], [2]))
    sink.flush()
    assert sorted(r[0] for r in spark.table("half.t").collect()) == [1, 2]
    assert spark.table("half.t_changelog").count() == 2

    other = make_table("held", "t", [col("id", "INT", J.INTEGER, optional=False)], ["id"])
    staged = wh / "held" / "t_changelog" / "_delta_log" / "_staged_commits"
    staged.mkdir(parents=True)
    commit = staged / f"{0:020d}.5d6e1c1b-0c1f-4c9b-9f61-2a7b3c5d7e90.json"
    commit.write_text("{}")
    sink = new_sink(wh)
    sink.send(Emitter().insert(other, [1]))
    with pytest.raises(SinkError, match="Delta sees no committed version, yet its log holds"):
        sink.flush()
    assert commit.exists()


def test_updates_start_building_the_merge_state_ahead(spark: SparkSession, tmp_path: Path) -> None:
    """An update makes the batch a MERGE: the state of the table's newest version is built in the
    background while the batch fills, and after each commit of a table that has had updates; an
    insert-only table (appends) builds none. The tables stay right either way. Only Spark's
    MERGE needs it: where delta-rs MERGEs (the default on a local warehouse), none is built."""
    rng = random.Random(11)
    em, model = Emitter(), Model()
    sink = new_sink(tmp_path / "wh", batch_max_events=10_000, current_commits="spark")
    rows = [random_order(rng, key) for key in range(1, 21)]
    model.rows.update((row[0], row) for row in rows)
    sink.send(em.insert(ORDERS, *rows) + em.insert(AUDIT, ["insert", 20]))
    sink.flush()  # appends: no state built
    assert sink.states_prepared == 0 and sink._prepared is None

    after = random_order(rng, 5)
    sink.send(em.update(ORDERS, model.rows[5], after))  # the batch will MERGE: built now
    model.rows[5] = after
    assert sink._prepared is not None
    sink._prepared.result(timeout=120)
    assert sink.states_prepared == 1
    sink.send(em.delete(ORDERS, model.rows.pop(7)))
    sink.flush()  # the MERGE; the table has had updates, so its new version is built at once
    assert current_rows(spark) == model.expected()
    sink._prepared.result(timeout=120)
    assert sink.states_prepared == 2

    inserts_only = new_sink(tmp_path / "wh2", batch_max_events=10_000)
    for key in (100, 101):
        inserts_only.send(em.insert(ORDERS, random_order(rng, key)))
        inserts_only.flush()
    assert inserts_only.states_prepared == 0 and inserts_only._prepared is None
    inserts_only.close()
    sink.close()

    by_delta_rs = new_sink(tmp_path / "wh3", batch_max_events=10_000)  # delta-rs MERGEs
    by_delta_rs.send(em.insert(ORDERS, *model.rows.values()))
    by_delta_rs.flush()
    after = random_order(rng, 9)
    by_delta_rs.send(em.update(ORDERS, model.rows[9], after))
    model.rows[9] = after
    by_delta_rs.flush()
    assert by_delta_rs.states_prepared == 0 and by_delta_rs._prepared is None
    current = spark.read.format("delta").load(str(tmp_path / "wh3" / "shop" / "orders"))
    assert sorted(tuple(r) for r in current.collect()) == model.expected()
    by_delta_rs.close()
