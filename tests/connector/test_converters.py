"""Column converters against a real server: each value is written with SQL, read back both from the
binlog (mysql-replication) and by a snapshot ``SELECT`` (pymysql with ``SNAPSHOT_CONVERSIONS``), and
both readings must convert to the payload Debezium 3.6.1.Final produces (rules cited per case from
``shared/docs/debezium-reference.md`` section 4).

Raw values are captured once per module (one table per type family) and converted under each
settings variant, so the module stays fast.
"""

from __future__ import annotations

import base64
import datetime as dt
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pymysql
import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import WriteRowsEvent

from connector.connect import NO_DEFAULT
from connector.converters import (
    SNAPSHOT_CONVERSIONS,
    ColumnConverter,
    ConverterSettings,
    column_converter,
)
from connector.local_server import LocalMySQLServer
from ddl.model import Column, JdbcType, Table, TableId

DB = "conv_types"
DEFAULT = ConverterSettings()


# ------------------------------------------------------------------------------------------------
# Harness
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Spec:
    """One column: its SQL type, the model column the DDL parser would produce, and values as SQL
    literals with the payload expected for each (per settings variant name)."""

    sql: str
    column: Column
    values: Sequence[tuple[str, Any]]
    # settings name -> expected payloads overriding ``values`` for that variant
    variants: dict[str, Sequence[Any]] = field(default_factory=dict)


def column(name: str, data_type: str, jdbc: int, **kw: Any) -> Column:
    return Column(name=name, position=0, data_type=data_type, jdbc_type=jdbc, **kw)


@dataclass
class Captured:
    table: Table
    specs: list[Spec]
    snapshot: list[tuple[Any, ...]]
    binlog: list[dict[str, Any]]


def table_of(name: str, specs: Sequence[Spec]) -> Table:
    cols = [column("id", "INT", JdbcType.INTEGER, optional=False)]
    cols += [s.column.with_(position=i + 2) for i, s in enumerate(specs)]
    cols[0] = cols[0].with_(position=1)
    return Table(TableId(DB, name), tuple(cols), primary_key=("id",), default_charset="utf8mb4")


def create_sql(name: str, specs: Sequence[Spec]) -> list[str]:
    defs = ", ".join(f"`{s.column.name}` {s.sql}" for s in specs)
    rows = max(len(s.values) for s in specs)
    stmts = [f"CREATE TABLE `{DB}`.`{name}` (id INT PRIMARY KEY, {defs})"]
    for r in range(rows):
        literals = ", ".join(s.values[r][0] for s in specs)
        stmts.append(f"INSERT INTO `{DB}`.`{name}` VALUES ({r}, {literals})")
    return stmts


def snapshot_rows(server: LocalMySQLServer, table: str, time_zone: str = "+00:00"
                  ) -> list[tuple[Any, ...]]:
    conn = pymysql.connect(host=server.host, port=server.port, user=server.connector.user,
                           password=server.connector.password, charset="utf8mb4",
                           conv=SNAPSHOT_CONVERSIONS, init_command=f"SET time_zone='{time_zone}'")
    with conn, conn.cursor() as cur:
        cur.execute(f"SELECT * FROM `{DB}`.`{table}` ORDER BY id")
        return [row[1:] for row in cur.fetchall()]


def binlog_rows(server: LocalMySQLServer, encodings: dict[str, list[str | None]]
                ) -> dict[str, list[dict[str, Any]]]:
    """Every inserted row of the module's database, by table, as mysql-replication decodes it after
    the reader installed each column's ``binlog_encoding``."""
    stream = BinLogStreamReader(
        connection_settings={"host": server.host, "port": server.port,
                             "user": server.connector.user, "passwd": server.connector.password},
        server_id=random.randint(10_000, 2**31), is_mariadb=True, only_events=[WriteRowsEvent],
        only_schemas=[DB], blocking=False, resume_stream=False)
    out: dict[str, list[dict[str, Any]]] = {}
    try:
        for event in stream:
            wanted = encodings.get(event.table)
            if wanted is None:
                continue
            for lib_column, encoding in zip(event.columns, wanted, strict=True):
                if encoding is not None:
                    lib_column.character_set_name = encoding
            out.setdefault(event.table, []).extend(r["values"] for r in event.rows)
    finally:
        stream.close()
    return out


def capture(server: LocalMySQLServer, families: dict[str, list[Spec]]) -> dict[str, Captured]:
    server.execute(f"DROP DATABASE IF EXISTS `{DB}`", f"CREATE DATABASE `{DB}` CHARSET utf8mb4")
    statements = ["SET SESSION sql_mode=''"]  # allow zero dates and out-of-range literals
    for name, specs in families.items():
        statements += create_sql(name, specs)
    with server.connect() as conn, conn.cursor() as cur:
        for sql in statements:
            cur.execute(sql)
    tables = {name: table_of(name, specs) for name, specs in families.items()}
    encodings = {name: [column_converter(c, t, DEFAULT).binlog_encoding for c in t.columns]
                 for name, t in tables.items()}
    streamed = binlog_rows(server, encodings)
    return {name: Captured(tables[name], specs, snapshot_rows(server, name), streamed[name])
            for name, specs in families.items()}


def check(captured: Captured, settings: ConverterSettings = DEFAULT, variant: str | None = None
          ) -> None:
    """Both readings of every value must give the expected payload; report all mismatches."""
    problems = []
    for index, spec in enumerate(captured.specs):
        conv = column_converter(captured.table.columns[index + 1], captured.table, settings)
        expected_values = spec.variants.get(variant, [v[1] for v in spec.values]) if variant \
            else [v[1] for v in spec.values]
        for row, expected in enumerate(expected_values):
            raw_binlog = captured.binlog[row][spec.column.name]
            raw_snapshot = captured.snapshot[row][index]
            got_binlog = conv.from_binlog(raw_binlog)
            got_snapshot = conv.from_snapshot(raw_snapshot)
            if got_binlog != expected or got_snapshot != expected:
                problems.append(f"{spec.column.name} {spec.sql} <- {spec.values[row][0]}: expected "
                                f"{expected!r}, binlog {raw_binlog!r} -> {got_binlog!r}, "
                                f"snapshot {raw_snapshot!r} -> {got_snapshot!r}")
    assert not problems, "\n".join(problems)


def b64(*octets: int) -> str:
    return base64.b64encode(bytes(octets)).decode()


# ------------------------------------------------------------------------------------------------
# Type families (step 1: integers, decimals, strings, temporal)
# ------------------------------------------------------------------------------------------------
INT = JdbcType.INTEGER
U = {"unsigned": True}

INTEGERS = [
    # 4.2: signed TINYINT -> INT16 in 3.6.1.Final; values pass through unchanged.
    Spec("TINYINT", column("ti", "TINYINT", JdbcType.TINYINT),
         [("-128", -128), ("127", 127), ("NULL", None)]),
    Spec("TINYINT UNSIGNED", column("tiu", "TINYINT", JdbcType.TINYINT, **U),
         [("0", 0), ("255", 255), ("NULL", None)]),
    Spec("SMALLINT", column("si", "SMALLINT", JdbcType.SMALLINT),
         [("-32768", -32768), ("32767", 32767), ("NULL", None)]),
    Spec("SMALLINT UNSIGNED", column("siu", "SMALLINT", JdbcType.SMALLINT, **U),
         [("0", 0), ("65535", 65535), ("NULL", None)]),
    Spec("MEDIUMINT", column("mi", "MEDIUMINT", INT),
         [("-8388608", -8388608), ("8388607", 8388607), ("NULL", None)]),
    Spec("MEDIUMINT UNSIGNED", column("miu", "MEDIUMINT", INT, **U),
         [("0", 0), ("16777215", 16777215), ("NULL", None)]),
    Spec("INT", column("i", "INT", INT),
         [("-2147483648", -2147483648), ("2147483647", 2147483647), ("NULL", None)]),
    Spec("INT UNSIGNED", column("iu", "INT", INT, **U),
         [("0", 0), ("4294967295", 4294967295), ("NULL", None)]),
    Spec("BIGINT", column("bi", "BIGINT", JdbcType.BIGINT),
         [("-9223372036854775808", -9223372036854775808),
          ("9223372036854775807", 9223372036854775807), ("NULL", None)]),
    # 4.2: BIGINT UNSIGNED long mode wraps >= 2^63 to negative (18446744073709551615 -> -1).
    Spec("BIGINT UNSIGNED NOT NULL", column("biu", "BIGINT", JdbcType.BIGINT, optional=False, **U),
         [("9223372036854775807", 9223372036854775807), ("18446744073709551615", -1),
          ("9223372036854775808", -9223372036854775808)],
         variants={"precise": [b64(0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF),
                               b64(0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF),
                               b64(0x00, 0x80, 0, 0, 0, 0, 0, 0, 0)]}),
]

BIG = "-12345678901234567890123456789012345.123456789012345678901234567890"
BIG_UNSCALED = int(BIG.replace(".", ""))

DECIMALS = [
    # 4.3 / 3h: precise -> base64 of the unscaled two's-complement big-endian minimal bytes.
    Spec("DECIMAL(5,2)", column("d52", "DECIMAL", JdbcType.DECIMAL, length=5, scale=2),
         [("999.99", b64(0x01, 0x86, 0x9F)), ("0.00", b64(0x00)), ("-1.28", b64(0x80)),
          ("NULL", None)],
         variants={"double": [999.99, 0.0, -1.28, None],
                   "string": ["999.99", "0.00", "-1.28", None]}),
    # DECIMAL without (p,s) is (10,0).
    Spec("DECIMAL", column("d", "DECIMAL", JdbcType.DECIMAL),
         [("-3", b64(0xFD)), ("128", b64(0x00, 0x80)), ("9999999999", b64(0x02, 0x54, 0x0B, 0xE3, 0xFF)),
          ("NULL", None)],
         variants={"double": [-3.0, 128.0, 9999999999.0, None],
                   "string": ["-3", "128", "9999999999", None]}),
    Spec("NUMERIC(65,30)", column("d6530", "NUMERIC", JdbcType.NUMERIC, length=65, scale=30),
         [(BIG, base64.b64encode(BIG_UNSCALED.to_bytes(27, "big", signed=True)).decode()),
          ("0", b64(0x00)), ("1e-30", b64(0x01)), ("NULL", None)],
         variants={"double": [float(BIG), 0.0, 1e-30, None],
                   "string": [BIG, "0." + "0" * 30, "0." + "0" * 29 + "1", None]}),
]

STRINGS = [
    Spec("VARCHAR(20)", column("vc", "VARCHAR", JdbcType.VARCHAR, length=20, charset="utf8mb4"),
         [("'é😀x'", "é😀x"), ("''", ""), ("NULL", None)]),
    Spec("CHAR(5)", column("ch", "CHAR", JdbcType.CHAR, length=5),  # charset from the table
         [("'ab'", "ab"), ("'a b'", "a b"), ("NULL", None)]),
    Spec("TEXT", column("tx", "TEXT", JdbcType.VARCHAR, charset="utf8mb4"),
         [("REPEAT('ü', 3000)", "ü" * 3000), ("'\\n\\t\\\\'", "\n\t\\"), ("NULL", None)]),
]

US_PER_DAY = 86_400_000_000

TEMPORALS = [
    # 4.5: DATE -> io.debezium.time.Date days; 0018 adjusted to 2018 (17622); zero date -> null.
    Spec("DATE", column("da", "DATE", JdbcType.DATE),
         [("'2018-04-01'", 17622), ("'0018-04-01'", 17622), ("'1969-12-31'", -1),
          ("'0000-00-00'", None), ("'2020-00-05'", None), ("NULL", None)],
         variants={"no_adjust": [17622, -712863, -1, None, None, None]}),
    # DATETIME(0..3) -> Timestamp epoch ms of the wall clock read as UTC.
    Spec("DATETIME", column("dt0", "DATETIME", JdbcType.TIMESTAMP),
         [("'2018-04-01 12:34:56'", 1522586096000), ("'0078-04-01 12:34:56'", 260282096000),
          ("'1969-12-31 23:59:59'", -1000), ("'0000-00-00 00:00:00'", None),
          ("'2020-01-00 10:00:00'", None), ("NULL", None)]),
    Spec("DATETIME(3)", column("dt3", "DATETIME", JdbcType.TIMESTAMP, length=3),
         [("'2018-04-01 12:34:56.789'", 1522586096789), ("'1000-01-01 00:00:00.001'", -30610224000000 + 1),
          ("'1969-12-31 23:59:59.999'", -1), ("'0000-00-00 00:00:00'", None),
          ("'9999-12-31 23:59:59.999'", 253402300799999), ("NULL", None)]),
    # DATETIME(4..6) -> MicroTimestamp epoch us.
    Spec("DATETIME(6)", column("dt6", "DATETIME", JdbcType.TIMESTAMP, length=6),
         [("'2018-04-01 12:34:56.000001'", 1522586096000001),
          ("'0078-04-01 12:34:56.000001'", 260282096000001),
          ("'1969-12-31 23:59:59.999999'", -1), ("'0000-00-00 00:00:00'", None),
          ("'9999-12-31 23:59:59.999999'", 253402300799999999), ("NULL", None)]),
    # TIMESTAMP -> ZonedTimestamp UTC text; no fsp: minimal fraction; zero -> null (DBZ-1912).
    Spec("TIMESTAMP NULL", column("ts0", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE),
         [("'2023-01-11 00:34:10'", "2023-01-11T00:34:10Z"),
          ("'1970-01-01 00:00:01'", "1970-01-01T00:00:01Z"),
          ("'2038-01-19 03:14:07'", "2038-01-19T03:14:07Z"),
          ("'0000-00-00 00:00:00'", None), ("'2020-01-01 00:00:00'", "2020-01-01T00:00:00Z"),
          ("NULL", None)]),
    # TIMESTAMP(n): exactly n fraction digits.
    Spec("TIMESTAMP(6) NULL", column("ts6", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, length=6),
         [("'2023-01-11 00:34:10.500000'", "2023-01-11T00:34:10.500000Z"),
          ("'2023-01-11 00:34:10'", "2023-01-11T00:34:10.000000Z"),
          ("'2023-01-11 00:34:10.123456'", "2023-01-11T00:34:10.123456Z"),
          ("'0000-00-00 00:00:00'", None), ("'1970-01-01 00:00:01.000001'", "1970-01-01T00:00:01.000001Z"),
          ("NULL", None)]),
    Spec("TIMESTAMP(3) NULL", column("ts3", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, length=3),
         [("'2023-01-11 00:34:10.5'", "2023-01-11T00:34:10.500Z"),
          ("'2023-01-11 00:34:10'", "2023-01-11T00:34:10.000Z"),
          ("'2023-01-11 00:34:10.123'", "2023-01-11T00:34:10.123Z"),
          ("NULL", None), ("NULL", None), ("NULL", None)]),
    # TIME -> MicroTime signed us, beyond 24h and negative (4.5 regression values).
    Spec("TIME", column("tm0", "TIME", JdbcType.TIME),
         [("'-838:59:59'", -3020399000000), ("'838:59:59'", 3020399000000),
          ("'-13:14:50'", -47690000000), ("'00:00:00'", 0), ("'-00:00:01'", -1000000),
          ("NULL", None)]),
    Spec("TIME(6)", column("tm6", "TIME", JdbcType.TIME, length=6),
         [("'-838:59:58.999999'", -3020398999999), ("'-00:00:00.000001'", -1),
          ("'-12:34:56.789'", -45296789000), ("'12:34:56.789012'", 45296789012),
          ("'-00:00:00.000000'", 0), ("NULL", None)]),
    Spec("TIME(3)", column("tm3", "TIME", JdbcType.TIME, length=3),
         [("'-733:00:00.001'", -2638800001000), ("'837:00:00.5'", 3013200500000),
          ("'-01:00:00.999'", -3600999000), ("'517:51:04.777'", 1864264777000),
          ("'-00:00:00.5'", -500000), ("NULL", None)]),
    Spec("TIME(2)", column("tm2", "TIME", JdbcType.TIME, length=2),
         [("'517:51:04.78'", 1864264780000), ("'-00:00:00.01'", -10000),
          ("'-838:59:58.99'", -3020398990000), ("NULL", None), ("NULL", None), ("NULL", None)]),
]

NOT_NULL_TEMPORALS = [
    # 4.5: zero date in a NOT NULL column -> schema default if any, else 0 / epoch.
    Spec("DATE NOT NULL", column("dan", "DATE", JdbcType.DATE, optional=False),
         [("'0000-00-00'", 0), ("'2018-04-01'", 17622)]),
    Spec("DATE NOT NULL DEFAULT '2020-01-01'",
         column("dad", "DATE", JdbcType.DATE, optional=False, has_default=True,
                default_expression="2020-01-01"),
         [("'0000-00-00'", 18262), ("'2018-04-01'", 17622)]),
    Spec("DATETIME(3) NOT NULL", column("dtn", "DATETIME", JdbcType.TIMESTAMP, length=3, optional=False),
         [("'0000-00-00 00:00:00'", 0), ("'2018-04-01 12:34:56.789'", 1522586096789)]),
    Spec("TIMESTAMP NOT NULL DEFAULT '2000-01-01 00:00:00'",
         column("tsn", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, optional=False,
                has_default=True, default_expression="2000-01-01 00:00:00"),
         [("'0000-00-00 00:00:00'", "2000-01-01T00:00:00Z"),
          ("'2023-01-11 00:34:10'", "2023-01-11T00:34:10Z")]),
    Spec("TIMESTAMP(2) NOT NULL DEFAULT 0",
         column("tsz", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, length=2, optional=False,
                has_default=True, default_expression="0"),
         [("'0000-00-00 00:00:00'", "1970-01-01T00:00:00Z"),
          ("'2023-01-11 00:34:10.5'", "2023-01-11T00:34:10.50Z")]),
]

FAMILIES = {
    "integers": INTEGERS,
    "decimals": DECIMALS,
    "strings": STRINGS,
    "temporals": TEMPORALS,
    "not_null_temporals": NOT_NULL_TEMPORALS,
}


@pytest.fixture(scope="module")
def captured(mysql_server: LocalMySQLServer) -> Iterator[dict[str, Captured]]:
    try:
        yield capture(mysql_server, FAMILIES)
    finally:
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`")


# ------------------------------------------------------------------------------------------------
# Values: binlog and snapshot agree with Debezium
# ------------------------------------------------------------------------------------------------
def test_integers_default_mode(captured: dict[str, Captured]) -> None:
    check(captured["integers"])


def test_bigint_unsigned_precise_mode(captured: dict[str, Captured]) -> None:
    check(captured["integers"], ConverterSettings(bigint_unsigned_handling_mode="precise"), "precise")


def test_decimal_precise(captured: dict[str, Captured]) -> None:
    check(captured["decimals"])


@pytest.mark.parametrize("mode", ["double", "string"])
def test_decimal_other_modes(captured: dict[str, Captured], mode: str) -> None:
    check(captured["decimals"], ConverterSettings(decimal_handling_mode=mode), mode)


def test_strings_utf8mb4(captured: dict[str, Captured]) -> None:
    check(captured["strings"])


def test_temporals_default_mode(captured: dict[str, Captured]) -> None:
    check(captured["temporals"])


def test_date_without_time_adjuster(captured: dict[str, Captured]) -> None:
    only_dates = Captured(captured["temporals"].table, captured["temporals"].specs[:1],
                          captured["temporals"].snapshot, captured["temporals"].binlog)
    check(only_dates, ConverterSettings(enable_time_adjuster=False), "no_adjust")


def test_not_null_zero_dates_use_default_or_epoch(captured: dict[str, Captured]) -> None:
    check(captured["not_null_temporals"])


def test_timestamp_snapshot_in_server_time_zone(mysql_server: LocalMySQLServer,
                                                captured: dict[str, Captured]) -> None:
    """A snapshot session in +05:30 returns local text; database.connectionTimeZone tells us so."""
    zone = dt.timezone(dt.timedelta(hours=5, minutes=30))
    rows = snapshot_rows(mysql_server, "temporals", time_zone="+05:30")
    table = captured["temporals"].table
    ts6 = table.column("ts6")
    assert ts6 is not None
    conv = column_converter(ts6, table, ConverterSettings(server_time_zone=zone))
    index = [c.name for c in table.columns].index("ts6") - 1
    assert rows[0][index] == "2023-01-11 06:04:10.500000"  # really local text
    assert conv.from_snapshot(rows[0][index]) == "2023-01-11T00:34:10.500000Z"


# ------------------------------------------------------------------------------------------------
# Schemas
# ------------------------------------------------------------------------------------------------
def schema_of(col: Column, settings: ConverterSettings = DEFAULT) -> dict[str, Any]:
    table = Table(TableId(DB, "t"), (col,), default_charset="utf8mb4")
    return column_converter(col, table, settings).schema.to_json()


@pytest.mark.parametrize(("col", "expected"), [
    (column("a", "TINYINT", JdbcType.TINYINT), {"type": "int16", "optional": True}),
    (column("a", "TINYINT", JdbcType.TINYINT, length=1), {"type": "int16", "optional": True}),
    (column("a", "TINYINT", JdbcType.TINYINT, **U), {"type": "int16", "optional": True}),
    (column("a", "SMALLINT", JdbcType.SMALLINT), {"type": "int16", "optional": True}),
    (column("a", "SMALLINT", JdbcType.SMALLINT, **U), {"type": "int32", "optional": True}),
    (column("a", "MEDIUMINT", INT, **U), {"type": "int32", "optional": True}),
    (column("a", "INT", INT, optional=False), {"type": "int32", "optional": False}),
    (column("a", "INT", INT, **U), {"type": "int64", "optional": True}),
    (column("a", "INTEGER", INT, length=11, **U), {"type": "int64", "optional": True}),
    (column("a", "INT", INT, zerofill=True, unsigned=True), {"type": "int64", "optional": True}),
    (column("a", "BIGINT", JdbcType.BIGINT, **U), {"type": "int64", "optional": True}),
    (column("a", "DECIMAL", JdbcType.DECIMAL, length=7, scale=5),
     {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
      "version": 1, "parameters": {"scale": "5", "connect.decimal.precision": "7"}}),
    (column("a", "DECIMAL", JdbcType.DECIMAL),
     {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
      "version": 1, "parameters": {"scale": "0", "connect.decimal.precision": "10"}}),
    (column("a", "VARCHAR", JdbcType.VARCHAR, length=3), {"type": "string", "optional": True}),
    (column("a", "DATE", JdbcType.DATE),
     {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "version": 1}),
    (column("a", "DATETIME", JdbcType.TIMESTAMP, length=3),
     {"type": "int64", "optional": True, "name": "io.debezium.time.Timestamp", "version": 1}),
    (column("a", "DATETIME", JdbcType.TIMESTAMP, length=4),
     {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTimestamp", "version": 1}),
    (column("a", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, length=6),
     {"type": "string", "optional": True, "name": "io.debezium.time.ZonedTimestamp", "version": 1}),
    (column("a", "TIME", JdbcType.TIME),
     {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTime", "version": 1}),
])
def test_schema_default_modes(col: Column, expected: dict[str, Any]) -> None:
    assert schema_of(col) == expected


def test_bigint_unsigned_precise_schema() -> None:
    col = column("a", "BIGINT", JdbcType.BIGINT, optional=False, **U)
    assert schema_of(col, ConverterSettings(bigint_unsigned_handling_mode="precise")) == {
        "type": "bytes", "optional": False, "name": "org.apache.kafka.connect.data.Decimal",
        "version": 1, "parameters": {"scale": "0", "connect.decimal.precision": "20"}}


# ------------------------------------------------------------------------------------------------
# Defaults (4.10)
# ------------------------------------------------------------------------------------------------
def default_of(col: Column, settings: ConverterSettings = DEFAULT) -> Any:
    return schema_of(col, settings).get("default", NO_DEFAULT)


def dflt(name: str, data_type: str, jdbc: int, expr: str | None, **kw: Any) -> Column:
    return column(name, data_type, jdbc, has_default=True, default_expression=expr, **kw)


@pytest.mark.parametrize(("col", "settings", "expected"), [
    (dflt("a", "INT", INT, "5"), DEFAULT, 5),
    (dflt("a", "INT", INT, "-7", optional=False), DEFAULT, -7),
    # decimal string defaults on int columns are rounded like Math.round(Double.parseDouble)
    (dflt("a", "SMALLINT", JdbcType.SMALLINT, "1.5"), DEFAULT, 2),
    (dflt("a", "INT", INT, "-1.5"), DEFAULT, -1),
    # true/false on numeric columns -> 1/0
    (dflt("a", "TINYINT", JdbcType.TINYINT, "TRUE"), DEFAULT, 1),
    (dflt("a", "TINYINT", JdbcType.TINYINT, "false"), DEFAULT, 0),
    (dflt("a", "BIGINT", JdbcType.BIGINT, "18446744073709551615", unsigned=True), DEFAULT, -1),
    # DECIMAL defaults take the column scale (HALF_UP): '15.28' on NUMERIC(7,5) -> 15.28000
    (dflt("a", "NUMERIC", JdbcType.NUMERIC, "15.28", length=7, scale=5), DEFAULT, b64(0x17, 0x50, 0xC0)),
    (dflt("a", "NUMERIC", JdbcType.NUMERIC, "15.28", length=7, scale=5),
     ConverterSettings(decimal_handling_mode="string"), "15.28000"),
    (dflt("a", "NUMERIC", JdbcType.NUMERIC, "15.28", length=7, scale=5),
     ConverterSettings(decimal_handling_mode="double"), 15.28),
    (dflt("a", "DECIMAL", JdbcType.DECIMAL, "2.345", length=5, scale=2),
     ConverterSettings(decimal_handling_mode="string"), "2.35"),
    (dflt("a", "VARCHAR", JdbcType.VARCHAR, "abc", length=10), DEFAULT, "abc"),
    (dflt("a", "VARCHAR", JdbcType.VARCHAR, "_utf8mb4'x''y'", length=10), DEFAULT, "x'y"),
    (dflt("a", "VARCHAR", JdbcType.VARCHAR, None, length=10), DEFAULT, NO_DEFAULT),  # DEFAULT NULL
    (dflt("a", "INT", INT, "(1 + 1)"), DEFAULT, NO_DEFAULT),  # expression default
    # temporal: zero-like -> null if nullable (no default) else epoch
    (dflt("a", "DATE", JdbcType.DATE, "0000-00-00"), DEFAULT, NO_DEFAULT),
    (dflt("a", "DATE", JdbcType.DATE, "0000-00-00", optional=False), DEFAULT, 0),
    (dflt("a", "DATE", JdbcType.DATE, "2018-04-01"), DEFAULT, 17622),
    (dflt("a", "DATETIME", JdbcType.TIMESTAMP, "CURRENT_TIMESTAMP"), DEFAULT, NO_DEFAULT),
    (dflt("a", "DATETIME", JdbcType.TIMESTAMP, "CURRENT_TIMESTAMP", optional=False), DEFAULT, 0),
    (dflt("a", "DATETIME", JdbcType.TIMESTAMP, "1970-01-01 00:00:00", optional=False), DEFAULT, 0),
    (dflt("a", "DATETIME", JdbcType.TIMESTAMP, "2018-04-01 12:34:56.5", length=1), DEFAULT,
     1522586096500),
    (dflt("a", "DATETIME", JdbcType.TIMESTAMP, "2020-00-00 00:00:00", optional=False), DEFAULT, 0),
    (dflt("a", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, "CURRENT_TIMESTAMP", optional=False),
     DEFAULT, "1970-01-01T00:00:00Z"),
    (dflt("a", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, "CURRENT_TIMESTAMP(3)", length=3),
     DEFAULT, NO_DEFAULT),
    (dflt("a", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, "1970-01-01 00:00:00", optional=False),
     DEFAULT, "1970-01-01T00:00:00Z"),
    (dflt("a", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, "2020-05-06 07:08:09", length=3),
     DEFAULT, "2020-05-06T07:08:09.000Z"),
    (dflt("a", "TIME", JdbcType.TIME, "-01:02:03"), DEFAULT, -3723000000),
])
def test_defaults(col: Column, settings: ConverterSettings, expected: Any) -> None:
    assert default_of(col, settings) == expected


def test_not_null_column_without_default_has_no_schema_default() -> None:
    assert default_of(column("a", "DATE", JdbcType.DATE, optional=False)) is NO_DEFAULT


def test_converter_is_built_once_and_reusable() -> None:
    col = column("a", "DATETIME", JdbcType.TIMESTAMP, length=6)
    conv: ColumnConverter = column_converter(col, Table(TableId(DB, "t"), (col,)), DEFAULT)
    values = [conv.from_binlog(dt.datetime(2000, 1, 1, 0, 0, 0, n)) for n in range(3)]
    assert values == [946684800000000, 946684800000001, 946684800000002]


def test_unknown_type_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no converter for MySQL type 'FOO'"):
        schema_of(column("a", "FOO", JdbcType.OTHER))
