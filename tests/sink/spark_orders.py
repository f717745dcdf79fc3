"""The orders workload of the Spark sink tests (no tests here): a keyed table and a keyless one,
random changes built by the connector's own event builder, and a plain Python model of the MySQL
table fed the same changes; plus readers of the resulting Delta tables.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import Any

from pyspark.sql import SparkSession

from ddl.model import JdbcType
from mysql_cdc_base.records import ChangeRecord, RecordKind
from tests.sink.spark_support import Emitter, col, make_table

J = JdbcType
ORDERS = make_table(
    "shop",
    "orders",
    [
        col("id", "INT", J.INTEGER, optional=False),
        col("qty", "INT", J.INTEGER),
        col("price", "DECIMAL", J.DECIMAL, length=10, scale=2),
        col("at", "DATETIME", J.TIMESTAMP),
        col("note", "VARCHAR", J.VARCHAR, length=30),
    ],
    primary_key=["id"],
)
AUDIT = make_table(
    "shop",
    "audit",
    [  # no key: changelog only
        col("what", "VARCHAR", J.VARCHAR, length=30),
        col("n", "INT", J.INTEGER),
    ],
)


class Model:
    """The MySQL table as a dict: key -> row (MySQL-level values), fed the same changes."""

    def __init__(self) -> None:
        self.rows: dict[int, list[Any]] = {}

    def expected(self) -> list[tuple[Any, ...]]:
        def spark_value(i: int, v: Any) -> Any:
            if v is None:
                return None
            return {2: lambda: Decimal(v), 3: lambda: dt.datetime.fromisoformat(v)}.get(i, lambda: v)()

        return sorted(tuple(spark_value(i, v) for i, v in enumerate(r)) for r in self.rows.values())


def random_order(rng: random.Random, key: int) -> list[Any]:
    return [
        key,
        rng.randint(-5, 500),
        f"{rng.randint(-99999, 99999) / 100:.2f}",
        f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} 0{rng.randint(0, 9)}:15:00",
        rng.choice([None, "gift", "ünïcode ✓", "x" * 30]),
    ]


def workload(em: Emitter, model: Model, rng: random.Random, changes: int) -> list[ChangeRecord]:
    """Random inserts, updates, deletes, key changes, a rare truncate; multi-row transactions."""
    records: list[ChangeRecord] = []
    next_key = max(model.rows, default=0) + 1
    for _ in range(changes):
        roll = rng.random()
        if roll < 0.4 or not model.rows:
            rows = []
            for _ in range(rng.randint(1, 4)):
                row = random_order(rng, next_key)
                next_key += 1
                model.rows[row[0]] = row
                rows.append(row)
            records += em.insert(ORDERS, *rows)
            records += em.insert(AUDIT, ["insert", len(rows)])
        elif roll < 0.7:
            key = rng.choice(list(model.rows))
            before = model.rows[key]
            after = random_order(rng, key)
            model.rows[key] = after
            records += em.update(ORDERS, before, after)
        elif roll < 0.85:
            key = rng.choice(list(model.rows))
            records += em.delete(ORDERS, model.rows.pop(key))
        elif roll < 0.98:
            key = rng.choice(list(model.rows))
            before = model.rows.pop(key)
            after = [next_key, *before[1:]]
            next_key += 1
            model.rows[after[0]] = after
            records += em.update(ORDERS, before, after)  # key change: delete + create
        else:
            model.rows.clear()
            records += em.truncate(ORDERS)
    return records


def current_rows(spark: SparkSession, name: str = "shop.orders") -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in spark.table(name).collect())


def changelog_ids(spark: SparkSession, name: str = "shop.orders_changelog") -> list[tuple[Any, ...]]:
    return [
        tuple(r)
        for r in spark.sql(
            f"SELECT __file, __pos, __row, __op FROM {name} ORDER BY __file, __pos, __row, __op <> 'd'"
        ).collect()
    ]


def data_ids(records: list[ChangeRecord], table: str = "orders") -> list[tuple[Any, ...]]:
    out = []
    for r in records:
        if r.kind is RecordKind.DATA and r.table_id is not None and r.table_id.table == table:
            s = r.source or {}
            out.append((s["file"], s["pos"], s["row"], r.op))
    return sorted(out, key=lambda t: (t[0], t[1], t[2], t[3] != "d"))
