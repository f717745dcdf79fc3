"""The property table walked: every property in ``connector.config.PROPERTIES`` has an effect.

A property counts as proven when

* a case here changes it from its default on a real server and the output changes as documented
  (``EFFECTS``), or
* another test sets it (a test function whose source names it; ``TOKENS`` for tests that reach it
  through its Python spelling or a shared workload file).

Debezium keys we do not implement are refused (``test_config_refusals``); adding a property to the
table without a proof fails ``test_every_property_is_proven``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import orjson
import pytest

from connector.config import PROPERTIES, ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from ddl.history.kafka import kafka_schema_history_from_config
from mysql_cdc_base.errors import MysqlCdcError
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink
from snapshot.settings import SnapshotSettings

TESTS = Path(__file__).resolve().parents[2]
THIS = Path(__file__).resolve()

# Tests that reach a property through another spelling, or set it in a shared workload file.
TOKENS: dict[str, tuple[str, str]] = {
    "decimal.handling.mode": ("golden/workloads.py", '"decimal.handling.mode": "double"'),
    "bigint.unsigned.handling.mode": ("golden/workloads.py", '"bigint.unsigned.handling.mode": "precise"'),
    "binary.handling.mode": ("golden/workloads.py", '"binary.handling.mode": "hex"'),
    "enable.time.adjuster": ("golden/workloads.py", '"enable.time.adjuster": "false"'),
    "time.precision.mode": ("golden/workloads.py", "time.precision.mode"),
    "schema.history.internal.store.only.captured.databases.ddl": (
        "golden/test_golden_modes.py",
        "schema.history.internal.store.only.captured.databases.ddl",
    ),
    "schema.history.internal.prefer.ddl": ("ddl/test_recovery.py", "prefer_ddl=prefer_ddl"),
    "offset.storage.partitions": (
        "connector/stores/test_kafka_offsets.py",
        '"offset.storage.partitions": "3"',
    ),
    "metrics.port": ("connector/metrics/test_metrics.py", '"metrics.port": str(port)'),
}


@cache
def _test_sources() -> dict[str, str]:
    """Source of every test function outside this module, by node id."""
    out: dict[str, str] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.resolve() == THIS:
            continue
        text = path.read_text()
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                parts = [*node.decorator_list, node]  # parametrize cases count
                source = "\n".join(ast.get_source_segment(text, part) or "" for part in parts)
                out[f"{path.relative_to(TESTS)}::{node.name}"] = source
    return out


# -- effect cases -----------------------------------------------------------------------------------
Outcome = list[ChangeRecord] | str  # the delivered records, or the error that stopped the engine


@dataclass(frozen=True)
class Effect:
    value: str
    setup: tuple[str, ...]  # SQL run in the test database before the snapshot ({db} is replaced)
    differs: Callable[[Outcome, Outcome], bool]  # (default outcome, changed outcome)
    extra: tuple[tuple[str, str], ...] = ()  # more properties for both runs
    streamed: tuple[str, ...] = ()  # SQL run after the snapshot, read from the binlog


def data(outcome: Outcome) -> list[ChangeRecord]:
    assert not isinstance(outcome, str), outcome
    return [r for r in outcome if r.kind == RecordKind.DATA]


def schema_changes(outcome: Outcome) -> list[ChangeRecord]:
    assert not isinstance(outcome, str), outcome
    return [r for r in outcome if r.kind == RecordKind.SCHEMA_CHANGE]


def value_fields(record: ChangeRecord) -> list[dict[str, object]]:
    schema = orjson.loads(record.value_bytes() or b"")["schema"]
    after = next(f for f in schema["fields"] if f["field"] == "after")
    return list(after["fields"])


def tables_in_order(outcome: Outcome) -> list[str]:
    seen: list[str] = []
    for record in data(outcome):
        name = record.table_id.table if record.table_id else ""
        if name not in seen:
            seen.append(name)
    return seen


T = (
    "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10) COMMENT 'the a', b INT)",
    "INSERT INTO t VALUES (1, 'x', 2)",
)

EFFECTS: dict[str, Effect] = {
    "database.exclude.list": Effect(
        "{db}",
        T,
        lambda d, c: len(data(d)) == 1 and data(c) == [],
        extra=(("table.include.list", "{db}.t"), ("database.include.list", "")),
    ),
    "column.include.list": Effect(
        "{db}.t.(id|a)",
        T,
        lambda d, c: (
            data(d)[0].after == {"id": 1, "a": "x", "b": 2} and data(c)[0].after == {"id": 1, "a": "x"}
        ),
    ),
    "include.schema.changes": Effect(
        "false", T, lambda d, c: len(schema_changes(d)) > 0 and schema_changes(c) == []
    ),
    "extended.headers.enabled": Effect(
        "false",
        T,
        lambda d, c: (
            any(h.name.startswith("__debezium.context") for h in data(d)[0].headers)
            and not any(h.name.startswith("__debezium.context") for h in data(c)[0].headers)
        ),
    ),
    "include.schema.comments": Effect(
        "true",
        T,
        lambda d, c: (
            not any("doc" in f for f in value_fields(data(d)[0]))
            and any(f.get("doc") == "the a" for f in value_fields(data(c)[0]))
        ),
    ),
    "datatype.propagate.source.type": Effect(
        ".+\\.VARCHAR",
        T,
        lambda d, c: (
            not any("parameters" in f for f in value_fields(data(d)[0]))
            and any(
                (f.get("parameters") or {}).get("__debezium.source.column.type") == "VARCHAR"  # type: ignore[union-attr]
                for f in value_fields(data(c)[0])
            )
        ),
    ),
    "snapshot.tables.order.by.row.count": Effect(
        "descending",
        (
            "CREATE TABLE a_small (id INT PRIMARY KEY)",
            "INSERT INTO a_small VALUES (1)",
            "CREATE TABLE b_big (id INT PRIMARY KEY)",
            "INSERT INTO b_big SELECT seq FROM seq_1_to_300",
            "ANALYZE TABLE a_small, b_big",
        ),
        lambda d, c: (
            tables_in_order(d) == ["a_small", "b_big"] and tables_in_order(c) == ["b_big", "a_small"]
        ),
    ),
    "inconsistent.schema.handling.mode": Effect(
        "warn",
        ("CREATE TABLE t (id INT PRIMARY KEY)",),
        lambda d, c: (
            isinstance(d, str)
            and "no structure is known" in d
            and {(r.table_id.table if r.table_id else "", r.op) for r in data(c) if r.op == "c"}
            == {("t", "c")}
        ),
        # the history never learns u's structure, so u's rows are inconsistent with it
        extra=(("schema.history.internal.ddl.filter", "CREATE TABLE u.*"),),
        streamed=(
            "DROP TABLE IF EXISTS u",
            "CREATE TABLE u (id INT PRIMARY KEY)",
            "INSERT INTO u VALUES (1)",
            "INSERT INTO t SELECT COALESCE(MAX(id), 0) + 1 FROM t",
        ),
    ),
    "table.ignore.builtin": Effect(
        "false",
        (),
        lambda d, c: (
            not any(str(r.table_id) == "mysql.db" for r in schema_changes(d) if r.table_id)
            and any("mysql" in str(r.value) and "`db`" in str(r.value) for r in schema_changes(c))
        ),
        extra=(
            ("table.include.list", "mysql\\.db"),
            ("database.include.list", ""),
            ("snapshot.mode", "no_data"),
        ),
    ),
}


def run_case(
    server: MySQLServerHandle, db: str, tmp: Path, props: dict[str, str], streamed: tuple[str, ...]
) -> Outcome:
    memory = MemorySink()
    engine = Engine(ConnectorConfig.from_mapping(props), sinks=[memory])
    try:
        engine.catch_up()
        if streamed:
            server.execute(*(s.format(db=db) for s in streamed), database=db)
            engine.catch_up()
    except MysqlCdcError as exc:
        return str(exc)
    finally:
        engine.close()
    return list(memory.records)


@pytest.mark.parametrize("name", sorted(EFFECTS))
def test_property_changes_the_output(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, name: str
) -> None:
    effect = EFFECTS[name]
    db = unique_db
    if effect.setup:
        mysql_server.execute(*(s.format(db=db) for s in effect.setup), database=db)
    base = {"topic.prefix": "walk", "database.include.list": db, "offset.storage": "memory"}
    base.update({k: v.format(db=db) for k, v in effect.extra})
    base = {k: v for k, v in base.items() if v}
    outcomes = []
    for label, extra in (("default", {}), ("changed", {name: effect.value.format(db=db)})):
        props = mysql_server.connector_properties(
            **{**base, "data.dir": str(tmp_path / label), "schema.history.internal": "memory", **extra}
        )
        outcomes.append(run_case(mysql_server, db, tmp_path / label, props, effect.streamed))
    assert effect.differs(outcomes[0], outcomes[1]), outcomes


# -- settings-level proofs for components that need a broker or Spark to observe -----------------------
BASE = {"database.hostname": "h", "database.user": "u", "database.server.id": "1", "topic.prefix": "srv"}


def test_schema_history_internal_name_is_the_history_client_id() -> None:
    props = {
        **BASE,
        "schema.history.internal.kafka.topic": "h",
        "schema.history.internal.kafka.bootstrap.servers": "127.0.0.1:9",
    }
    default = kafka_schema_history_from_config(ConnectorConfig.from_mapping(props))
    named = kafka_schema_history_from_config(
        ConnectorConfig.from_mapping({**props, "schema.history.internal.name": "ops-history"})
    )
    assert default.producer_kwargs["client_id"] == "srv-schemahistory"
    assert named.producer_kwargs["client_id"] == "ops-history"


def test_spark_batch_interval_reaches_the_sink_settings(tmp_path: Path) -> None:
    from sink.spark import SparkSink  # pyspark only for this test

    props = {**BASE, "sink.type": "spark", "sink.spark.warehouse": str(tmp_path / "wh")}
    default = SparkSink.from_config(ConnectorConfig.from_mapping(props)).settings
    changed = SparkSink.from_config(
        ConnectorConfig.from_mapping(
            {
                **props,
                "sink.spark.batch.max.interval.ms": "250",
                "sink.spark.schema.evolution": "column-mapping",
            }
        )
    ).settings
    assert (default.batch_max_interval_ms, default.evolution) == (5000, "rewrite")
    assert (changed.batch_max_interval_ms, changed.evolution) == (250, "column-mapping")


def test_chunked_snapshot_properties_reach_the_snapshot_settings() -> None:
    default = SnapshotSettings.from_config(ConnectorConfig.from_mapping(BASE))
    changed = SnapshotSettings.from_config(
        ConnectorConfig.from_mapping(
            {**BASE, "legacy.snapshot.max.threads": "true", "snapshot.max.threads.multiplier": "3"}
        )
    )
    assert (default.legacy_max_threads, default.max_threads_multiplier) == (False, 1)
    assert (changed.legacy_max_threads, changed.max_threads_multiplier) == (True, 3)


# -- the walk -----------------------------------------------------------------------------------------
LOCAL = {
    "schema.history.internal.name": "test_schema_history_internal_name_is_the_history_client_id",
    "sink.spark.batch.max.interval.ms": "test_spark_batch_interval_reaches_the_sink_settings",
    # Their effect on the snapshot is proven in tests/snapshot/test_chunked_snapshot.py.
    "legacy.snapshot.max.threads": "test_chunked_snapshot_properties_reach_the_snapshot_settings",
    "snapshot.max.threads.multiplier": "test_chunked_snapshot_properties_reach_the_snapshot_settings",
}


def proof(name: str) -> str | None:
    if name in EFFECTS:
        return f"test_property_changes_the_output[{name}]"
    if name in LOCAL:
        return LOCAL[name]
    if name in TOKENS:
        file, token = TOKENS[name]
        return file if token in (TESTS / file).read_text() else None
    return next((node for node, src in _test_sources().items() if name in src), None)


def test_every_property_is_proven() -> None:
    unproven = [p.name for p in PROPERTIES if proof(p.name) is None]
    assert unproven == [], f"properties without a test proving their effect: {unproven}"
