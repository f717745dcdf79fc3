"""``mysql-cdc verify`` (``connector/verify.py``) against a real server and a real local Spark.

The connector streams a table of every type family into the Spark sink; verify must call it equal.
Changes made behind the stopped connector's back must be reported as exactly those differences
(missing row, extra row, changed column) with exit code 1, and equality must come back once the
connector has caught up again.
"""

from __future__ import annotations

import datetime as dt
import io
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.cli.verify import column_rule, run_verify
from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.table_id import TableId
from sink.spark import SparkSink
from sink.spark import warehouse as warehouse_module
from sink.spark.commits import last_commit

DDL = """CREATE TABLE allt (
  id INT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  d DECIMAL(12,3), dbig DECIMAL(50,10), f FLOAT, dd DOUBLE,
  c CHAR(5), vc VARCHAR(50), tx TEXT, en ENUM('a','b,c','d'), st SET('x','y','z'),
  bn BINARY(4), vb VARBINARY(20), bl BLOB, b1 BIT(1), b10 BIT(10),
  da DATE, dt DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(3), yr YEAR,
  js JSON, g GEOMETRY, pt POINT
)"""
COLUMNS = (
    "id, ti, tiu, si, mi, bi, biu, d, dbig, f, dd, c, vc, tx, en, st, bn, vb, bl, b1, b10, da, dt, ts, "
    "tm, yr, js, g, pt"
)


def row_sql(rng: random.Random, key: int) -> str:
    """One row of SQL literals, edge values included."""
    pick = rng.choice
    return (
        "("
        + ", ".join(
            [
                str(key),
                pick(["-128", "127", "0", "NULL"]),
                pick(["255", "0"]),
                pick(["-32768", "7"]),
                pick(["16777215", "1"]),
                pick(["-9223372036854775808", "42"]),
                pick(["18446744073709551615", "9223372036854775808", "3"]),
                pick(["-123456789.123", "0.001", "NULL"]),
                pick(["-1234567890123456789012345678901234567890.0123456789", "1.5"]),
                pick(["1.1", "-3.4028e38", "1234.5677"]),
                pick(["2.718281828459045", "-1e300", "NULL"]),
                pick(["'ab'", "''"]),
                pick(["'héllo wörld ✓'", "'x''y'", "NULL"]),
                pick(["REPEAT('t', 500)", "'s'"]),
                pick(["'a'", "'b,c'", "NULL"]),
                pick(["'x,z'", "''", "'y'"]),
                pick(["X'01'", "X'00FF0000'"]),
                pick(["X''", "X'DEADBEEF'"]),
                pick(["X'000102'", "NULL"]),
                pick(["b'1'", "b'0'"]),
                pick(["b'1000000001'", "b'11'"]),
                pick(["'1969-07-20'", "'2038-01-19'", "NULL"]),
                pick(["'1960-01-02 03:04:05.123456'", "'2024-02-29 23:59:59'"]),
                pick(["'2021-03-04 05:06:07.123'", "NULL", "'1970-01-02 00:00:00'"]),
                pick(["'-838:59:59.000'", "'12:34:56.789'", "'00:00:00'"]),
                pick(["1901", "2155", "NULL"]),
                pick(['\'{"k": [1, 2.5, "s"], "a": null}\'', "'[]'", "NULL"]),
                pick(["ST_GeomFromText('LINESTRING(0 0, 1 1)', 4326)", "NULL"]),
                pick(["ST_GeomFromText('POINT(1 2)')", "NULL"]),
            ]
        )
        + ")"
    )


def config_for(server: MySQLServerHandle, db: str, tmp: Path) -> ConnectorConfig:
    return ConnectorConfig.from_mapping(
        server.connector_properties(
            **{
                "topic.prefix": "vf",
                "database.include.list": db,
                "data.dir": str(tmp / "data"),
                "sink.type": "spark",
                "sink.spark.warehouse": str(tmp / "wh"),
                "sink.spark.master": "local[2]",
                "skipped.operations": "none",
            }
        )
    )


def catch_up(config: ConnectorConfig) -> None:
    engine = Engine(config, sinks=[SparkSink.from_config(config)])
    try:
        engine.catch_up(timeout=120)
    finally:
        engine.close()


def verify(config: ConnectorConfig, *tables: TableId) -> tuple[int, str]:
    out = io.StringIO()
    code = run_verify(config, list(tables), out, chunk=10)
    return code, out.getvalue()


def test_verify_reports_equality_and_every_kind_of_difference(
    spark: SparkSession, mysql_server: Any, unique_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, rng = unique_db, random.Random(1)
    mysql_server.execute(DDL, "CREATE TABLE nokey (a INT)", database=db)
    config = config_for(mysql_server, db, tmp_path)
    catch_up(config)  # the connector starts while the tables are empty
    mysql_server.execute(
        f"INSERT INTO allt ({COLUMNS}) VALUES " + ", ".join(row_sql(rng, k) for k in range(1, 41)),
        "UPDATE allt SET vc = 'updated', d = d + 1 WHERE id % 3 = 0",
        "DELETE FROM allt WHERE id % 7 = 0",
        "UPDATE allt SET id = id + 100 WHERE id = 5",  # a key change
        "INSERT INTO nokey VALUES (1)",
        database=db,
    )
    catch_up(config)
    table = TableId(db, "allt")
    code, text = verify(config, table)
    assert code == 0, text
    assert f"{table}: MySQL 35 rows, Spark 35 rows" in text and f"{table}: EQUAL" in text

    # Behind the stopped connector's back: a missing row, an extra row, a changed column.
    with mysql_server.connect(db) as conn, conn.cursor() as cur:
        cur.execute("SET sql_log_bin = 0")  # the connector must not see these
        cur.execute(f"INSERT INTO allt ({COLUMNS}) VALUES {row_sql(rng, 1000)}")
        cur.execute("DELETE FROM allt WHERE id = 1")
        cur.execute("UPDATE allt SET tx = 'changed', tm = '01:00:00' WHERE id = 2")
    code, text = verify(config, table)
    assert code == 1, text
    assert "missing in Spark: key (1000)" in text
    assert "only in Spark: key (1)" in text
    assert 'differs: key (2): tx: MySQL "changed"' in text and "tm: MySQL 3600000000" in text
    assert f"{table}: MySQL 35 rows, Spark 35 rows" in text and f"{table}: DIFFERENT" in text
    assert "key ranges compared, 2 differ" in text  # keys 1, 2 and 1000 fall into two ranges of 10

    # Changes the connector sees bring the tables back to equal; tables without key cannot be verified.
    mysql_server.execute(
        f"INSERT INTO allt ({COLUMNS}) VALUES {row_sql(rng, 1)}",
        "DELETE FROM allt WHERE id IN (1, 2, 1000)",
        database=db,
    )
    catch_up(config)
    code, text = verify(config, table)
    assert code == 0, text
    code, text = verify(config, TableId(db, "nokey"))
    assert code == 2 and "changelog only" in text
    # No table given: every keyed table of the warehouse. Each Delta table's history is read once
    # to find them, and a compared table's once more for its own commit (it named the warehouse's
    # newest batch by reading every table's history again per table: minutes for 40 tables).
    histories: Counter[str] = Counter()

    def counted(session: SparkSession, path: str) -> Any:
        histories[path] += 1
        return last_commit(session, path)

    monkeypatch.setattr(warehouse_module, "last_commit", counted)
    code, text = verify(config)
    assert code == 0 and f"{table}: EQUAL" in text and "nokey" not in text
    assert re.search(
        rf"{re.escape(str(table))}: MySQL 33 rows, Spark 33 rows \(Spark at batch \d+, offset ", text
    )
    assert len(histories) >= 3 and sum(histories.values()) == len(histories) + 1, histories


def test_comparison_rules_ignore_representation_only_differences() -> None:
    assert column_rule("b", "bigint", "bigint(20) unsigned", "bigint", "bytes").spark(-1) == column_rule(
        "b", "bigint", "bigint(20) unsigned", "bigint", "bytes"
    ).mysql(18446744073709551615)
    bits = column_rule("b", "bit", "bit(10)", "binary", "bytes")
    assert bits.mysql(b"\x02\x01") == bits.spark(bytearray(b"\x01\x02"))
    flt = column_rule("f", "float", "float", "float", "bytes")
    assert flt.mysql(1234.57) == flt.spark(1234.5677490234375)
    js = column_rule("j", "json", "longtext", "string", "bytes")
    assert js.mysql('{"b": 1, "a": [1, 2]}') == js.spark('{"a":[1,2],"b":1}')
    b64 = column_rule("v", "varbinary", "varbinary(5)", "string", "base64")
    assert b64.mysql(b"\x01\x02\x03") == b64.spark("AQID")
    assert column_rule("d", "decimal", "decimal(5,2)", "decimal(12,4)", "bytes").spark(
        __import__("decimal").Decimal("1.5000")
    ) == column_rule("d", "decimal", "decimal(5,2)", "decimal(5,2)", "bytes").mysql(
        __import__("decimal").Decimal("1.50")
    )


def test_comparison_rules_follow_the_type_registry() -> None:
    """Rules are picked by the registry's family and type of information_schema's DATA_TYPE: YEAR
    compares as an integer, a TIMESTAMP through Spark's epoch microseconds, a synonym
    (``geomcollection``) as the type it names, a type the registry lacks as text."""
    year = column_rule("y", "year", "year", "int", "bytes")
    assert year.mysql(2024) == year.spark(2024) == 2024
    stamp = column_rule("t`s", "timestamp", "timestamp(6)", "timestamp", "bytes")
    assert stamp.spark_expression == "unix_micros(`t``s`)"
    assert stamp.mysql(dt.datetime(1970, 1, 1, 0, 0, 1, 5)) == 1_000_005
    shape = column_rule("g", "geomcollection", "geomcollection", "struct<wkb:binary,srid:int>", "bytes")
    assert shape.mysql(b"\x00\x00\x00\x00\x01\x07") == shape.spark({"wkb": b"\x01\x07", "srid": 0})
    real = column_rule("r", "double", "double", "double", "bytes")
    assert real.mysql(0.1) == real.spark(0.1) == "f:0.1"
    assert column_rule("u", "uuid", "uuid", "string", "bytes").mysql(b"ab") == "ab"
