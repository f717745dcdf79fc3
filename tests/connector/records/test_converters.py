"""Column converters against a real server: each value is written with SQL, read back both from the
binlog (mysql-replication, its values brought to the row decoder's forms by
``connector.binlog.library_values``) and by a snapshot ``SELECT`` (pymysql with ``SNAPSHOT_CONVERSIONS``), and
both readings must convert to the payload Debezium 3.6.1.Final produces (rules cited per case from
``shared/docs/debezium-reference.md`` section 4).

Raw values are captured once per module (one table per type family) and converted under each
settings variant, so the module stays fast.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.constants import FIELD_TYPE
from pymysqlreplication.row_event import WriteRowsEvent

from connector.binlog.json.binary import BinaryJson, parse_mysql_json
from connector.binlog.json.render import render_binlog_json
from connector.binlog.library_values import library_image, value_adapters
from connector.records.conversion import (
    ColumnConverter,
    ConverterSettings,
    column_converter,
)
from connector.testing.local_server import LocalMySQLServer
from ddl.model import Column, JdbcType, Table
from mysql_cdc_base.connect import NO_DEFAULT
from mysql_cdc_base.table_id import TableId
from tests.connector.binlog_json_support import encode
from tests.connector.converter_specs import (
    ALL_BYTES,
    CHARSET_SAMPLES,
    DB,
    FAMILIES,
    INT,
    Spec,
    U,
    b64,
    charset_specs,
    column,
    create_sql,
)

DEFAULT = ConverterSettings()


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


def snapshot_rows(server: LocalMySQLServer, table: str, time_zone: str = "+00:00") -> list[tuple[Any, ...]]:
    conn = server.snapshot_connect(time_zone=time_zone)
    with conn, conn.cursor() as cur:
        cur.execute(f"SELECT * FROM `{DB}`.`{table}` ORDER BY id")
        return [row[1:] for row in cur.fetchall()]


def binlog_rows(
    server: LocalMySQLServer, encodings: dict[str, list[str | None]]
) -> dict[str, list[dict[str, Any]]]:
    """Every inserted row of the module's database, by table, as mysql-replication decodes it after
    the reader installed each column's ``binlog_encoding``, in the row decoder's forms.

    The stream runs in blocking mode up to the server's current position: in non-blocking mode
    MariaDB closes the dump connection at the end of the binlog while a slow client is still
    reading, and the reset connection loses the unread events.
    """
    end_file, end_pos = server.query("SHOW MASTER STATUS")[0][:2]
    stream = BinLogStreamReader(
        connection_settings=server.replication_settings(),
        server_id=random.randint(10_000, 2**31),
        is_mariadb=True,
        blocking=True,
        resume_stream=False,
    )
    out: dict[str, list[dict[str, Any]]] = {}
    try:
        for event in stream:
            if isinstance(event, WriteRowsEvent) and event.schema == DB:
                wanted = encodings.get(event.table)
                if wanted is not None:
                    for lib_column, encoding in zip(event.columns, wanted, strict=True):
                        if encoding is not None:
                            lib_column.character_set_name = encoding
                    adapters = value_adapters(event.columns)
                    out.setdefault(event.table, []).extend(
                        dict(
                            zip(
                                r["values"],
                                library_image(r["values"], r["none_sources"], adapters),
                                strict=True,
                            )
                        )
                        for r in event.rows
                    )
            if (stream.log_file, stream.log_pos) >= (end_file, end_pos):
                break
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
    encodings = {
        name: [column_converter(c, t, DEFAULT).binlog_encoding for c in t.columns]
        for name, t in tables.items()
    }
    streamed = binlog_rows(server, encodings)
    return {
        name: Captured(tables[name], specs, snapshot_rows(server, name), streamed[name])
        for name, specs in families.items()
    }


def check(captured: Captured, settings: ConverterSettings = DEFAULT, variant: str | None = None) -> None:
    """Both readings of every value must give the expected payload; report all mismatches."""
    problems = []
    for index, spec in enumerate(captured.specs):
        conv = column_converter(captured.table.columns[index + 1], captured.table, settings)
        expected_values = (
            spec.variants.get(variant, [v[1] for v in spec.values])
            if variant
            else [v[1] for v in spec.values]
        )
        for row, expected in enumerate(expected_values):
            raw_binlog = captured.binlog[row][spec.column.name]
            raw_snapshot = captured.snapshot[row][index]
            got_binlog = conv.from_binlog(raw_binlog)
            got_snapshot = conv.from_snapshot(raw_snapshot)
            if got_binlog != expected or got_snapshot != expected:
                problems.append(
                    f"{spec.column.name} {spec.sql} <- {spec.values[row][0]}: expected "
                    f"{expected!r}, binlog {raw_binlog!r} -> {got_binlog!r}, "
                    f"snapshot {raw_snapshot!r} -> {got_snapshot!r}"
                )
    assert not problems, "\n".join(problems)


US_PER_DAY = 86_400_000_000


# Well-known characters of single-byte sets: (byte, character).
CHARSET_ANCHORS = {
    "latin1": (0xE9, "é"),
    "latin2": (0xB1, "ą"),
    "cp1251": (0xC0, "А"),
    "koi8r": (0xC1, "а"),
    "greek": (0xE1, "α"),
    "hebrew": (0xE0, "א"),
    "cp1250": (0x8A, "Š"),
    "cp866": (0x80, "А"),
    "latin5": (0xFD, "ı"),
    "cp1256": (0xC7, "ا"),
    "swe7": (0x7B, "ä"),
    "macroman": (0x8E, "é"),
}


@pytest.fixture(scope="module")
def captured(mysql_server: LocalMySQLServer) -> Iterator[dict[str, Captured]]:
    try:
        yield capture(mysql_server, {**FAMILIES, "charsets": charset_specs(mysql_server)})
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
    only_dates = Captured(
        captured["temporals"].table,
        captured["temporals"].specs[:1],
        captured["temporals"].snapshot,
        captured["temporals"].binlog,
    )
    check(only_dates, ConverterSettings(enable_time_adjuster=False), "no_adjust")


def test_not_null_zero_dates_use_default_or_epoch(captured: dict[str, Captured]) -> None:
    check(captured["not_null_temporals"])


def test_timestamp_snapshot_in_server_time_zone(
    mysql_server: LocalMySQLServer, captured: dict[str, Captured]
) -> None:
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
    # As the converter writes it (a default rendered like Java: FLOAT 1.1 -> 1.1, DOUBLE -> -2.5E10).
    return dict(json.loads(column_converter(col, table, settings).schema.json_bytes))


@pytest.mark.parametrize(
    ("col", "expected"),
    [
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
        (
            column("a", "DECIMAL", JdbcType.DECIMAL, length=7, scale=5),
            {
                "type": "bytes",
                "optional": True,
                "name": "org.apache.kafka.connect.data.Decimal",
                "version": 1,
                "parameters": {"scale": "5", "connect.decimal.precision": "7"},
            },
        ),
        (
            column("a", "DECIMAL", JdbcType.DECIMAL),
            {
                "type": "bytes",
                "optional": True,
                "name": "org.apache.kafka.connect.data.Decimal",
                "version": 1,
                "parameters": {"scale": "0", "connect.decimal.precision": "10"},
            },
        ),
        (column("a", "VARCHAR", JdbcType.VARCHAR, length=3), {"type": "string", "optional": True}),
        (
            column("a", "DATE", JdbcType.DATE),
            {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "version": 1},
        ),
        (
            column("a", "DATETIME", JdbcType.TIMESTAMP, length=3),
            {"type": "int64", "optional": True, "name": "io.debezium.time.Timestamp", "version": 1},
        ),
        (
            column("a", "DATETIME", JdbcType.TIMESTAMP, length=4),
            {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTimestamp", "version": 1},
        ),
        (
            column("a", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, length=6),
            {"type": "string", "optional": True, "name": "io.debezium.time.ZonedTimestamp", "version": 1},
        ),
        (
            column("a", "TIME", JdbcType.TIME),
            {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTime", "version": 1},
        ),
    ],
)
def test_schema_default_modes(col: Column, expected: dict[str, Any]) -> None:
    assert schema_of(col) == expected


def test_bigint_unsigned_precise_schema() -> None:
    col = column("a", "BIGINT", JdbcType.BIGINT, optional=False, **U)
    assert schema_of(col, ConverterSettings(bigint_unsigned_handling_mode="precise")) == {
        "type": "bytes",
        "optional": False,
        "name": "org.apache.kafka.connect.data.Decimal",
        "version": 1,
        "parameters": {"scale": "0", "connect.decimal.precision": "20"},
    }


# ------------------------------------------------------------------------------------------------
# Defaults (4.10)
# ------------------------------------------------------------------------------------------------
def default_of(col: Column, settings: ConverterSettings = DEFAULT) -> Any:
    return schema_of(col, settings).get("default", NO_DEFAULT)


def dflt(name: str, data_type: str, jdbc: int, expr: str | None, **kw: Any) -> Column:
    return column(name, data_type, jdbc, has_default=True, default_expression=expr, **kw)


@pytest.mark.parametrize(
    ("col", "settings", "expected"),
    [
        (dflt("a", "INT", INT, "5"), DEFAULT, 5),
        (dflt("a", "INT", INT, "-7", optional=False), DEFAULT, -7),
        # decimal string defaults on int columns are rounded like Math.round(Double.parseDouble)
        (dflt("a", "SMALLINT", JdbcType.SMALLINT, "1.5"), DEFAULT, 2),
        (dflt("a", "INT", INT, "-1.5"), DEFAULT, -1),
        # true/false on numeric columns -> 1/0
        (dflt("a", "TINYINT", JdbcType.TINYINT, "TRUE"), DEFAULT, 1),
        (dflt("a", "TINYINT", JdbcType.TINYINT, "false"), DEFAULT, 0),
        # BIGINT UNSIGNED default beyond Long.MAX_VALUE (long mode): Long.parseLong fails and
        # Math.round(Double.parseDouble) saturates, so Debezium 3.6.3's schema default is
        # 9223372036854775807 while the row value wraps to -1 (recorded with real Debezium).
        (
            dflt("a", "BIGINT", JdbcType.BIGINT, "18446744073709551615", unsigned=True),
            DEFAULT,
            9223372036854775807,
        ),
        # DECIMAL defaults take the column scale (HALF_UP): '15.28' on NUMERIC(7,5) -> 15.28000
        (dflt("a", "NUMERIC", JdbcType.NUMERIC, "15.28", length=7, scale=5), DEFAULT, b64(0x17, 0x50, 0xC0)),
        (
            dflt("a", "NUMERIC", JdbcType.NUMERIC, "15.28", length=7, scale=5),
            ConverterSettings(decimal_handling_mode="string"),
            "15.28000",
        ),
        (
            dflt("a", "NUMERIC", JdbcType.NUMERIC, "15.28", length=7, scale=5),
            ConverterSettings(decimal_handling_mode="double"),
            15.28,
        ),
        (
            dflt("a", "DECIMAL", JdbcType.DECIMAL, "2.345", length=5, scale=2),
            ConverterSettings(decimal_handling_mode="string"),
            "2.35",
        ),
        (dflt("a", "VARCHAR", JdbcType.VARCHAR, "abc", length=10), DEFAULT, "abc"),
        (dflt("a", "VARCHAR", JdbcType.VARCHAR, "_utf8mb4'x''y'", length=10), DEFAULT, "x'y"),
        (dflt("a", "VARCHAR", JdbcType.VARCHAR, None, length=10), DEFAULT, NO_DEFAULT),  # DEFAULT NULL
        (dflt("a", "INT", INT, "(1 + 1)"), DEFAULT, NO_DEFAULT),  # expression default
        # temporal: zero-like -> null if nullable (no default) else epoch
        (dflt("a", "DATE", JdbcType.DATE, "0000-00-00"), DEFAULT, NO_DEFAULT),
        (dflt("a", "DATE", JdbcType.DATE, "0000-00-00", optional=False), DEFAULT, 0),
        (dflt("a", "DATE", JdbcType.DATE, "2018-04-01"), DEFAULT, 17622),
        # Debezium 3.6.3 (tests/golden/debezium/fidelity/defaults.jsonl, `modified`): 0 when nullable too.
        (dflt("a", "DATETIME", JdbcType.TIMESTAMP, "CURRENT_TIMESTAMP"), DEFAULT, 0),
        (dflt("a", "DATETIME", JdbcType.TIMESTAMP, "CURRENT_TIMESTAMP", optional=False), DEFAULT, 0),
        (dflt("a", "DATETIME", JdbcType.TIMESTAMP, "1970-01-01 00:00:00", optional=False), DEFAULT, 0),
        (
            dflt("a", "DATETIME", JdbcType.TIMESTAMP, "2018-04-01 12:34:56.5", length=1),
            DEFAULT,
            1522586096500,
        ),
        (dflt("a", "DATETIME", JdbcType.TIMESTAMP, "2020-00-00 00:00:00", optional=False), DEFAULT, 0),
        (
            dflt("a", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, "CURRENT_TIMESTAMP", optional=False),
            DEFAULT,
            "1970-01-01T00:00:00Z",
        ),
        (
            dflt("a", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, "CURRENT_TIMESTAMP(3)", length=3),
            DEFAULT,
            NO_DEFAULT,
        ),
        (
            dflt("a", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, "1970-01-01 00:00:00", optional=False),
            DEFAULT,
            "1970-01-01T00:00:00Z",
        ),
        (
            dflt("a", "TIMESTAMP", JdbcType.TIMESTAMP_WITH_TIMEZONE, "2020-05-06 07:08:09", length=3),
            DEFAULT,
            "2020-05-06T07:08:09.000Z",
        ),
        (dflt("a", "TIME", JdbcType.TIME, "-01:02:03"), DEFAULT, -3723000000),
    ],
)
def test_defaults(col: Column, settings: ConverterSettings, expected: Any) -> None:
    assert default_of(col, settings) == expected


def test_not_null_column_without_default_has_no_schema_default() -> None:
    assert default_of(column("a", "DATE", JdbcType.DATE, optional=False)) is NO_DEFAULT


def test_converter_is_built_once_and_reusable() -> None:
    col = column("a", "DATETIME", JdbcType.TIMESTAMP, length=6)
    conv: ColumnConverter = column_converter(col, Table(TableId(DB, "t"), (col,)), DEFAULT)
    # The decoder's form: microseconds since the epoch.
    values = [conv.from_binlog(946684800000000 + n) for n in range(3)]
    assert values == [946684800000000, 946684800000001, 946684800000002]


def test_unknown_type_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no converter for MySQL type 'FOO'"):
        schema_of(column("a", "FOO", JdbcType.OTHER))


# ------------------------------------------------------------------------------------------------
# Step 2: the other types and every mode value
# ------------------------------------------------------------------------------------------------
TEMPORAL_MODES: dict[str, dict[str, Sequence[Any]]] = {
    # time.precision.mode=connect: Kafka Connect Date/Time/Timestamp, millisecond precision;
    # TIME outside 00:00-24:00 cannot be converted (null).
    "connect": {
        "dt6": [1522586096000, 260282096000, -1, None, 253402300799999, None],
        "tm0": [None, None, None, 0, None, None],
        "tm6": [None, None, None, 45296789, 0, None],
        "tm3": [None, None, None, None, None, None],
        "tm2": [None, None, None, None, None, None],
    },
    # adaptive: TIME(0..3) -> io.debezium.time.Time (ms), TIME(4..6) -> MicroTime.
    "adaptive": {
        "tm0": [-3020399000, 3020399000, -47690000, 0, -1000, None],
        "tm3": [-2638800001, 3013200500, -3600999, 1864264777, -500, None],
        "tm2": [1864264780, -10, -3020398990, None, None, None],
    },
}
TEMPORAL_SCHEMA_NAMES = {
    "connect": {
        "da": "org.apache.kafka.connect.data.Date",
        "dt0": "org.apache.kafka.connect.data.Timestamp",
        "dt6": "org.apache.kafka.connect.data.Timestamp",
        "ts6": "io.debezium.time.ZonedTimestamp",
        "tm6": "org.apache.kafka.connect.data.Time",
    },
    "adaptive": {
        "da": "io.debezium.time.Date",
        "dt6": "io.debezium.time.MicroTimestamp",
        "tm3": "io.debezium.time.Time",
        "tm6": "io.debezium.time.MicroTime",
    },
}


def with_variant(specs: Sequence[Spec], variant: str, values: dict[str, Sequence[Any]]) -> list[Spec]:
    return [
        Spec(s.sql, s.column, s.values, {variant: values[s.column.name]}) if s.column.name in values else s
        for s in specs
    ]


@pytest.mark.parametrize("mode", ["connect", "adaptive"])
def test_temporal_precision_modes(captured: dict[str, Captured], mode: str) -> None:
    base = captured["temporals"]
    specs = with_variant(base.specs, mode, TEMPORAL_MODES[mode])
    settings = ConverterSettings(time_precision_mode=mode)
    check(Captured(base.table, specs, base.snapshot, base.binlog), settings, mode)
    for name, logical in TEMPORAL_SCHEMA_NAMES[mode].items():
        col = base.table.column(name)
        assert col is not None
        assert column_converter(col, base.table, settings).schema.name == logical


def test_numbers_booleans_bits_years_floats(captured: dict[str, Captured]) -> None:
    check(captured["more_numbers"])


def test_year_without_time_adjuster(captured: dict[str, Captured]) -> None:
    family = captured["more_numbers"]
    only_year = [s for s in family.specs if s.column.name == "yr"]
    index = family.specs.index(only_year[0])
    rows = [(row[index],) for row in family.snapshot]
    table = Table(family.table.id, (family.table.columns[0], family.table.columns[index + 1]))
    check(
        Captured(table, only_year, rows, family.binlog),
        ConverterSettings(enable_time_adjuster=False),
        "no_adjust",
    )


@pytest.mark.parametrize("mode", ["bytes", "base64", "base64-url-safe", "hex"])
def test_binary_handling_modes(captured: dict[str, Captured], mode: str) -> None:
    check(
        captured["binaries"], ConverterSettings(binary_handling_mode=mode), None if mode == "bytes" else mode
    )
    kind = column_converter(
        captured["binaries"].table.columns[1],
        captured["binaries"].table,
        ConverterSettings(binary_handling_mode=mode),
    ).schema.type
    assert kind == ("bytes" if mode == "bytes" else "string")


def test_enum_and_set(captured: dict[str, Captured]) -> None:
    check(captured["enum_sets"])


def test_json(captured: dict[str, Captured]) -> None:
    check(captured["jsons"])


def geometry_expectations(server: LocalMySQLServer, family: Captured) -> list[Spec]:
    """Replace "server" placeholders with the server's own ST_AsWKB / ST_SRID of each value."""
    names = [s.column.name for s in family.specs]
    select = ", ".join(f"HEX(ST_AsWKB(`{n}`)), ST_SRID(`{n}`)" for n in names)
    rows = server.query(f"SELECT {select} FROM `{DB}`.`geometries` ORDER BY id")
    specs = []
    for index, spec in enumerate(family.specs):
        values = []
        for row, (literal, expected) in enumerate(spec.values):
            hex_wkb, srid = rows[row][2 * index], rows[row][2 * index + 1]
            oracle = (
                None
                if hex_wkb is None
                else {"wkb": base64.b64encode(bytes.fromhex(hex_wkb)).decode(), "srid": srid or None}
            )
            if expected == "server":
                expected = oracle
            elif isinstance(expected, dict):
                assert oracle is not None
                expected = {k: oracle[k] if v == "server" else v for k, v in expected.items()}
                assert expected["wkb"] == oracle["wkb"] and expected["srid"] == oracle["srid"]
            values.append((literal, expected))
        specs.append(Spec(spec.sql, spec.column, values))
    return specs


def test_geometries(mysql_server: LocalMySQLServer, captured: dict[str, Captured]) -> None:
    family = captured["geometries"]
    check(Captured(family.table, geometry_expectations(mysql_server, family), family.snapshot, family.binlog))


def test_generated_columns(captured: dict[str, Captured]) -> None:
    check(captured["generated"])


def test_every_server_charset_decodes_like_the_server(captured: dict[str, Captured]) -> None:
    """Streaming decodes the raw bytes with the column charset; the snapshot gets the server's own
    conversion to utf8mb4. Both must give the same text, for every charset the server lists."""
    family = captured["charsets"]
    problems = []
    for index, spec in enumerate(family.specs):
        charset = spec.values[0][1]
        conv = column_converter(family.table.columns[index + 1], family.table, DEFAULT)
        streamed = conv.from_binlog(family.binlog[0][spec.column.name])
        snapshot = conv.from_snapshot(family.snapshot[0][index])
        if charset in CHARSET_SAMPLES or not isinstance(snapshot, str) or len(snapshot) != 224:
            expected = CHARSET_SAMPLES.get(charset, "plain ascii")
        else:
            expected = snapshot
            ascii_part = snapshot[:0x5F]
            if charset != "swe7" and ascii_part != ALL_BYTES[:0x5F].decode():
                problems.append(f"{charset}: printable ASCII not preserved: {ascii_part!r}")
            if charset in CHARSET_ANCHORS:
                byte, char = CHARSET_ANCHORS[charset]
                if snapshot[byte - 0x20] != char:
                    problems.append(f"{charset}: byte {byte:#x} is {snapshot[byte - 0x20]!r}, not {char!r}")
        if streamed != expected or snapshot != expected:
            problems.append(
                f"{charset}: expected {expected!r}\n  binlog   {streamed!r}\n  snapshot {snapshot!r}"
            )
        assert conv.from_binlog(family.binlog[1][spec.column.name]) is None
    assert not problems, "\n".join(problems)
    assert len(family.specs) >= 39, "MariaDB 10.11 offers 40 character sets (39 besides binary)"


# -- schemas of the step-2 types -----------------------------------------------------------------
GEOMETRY_SCHEMA = {
    "type": "struct",
    "fields": [
        {"type": "bytes", "optional": False, "field": "wkb"},
        {"type": "int32", "optional": True, "field": "srid"},
    ],
    "optional": True,
    "name": "io.debezium.data.geometry.Geometry",
    "version": 1,
    "doc": "Geometry",
}


@pytest.mark.parametrize(
    ("col", "expected"),
    [
        (column("a", "BOOLEAN", JdbcType.BOOLEAN), {"type": "boolean", "optional": True}),
        (column("a", "BIT", JdbcType.BIT), {"type": "boolean", "optional": True}),
        (column("a", "BIT", JdbcType.BIT, length=1, optional=False), {"type": "boolean", "optional": False}),
        (
            column("a", "BIT", JdbcType.BIT, length=12),
            {
                "type": "bytes",
                "optional": True,
                "name": "io.debezium.data.Bits",
                "version": 1,
                "parameters": {"length": "12"},
            },
        ),
        (
            column("a", "YEAR", INT),
            {"type": "int32", "optional": True, "name": "io.debezium.time.Year", "version": 1},
        ),
        (column("a", "FLOAT", JdbcType.FLOAT), {"type": "float", "optional": True}),
        (column("a", "FLOAT", JdbcType.FLOAT, length=24), {"type": "float", "optional": True}),
        (column("a", "FLOAT", JdbcType.FLOAT, length=25), {"type": "double", "optional": True}),
        (column("a", "FLOAT", JdbcType.FLOAT, length=7, scale=2), {"type": "double", "optional": True}),
        (column("a", "FLOAT", JdbcType.FLOAT, unsigned=True), {"type": "float", "optional": True}),
        (column("a", "DOUBLE", JdbcType.DOUBLE), {"type": "double", "optional": True}),
        (column("a", "REAL", JdbcType.REAL), {"type": "float", "optional": True}),
        (column("a", "VARBINARY", JdbcType.VARBINARY, length=3), {"type": "bytes", "optional": True}),
        (
            column("a", "ENUM", JdbcType.CHAR, enum_values=("station", "a,b", "c,'d", "g,'h")),
            {
                "type": "string",
                "optional": True,
                "name": "io.debezium.data.Enum",
                "version": 1,
                "parameters": {"allowed": "station,a\\,b,c\\,'d,g\\,'h"},
            },
        ),
        (
            column("a", "SET", JdbcType.CHAR, enum_values=("a", "b")),
            {
                "type": "string",
                "optional": True,
                "name": "io.debezium.data.EnumSet",
                "version": 1,
                "parameters": {"allowed": "a,b"},
            },
        ),
        (
            column("a", "JSON", JdbcType.OTHER),
            {"type": "string", "optional": True, "name": "io.debezium.data.Json", "version": 1},
        ),
        (column("a", "GEOMETRY", JdbcType.OTHER), GEOMETRY_SCHEMA),
        (column("a", "MULTIPOLYGON", JdbcType.OTHER), GEOMETRY_SCHEMA),
        (column("a", "GEOMCOLLECTION", JdbcType.OTHER), GEOMETRY_SCHEMA),
        (
            column("a", "POINT", JdbcType.OTHER, optional=False),
            {
                "type": "struct",
                "fields": [
                    {"type": "double", "optional": False, "field": "x"},
                    {"type": "double", "optional": False, "field": "y"},
                    {"type": "bytes", "optional": True, "field": "wkb"},
                    {"type": "int32", "optional": True, "field": "srid"},
                ],
                "optional": False,
                "name": "io.debezium.data.geometry.Point",
                "version": 1,
                "doc": "Geometry (POINT)",
            },
        ),
    ],
)
def test_schema_other_types(col: Column, expected: dict[str, Any]) -> None:
    assert schema_of(col) == expected


def test_binary_modes_schema_types() -> None:
    col = column("a", "BLOB", JdbcType.BLOB)
    kinds = {
        mode: schema_of(col, ConverterSettings(binary_handling_mode=mode))["type"]
        for mode in ("bytes", "base64", "base64-url-safe", "hex")
    }
    assert kinds == {"bytes": "bytes", "base64": "string", "base64-url-safe": "string", "hex": "string"}


def test_propagate_source_type_parameters() -> None:
    table = Table(
        TableId("shop", "orders"),
        (
            column("price", "DECIMAL", JdbcType.DECIMAL, length=7, scale=2).with_(position=1),
            column("note", "VARCHAR", JdbcType.VARCHAR, length=40, comment="free text").with_(position=2),
            column("qty", "INT", INT, unsigned=True).with_(position=3),
        ),
    )
    by_column = ConverterSettings(propagate_source_type=(r"shop\.orders\.PRICE", r".*\.note"))
    price = column_converter(table.columns[0], table, by_column).schema.to_json()
    assert price["parameters"] == {  # the type's own parameters first, then the source type
        "scale": "2",
        "connect.decimal.precision": "7",
        "__debezium.source.column.type": "DECIMAL",
        "__debezium.source.column.length": "7",
        "__debezium.source.column.scale": "2",
        "__debezium.source.column.name": "price",  # recorded with Debezium 3.6.3
    }
    note = column_converter(table.columns[1], table, by_column).schema.to_json()
    assert note["parameters"] == {
        "__debezium.source.column.type": "VARCHAR",
        "__debezium.source.column.length": "40",
        "__debezium.source.column.comment": "free text",
        "__debezium.source.column.name": "note",
    }
    assert "parameters" not in column_converter(table.columns[2], table, by_column).schema.to_json()
    by_type = ConverterSettings(datatype_propagate_source_type=(r".+\.INT UNSIGNED",))
    qty = column_converter(table.columns[2], table, by_type).schema.to_json()
    assert qty["parameters"] == {
        "__debezium.source.column.type": "INT UNSIGNED",
        "__debezium.source.column.name": "qty",
    }
    assert "parameters" not in column_converter(table.columns[1], table, by_type).schema.to_json()


def test_include_schema_comments_sets_doc() -> None:
    col = column("a", "INT", INT, comment="the answer")
    assert "doc" not in schema_of(col)
    assert schema_of(col, ConverterSettings(include_schema_comments=True))["doc"] == "the answer"


@pytest.mark.parametrize(
    ("col", "settings", "expected"),
    [
        (dflt("a", "BOOLEAN", JdbcType.BOOLEAN, "TRUE"), DEFAULT, True),
        (dflt("a", "BOOLEAN", JdbcType.BOOLEAN, "0"), DEFAULT, False),
        (dflt("a", "BIT", JdbcType.BIT, "b'1'", length=1), DEFAULT, True),
        (dflt("a", "BIT", JdbcType.BIT, "b'0'"), DEFAULT, False),
        (dflt("a", "BIT", JdbcType.BIT, "b'101'", length=10), DEFAULT, b64(0x05, 0x00)),
        (dflt("a", "BIT", JdbcType.BIT, "b'1000000001'", length=10), DEFAULT, b64(0x01, 0x02)),
        (dflt("a", "YEAR", INT, "2021"), DEFAULT, 2021),
        (dflt("a", "YEAR", INT, "69"), DEFAULT, 2069),
        # Written as Java prints the float (Debezium's FLOAT DEFAULT 5.6 is 5.6, fidelity/defaults.jsonl).
        (dflt("a", "FLOAT", JdbcType.FLOAT, "1.1"), DEFAULT, 1.1),
        (dflt("a", "DOUBLE", JdbcType.DOUBLE, "-2.5e10"), DEFAULT, -2.5e10),
        # Unpadded, as Debezium 3.6.3 gives a streamed DEFAULT 'ab' (fidelity/defaults.jsonl, `bn`).
        (dflt("a", "BINARY", JdbcType.BINARY, "ab", length=4), DEFAULT, "YWI="),
        (
            dflt("a", "VARBINARY", JdbcType.VARBINARY, "0x0102", length=4),
            ConverterSettings(binary_handling_mode="hex"),
            "0102",
        ),
        (dflt("a", "ENUM", JdbcType.CHAR, "b", enum_values=("a", "b")), DEFAULT, "b"),
        (dflt("a", "SET", JdbcType.CHAR, "a,b", enum_values=("a", "b")), DEFAULT, "a,b"),
        (dflt("a", "CHAR", JdbcType.CHAR, "", length=2), DEFAULT, ""),
    ],
)
def test_defaults_other_types(col: Column, settings: ConverterSettings, expected: Any) -> None:
    assert default_of(col, settings) == expected


def test_generated_columns_have_no_default() -> None:
    col = dflt("a", "INT", INT, "5", generated=True, generation_expression="b + 1")
    assert default_of(col) is NO_DEFAULT


def test_empty_set_and_null_are_told_apart() -> None:
    """mysql-replication gives None for both; ``library_image`` uses its none_sources."""
    mapped = SimpleNamespace(type=FIELD_TYPE.SET, set_values=["a"])
    image = library_image(
        {"s": None, "t": None}, {"s": "empty set", "t": "null"}, value_adapters([mapped, mapped])
    )
    col = column("s", "SET", JdbcType.CHAR, enum_values=("a",))
    conv = column_converter(col, Table(TableId(DB, "t"), (col,)), DEFAULT)
    assert image == ["", None]
    assert conv.from_binlog(image[0]) == "" and conv.from_binlog(image[1]) is None


def test_mysql_binary_json_is_rendered_as_debezium_streams_it() -> None:
    """MySQL (not MariaDB) sends binary JSON: the row decoder keeps its bytes (``BinaryJson``) and the
    converter renders them as Debezium's binlog client does (checked against the jar in
    test_binlog_json.py); a parsed document (a partial update's result, the library decoder's value)
    renders the same. (The local test server is MariaDB, which stores JSON as text.)"""
    col = column("j", "JSON", JdbcType.OTHER)
    conv = column_converter(col, Table(TableId(DB, "t"), (col,)), DEFAULT)
    document = {"a": 1, "bb": [True, None, 2.5, 'x"y', -7], "c": {"k": 1e300}}
    data = encode(document)
    rendered = render_binlog_json(data)
    assert conv.from_binlog(BinaryJson(data)) == rendered
    assert conv.from_binlog(parse_mysql_json(data)) == rendered
    assert " " not in rendered  # compact, unlike MySQL's own text
    assert conv.from_binlog([]) == render_binlog_json(encode([]))
    assert conv.from_binlog('{"a": 1}') == '{"a": 1}'  # MariaDB's text JSON, passed as is
