"""Compares our decoding of real MySQL 8/9 binlog files with mysql-binlog-connector-java's.

The Java side (``java/BinlogDump.java``, run with Debezium's binlog client) prints one JSON line per
TABLE_MAP and per row image. Our side is the connector's jsonl output of the same file (Debezium's
record format, schemas included). Both are reduced to one canonical form per MySQL column type:

===================  ==========================================  =========================================
column type          mysql-binlog-connector-java gives           our record gives (settings of the test)
===================  ==========================================  =========================================
TINY..LONGLONG       signed Integer/Long: made unsigned when the  int (BIGINT UNSIGNED: Connect Decimal,
                     column's source type (in our schema, from    ``bigint.unsigned.handling.mode=precise``)
                     the DDL) says UNSIGNED
FLOAT, DOUBLE        the IEEE bits                                the number, packed to IEEE bits
NEWDECIMAL           BigDecimal text                              text (``decimal.handling.mode=string``)
DATE                 µs since the epoch (UTC midnight)            days since the epoch
TIME2                µs (``DATE_AND_TIME_AS_LONG_MICRO``)         µs (``adaptive_time_microseconds``)
DATETIME2            µs since the epoch (as UTC)                  ms (precision <= 3) or µs
TIMESTAMP2           µs since the epoch                           ISO-8601 text in UTC (ZonedTimestamp)
YEAR                 the year                                     the year
CHAR..BLOB           raw bytes (``CHAR_AND_BINARY_AS_BYTE_ARRAY``) text, encoded back with the column's
                                                                  charset (from the TABLE_MAP), or bytes
ENUM, SET            index, bitmask: made labels with the         label, comma-joined labels
                     TABLE_MAP's ENUM/SET_STR_VALUE metadata,
                     else the ``allowed`` list of our schema
BIT                  BitSet: its set bit indices                  bytes (little-endian) or boolean (BIT(1))
JSON                 ``JsonBinary.parseAsString`` text            text, compared byte for byte
GEOMETRY             SRID (4 bytes LE) + WKB                      struct {wkb, srid} (srid null for 0)
VECTOR               raw bytes (float32 LE each)                  array of float32
===================  ==========================================  =========================================

Zero dates (``INVALID_DATE_AND_TIME_AS_NEGATIVE_ONE`` gives -1) and our null for them both become None.

Images are matched in file order: an insert gives one "after" image, an update a "before" and an
"after", a delete a "before"; our records (c, u, d, and the delete + create pair of a key change) give the
same sequence. Columns compared are the ones the event includes (``columns`` of the Java line).
"""

from __future__ import annotations

import base64
import datetime as dt
import os
import shutil
import struct
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

JAVA_SOURCE = Path(__file__).parent / "java" / "BinlogDump.java"

# MySQL column type codes (binlog TABLE_MAP).
TINY, SHORT, LONG, FLOAT, DOUBLE, TIMESTAMP, LONGLONG, INT24 = 1, 2, 3, 4, 5, 7, 8, 9
DATE, TIME, DATETIME, YEAR, NEWDATE, VARCHAR, BIT = 10, 11, 12, 13, 14, 15, 16
TIMESTAMP2, DATETIME2, TIME2, VECTOR, JSON = 17, 18, 19, 242, 245
NEWDECIMAL, ENUM, SET, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, BLOB = 246, 247, 248, 249, 250, 251, 252
VAR_STRING, STRING, GEOMETRY = 253, 254, 255

INTEGER_BITS = {TINY: 8, SHORT: 16, INT24: 24, LONG: 32, LONGLONG: 64}
# Character types: COLUMN_CHARSET / DEFAULT_CHARSET metadata counts these (not ENUM/SET, JSON, GEOMETRY).
CHARACTER_TYPES = frozenset({STRING, VAR_STRING, VARCHAR, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB})
BINARY_COLLATION = 63

# Collation id -> Python codec, for the charsets the samples use. MySQL's latin1 is cp1252.
_CODEC_BY_COLLATION: dict[int, str] = {
    **dict.fromkeys((5, 8, 15, 31, 47, 48, 49, 94), "cp1252"),
    **dict.fromkeys((11, 65), "ascii"),
    **dict.fromkeys((35, 90, *range(128, 152), 159), "utf-16-be"),
    **dict.fromkeys((54, 55, *range(101, 125)), "utf-16-be"),
    **dict.fromkeys((60, 61, *range(160, 184)), "utf-32-be"),
    **dict.fromkeys((33, 76, 83, *range(192, 216), 223), "utf-8"),
    **dict.fromkeys((45, 46, *range(224, 248), *range(255, 324)), "utf-8"),
}


class ComparisonError(AssertionError):
    """A value or an image the two decoders disagree on, or one side has and the other has not."""


# ---------------------------------------------------------------------------------------------------
# The Java side


def sample_binlogs() -> Path:
    """``shared/mysql8-binlogs``: ``$MYSQL8_BINLOGS``, else the first ``shared`` folder above the checkout
    (the files are read where they are, never copied into the project)."""
    if os.environ.get("MYSQL8_BINLOGS"):
        return Path(os.environ["MYSQL8_BINLOGS"])
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "mysql8-binlogs"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("shared/mysql8-binlogs not found above the checkout: set MYSQL8_BINLOGS")


def sample_files() -> list[Path]:
    """Every sample binlog file, sorted (the README beside them is not one)."""
    root = sample_binlogs()
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != "README.md")


def binlog_java_jars() -> Path:
    """Where ``.ci/setup`` puts mysql-binlog-connector-java and zstd-jni."""
    default = Path.home() / ".cache" / "mysql-cdc" / "binlog-java"
    return Path(os.environ.get("MYSQL_CDC_BINLOG_JAVA", default))


def compile_against_binlog_client(source: Path, classes: Path) -> None:
    """Compile a test's Java program into ``classes`` against the binlog client's jars."""
    javac = shutil.which("javac")
    assert javac, f"{source.name} is compiled here: this needs a JDK (javac), not only a JRE"
    jars = binlog_java_jars()
    assert list(jars.glob("mysql-binlog-connector-java-*.jar")), (
        f"no binlog client jar in {jars}: run .ci/setup"
    )
    compiled = subprocess.run(
        [javac, "-nowarn", "-d", str(classes), "-cp", str(jars / "*"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compiled.returncode == 0, compiled.stderr


def compile_binlog_dump(classes: Path) -> None:
    compile_against_binlog_client(JAVA_SOURCE, classes)


def java_dump(classes: Path, binlog: Path) -> list[dict[str, Any]]:
    """Runs BinlogDump on one file; its lines, parsed. Fails (with the client's error) if it cannot."""
    java = shutil.which("java")
    assert java, "BinlogDump needs a Java runtime"
    done = subprocess.run(
        [java, "-cp", f"{binlog_java_jars() / '*'}:{classes}", "BinlogDump", str(binlog)],
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    return [orjson.loads(line) for line in done.stdout.splitlines()]


# ---------------------------------------------------------------------------------------------------
# Column descriptions from the Java TABLE_MAP lines


@dataclass(frozen=True)
class JavaColumn:
    """One column as the TABLE_MAP (and its optional metadata) describes it."""

    index: int
    type_code: int  # the real type (ENUM/SET/CHAR resolved from a STRING column's metadata)
    meta: int
    length: int  # CHAR/BINARY: the byte length
    collation: int | None  # character columns: None when the TABLE_MAP has no charset metadata
    labels: tuple[str, ...] | None  # ENUM/SET labels from the metadata, None when absent
    name: str | None


def real_type(type_code: int, meta: int) -> tuple[int, int]:
    """(real type, byte length): a STRING column's metadata holds the real type (ENUM, SET) and CHAR
    lengths above 255 in its high byte, as MySQL's log_event_print_value reads it."""
    if type_code != STRING or meta < 256:
        return type_code, meta if type_code == STRING else 0
    high, low = meta >> 8, meta & 0xFF
    if (high & 0x30) != 0x30:
        return high | 0x30, low | (((high & 0x30) ^ 0x30) << 4)
    return high, low


def _charsets(table_map: Mapping[str, Any], count: int) -> list[int | None]:
    if table_map.get("column_charsets") is not None:
        return list(table_map["column_charsets"])
    if table_map.get("default_charset") is not None:
        exceptions = {int(k): v for k, v in (table_map.get("charset_exceptions") or {}).items()}
        return [exceptions.get(i, table_map["default_charset"]) for i in range(count)]
    return [None] * count


def java_columns(table_map: Mapping[str, Any]) -> tuple[JavaColumn, ...]:
    resolved = [real_type(t, m) for t, m in zip(table_map["types"], table_map["meta"], strict=True)]
    character_seen = enum_seen = set_seen = 0
    charsets = _charsets(table_map, sum(1 for t, _ in resolved if t in CHARACTER_TYPES))
    names = table_map.get("names")
    columns = []
    for index, ((type_code, length), meta) in enumerate(zip(resolved, table_map["meta"], strict=True)):
        collation = None
        labels = None
        if type_code in CHARACTER_TYPES:
            collation = charsets[character_seen]
            character_seen += 1
        if type_code == ENUM:
            values = table_map.get("enum_values")
            labels = tuple(values[enum_seen]) if values else None
            enum_seen += 1
        if type_code == SET:
            values = table_map.get("set_values")
            labels = tuple(values[set_seen]) if values else None
            set_seen += 1
        name = names[index] if names else None
        columns.append(JavaColumn(index, type_code, meta, length, collation, labels, name))
    return tuple(columns)


# ---------------------------------------------------------------------------------------------------
# Canonical values


@dataclass(frozen=True)
class OurField:
    """One field of our record's before/after schema."""

    name: str
    type: str
    schema_name: str | None
    parameters: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_schema(cls, schema: Mapping[str, Any]) -> OurField:
        return cls(schema["field"], schema["type"], schema.get("name"), schema.get("parameters") or {})


def _micros_from_iso(text: str) -> int:
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    delta = moment - epoch
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _float32_bits(value: float) -> int:
    return int(struct.unpack("<i", struct.pack("<f", value))[0])


def _float64_bits(value: float) -> int:
    return int(struct.unpack("<q", struct.pack("<d", value))[0])


def _bits_from_le_bytes(raw: bytes) -> frozenset[int]:
    number = int.from_bytes(raw, "little")
    return frozenset(i for i in range(number.bit_length()) if number >> i & 1)


def _connect_decimal(value: str, parameters: Mapping[str, str]) -> Decimal:
    unscaled = int.from_bytes(base64.b64decode(value), "big", signed=True)
    return Decimal(unscaled).scaleb(-int(parameters.get("scale", "0")))


# Our value by schema name (logical type) -> canonical form; then by Connect type.
_OURS_BY_NAME: dict[str, Callable[[Any, OurField], Any]] = {
    "io.debezium.time.Date": lambda v, f: v,
    "io.debezium.time.MicroTime": lambda v, f: v,
    "io.debezium.time.Time": lambda v, f: v * 1000,
    "org.apache.kafka.connect.data.Time": lambda v, f: v * 1000,
    "io.debezium.time.Timestamp": lambda v, f: v * 1000,
    "org.apache.kafka.connect.data.Timestamp": lambda v, f: v * 1000,
    "io.debezium.time.MicroTimestamp": lambda v, f: v,
    "io.debezium.time.ZonedTimestamp": lambda v, f: _micros_from_iso(v),
    "io.debezium.time.Year": lambda v, f: v,
    "io.debezium.data.Enum": lambda v, f: v,
    "io.debezium.data.EnumSet": lambda v, f: v,
    "io.debezium.data.Bits": lambda v, f: _bits_from_le_bytes(base64.b64decode(v)),
    "io.debezium.data.Json": lambda v, f: v,  # the text itself: Debezium streams the client's text
    "org.apache.kafka.connect.data.Decimal": lambda v, f: _connect_decimal(v, f.parameters),
    # SRID 0 (none) is a null srid in the record.
    "io.debezium.data.geometry.Geometry": lambda v, f: (v.get("srid") or 0, base64.b64decode(v["wkb"])),
    "io.debezium.data.geometry.Point": lambda v, f: (v.get("srid") or 0, base64.b64decode(v["wkb"])),
}


def ours_canonical(value: Any, ours: OurField, column: JavaColumn) -> Any:
    """Our record's value in the canonical form of its MySQL column type."""
    if value is None:
        return None
    if ours.schema_name in _OURS_BY_NAME:
        value = _OURS_BY_NAME[ours.schema_name](value, ours)
    elif ours.type == "bytes":
        value = base64.b64decode(value)
    if column.type_code == FLOAT and isinstance(value, float | int):
        return _float32_bits(value)
    if column.type_code == DOUBLE and isinstance(value, float | int):
        return _float64_bits(value)
    if column.type_code == NEWDECIMAL:
        return Decimal(value)
    if column.type_code == TIME2 and isinstance(value, int):
        return time2_as_the_client_reads(value, column.meta)
    if column.type_code == BIT and isinstance(value, bool):
        return frozenset({0}) if value else frozenset()
    if column.type_code == VECTOR and isinstance(value, list):
        return tuple(_float32_bits(v) for v in value)
    if column.type_code in CHARACTER_TYPES and isinstance(value, str):
        return _encode(value, column)
    if column.type_code == STRING and column.collation == BINARY_COLLATION and isinstance(value, bytes):
        # Debezium right-pads BINARY(n) with 0x00 (DBZ-254); the binlog holds it without the padding.
        return value.rstrip(b"\0")
    return value


_TIMEF_INT_OFS = 0x800000
_TIMEF_OFS = 0x800000000000


def _c_div(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def time2_as_the_client_reads(micros: int, fsp: int) -> int:
    """What mysql-binlog-connector-java's ``DATE_AND_TIME_AS_LONG_MICRO`` gives for the TIME(fsp) value
    ``micros``: the bytes MySQL writes for it (``my_time_packed_to_binary``), read as the client reads
    them, hours/minutes/seconds from bit 2 on, so without the sign bit. For non-negative values that is
    the value itself; a negative TIME comes out as another, positive duration. Our value is held to
    the client's this way (an exact check of the same bytes), and each such value is listed."""
    negative = micros < 0
    seconds, fraction = divmod(abs(micros), 1_000_000)
    hms = (seconds // 3600) << 12 | (seconds // 60 % 60) << 6 | seconds % 60
    packed = (hms << 24) + fraction
    packed = -packed if negative else packed
    int_part = (packed >> 24) + _TIMEF_INT_OFS
    frac_part = packed - _c_div(packed, 1 << 24) * (1 << 24)  # C's %, sign of the dividend
    if fsp == 0:
        fraction_bytes = b""
    elif fsp <= 2:
        fraction_bytes = (_c_div(frac_part, 10_000) & 0xFF).to_bytes(1, "big")
    elif fsp <= 4:
        fraction_bytes = (_c_div(frac_part, 100) & 0xFFFF).to_bytes(2, "big")
    else:
        stored = packed + _TIMEF_OFS
        int_part, fraction_bytes = stored >> 24, (stored & 0xFFFFFF).to_bytes(3, "big")
    time = int_part & 0xFFFFFF
    hours, minutes, secs = (time >> 12) & 0x3FF, (time >> 6) & 0x3F, time & 0x3F
    fraction_read = (
        int.from_bytes(fraction_bytes, "big") * 100 ** (3 - len(fraction_bytes)) if fraction_bytes else 0
    )
    return (hours * 3600 + minutes * 60 + secs) * 1_000_000 + fraction_read


def _encode(text: str, column: JavaColumn) -> bytes:
    codec = _CODEC_BY_COLLATION.get(column.collation or 0, "utf-8")
    return text.encode(codec)


def _enum_label(index: int, labels: Sequence[str]) -> str:
    # Index 0 is MySQL's "invalid value" entry, the empty string.
    return "" if index == 0 else labels[index - 1]


def _set_labels(mask: int, labels: Sequence[str]) -> str:
    return ",".join(label for i, label in enumerate(labels) if mask >> i & 1)


def _allowed(ours: OurField) -> tuple[str, ...]:
    # Debezium's Enum/EnumSet schemas list the labels comma-joined; used only when the TABLE_MAP has
    # no ENUM/SET_STR_VALUE metadata (a label with a comma in it would be split here, so say so).
    allowed = ours.parameters.get("allowed")
    assert allowed is not None, f"column {ours.name}: no labels in the TABLE_MAP nor in our schema"
    return tuple(allowed.split(","))


def _unsigned(ours: OurField) -> bool:
    """From the column's source type our schema carries (``column.propagate.source.type=.*``), i.e.
    the table's DDL. (The client's SIGNEDNESS bit set is not used: it does not index the numeric
    columns the way the server writes the bits, MSB first.)"""
    source_type = ours.parameters.get("__debezium.source.column.type")
    assert source_type is not None, f"column {ours.name}: run with column.propagate.source.type=.*"
    return "UNSIGNED" in source_type.upper()


def java_canonical(tagged: Any, column: JavaColumn, ours: OurField) -> Any:
    """The Java client's tagged value in the canonical form of its MySQL column type."""
    if tagged is None:
        return None
    kind, raw = next(iter(tagged.items())) if "json" not in tagged else ("json", tagged["json"])
    return _JAVA_BY_TYPE.get(column.type_code, _java_plain)(kind, raw, column, ours)


def _java_int(kind: str, raw: Any, column: JavaColumn, ours: OurField) -> int:
    value = int(raw)
    bits = INTEGER_BITS[column.type_code]
    return value % (1 << bits) if _unsigned(ours) else value


def _java_temporal(kind: str, raw: Any, column: JavaColumn, ours: OurField) -> int | None:
    value = int(raw)
    return None if value == -1 else value


def _java_date(kind: str, raw: Any, column: JavaColumn, ours: OurField) -> int | None:
    value = int(raw)
    return None if value == -1 else value // 86_400_000_000


def _java_plain(kind: str, raw: Any, column: JavaColumn, ours: OurField) -> Any:
    by_kind: dict[str, Callable[[Any], Any]] = {
        "int": int,
        "float32": int,
        "float64": int,
        "decimal": Decimal,
        "bits": frozenset,
        "bytes": bytes.fromhex,
        "json": str,
        "other": lambda r: ("other", r),
    }
    return by_kind[kind](raw)


def _java_enum(kind: str, raw: Any, column: JavaColumn, ours: OurField) -> str:
    return _enum_label(int(raw), column.labels or _allowed(ours))


def _java_set(kind: str, raw: Any, column: JavaColumn, ours: OurField) -> str:
    return _set_labels(int(raw) % (1 << 64), column.labels or _allowed(ours))


def _java_geometry(kind: str, raw: Any, column: JavaColumn, ours: OurField) -> tuple[int, bytes]:
    data = bytes.fromhex(raw)
    return int.from_bytes(data[:4], "little"), data[4:]


def _java_vector(kind: str, raw: Any, column: JavaColumn, ours: OurField) -> tuple[int, ...]:
    data = bytes.fromhex(raw)
    return tuple(struct.unpack(f"<{len(data) // 4}i", data))


def _java_binary_char(kind: str, raw: Any, column: JavaColumn, ours: OurField) -> Any:
    data = bytes.fromhex(raw)
    return data.rstrip(b"\0") if column.collation == BINARY_COLLATION else data


_JAVA_BY_TYPE: dict[int, Callable[[str, Any, JavaColumn, OurField], Any]] = {
    **dict.fromkeys(INTEGER_BITS, _java_int),
    DATE: _java_date,
    NEWDATE: _java_date,
    TIME: _java_temporal,
    TIME2: _java_temporal,
    DATETIME: _java_temporal,
    DATETIME2: _java_temporal,
    TIMESTAMP: _java_temporal,
    TIMESTAMP2: _java_temporal,
    ENUM: _java_enum,
    SET: _java_set,
    GEOMETRY: _java_geometry,
    VECTOR: _java_vector,
    STRING: _java_binary_char,
}


# ---------------------------------------------------------------------------------------------------
# Images


@dataclass(frozen=True)
class JavaImage:
    table: str  # db.table
    side: str  # "before" or "after"
    pos: int
    inner: int
    columns: tuple[JavaColumn, ...]  # the included ones
    values: tuple[Any, ...]  # tagged, as printed
    complete: bool  # every column of the table is in the image (binlog_row_image=FULL)


@dataclass(frozen=True)
class OurImage:
    table: str
    side: str
    fields: tuple[OurField, ...]
    values: Mapping[str, Any]
    source: Mapping[str, Any]


_SIDE_BY_JAVA_IMAGE = {"insert": ("after",), "update-before": ("before",), "update-after": ("after",)}
_SIDE_BY_JAVA_IMAGE["delete"] = ("before",)
_SIDES_BY_OP = {"c": ("after",), "u": ("before", "after"), "d": ("before",)}


def java_images(lines: Iterable[Mapping[str, Any]]) -> list[JavaImage]:
    """The row images of one dump, in file order, each with its included columns described."""
    tables: dict[int, tuple[str, tuple[JavaColumn, ...]]] = {}
    images = []
    for line in lines:
        if line["kind"] == "table_map":
            tables[line["table_id"]] = (f"{line['db']}.{line['table']}", java_columns(line))
        elif line["kind"] == "image":
            table, columns = tables[line["table_id"]]
            included = tuple(columns[i] for i in line["columns"])
            complete = len(included) == len(columns)
            for side in _SIDE_BY_JAVA_IMAGE[line["image"]]:
                images.append(
                    JavaImage(
                        table, side, line["pos"], line["inner"], included, tuple(line["values"]), complete
                    )
                )
    return images


def undecoded_rows_events(lines: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Rows events the client has no deserializer for (PARTIAL_UPDATE_ROWS_EVENT)."""
    return [line for line in lines if line["kind"] == "undecoded_rows"]


def our_images(records: Iterable[Mapping[str, Any]]) -> list[OurImage]:
    """The row images in our jsonl records, in emission order (data change records only)."""
    images = []
    for record in records:
        value = record.get("value")
        if not isinstance(value, dict) or not isinstance(value.get("payload"), dict):
            continue
        payload = value["payload"]
        if payload.get("op") not in _SIDES_BY_OP or "source" not in payload:
            continue
        struct_fields = {f["field"]: f for f in value["schema"]["fields"]}
        source = payload["source"]
        table = f"{source['db']}.{source['table']}"
        for side in _SIDES_BY_OP[payload["op"]]:
            fields = tuple(OurField.from_schema(f) for f in struct_fields[side]["fields"])
            images.append(OurImage(table, side, fields, payload[side], source))
    return images


@dataclass(frozen=True)
class Mismatch:
    file: str
    table: str
    column: str
    side: str
    java: Any
    ours: Any
    java_raw: Any
    ours_raw: Any


def _our_field(column: JavaColumn, fields: Sequence[OurField], table_width: int) -> OurField:
    by_name = {f.name: f for f in fields}
    if column.name is not None:
        assert column.name in by_name, f"column {column.name} missing from our record: {sorted(by_name)}"
        return by_name[column.name]
    # No COLUMN_NAME metadata: our schema lists the table's columns in table order.
    assert len(fields) == table_width, (
        f"our record has {len(fields)} fields, the TABLE_MAP {table_width} columns: cannot pair by position"
    )
    return fields[column.index]


def compare_image(
    file: str, java: JavaImage, ours: OurImage, table_width: int, notes: list[str]
) -> list[Mismatch]:
    """The columns of one image the two sides disagree on; ``notes`` gets the values compared through
    a documented model of the client's reading (negative TIME2) rather than directly."""
    if java.table != ours.table or java.side != ours.side:
        raise ComparisonError(
            f"{file}: image at {java.pos}/{java.inner} is {java.side} of {java.table} for the Java client, "
            f"{ours.side} of {ours.table} in our records (source {dict(ours.source)})"
        )
    mismatches = []
    for column, tagged in zip(java.columns, java.values, strict=True):
        field_ = _our_field(column, ours.fields, table_width)
        ours_raw = ours.values.get(field_.name)
        expected = java_canonical(tagged, column, field_)
        actual = ours_canonical(ours_raw, field_, column)
        if column.type_code == TIME2 and isinstance(ours_raw, int) and ours_raw < 0:
            notes.append(
                f"{file}: {java.table}.{field_.name} ({java.side}): ours {_duration(ours_raw)}, the client "
                f"{_duration(expected) if isinstance(expected, int) else repr(expected)} (it drops TIME2's sign)"
            )
        if expected != actual:
            mismatches.append(
                Mismatch(file, java.table, field_.name, java.side, expected, actual, tagged, ours_raw)
            )
    return mismatches


def _duration(micros: int) -> str:
    sign, value = ("-" if micros < 0 else ""), abs(micros)
    seconds, fraction = divmod(value, 1_000_000)
    text = f"{sign}{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return text + (f".{fraction:06d}" if fraction else "")


def table_widths(lines: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    return {f"{ln['db']}.{ln['table']}": len(ln["types"]) for ln in lines if ln["kind"] == "table_map"}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
