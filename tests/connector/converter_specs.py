"""Helpers shared by test modules (moved out of test_converters.py)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from connector.testing.local_server import LocalMySQLServer
from ddl.model import Column, JdbcType

DB = "conv_types"


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


def create_sql(name: str, specs: Sequence[Spec]) -> list[str]:
    defs = ", ".join(f"`{s.column.name}` {s.sql}" for s in specs)
    rows = max(len(s.values) for s in specs)
    stmts = [f"CREATE TABLE `{DB}`.`{name}` (id INT PRIMARY KEY, {defs})"]
    for r in range(rows):
        literals = ", ".join(s.values[r][0] for s in specs)
        stmts.append(f"INSERT INTO `{DB}`.`{name}` VALUES ({r}, {literals})")
    return stmts


def b64(*octets: int) -> str:
    return base64.b64encode(bytes(octets)).decode()


# ------------------------------------------------------------------------------------------------
# Type families (step 1: integers, decimals, strings, temporal)
# ------------------------------------------------------------------------------------------------
INT = JdbcType.INTEGER


U = {"unsigned": True}


INTEGERS = [
    # 4.2: signed TINYINT -> INT16 in 3.6.1.Final; values pass through unchanged.
    Spec(
        "TINYINT", column("ti", "TINYINT", JdbcType.TINYINT), [("-128", -128), ("127", 127), ("NULL", None)]
    ),
    Spec(
        "TINYINT UNSIGNED",
        column("tiu", "TINYINT", JdbcType.TINYINT, **U),
        [("0", 0), ("255", 255), ("NULL", None)],
    ),
    Spec(
        "SMALLINT",
        column("si", "SMALLINT", JdbcType.SMALLINT),
        [("-32768", -32768), ("32767", 32767), ("NULL", None)],
    ),
    Spec(
        "SMALLINT UNSIGNED",
        column("siu", "SMALLINT", JdbcType.SMALLINT, **U),
        [("0", 0), ("65535", 65535), ("NULL", None)],
    ),
    Spec(
        "MEDIUMINT",
        column("mi", "MEDIUMINT", INT),
        [("-8388608", -8388608), ("8388607", 8388607), ("NULL", None)],
    ),
    Spec(
        "MEDIUMINT UNSIGNED",
        column("miu", "MEDIUMINT", INT, **U),
        [("0", 0), ("16777215", 16777215), ("NULL", None)],
    ),
    Spec(
        "INT",
        column("i", "INT", INT),
        [("-2147483648", -2147483648), ("2147483647", 2147483647), ("NULL", None)],
    ),
    Spec(
        "INT UNSIGNED", column("iu", "INT", INT, **U), [("0", 0), ("4294967295", 4294967295), ("NULL", None)]
    ),
    Spec(
        "BIGINT",
        column("bi", "BIGINT", JdbcType.BIGINT),
        [
            ("-9223372036854775808", -9223372036854775808),
            ("9223372036854775807", 9223372036854775807),
            ("NULL", None),
        ],
    ),
    # 4.2: BIGINT UNSIGNED long mode wraps >= 2^63 to negative (18446744073709551615 -> -1).
    Spec(
        "BIGINT UNSIGNED NOT NULL",
        column("biu", "BIGINT", JdbcType.BIGINT, optional=False, **U),
        [
            ("9223372036854775807", 9223372036854775807),
            ("18446744073709551615", -1),
            ("9223372036854775808", -9223372036854775808),
        ],
        variants={
            "precise": [
                b64(0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF),
                b64(0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF),
                b64(0x00, 0x80, 0, 0, 0, 0, 0, 0, 0),
            ]
        },
    ),
]


BIG = "-12345678901234567890123456789012345.123456789012345678901234567890"


BIG_UNSCALED = int(BIG.replace(".", ""))


DECIMALS = [
    # 4.3 / 3h: precise -> base64 of the unscaled two's-complement big-endian minimal bytes.
    Spec(
        "DECIMAL(5,2)",
        column("d52", "DECIMAL", JdbcType.DECIMAL, length=5, scale=2),
        [("999.99", b64(0x01, 0x86, 0x9F)), ("0.00", b64(0x00)), ("-1.28", b64(0x80)), ("NULL", None)],
        variants={"double": [999.99, 0.0, -1.28, None], "string": ["999.99", "0.00", "-1.28", None]},
    ),
    # DECIMAL without (p,s) is (10,0).
    Spec(
        "DECIMAL",
        column("d", "DECIMAL", JdbcType.DECIMAL),
        [
            ("-3", b64(0xFD)),
            ("128", b64(0x00, 0x80)),
            ("9999999999", b64(0x02, 0x54, 0x0B, 0xE3, 0xFF)),
            ("NULL", None),
        ],
        variants={"double": [-3.0, 128.0, 9999999999.0, None], "string": ["-3", "128", "9999999999", None]},
    ),
    Spec(
        "NUMERIC(65,30)",
        column("d6530", "NUMERIC", JdbcType.NUMERIC, length=65, scale=30),
        [
            (BIG, base64.b64encode(BIG_UNSCALED.to_bytes(27, "big", signed=True)).decode()),
            ("0", b64(0x00)),
            ("1e-30", b64(0x01)),
            ("NULL", None),
        ],
        variants={
            "double": [float(BIG), 0.0, 1e-30, None],
            "string": [BIG, "0." + "0" * 30, "0." + "0" * 29 + "1", None],
        },
    ),
]


STRINGS = [
    Spec(
        "VARCHAR(20)",
        column("vc", "VARCHAR", JdbcType.VARCHAR, length=20, charset="utf8mb4"),
        [("'é😀x'", "é😀x"), ("''", ""), ("NULL", None)],
    ),
    Spec(
        "CHAR(5)",
        column("ch", "CHAR", JdbcType.CHAR, length=5),  # charset from the table
        [("'ab'", "ab"), ("'a b'", "a b"), ("NULL", None)],
    ),
    Spec(
        "TEXT",
        column("tx", "TEXT", JdbcType.VARCHAR, charset="utf8mb4"),
        [("REPEAT('ü', 3000)", "ü" * 3000), ("'\\n\\t\\\\'", "\n\t\\"), ("NULL", None)],
    ),
]


TEMPORALS = [
    # 4.5: DATE -> io.debezium.time.Date days; 0018 adjusted to 2018 (17622); zero date -> null.
    Spec(
        "DATE",
        column("da", "DATE", JdbcType.DATE),
        [
            ("'2018-04-01'", 17622),
            ("'0018-04-01'", 17622),
            ("'1969-12-31'", -1),
            ("'0000-00-00'", None),
            ("'2020-00-05'", None),
            ("NULL", None),
        ],
        variants={"no_adjust": [17622, -712863, -1, None, None, None]},
    ),
    # DATETIME(0..3) -> Timestamp epoch ms of the wall clock read as UTC.
    Spec(
        "DATETIME",
        column("dt0", "DATETIME", JdbcType.TIMESTAMP),
        [
            ("'2018-04-01 12:34:56'", 1522586096000),
            ("'0078-04-01 12:34:56'", 260282096000),
            ("'1969-12-31 23:59:59'", -1000),
            ("'0000-00-00 00:00:00'", None),
            ("'2020-01-00 10:00:00'", None),
            ("NULL", None),
        ],
    ),
    Spec(
        "DATETIME(3)",
        column("dt3", "DATETIME", JdbcType.TIMESTAMP, length=3),
        [
            ("'2018-04-01 12:34:56.789'", 1522586096789),
            ("'1000-01-01 00:00:00.001'", -30610224000000 + 1),
            ("'1969-12-31 23:59:59.999'", -1),
            ("'0000-00-00 00:00:00'", None),
            ("'9999-12-31 23:59:59.999'", 253402300799999),
            ("NULL", None),
        ],
    ),
    # DATETIME(4..6) -> MicroTimestamp epoch us.
    Spec(
        "DATETIME(6)",
        column("dt6", "DATETIME", JdbcType.TIMESTAMP, length=6),
        [
            ("'2018-04-01 12:34:56.000001'", 1522586096000001),
            ("'0078-04-01 12:34:56.000001'", 260282096000001),
            ("'1969-12-31 23:59:59.999999'", -1),
            ("'0000-00-00 00:00:00'", None),
            ("'9999-12-31 23:59:59.999999'", 253402300799999999),
            ("NULL", None),
        ],
    ),
    # TIMESTAMP -> ZonedTimestamp UTC text; no fsp: minimal fraction; zero -> null (DBZ-1912).
    Spec(
        "TIMESTAMP NULL",
        column("ts0", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE),
        [
            ("'2023-01-11 00:34:10'", "2023-01-11T00:34:10Z"),
            ("'1970-01-01 00:00:01'", "1970-01-01T00:00:01Z"),
            ("'2038-01-19 03:14:07'", "2038-01-19T03:14:07Z"),
            ("'0000-00-00 00:00:00'", None),
            ("'2020-01-01 00:00:00'", "2020-01-01T00:00:00Z"),
            ("NULL", None),
        ],
    ),
    # TIMESTAMP(n): exactly n fraction digits.
    Spec(
        "TIMESTAMP(6) NULL",
        column("ts6", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, length=6),
        [
            ("'2023-01-11 00:34:10.500000'", "2023-01-11T00:34:10.500000Z"),
            ("'2023-01-11 00:34:10'", "2023-01-11T00:34:10.000000Z"),
            ("'2023-01-11 00:34:10.123456'", "2023-01-11T00:34:10.123456Z"),
            ("'0000-00-00 00:00:00'", None),
            ("'1970-01-01 00:00:01.000001'", "1970-01-01T00:00:01.000001Z"),
            ("NULL", None),
        ],
    ),
    Spec(
        "TIMESTAMP(3) NULL",
        column("ts3", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, length=3),
        [
            ("'2023-01-11 00:34:10.5'", "2023-01-11T00:34:10.500Z"),
            ("'2023-01-11 00:34:10'", "2023-01-11T00:34:10.000Z"),
            ("'2023-01-11 00:34:10.123'", "2023-01-11T00:34:10.123Z"),
            ("NULL", None),
            ("NULL", None),
            ("NULL", None),
        ],
    ),
    # TIME -> MicroTime signed us, beyond 24h and negative (4.5 regression values).
    Spec(
        "TIME",
        column("tm0", "TIME", JdbcType.TIME),
        [
            ("'-838:59:59'", -3020399000000),
            ("'838:59:59'", 3020399000000),
            ("'-13:14:50'", -47690000000),
            ("'00:00:00'", 0),
            ("'-00:00:01'", -1000000),
            ("NULL", None),
        ],
    ),
    Spec(
        "TIME(6)",
        column("tm6", "TIME", JdbcType.TIME, length=6),
        [
            ("'-838:59:58.999999'", -3020398999999),
            ("'-00:00:00.000001'", -1),
            ("'-12:34:56.789'", -45296789000),
            ("'12:34:56.789012'", 45296789012),
            ("'-00:00:00.000000'", 0),
            ("NULL", None),
        ],
    ),
    Spec(
        "TIME(3)",
        column("tm3", "TIME", JdbcType.TIME, length=3),
        [
            ("'-733:00:00.001'", -2638800001000),
            ("'837:00:00.5'", 3013200500000),
            ("'-01:00:00.999'", -3600999000),
            ("'517:51:04.777'", 1864264777000),
            ("'-00:00:00.5'", -500000),
            ("NULL", None),
        ],
    ),
    Spec(
        "TIME(2)",
        column("tm2", "TIME", JdbcType.TIME, length=2),
        [
            ("'517:51:04.78'", 1864264780000),
            ("'-00:00:00.01'", -10000),
            ("'-838:59:58.99'", -3020398990000),
            ("NULL", None),
            ("NULL", None),
            ("NULL", None),
        ],
    ),
]


NOT_NULL_TEMPORALS = [
    # 4.5: zero date in a NOT NULL column -> schema default if any, else 0 / epoch.
    Spec(
        "DATE NOT NULL",
        column("dan", "DATE", JdbcType.DATE, optional=False),
        [("'0000-00-00'", 0), ("'2018-04-01'", 17622)],
    ),
    Spec(
        "DATE NOT NULL DEFAULT '2020-01-01'",
        column(
            "dad", "DATE", JdbcType.DATE, optional=False, has_default=True, default_expression="2020-01-01"
        ),
        [("'0000-00-00'", 18262), ("'2018-04-01'", 17622)],
    ),
    Spec(
        "DATETIME(3) NOT NULL",
        column("dtn", "DATETIME", JdbcType.TIMESTAMP, length=3, optional=False),
        [("'0000-00-00 00:00:00'", 0), ("'2018-04-01 12:34:56.789'", 1522586096789)],
    ),
    Spec(
        "TIMESTAMP NOT NULL DEFAULT '2000-01-01 00:00:00'",
        column(
            "tsn",
            "TIMESTAMP",
            JdbcType.TIMESTAMP_WITH_TIMEZONE,
            optional=False,
            has_default=True,
            default_expression="2000-01-01 00:00:00",
        ),
        [
            ("'0000-00-00 00:00:00'", "2000-01-01T00:00:00Z"),
            ("'2023-01-11 00:34:10'", "2023-01-11T00:34:10Z"),
        ],
    ),
    Spec(
        "TIMESTAMP(2) NOT NULL DEFAULT 0",
        column(
            "tsz",
            "TIMESTAMP",
            JdbcType.TIMESTAMP_WITH_TIMEZONE,
            length=2,
            optional=False,
            has_default=True,
            default_expression="0",
        ),
        [
            ("'0000-00-00 00:00:00'", "1970-01-01T00:00:00Z"),
            ("'2023-01-11 00:34:10.5'", "2023-01-11T00:34:10.50Z"),
        ],
    ),
]


MORE_NUMBERS = [
    # 4.2: BOOLEAN written literally in the DDL -> Connect boolean (non-zero -> true).
    Spec(
        "BOOLEAN",
        column("bo", "BOOLEAN", JdbcType.BOOLEAN),
        [("1", True), ("0", False), ("5", True), ("NULL", None)],
    ),
    # TINYINT(1) stays a number (no TinyIntOneToBooleanConverter configured).
    Spec(
        "TINYINT(1)",
        column("t1", "TINYINT", JdbcType.TINYINT, length=1),
        [("1", 1), ("0", 0), ("-1", -1), ("NULL", None)],
    ),
    # 4.7: BIT(1) -> boolean; BIT(n) -> io.debezium.data.Bits, little-endian ceil(n/8) bytes.
    Spec(
        "BIT(1)",
        column("b1", "BIT", JdbcType.BIT, length=1),
        [("b'1'", True), ("b'0'", False), ("1", True), ("NULL", None)],
    ),
    Spec(
        "BIT(10)",
        column("b10", "BIT", JdbcType.BIT, length=10),
        [("b'1000000001'", b64(0x01, 0x02)), ("b'0'", b64(0, 0)), ("b'10'", b64(0x02, 0)), ("NULL", None)],
    ),
    Spec(
        "BIT(64)",
        column("b64", "BIT", JdbcType.BIT, length=64),
        [
            ("23989979", b64(0xDB, 0x0E, 0x6E, 0x01, 0, 0, 0, 0)),
            ("18446744073709551615", b64(*[0xFF] * 8)),
            ("0", b64(*[0] * 8)),
            ("NULL", None),
        ],
    ),
    # 4.5: YEAR -> io.debezium.time.Year; year 0000 goes through the two-digit-year adjuster.
    Spec(
        "YEAR",
        column("yr", "YEAR", INT),
        [("2155", 2155), ("1901", 1901), ("0", 2000), ("'69'", 2069)],
        variants={"no_adjust": [2155, 1901, 0, 2069]},
    ),
    # 4.3: FLOAT (p <= 24, no scale) -> FLOAT32: the float32 value, printed as Java prints floats.
    Spec(
        "FLOAT",
        column("fl", "FLOAT", JdbcType.FLOAT),
        [("3.14", 3.140000104904175), ("-1.5", -1.5), ("0", 0.0), ("NULL", None)],
    ),
    # FLOAT(M,D) -> FLOAT64: the stored float32 (rounded to D decimals by the server) widened to
    # double, as Debezium 3.6.3 emits it (FLOAT(7,3) 1234.567 -> 1234.5670166015625).
    Spec(
        "FLOAT(10,2)",
        column("fmd", "FLOAT", JdbcType.FLOAT, length=10, scale=2),
        [("3.14159", 3.140000104904175), ("-1", -1.0), ("12345.675", 12345.669921875), ("NULL", None)],
    ),
    Spec(
        "DOUBLE",
        column("db", "DOUBLE", JdbcType.DOUBLE),
        [
            ("0.30000000000000004", 0.30000000000000004),
            ("1e300", 1e300),
            ("-2.5e-300", -2.5e-300),
            ("NULL", None),
        ],
    ),
    # REAL written literally -> FLOAT32 (Debezium narrows the double the server stores).
    Spec(
        "REAL",
        column("re", "REAL", JdbcType.REAL),
        [("1.1", 1.100000023841858), ("-3", -3.0), ("0.5", 0.5), ("NULL", None)],
    ),
]


FBFF = "+/8="


BINARIES = [
    # 4.4: BINARY(n) padded with 0x00 to n bytes (DBZ-254), per binary.handling.mode.
    Spec(
        "BINARY(5)",
        column("bn", "BINARY", JdbcType.BINARY, length=5),
        [("'ab'", "YWIAAAA="), ("x'000000'", "AAAAAAA="), ("x'FBFF'", "+/8AAAA="), ("NULL", None)],
        variants={
            "hex": ["6162000000", "0000000000", "fbff000000", None],
            "base64": ["YWIAAAA=", "AAAAAAA=", "+/8AAAA=", None],
            "base64-url-safe": ["YWIAAAA=", "AAAAAAA=", "-_8AAAA=", None],
        },
    ),
    Spec(
        "VARBINARY(5)",
        column("vb", "VARBINARY", JdbcType.VARBINARY, length=5),
        [("x'FBFF'", FBFF), ("''", ""), ("x'010203'", "AQID"), ("NULL", None)],
        variants={
            "hex": ["fbff", "", "010203", None],
            "base64": [FBFF, "", "AQID", None],
            "base64-url-safe": ["-_8=", "", "AQID", None],
        },
    ),
    Spec(
        "BLOB",
        column("bl", "BLOB", JdbcType.BLOB),
        [("x'00FF'", "AP8="), ("REPEAT(x'FB', 3)", "+/v7"), ("''", ""), ("NULL", None)],
        variants={
            "hex": ["00ff", "fbfbfb", "", None],
            "base64": ["AP8=", "+/v7", "", None],
            "base64-url-safe": ["AP8=", "-_v7", "", None],
        },
    ),
    Spec(
        "LONGBLOB",
        column("lb", "LONGBLOB", JdbcType.BLOB),
        [
            ("REPEAT('x', 3000)", base64.b64encode(b"x" * 3000).decode()),
            ("''", ""),
            ("NULL", None),
            ("NULL", None),
        ],
        variants={
            "hex": ["78" * 3000, "", None, None],
            "base64": [base64.b64encode(b"x" * 3000).decode(), "", None, None],
            "base64-url-safe": [base64.b64encode(b"x" * 3000).decode(), "", None, None],
        },
    ),
]


ENUM_SETS = [
    # 4.6: ENUM -> io.debezium.data.Enum; an invalid value (index 0) is ''.
    Spec(
        "ENUM('x','a,b','c''d')",
        column("en", "ENUM", JdbcType.CHAR, enum_values=("x", "a,b", "c'd")),
        [("'c''d'", "c'd"), ("'a,b'", "a,b"), ("'nope'", ""), ("NULL", None)],
    ),
    Spec(
        "ENUM('on','off') NOT NULL",
        column("enn", "ENUM", JdbcType.CHAR, optional=False, enum_values=("on", "off")),
        [("'off'", "off"), ("'on'", "on"), ("'zz'", ""), ("'off'", "off")],
    ),
    # SET -> io.debezium.data.EnumSet, members in definition order; the empty set is ''.
    Spec(
        "SET('p','q','r')",
        column("st", "SET", JdbcType.CHAR, enum_values=("p", "q", "r")),
        [("'r,p'", "p,r"), ("''", ""), ("'q'", "q"), ("NULL", None)],
    ),
    Spec(
        "SET('a','b') NOT NULL DEFAULT 'b'",
        column(
            "stn",
            "SET",
            JdbcType.CHAR,
            optional=False,
            enum_values=("a", "b"),
            has_default=True,
            default_expression="b",
        ),
        [("''", ""), ("'b,a'", "a,b"), ("'a'", "a"), ("'b'", "b")],
    ),
]


BIG_JSON = '{"k": [' + ", ".join(str(i) for i in range(1000)) + "]}"


JSONS = [
    # 4.8: io.debezium.data.Json; MariaDB keeps the text as written, in both paths.
    Spec(
        "JSON",
        column("js", "JSON", JdbcType.OTHER),
        [
            ('\'{"b": 1,  "a": [1.0, 2.5e300]}\'', '{"b": 1,  "a": [1.0, 2.5e300]}'),
            ("'[]'", "[]"),
            ("'{}'", "{}"),
            ("'\"é😀\"'", '"é😀"'),
            (f"'{BIG_JSON}'", BIG_JSON),
            ("NULL", None),
        ],
    ),
]


GEOMETRIES = [
    # 4.9: Geometry {wkb, srid} (v1 in 3.6.1.Final), SRID 0 -> null; POINT -> Point {x, y, wkb, srid}.
    Spec(
        "GEOMETRY",
        column("ge", "GEOMETRY", JdbcType.OTHER),
        [
            (
                "ST_GeomFromText('POINT(1 1)', 4326)",
                {
                    "wkb": base64.b64encode(
                        bytes.fromhex("0101000000000000000000F03F000000000000F03F")
                    ).decode(),
                    "srid": 4326,
                },
            ),
            ("ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)')", "server"),
            ("ST_GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 0), (1 1, 2 1, 2 2, 1 1))', 3857)", "server"),
            ("ST_GeomFromText('MULTIPOINT(0 0, 1 1)')", "server"),
            ("ST_GeomFromText('MULTILINESTRING((0 0, 1 1), (2 2, 3 3))')", "server"),
            ("ST_GeomFromText('MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)))')", "server"),
            ("ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1), LINESTRING(0 0, 1 1))')", "server"),
            ("NULL", None),
        ],
    ),
    Spec(
        "POINT",
        column("pt", "POINT", JdbcType.OTHER),
        [
            ("POINT(1.5, -2)", {"x": 1.5, "y": -2.0, "wkb": "server", "srid": None}),
            (
                "ST_GeomFromText('POINT(0.1 1e300)', 4326)",
                {"x": 0.1, "y": 1e300, "wkb": "server", "srid": 4326},
            ),
            *[("NULL", None)] * 6,
        ],
    ),
    Spec(
        "LINESTRING",
        column("ls", "LINESTRING", JdbcType.OTHER),
        [("ST_GeomFromText('LINESTRING(0 0, 1 1)')", "server"), *[("NULL", None)] * 7],
    ),
    Spec(
        "GEOMETRYCOLLECTION",
        column("gc", "GEOMETRYCOLLECTION", JdbcType.OTHER),
        [("ST_GeomFromText('GEOMETRYCOLLECTION(POINT(2 3))')", "server"), *[("NULL", None)] * 7],
    ),
]


GENERATED = [
    Spec(
        "INT AS (id * 2) VIRTUAL",
        column("gv", "INT", INT, generated=True),
        [("DEFAULT", 0), ("DEFAULT", 2), ("DEFAULT", 4)],
    ),
    Spec(
        "VARCHAR(20) AS (CONCAT('row-', id)) STORED",
        column("gs", "VARCHAR", JdbcType.VARCHAR, length=20, generated=True),
        [("DEFAULT", "row-0"), ("DEFAULT", "row-1"), ("DEFAULT", "row-2")],
    ),
]


FAMILIES = {
    "integers": INTEGERS,
    "decimals": DECIMALS,
    "strings": STRINGS,
    "temporals": TEMPORALS,
    "not_null_temporals": NOT_NULL_TEMPORALS,
    "more_numbers": MORE_NUMBERS,
    "binaries": BINARIES,
    "enum_sets": ENUM_SETS,
    "jsons": JSONS,
    "geometries": GEOMETRIES,
    "generated": GENERATED,
}


# Samples for the multi-byte character sets (characters each one can encode).
CHARSET_SAMPLES = {
    "big5": "中文測試",
    "ujis": "日本語テキスト",
    "sjis": "日本語テキスト",
    "cp932": "日本語テキスト①",
    "eucjpms": "日本語テキスト",
    "euckr": "한국어 텍스트",
    "gb2312": "中文简体",
    "gbk": "中文简体繁體",
    "gb18030": "中文😀",
    "utf8mb3": "é中",
    "ucs2": "é中",
    "utf16": "é😀中",
    "utf16le": "é😀中",
    "utf32": "é😀中",
    "utf8mb4": "é😀中",
}


ALL_BYTES = bytes(range(0x20, 0x100))


def charset_specs(server: LocalMySQLServer) -> list[Spec]:
    """One TEXT column per character set the server offers (except binary)."""
    specs = []
    for name, _, _, maxlen in server.query("SHOW CHARACTER SET"):
        if name == "binary":
            continue
        if int(maxlen) == 1:
            literal = f"_{name} X'{ALL_BYTES.hex()}'"
        else:
            literal = f"CONVERT(_utf8mb4'{CHARSET_SAMPLES.get(name, 'plain ascii')}' USING {name})"
        specs.append(
            Spec(
                f"TEXT CHARACTER SET {name}",
                column(f"c_{name}", "TEXT", JdbcType.VARCHAR, charset=name),
                [(literal, name), ("NULL", None)],
            )
        )
    return specs
