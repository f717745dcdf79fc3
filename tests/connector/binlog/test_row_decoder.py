"""Differential tests of the generated row decoder (``connector.binlog.row_decoder``) on a real server.

Hypothesis draws tables (one to four columns of any type family the connector supports, with
random precisions, lengths, charsets and fractional digits) and rows, writes them with INSERT,
UPDATE and DELETE, then reads the same binlog range twice: once with mysql-replication's own row
decoding (its values brought to our decoder's forms at the library's edge,
``connector.binlog.library_values``) and once with ours. Every image must hold the same values, and
convert to the same
payload under every converter setting. The table's final rows, read by a snapshot SELECT, must
convert to the payloads of the last streamed images: both paths of the connector stay equal.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.constants import FIELD_TYPE
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from connector.binlog.image_reader import EnumIndexError, compile_image_reader
from connector.binlog.library_rows import LibraryRows
from connector.binlog.row_decoder import BinlogRowDecoder, _all_present
from connector.config import ConnectorConfig
from connector.records.builder import EventBuilder, TableSchema
from connector.records.conversion import ConverterSettings, UnrepresentableValueError
from connector.testing.local_server import LocalMySQLServer, MySQLServerHandle
from ddl.model import SchemaModel
from ddl.parsing.parser import parser_for
from mysql_cdc_base.table_id import TableId

DB = "row_decoder"

# -- type families: SQL type strategy, value strategy, placeholder -------------------------------------


@dataclass(frozen=True)
class Family:
    sql: st.SearchStrategy[str]
    values: Callable[[str], st.SearchStrategy[Any]]
    placeholder: str = "%s"


def _const(sql: str) -> st.SearchStrategy[str]:
    return st.just(sql)


def _ints(low: int, high: int) -> Callable[[str], st.SearchStrategy[Any]]:
    return lambda _sql: st.integers(low, high)


def _decimal_sql() -> st.SearchStrategy[str]:
    return st.integers(1, 65).flatmap(lambda p: st.integers(0, min(p, 30)).map(lambda s: f"DECIMAL({p},{s})"))


def _decimal_values(sql: str) -> st.SearchStrategy[Any]:
    precision, scale = (int(x) for x in sql[8:-1].split(","))
    digits = st.text("0123456789", min_size=precision, max_size=precision)

    def literal(sign: bool, text: str) -> str:
        whole, frac = text[: precision - scale] or "0", text[precision - scale :]
        return ("-" if sign else "") + whole + ("." + frac if frac else "")

    return st.builds(literal, st.booleans(), digits)


_CHARSETS = {
    "utf8mb4": st.characters(blacklist_categories=("Cs",)),
    "latin1": st.characters(min_codepoint=0x20, max_codepoint=0xFF).filter(
        lambda c: c not in "\x81\x8d\x8f\x90\x9d"  # latin1 bytes MySQL maps to C1 controls
    ),
    "utf16": st.characters(blacklist_categories=("Cs",), max_codepoint=0xFFFF),
    "ascii": st.characters(min_codepoint=0x20, max_codepoint=0x7E),
}


def _text_sql() -> st.SearchStrategy[str]:
    kinds = st.sampled_from(["CHAR(20)", "VARCHAR(40)", "VARCHAR(300)", "TINYTEXT", "TEXT", "MEDIUMTEXT"])
    return st.builds(lambda k, cs: f"{k} CHARACTER SET {cs}", kinds, st.sampled_from(sorted(_CHARSETS)))


def _text_values(sql: str) -> st.SearchStrategy[Any]:
    charset = sql.rsplit(" ", 1)[1]
    size = 20 if sql.startswith("CHAR(") else 40
    # CHAR strips trailing spaces on read: leave them out of CHAR values.
    text = st.text(_CHARSETS[charset], max_size=size)
    return text.map(str.rstrip) if sql.startswith("CHAR(") else text


def _binary_values(sql: str) -> st.SearchStrategy[Any]:
    return st.binary(max_size=8 if sql.startswith("BINARY") else 40)


def _fsp_sql(kind: str) -> st.SearchStrategy[str]:
    return st.integers(0, 6).map(lambda fsp: f"{kind}({fsp})")


def _micros(fsp: int) -> st.SearchStrategy[int]:
    return st.integers(0, 10**fsp - 1).map(lambda f: f * 10 ** (6 - fsp)) if fsp else st.just(0)


def _datetime_values(sql: str) -> st.SearchStrategy[Any]:
    fsp = int(sql[-2])
    valid = st.builds(
        lambda d, us: f"{d.isoformat(' ')}.{us:06d}",
        st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)),
        _micros(fsp),
    )
    return st.one_of(
        valid, st.sampled_from(["0000-00-00 00:00:00", "2020-00-10 10:00:00", "2020-05-00 01:02:03"])
    )


def _timestamp_values(sql: str) -> st.SearchStrategy[Any]:
    fsp = int(sql[-2])
    valid = st.builds(
        lambda d, us: f"{d.isoformat(' ')}.{us:06d}",
        st.datetimes(dt.datetime(1970, 1, 2), dt.datetime(2038, 1, 18)),
        _micros(fsp),
    )
    return st.one_of(valid, st.just("0000-00-00 00:00:00"))


def _time_values(sql: str) -> st.SearchStrategy[Any]:
    fsp = int(sql[-2])

    def literal(negative: bool, seconds: int, us: int) -> str:
        h, rest = divmod(seconds, 3600)
        return (
            f"{'-' if negative and (seconds or us) else ''}{h:02d}:{rest // 60:02d}:{rest % 60:02d}.{us:06d}"
        )

    return st.builds(literal, st.booleans(), st.integers(0, 838 * 3600 + 59 * 60 + 58), _micros(fsp))


def _date_values(sql: str) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31)).map(dt.date.isoformat),
        st.sampled_from(["0000-00-00", "2020-00-15", "2020-04-00"]),
    )


def _bit_sql() -> st.SearchStrategy[str]:
    return st.integers(1, 64).map(lambda n: f"BIT({n})")


def _bit_values(sql: str) -> st.SearchStrategy[Any]:
    return st.integers(0, 2 ** int(sql[4:-1]) - 1)


_OPTIONS = ("a", "bb", "c,d", "é", "e f")


def _set_values(sql: str) -> st.SearchStrategy[Any]:
    return st.sets(st.sampled_from([o for o in _OPTIONS if "," not in o])).map(",".join)


def _json_values(sql: str) -> st.SearchStrategy[Any]:
    scalar = st.one_of(st.integers(-(2**40), 2**40), st.text(max_size=8), st.booleans(), st.none())
    return st.recursive(
        scalar,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    ).map(json.dumps)


def _point_values(sql: str) -> st.SearchStrategy[Any]:
    coordinate = st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: round(f, 6))
    return st.builds(lambda x, y: f"POINT({x} {y})", coordinate, coordinate)


FAMILIES: dict[str, Family] = {
    "tinyint": Family(_const("TINYINT"), _ints(-128, 127)),
    "tinyint_unsigned": Family(_const("TINYINT UNSIGNED"), _ints(0, 255)),
    "smallint": Family(_const("SMALLINT"), _ints(-(2**15), 2**15 - 1)),
    "smallint_unsigned": Family(_const("SMALLINT UNSIGNED"), _ints(0, 2**16 - 1)),
    "mediumint": Family(_const("MEDIUMINT"), _ints(-(2**23), 2**23 - 1)),
    "mediumint_unsigned": Family(_const("MEDIUMINT UNSIGNED"), _ints(0, 2**24 - 1)),
    "int": Family(_const("INT"), _ints(-(2**31), 2**31 - 1)),
    "int_unsigned": Family(_const("INT UNSIGNED"), _ints(0, 2**32 - 1)),
    "bigint": Family(_const("BIGINT"), _ints(-(2**63), 2**63 - 1)),
    "bigint_unsigned": Family(_const("BIGINT UNSIGNED"), _ints(0, 2**64 - 1)),
    "float": Family(
        _const("FLOAT"),
        lambda _s: st.floats(-(2.0**126), 2.0**126, width=32, allow_nan=False, allow_infinity=False),
    ),
    "double": Family(_const("DOUBLE"), lambda _s: st.floats(allow_nan=False, allow_infinity=False)),
    "decimal": Family(_decimal_sql(), _decimal_values),
    "text": Family(_text_sql(), _text_values),
    "binary": Family(
        st.sampled_from(["BINARY(8)", "VARBINARY(40)", "TINYBLOB", "BLOB", "LONGBLOB"]), _binary_values
    ),
    "date": Family(_const("DATE"), _date_values),
    "datetime": Family(_fsp_sql("DATETIME"), _datetime_values),
    "timestamp": Family(_fsp_sql("TIMESTAMP"), _timestamp_values),
    "time": Family(_fsp_sql("TIME"), _time_values),
    "year": Family(_const("YEAR"), lambda _s: st.one_of(st.integers(1901, 2155), st.just(0))),
    "bit": Family(_bit_sql(), _bit_values),
    "enum": Family(
        _const("ENUM(" + ",".join(f"'{o}'" for o in _OPTIONS) + ")"), lambda _s: st.sampled_from(_OPTIONS)
    ),
    "set": Family(_const("SET(" + ",".join(f"'{o}'" for o in _OPTIONS if "," not in o) + ")"), _set_values),
    "json": Family(_const("JSON"), _json_values),
    "point": Family(_const("POINT"), _point_values, "ST_GeomFromText(%s)"),
    "geometry": Family(_const("GEOMETRY"), _point_values, "ST_GeomFromText(%s)"),
}

# Converter settings the payloads are compared under (decoding does not depend on them).
SETTINGS = {
    "default": ConverterSettings(),
    "string_hex_connect": ConverterSettings(
        decimal_handling_mode="string", binary_handling_mode="hex", time_precision_mode="connect"
    ),
    "double_precise_b64": ConverterSettings(
        decimal_handling_mode="double", bigint_unsigned_handling_mode="precise", binary_handling_mode="base64"
    ),
}


@dataclass(frozen=True)
class Case:
    """One drawn table: column types, and per row the inserted and the updated values."""

    types: tuple[str, ...]
    placeholders: tuple[str, ...]
    inserted: tuple[tuple[Any, ...], ...]
    updated: tuple[tuple[Any, ...], ...]


@st.composite
def cases(draw: st.DrawFn, families: Sequence[str]) -> Case:
    chosen = draw(st.lists(st.sampled_from(families), min_size=1, max_size=4))
    types = tuple(draw(FAMILIES[name].sql) for name in chosen)
    nullable = [draw(st.booleans()) for _ in chosen]

    def row() -> tuple[Any, ...]:
        values = []
        for name, sql, may_be_null in zip(chosen, types, nullable, strict=True):
            strategy = FAMILIES[name].values(sql)
            values.append(draw(st.one_of(st.none(), strategy) if may_be_null else strategy))
        return tuple(values)

    count = draw(st.integers(1, 4))
    return Case(
        tuple(f"{sql}{'' if null else ' NOT NULL'}" for sql, null in zip(types, nullable, strict=True)),
        tuple(FAMILIES[name].placeholder for name in chosen),
        tuple(row() for _ in range(count)),
        tuple(row() for _ in range(count)),
    )


# -- reading the binlog both ways ----------------------------------------------------------------------
def _stream(server: MySQLServerHandle, start: tuple[str, int], end: tuple[str, int]) -> Iterator[Any]:
    stream = BinLogStreamReader(
        connection_settings=server.replication_settings(),
        server_id=random.randint(10_000, 2**31),
        log_file=start[0],
        log_pos=start[1],
        resume_stream=True,
        blocking=True,
    )
    try:
        for event in stream:
            # Every event is read, so that the one ending at ``end`` (a commit) ends the loop.
            if isinstance(event, WriteRowsEvent | UpdateRowsEvent | DeleteRowsEvent) and event.schema == DB:
                yield event
            if (stream.log_file, stream.log_pos) >= end:
                return
    finally:
        stream.close()


Images = list[tuple[str, list[Any] | None, list[Any] | None]]


def read_images(
    server: MySQLServerHandle, schema: TableSchema, start: tuple[str, int], end: tuple[str, int], ours: bool
) -> Images:
    decoder: BinlogRowDecoder | LibraryRows = (
        BinlogRowDecoder(schema) if ours else LibraryRows(schema.binlog_encodings)
    )
    images: Images = []
    for event in _stream(server, start, end):
        if isinstance(decoder, BinlogRowDecoder):  # generated, never the library's fallback
            assert decoder._reader_for(event.columns) is not None
        kind = type(event).__name__
        for before, after in decoder.rows(event, isinstance(event, UpdateRowsEvent)):
            images.append((kind, before, after))
    return images


def read_payloads(
    server: MySQLServerHandle, schema: TableSchema, start: tuple[str, int], end: tuple[str, int], ours: bool
) -> list[Any]:
    """Per rows event: its (before, after) value payloads (inserts as (None, after)), or the error
    class when a value cannot be represented. ``ours``: ``BinlogRowDecoder.payload_rows`` (read and
    converted in one generated function); otherwise the library's images, then the converter."""
    decoder = BinlogRowDecoder(schema)
    library = LibraryRows(schema.binlog_encodings)
    events: list[Any] = []
    for event in _stream(server, start, end):
        update, insert = isinstance(event, UpdateRowsEvent), isinstance(event, WriteRowsEvent)
        try:
            if ours:
                assert decoder._payload_reader_for(event.columns) is not None  # never the fallback
                rows = decoder.payload_rows(event, update, after=insert)
            else:
                convert = schema.value_from_binlog
                pairs = library.rows(event, update)
                rows = [
                    (None, convert(first))
                    if insert
                    else (convert(first), convert(second) if update else None)
                    for first, second in pairs
                ]
            events.append(comparable(rows))
        except UnrepresentableValueError as exc:
            events.append(type(exc))
    return events


def comparable(value: Any) -> Any:
    """Equal values compare equal; floats by their bits (-0.0, rounding)."""
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, list | tuple):
        return [comparable(v) for v in value]
    if isinstance(value, set | frozenset):
        return ("set", sorted(value))
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()}
    return (type(value).__name__, value)


# -- the test ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(mysql_server: MySQLServerHandle) -> Iterator[MySQLServerHandle]:
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`", f"CREATE DATABASE `{DB}`")
    yield mysql_server
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`")


def table_schema(server: MySQLServerHandle, name: str, converter_settings: ConverterSettings) -> TableSchema:
    ddl = server.query(f"SHOW CREATE TABLE `{DB}`.`{name}`")[0][1]
    model = parser_for(server.flavor).parse(ddl, SchemaModel(), DB).model
    table = model.table(TableId(DB, name))
    assert table is not None
    config = ConnectorConfig.from_mapping(server.connector_properties(**{"topic.prefix": "t"}))
    return EventBuilder(config, converter_settings=converter_settings).table_schema(table)


def snapshot_rows(server: MySQLServerHandle, name: str) -> list[tuple[Any, ...]]:
    conn = server.snapshot_connect()
    with conn, conn.cursor() as cur:
        cur.execute(f"SELECT * FROM `{DB}`.`{name}` ORDER BY id")
        return list(cur.fetchall())


_COUNTER = iter(range(1_000_000))


def run_case(server: MySQLServerHandle, case: Case) -> None:
    name = f"t{next(_COUNTER)}"
    columns = ", ".join(f"c{i} {sql}" for i, sql in enumerate(case.types))
    marks = ", ".join(case.placeholders)
    sets = ", ".join(f"c{i} = {p}" for i, p in enumerate(case.placeholders))
    with server.connect(DB) as conn, conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00', sql_mode = 'NO_ENGINE_SUBSTITUTION'")
        cur.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY, {columns})")
        start = tuple(server.query("SHOW MASTER STATUS")[0][:2])
        for number, row in enumerate(case.inserted):
            cur.execute(f"INSERT INTO {name} VALUES (%s, {marks})", (number, *row))
        for number, row in enumerate(case.updated):
            cur.execute(f"UPDATE {name} SET {sets} WHERE id = %s", (*row, number))
        final = snapshot_rows(server, name)
        cur.execute(f"DELETE FROM {name} WHERE id = 0")
        end = tuple(server.query("SHOW MASTER STATUS")[0][:2])
    schema = table_schema(server, name, SETTINGS["default"])
    library = read_images(server, schema, start, end, ours=False)
    ours = read_images(server, schema, start, end, ours=True)
    assert len(ours) == len(library) > 0
    for (kind, lib_before, lib_after), (our_kind, our_before, our_after) in zip(library, ours, strict=True):
        assert our_kind == kind
        assert comparable(our_before) == comparable(lib_before), (case.types, kind)
        assert comparable(our_after) == comparable(lib_after), (case.types, kind)
    # The last image of every row (its update) converts as the snapshot's reading of it does.
    # (A write's one image comes first in its pair; an UPDATE that changes nothing logs no event.)
    last_images: dict[Any, list[Any]] = {}
    for kind, first, second in ours:
        image = {"WriteRowsEvent": first, "UpdateRowsEvent": second}.get(kind)
        if image is not None:
            last_images[image[0]] = image
    for variant, converter_settings in SETTINGS.items():
        schema = table_schema(server, name, converter_settings)
        # Read and converted in one pass, as streaming does: the same payloads (or the same error).
        payloads = read_payloads(server, schema, start, end, ours=True)
        assert payloads == read_payloads(server, schema, start, end, ours=False), (variant, case.types)
        for (_, before, after), (_, lib_before, lib_after) in zip(ours, library, strict=True):
            for mine, theirs in ((before, lib_before), (after, lib_after)):
                if mine is not None:
                    assert converted(schema.value_from_binlog, mine) == converted(
                        schema.value_from_binlog, theirs
                    ), variant
        # A snapshot reads FLOAT as the server prints it, to 6 significant digits (so does
        # Debezium's JDBC snapshot): those columns are compared between the decoders only.
        inexact = {f"c{i}" for i, sql in enumerate(case.types) if sql.startswith("FLOAT")}
        for row in final:
            streamed = converted(schema.value_from_binlog, last_images[row[0]])
            read = converted(schema.value_from_snapshot, row)
            if isinstance(streamed, dict) and isinstance(read, dict):
                for column in inexact:
                    streamed.pop(column), read.pop(column)
            assert streamed == read, (variant, case.types, row)


def converted(convert: Any, image: Any) -> Any:
    """The converted image, or the error class when the mode cannot represent a value of a NOT NULL
    column (a TIME outside 00:00-24:00 with time.precision.mode=connect): both paths must agree."""
    try:
        return convert(image)
    except UnrepresentableValueError as exc:
        return type(exc)


GROUPS = {
    "integers": [n for n in FAMILIES if "int" in n],
    "numbers": ["float", "double", "decimal", "bit", "year"],
    "strings": ["text", "binary", "enum", "set", "json"],
    "temporal": ["date", "datetime", "timestamp", "time"],
    "spatial_and_mixed": ["point", "geometry", "int", "text", "datetime", "decimal"],
}


# 125 generated tables streamed and snapshotted: slow (8 minutes of a loaded fast tier); the fast tier
# keeps the every-family and fixed-case decoder tests of this module.
@pytest.mark.slow
@pytest.mark.parametrize("group", sorted(GROUPS))
def test_generated_decoder_reads_what_the_library_reads_and_what_the_snapshot_reads(
    server: MySQLServerHandle, group: str
) -> None:
    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        derandomize=True,
    )
    @given(cases(GROUPS[group]))
    def check(case: Case) -> None:
        run_case(server, case)

    check()


# One column definition per family, for the compile check.
EVERY_FAMILY_SQL = {
    "tinyint": "TINYINT",
    "tinyint_unsigned": "TINYINT UNSIGNED",
    "smallint": "SMALLINT",
    "smallint_unsigned": "SMALLINT UNSIGNED",
    "mediumint": "MEDIUMINT",
    "mediumint_unsigned": "MEDIUMINT UNSIGNED",
    "int": "INT",
    "int_unsigned": "INT UNSIGNED",
    "bigint": "BIGINT",
    "bigint_unsigned": "BIGINT UNSIGNED",
    "float": "FLOAT",
    "double": "DOUBLE",
    "decimal": "DECIMAL(20,4)",
    "text": "VARCHAR(40) CHARACTER SET latin1",
    "binary": "VARBINARY(40)",
    "date": "DATE",
    "datetime": "DATETIME(3)",
    "timestamp": "TIMESTAMP(6) NULL",
    "time": "TIME(2)",
    "year": "YEAR",
    "bit": "BIT(10)",
    "enum": "ENUM('a','b')",
    "set": "SET('a','b')",
    "json": "JSON",
    "point": "POINT",
    "geometry": "GEOMETRY",
}


def test_decoder_compiles_every_type_family(server: MySQLServerHandle) -> None:
    """No family silently falls back to the library's decoder: a table with one column of each
    family compiles into a generated reader."""
    assert sorted(EVERY_FAMILY_SQL) == sorted(FAMILIES)
    columns = ", ".join(f"c{i} {sql}" for i, sql in enumerate(EVERY_FAMILY_SQL.values()))
    server.execute(f"CREATE TABLE `{DB}`.every_family (id INT PRIMARY KEY, {columns})")
    start = tuple(server.query("SHOW MASTER STATUS")[0][:2])
    server.execute(f"INSERT INTO `{DB}`.every_family (id) VALUES (1)")
    end = tuple(server.query("SHOW MASTER STATUS")[0][:2])
    schema = table_schema(server, "every_family", SETTINGS["default"])
    event = next(_stream(server, start, end))
    assert len(event.columns) == len(EVERY_FAMILY_SQL) + 1
    compile_image_reader(event.columns, dict(schema.binlog_encodings))  # raises if it cannot


def test_events_without_checksums_decode_the_same() -> None:
    """A server with ``binlog_checksum=NONE``: an event's rows end where its body ends, not four
    bytes before (the library sizes events from the server's setting, and the decoder reads to the
    end of what the library sized)."""
    with LocalMySQLServer(extra_options=["--binlog-checksum=NONE"]) as plain:
        assert plain.query("SELECT @@global.binlog_checksum")[0][0] == "NONE"
        plain.execute(f"CREATE DATABASE `{DB}`")
        case = Case(
            ("INT NOT NULL", "VARCHAR(40) CHARACTER SET utf8mb4", "DATETIME(3)", "DECIMAL(12,3)"),
            ("%s", "%s", "%s", "%s"),
            ((1, "first", "2024-01-02 03:04:05.678", "-123456789.125"), (2, None, None, "0.001")),
            ((7, "seventh", "1999-12-31 23:59:59.999", "42.000"), (8, "", "2000-02-29 00:00:00.000", None)),
        )
        run_case(plain, case)


def test_a_full_image_bitmap_counts_only_the_tables_columns() -> None:
    # MySQL writes the columns-present bitmap with the unused high bits of its last byte set (22
    # columns: ff ff ff); MariaDB leaves them clear. Both mean every column is in the image.
    assert _all_present(b"\xff\xff\xff", 22)
    assert _all_present(b"\xff\xff\x3f", 22)
    assert not _all_present(b"\xff\xfc\xff", 22)  # columns 8 and 9 missing (binlog_row_image=NOBLOB)


def test_an_enum_index_beyond_the_labels_stops_naming_the_column() -> None:
    # Labels from a DDL or schema history that does not match the binlog (a replayed file whose
    # TABLE_MAP has no ENUM_STR_VALUE metadata): index 2 of a one-label ENUM.
    column = SimpleNamespace(type=FIELD_TYPE.ENUM, size=1, enum_values=["", "a"], name="e")
    reader = compile_image_reader([column], {})
    assert reader(b"\x00\x01", 0) == (["a"], 2)
    with pytest.raises(EnumIndexError, match="ENUM column e holds index 2, but its structure has 1 labels"):
        reader(b"\x00\x02", 0)
