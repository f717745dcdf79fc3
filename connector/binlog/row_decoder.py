"""Reading a rows event's row images ourselves, with a decoder generated per table structure.

mysql-replication stays in charge of the replication protocol, the event headers and TABLE_MAP;
decoding the rows is where its time goes (a method dispatch, a ``BitGet`` and several small reads
per column, a dict per image). ``ImageReader`` instead compiles, once per table map, one Python
function that walks a row image with ``struct.unpack_from`` over the event's raw bytes, with every
column's type, metadata and codec baked in. It yields the forms the converters take
(``connector.records.conversion``), not Python objects to be taken apart again: DECIMAL as its
unscaled integer, DATETIME and TIMESTAMP as microseconds since the epoch, DATE as days since it, TIME
as signed microseconds, YEAR as the year, BIT as an integer, SET as its members' text; zero dates
are None, as Debezium's binlog deserializer makes them. The snapshot's text is adapted to the same
forms, so one conversion per type family serves both paths.

What it does not compile (a column type it has no reader for, columns missing from the image
because of ``binlog_row_image=MINIMAL/NOBLOB``, partial JSON) is read through the library's own
decoder, via a private copy of the event (``_LibraryRows``), whose values are brought to the same
forms at that edge (``connector.binlog.library_values`` undoes the library's quirks); the guards in
``connector.binlog.guard`` stop such events before they get here unless the operator chose to pass
them.

Text columns are decoded with the codec our table model says is right
(``ColumnConverter.binlog_encoding``), not the library's idea of the charset (MySQL latin1 as strict
cp1252, utf16/utf32 in the wrong byte order, nothing for some single-byte charsets); columns without
one use the library's choice, so the values are the ones the library would give.
"""

from __future__ import annotations

import codecs
import copy
import struct
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pymysqlreplication.constants import FIELD_TYPE
from pymysqlreplication.row_event import RowsEvent

from connector.binlog.calendar import days_from_civil, month_length
from connector.binlog.json.binary import BinaryJson
from connector.binlog.json.diff import apply_json_diffs, decode_json_diffs, read_length_encoded
from connector.binlog.library_support import VECTOR
from connector.binlog.library_values import library_image, value_adapters
from connector.errors import ReplicationError
from ddl.model import Table

# One row image: the values in column order (or its value payload), and the position after it.
ImageReader = Callable[[bytes, int], tuple[Any, int]]
Rows = list[tuple[Any, Any]]
# The Python source of an image's value payload, its converters put into the namespace given, where
# ``value_of(index)`` is the expression holding column ``index`` (records' ``payload_display``).
PayloadDisplay = Callable[[dict[str, Any], Callable[[int], str]], str]


class RowSchema(Protocol):
    """What the decoder needs of a table's schema (the records stage's ``TableSchema``), so that
    decoding imports nothing of the stages after it."""

    @property
    def table(self) -> Table: ...

    @property
    def binlog_encodings(self) -> tuple[tuple[int, str], ...]: ...

    @property
    def binlog_image_converter(self) -> Callable[[Sequence[Any]], dict[str, Any]]: ...

    @property
    def binlog_payload_display(self) -> PayloadDisplay | None: ...


# Names the generated code sees (a closed namespace: nothing else is reachable from it).
_NAMESPACE: dict[str, Any] = {
    "u8": struct.Struct("<B").unpack_from,
    "i8": struct.Struct("<b").unpack_from,
    "u16": struct.Struct("<H").unpack_from,
    "i16": struct.Struct("<h").unpack_from,
    "u32": struct.Struct("<I").unpack_from,
    "i32": struct.Struct("<i").unpack_from,
    "u64": struct.Struct("<Q").unpack_from,
    "i64": struct.Struct("<q").unpack_from,
    "f32": struct.Struct("<f").unpack_from,
    "f64": struct.Struct("<d").unpack_from,
    "be_i32": struct.Struct(">i").unpack_from,
    "be_u40": struct.Struct(">IB").unpack_from,
    "from_bytes": int.from_bytes,
    "binary_json": BinaryJson,
}


class _Unsupported(Exception):
    """A column the generator has no reader for: the table falls back to the library's decoder."""


class _Source:
    """Lines of one generated function, with helper names for the per-column constants."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {}

    def constant(self, prefix: str, value: Any) -> str:
        name = f"{prefix}{len(self.constants)}"
        self.constants[name] = value
        return name

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)


# -- column readers: (source, target variable, column, codec, depth) -> code reading one value at p --
def _fixed(unpack: str, size: int) -> Callable[..., None]:
    def read(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
        src.emit(d, f"{var} = {unpack}(data, p)[0]; p += {size}")

    return read


def _signed_or_not(signed: Callable[..., None], unsigned: Callable[..., None]) -> Callable[..., None]:
    def read(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
        (unsigned if column.unsigned else signed)(src, var, column, codec, d)

    return read


def _int24(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    signed = "False" if column.unsigned else "True"
    src.emit(d, f"{var} = from_bytes(data[p:p + 3], 'little', signed={signed}); p += 3")


def _length(src: _Source, size: int, d: int) -> str:
    """Code reading a little-endian length of ``size`` bytes into ``n``."""
    src.emit(d, f"n = {_LENGTHS[size]}; p += {size}")
    return "n"


_LENGTHS = {
    1: "data[p]",
    2: "u16(data, p)[0]",
    3: "from_bytes(data[p:p + 3], 'little')",
    4: "u32(data, p)[0]",
}


def _text(src: _Source, var: str, size: int, codec: str | None, d: int) -> None:
    _length(src, size, d)
    if codec is None:
        # The library's decode of an empty value succeeds even with a codec Python does not know
        # (CPython returns '' for empty bytes before looking the codec up): '' then, else bytes.
        src.emit(d, f"{var} = data[p:p + n] if n else ''; p += n")
    else:
        name = src.constant("codec", codec)
        src.emit(d, f"{var} = str(data[p:p + n], {name}); p += n")


def _varchar(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    _text(src, var, 2 if column.max_length > 255 else 1, codec, d)


def _blob(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    _text(src, var, column.length_size, codec, d)


def _geometry(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    _length(src, column.length_size, d)
    src.emit(d, f"{var} = data[p:p + n]; p += n")


def _json(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    # MySQL's binary JSON (MariaDB's JSON is a LONGTEXT, a BLOB in the binlog): kept as its bytes,
    # which the converter renders the way Debezium's binlog client does (connector.binlog.json.render).
    _length(src, column.length_size, d)
    src.emit(d, f"{var} = binary_json(bytes(data[p:p + n])) if n else None; p += n")


def _json_raw(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    # The after image of a partial JSON update: the column holds either a document or a diff list
    # (the image's partial bitmap says which); read_partial_update_rows decides.
    _length(src, column.length_size, d)
    src.emit(d, f"{var} = data[p:p + n]; p += n")


_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def _new_decimal(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    """DECIMAL's binary form: groups of 9 digits in 4 big-endian bytes, the leftover digits of each
    side in fewer; the sign in the first bit (set = positive), negative values stored inverted. The
    value is the unscaled integer (the column's scale says where the point goes): the groups' numbers
    joined in base 10**digits, read from one big-endian integer of the whole field."""
    integral = column.precision - column.decimals
    full_int, left_int = divmod(integral, 9)
    full_frac, left_frac = divmod(column.decimals, 9)
    # (bytes, digits) per group, most significant first.
    groups = (
        ([(_DIG2BYTES[left_int], left_int)] if _DIG2BYTES[left_int] else [])
        + [(4, 9)] * (full_int + full_frac)
        + ([(_DIG2BYTES[left_frac], left_frac)] if _DIG2BYTES[left_frac] else [])
    )
    size = sum(width for width, _ in groups)
    sign_bit = 1 << (8 * size - 1)
    src.emit(d, f"raw = from_bytes(data[p:p + {size}], 'big') ^ {sign_bit}; p += {size}")
    src.emit(d, f"negative = raw >> {8 * size - 1}")  # the sign bit was clear: a negative value
    src.emit(d, "if negative:")
    src.emit(d + 1, f"raw ^= {(1 << (8 * size)) - 1}")
    shift = 8 * size
    terms = "0"
    for width, digits in groups:
        shift -= 8 * width
        group = f"(raw >> {shift}) & {(1 << (8 * width)) - 1}" if shift else f"raw & {(1 << (8 * width)) - 1}"
        terms = f"({group})" if terms == "0" else f"({terms}) * {10**digits} + ({group})"
    src.emit(d, f"{var} = -({terms}) if negative else {terms}")


def _fraction_micros(src: _Source, column: Any, d: int) -> str:
    """Code reading the fractional seconds of a DATETIME2/TIMESTAMP2 (ceil(fsp/2) big-endian bytes,
    in units of 10**-(2 * bytes) seconds) into ``us``; returns the expression for microseconds."""
    size = (column.fsp + 1) // 2
    if size == 0:
        return "0"
    src.emit(d, f"us = from_bytes(data[p:p + {size}], 'big'); p += {size}")
    return "us" if size == 3 else f"us * {10 ** (6 - 2 * size)}"


def _datetime2(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    # 40 bits: sign, year*13+month (17), day (5), hour (5), minute (6), second (6). Microseconds
    # since the epoch for the literal year (the converter applies the two-digit-year adjuster);
    # zero and invalid dates are None (Debezium's binlog deserializer returns null for zero dates).
    src.emit(d, "hi, lo = be_u40(data, p); p += 5")
    src.emit(d, "packed = (hi << 8) | lo")
    micros = _fraction_micros(src, column, d)
    src.emit(d, "first, length = DATETIME_MONTHS[(packed >> 22) & 0x1FFFF]")
    src.emit(d, "day = (packed >> 17) & 31; hour = (packed >> 12) & 31; minute = (packed >> 6) & 63")
    src.emit(d, "if 0 < day <= length and hour < 24 and minute < 60 and packed & 63 < 60:")
    src.emit(
        d + 1,
        f"{var} = ((first + day) * 86400 + hour * 3600 + minute * 60 + (packed & 63)) * 1000000 + {micros}",
    )
    src.emit(d, "else:")
    src.emit(d + 1, f"{var} = None")


def _timestamp2(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    # Microseconds since the epoch; 0 is the zero TIMESTAMP (no valid TIMESTAMP is the epoch): None.
    src.emit(d, "seconds = be_i32(data, p)[0]; p += 4")
    micros = _fraction_micros(src, column, d)
    src.emit(d, f"{var} = seconds * 1000000 + {micros} or None")


def _timestamp(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    src.emit(d, f"{var} = u32(data, p)[0] * 1000000 or None; p += 4")


def _time2(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    """TIME2: 3 bytes of sign, hour (10 bits), minute (6), second (6), then ceil(fsp/2) bytes of
    fraction, all one big-endian number stored plus half its range; a negative value is stored as
    the negated packed value, so its magnitude's fields read as a positive one's. Signed microseconds."""
    size = (column.fsp + 1) // 2
    total = 3 + size
    shift = 8 * size
    src.emit(d, f"packed = from_bytes(data[p:p + {total}], 'big') - {1 << (8 * total - 1)}; p += {total}")
    src.emit(d, "negative = packed < 0")
    src.emit(d, "if negative:")
    src.emit(d + 1, "packed = -packed")
    fraction = f" + (packed & {(1 << shift) - 1}) * {10 ** (6 - 2 * size)}" if size else ""
    src.emit(
        d,
        f"micros = (((packed >> {shift + 12}) & 0x3FF) * 3600 + ((packed >> {shift + 6}) & 63) * 60 "
        f"+ ((packed >> {shift}) & 63)) * 1000000{fraction}",
    )
    src.emit(d, f"{var} = -micros if negative else micros")


def _time(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    # The old TIME: HHMMSS as a decimal number in 3 little-endian bytes (read unsigned, as before).
    src.emit(d, "packed = from_bytes(data[p:p + 3], 'little'); p += 3")
    src.emit(
        d,
        f"{var} = (packed // 10000 * 3600 + packed % 10000 // 100 * 60 + packed % 100) * 1000000",
    )


def _date(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    # 3 little-endian bytes: year (15 bits), month (4), day (5). Days since the epoch for the literal
    # year; a zero part (year, month or day 0) is None, as in Debezium's binlog deserializer; another
    # invalid date stops the event, as it did when a date object was built from it.
    src.emit(d, "packed = from_bytes(data[p:p + 3], 'little'); p += 3")
    src.emit(d, "first, length = DATE_MONTHS[packed >> 5]")
    src.emit(d, "day = packed & 31")
    src.emit(d, "if 0 < day <= length:")
    src.emit(d + 1, f"{var} = first + day")
    src.emit(d, "elif day and packed >> 9 and (packed >> 5) & 15:")
    invalid = src.constant("invalid_date", _InvalidDate("DATE", column.name))
    src.emit(d + 1, f"{var} = {invalid}('%04d-%02d-%02d' % (packed >> 9, (packed >> 5) & 15, packed & 31))")
    src.emit(d, "else:")
    src.emit(d + 1, f"{var} = None")


def _datetime(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    # The old DATETIME: YYYYMMDDhhmmss as a decimal number in 8 little-endian bytes.
    src.emit(d, "packed = u64(data, p)[0]; p += 8")
    src.emit(d, "ymd, hms = divmod(packed, 1000000)")
    src.emit(d, "first, length = OLD_DATETIME_MONTHS[ymd // 100]")
    src.emit(d, "day = ymd % 100; hour = hms // 10000; minute = hms % 10000 // 100")
    src.emit(d, "if 0 < day <= length and hour < 24 and minute < 60 and hms % 100 < 60:")
    src.emit(d + 1, f"{var} = ((first + day) * 86400 + hour * 3600 + minute * 60 + hms % 100) * 1000000")
    # A zero part is None; another invalid value stops the event (as it always has for this format).
    src.emit(d, "elif ymd // 10000 and ymd % 10000 // 100 and day:")
    invalid = src.constant("invalid_datetime", _InvalidDate("DATETIME", column.name))
    src.emit(d + 1, f"{var} = {invalid}('%014d' % packed)")
    src.emit(d, "else:")
    src.emit(d + 1, f"{var} = None")


def _year(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    # One byte: the year minus 1900, 0 for YEAR 0000.
    src.emit(d, f"{var} = data[p] and data[p] + 1900; p += 1")


class _Months(dict[int, tuple[int, int]]):
    """Packed year-and-month key -> (day number of the month's day 0, days in the month; 0 when the
    date cannot be a datetime: year 0 or above 9999, month 0 or above 12). Filled as keys occur."""

    def __init__(self, split: Callable[[int], tuple[int, int]]) -> None:
        super().__init__()
        self._split = split

    def __missing__(self, key: int) -> tuple[int, int]:
        year, month = self._split(key)
        length = month_length(year, month) if 1 <= year <= 9999 else 0
        entry = (days_from_civil(year, month, 1) - 1 if length else 0, length)
        self[key] = entry
        return entry


# The month tables the generated readers look dates up in, by each format's year-and-month key.
_NAMESPACE["DATETIME_MONTHS"] = _Months(lambda key: divmod(key, 13))  # DATETIME2: year * 13 + month
_NAMESPACE["OLD_DATETIME_MONTHS"] = _Months(lambda key: divmod(key, 100))  # DATETIME: YYYYMM
_NAMESPACE["DATE_MONTHS"] = _Months(lambda key: (key >> 4, key & 15))  # DATE: year << 4 | month


class InvalidDateError(ReplicationError, ValueError):
    """A DATE (or old-format DATETIME) the binlog holds that no calendar has (ALLOW_INVALID_DATES,
    e.g. 2020-02-30)."""


class _InvalidDate:
    """Raised from a generated reader: names the type, the column and the stored value."""

    __slots__ = ("kind", "column")

    def __init__(self, kind: str, column: str | None) -> None:
        self.kind, self.column = kind, column

    def __call__(self, stored: str) -> Any:
        raise InvalidDateError(
            f"{self.kind} column {self.column or '?'} holds {stored}, which is not a calendar date: the "
            "row cannot be converted; correct it, or stop writing invalid dates (ALLOW_INVALID_DATES)"
        )


def _enum(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    size = column.size
    index = "data[p]" if size == 1 else "u16(data, p)[0]"
    if column.enum_values:
        options = src.constant("enum", tuple(column.enum_values))
        count = len(column.enum_values)
        stop = src.constant("enum_index_beyond", _EnumIndexBeyond(column.name, count - 1))
        src.emit(d, f"i = {index}; p += {size}")
        src.emit(d, f"{var} = {options}[i] if i < {count} else {stop}(i)")
    else:
        src.emit(d, f"{var} = None; p += {size}")


class EnumIndexError(ReplicationError):
    """A row holds an ENUM index beyond the column's labels: the table structure the connector has
    (from DDL or a schema history, when the TABLE_MAP carries no labels) is not the one the row was
    written with."""


class _EnumIndexBeyond:
    """Raised from a generated reader: names the column and the counts (an IndexError would not)."""

    __slots__ = ("column", "labels")

    def __init__(self, column: str | None, labels: int) -> None:
        self.column, self.labels = column, labels

    def __call__(self, index: int) -> Any:
        raise EnumIndexError(
            f"ENUM column {self.column or '?'} holds index {index}, but its structure has "
            f"{self.labels} labels: the DDL or schema history describing the table does not match "
            "the binlog"
        )


def _set(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    size = column.size
    src.emit(d, f"mask = from_bytes(data[p:p + {size}], 'little'); p += {size}")
    options = src.constant("members", tuple(column.set_values or ()))
    # The members' text in definition order (Debezium's form; an empty set is '').
    src.emit(d, f"{var} = ','.join([v for i, v in enumerate({options}) if mask >> i & 1])")


def _bit(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    bits, size = column.bits, column.bytes
    src.emit(
        d,
        f"{var} = from_bytes(data[p:p + {size}], 'big') & {(1 << bits) - 1}; p += {size}",
    )


_READERS: dict[int, Callable[..., None]] = {
    FIELD_TYPE.TINY: _signed_or_not(_fixed("i8", 1), _fixed("u8", 1)),
    FIELD_TYPE.SHORT: _signed_or_not(_fixed("i16", 2), _fixed("u16", 2)),
    FIELD_TYPE.INT24: _int24,
    FIELD_TYPE.LONG: _signed_or_not(_fixed("i32", 4), _fixed("u32", 4)),
    FIELD_TYPE.LONGLONG: _signed_or_not(_fixed("i64", 8), _fixed("u64", 8)),
    FIELD_TYPE.FLOAT: _fixed("f32", 4),
    FIELD_TYPE.DOUBLE: _fixed("f64", 8),
    FIELD_TYPE.NEWDECIMAL: _new_decimal,
    FIELD_TYPE.VARCHAR: _varchar,
    FIELD_TYPE.STRING: _varchar,
    FIELD_TYPE.BLOB: _blob,
    FIELD_TYPE.GEOMETRY: _geometry,
    FIELD_TYPE.JSON: _json,
    FIELD_TYPE.DATETIME2: _datetime2,
    FIELD_TYPE.TIMESTAMP2: _timestamp2,
    FIELD_TYPE.TIME2: _time2,
    FIELD_TYPE.DATETIME: _datetime,
    FIELD_TYPE.TIMESTAMP: _timestamp,
    FIELD_TYPE.TIME: _time,
    FIELD_TYPE.DATE: _date,
    FIELD_TYPE.YEAR: _year,
    FIELD_TYPE.ENUM: _enum,
    FIELD_TYPE.SET: _set,
    FIELD_TYPE.BIT: _bit,
    # MySQL 9 VECTOR: length-prefixed float32 bytes (converted by connector.records.conversion).
    VECTOR: _geometry,
}
_TEXT_TYPES = frozenset((FIELD_TYPE.VARCHAR, FIELD_TYPE.STRING, FIELD_TYPE.BLOB))


def _library_codec(column: Any) -> str | None:
    """The codec mysql-replication would decode this text column with; None = it keeps the bytes
    (a charset Python does not know, such as ``binary``)."""
    name = column.character_set_name
    return _python_codec(RowsEvent.charset_to_encoding(name) if name is not None else "utf-8")


def _python_codec(encoding: str) -> str | None:
    """``encoding`` if Python can decode with it; None = the bytes are kept (``binary``, as the
    library does for a charset Python does not know)."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        return None
    return encoding


def compile_image_reader(
    columns: Sequence[Any],
    encodings: dict[int, str],
    raw_json: bool = False,
    payload: PayloadDisplay | None = None,
) -> ImageReader:
    """One function reading a full row image (null bitmap, then every non-null column) of a table
    with these table-map ``columns``; ``encodings`` = column index -> codec for text columns;
    ``raw_json``: JSON columns as their bytes (a partial update's after image). With ``payload``
    it returns the image's value payload, each value converted as it is read (no list of values
    built only to be taken apart by the converter).
    Raises ``_Unsupported`` for a column type it has no reader for."""
    readers = {**_READERS, FIELD_TYPE.JSON: _json_raw} if raw_json else _READERS
    src = _Source()
    count = len(columns)
    src.emit(0, "def read_image(data, p):")
    src.emit(1, f"nulls = from_bytes(data[p:p + {(count + 7) // 8}], 'little'); p += {(count + 7) // 8}")
    for index, column in enumerate(columns):
        reader = readers.get(column.type)
        if reader is None:
            raise _Unsupported(f"column type {column.type}")
        codec = None
        if column.type in _TEXT_TYPES:
            codec = _python_codec(encodings[index]) if index in encodings else _library_codec(column)
        var = f"c{index}"
        src.emit(1, f"if nulls >> {index} & 1:")
        src.emit(2, f"{var} = None")
        src.emit(1, "else:")
        reader(src, var, column, codec, 2)
    namespace = {**_NAMESPACE, **src.constants}
    if payload is None:
        src.emit(1, f"return [{', '.join(f'c{i}' for i in range(count))}], p")
    else:
        src.emit(1, f"return {payload(namespace, 'c{}'.format)}, p")
    exec(compile("\n".join(src.lines), "<row image reader>", "exec"), namespace)  # noqa: S102
    reader_function: ImageReader = namespace["read_image"]
    return reader_function


def _all_present(bitmap: bytes, count: int) -> bool:
    # Only the first ``count`` bits count: MySQL 8 sets the padding bits of the last byte too
    # (MariaDB clears them), and a full image must not go the slow way because of them.
    mask = (1 << count) - 1
    return int.from_bytes(bitmap, "little") & mask == mask


def remaining_body(event: Any) -> bytes:
    """The unread rest of a rows event's body: its row images. ``event_size`` excludes the header
    and the checksum (the library sizes it from the server's ``binlog_checksum``); ``read_bytes``
    counts what the event's constructor read (table id, flags, extra data, column bitmaps)."""
    packet = event.packet
    data: bytes = packet.read(event.event_size - packet.read_bytes)
    return data


# The after image's value options (MySQL's enum_row_value_options): bit 0 = PARTIAL_JSON.
_PARTIAL_JSON_UPDATES = 1


def read_partial_update_rows(
    before_reader: ImageReader, after_reader: ImageReader, json_columns: Sequence[int], data: bytes
) -> Rows:
    """The rows of a PARTIAL_UPDATE_ROWS_EVENT with full images: per row the before image, then the
    after image's value options (a length-encoded integer), with PARTIAL_JSON a bitmap with one bit
    per JSON column (``json_columns``, in column order) saying whether the column holds diffs, then
    the image. A diff list applies to the before image's document (``connector.binlog.json.diff``); an
    empty one leaves the document as it was. ``after_reader`` reads JSON columns as bytes."""
    out: Rows = []
    p, end = 0, len(data)
    partial_size = (len(json_columns) + 7) // 8
    while p < end:
        before, p = before_reader(data, p)
        options, p = read_length_encoded(data, p)
        partial = 0
        if options & _PARTIAL_JSON_UPDATES:
            partial = int.from_bytes(data[p : p + partial_size], "little")
            p += partial_size
        after, p = after_reader(data, p)
        for bit, index in enumerate(json_columns):
            raw = after[index]
            if raw is None:
                continue
            if partial >> bit & 1:
                after[index] = (
                    apply_json_diffs(_document(before[index]), decode_json_diffs(raw))
                    if raw
                    else before[index]
                )
            else:
                after[index] = BinaryJson(bytes(raw)) if raw else None
        out.append((before, after))
    return out


def _document(value: Any) -> Any:
    """The parsed document of a before image's JSON column (None stays None)."""
    return value.document() if isinstance(value, BinaryJson) else value


# Compiled readers by table-map structure (column metadata and codecs), oldest dropped first.
_COMPILED: dict[tuple[str, tuple[tuple[int, str], ...], bool], ImageReader | None] = {}
_COMPILED_LIMIT = 1024


class BinlogRowDecoder:
    """The (before, after) images of a rows event for one ``TableSchema``."""

    __slots__ = (
        "encodings",
        "_source_columns",
        "_reader",
        "_labels",
        "_library",
        "_convert",
        "_payload",
        "_payload_source_columns",
        "_payload_reader",
        "_payload_readers",
    )

    def __init__(self, schema: RowSchema, left_out: bytes | None = None) -> None:
        """``left_out``: what a BLOB/TEXT column a NOBLOB image leaves out reads as (the
        ``unavailable.value.placeholder`` bytes)."""
        self.encodings = schema.binlog_encodings
        self._source_columns: Sequence[Any] | None = None
        self._reader: ImageReader | None = None
        self._labels = _LabelsFromModel(schema)
        self._library = _LibraryRows(self.encodings, self._labels, left_out)
        self._convert = schema.binlog_image_converter
        self._payload = schema.binlog_payload_display
        self._payload_source_columns: Sequence[Any] | None = None
        self._payload_reader: ImageReader | None = None
        # Readers that convert as they read call this schema's converters: kept per decoder, by
        # table-map structure, not in the shared cache.
        self._payload_readers: dict[tuple[str, tuple[tuple[int, str], ...], bool], ImageReader | None] = {}

    def _reader_for(self, columns: Sequence[Any]) -> ImageReader | None:
        # A table map's column list is shared by the rows events of its table until the next map;
        # every transaction brings a new map of the same structure, so readers are kept by structure.
        if columns is not self._source_columns:
            self._reader = self._compiled(columns, raw_json=False)
            self._source_columns = columns
        return self._reader

    def _payload_reader_for(self, columns: Sequence[Any]) -> ImageReader | None:
        if columns is not self._payload_source_columns:
            payload = self._payload
            self._payload_reader = None if payload is None else self._compiled(columns, False, payload)
            self._payload_source_columns = columns
        return self._payload_reader

    def _compiled(
        self, columns: Sequence[Any], raw_json: bool, payload: PayloadDisplay | None = None
    ) -> ImageReader | None:
        columns = self._labels.columns(columns)
        key = (repr([column.__dict__ for column in columns]), self.encodings, raw_json)
        cache = _COMPILED if payload is None else self._payload_readers
        if key not in cache:
            if len(cache) >= _COMPILED_LIMIT:
                cache.pop(next(iter(cache)))
            try:
                cache[key] = compile_image_reader(columns, dict(self.encodings), raw_json, payload)
            except _Unsupported:
                cache[key] = None
        return cache[key]

    def _partial_rows(self, event: Any, reader: ImageReader | None) -> Rows | None:
        """A partial JSON update with full images, or None (the library reads it)."""
        count = len(event.columns)
        after_reader = self._compiled(event.columns, raw_json=True)
        if (
            reader is None
            or after_reader is None
            or not _all_present(event.columns_present_bitmap, count)
            or not _all_present(event.columns_present_bitmap2, count)
        ):
            return None
        json_columns = [i for i, column in enumerate(event.columns) if column.type == FIELD_TYPE.JSON]
        return read_partial_update_rows(reader, after_reader, json_columns, remaining_body(event))

    def rows(self, event: Any, update: bool) -> Rows:
        """``update``: the event has before and after images; otherwise one image per row (the
        caller knows whether it is the before or the after image)."""
        reader = self._reader_for(event.columns)
        if type(event).__name__ == "PartialUpdateRowsEvent":
            partial = self._partial_rows(event, reader)
            return partial if partial is not None else self._library.rows(event, update)
        if reader is None or not _full_images(event, update):
            return self._library.rows(event, update)
        return _read_rows(reader, remaining_body(event), update, after=False)

    def image_width(self, event: Any) -> int:
        """How many values each of the event's images holds: its table map's columns."""
        return len(event.columns)

    def payload_rows(self, event: Any, update: bool, after: bool = False) -> Rows:
        """``rows`` with every image as its value payload (the table schema's binlog converters).
        ``after``: a single image per row is the after image, (None, image), as inserts have it.
        Full images of a table the generator reads are converted as they are read, by one
        generated function; the rest are decoded by ``rows`` and then converted."""
        reader = self._payload_reader_for(event.columns)
        if (
            reader is None
            or type(event).__name__ == "PartialUpdateRowsEvent"
            or not _full_images(event, update)
        ):
            return converted_rows(self.rows(event, update), self._convert, after and not update)
        return _read_rows(reader, remaining_body(event), update, after)


def converted_rows(rows: Rows, convert: Callable[[Any], Any], after: bool) -> Rows:
    """Decoded ``rows`` (``BinlogRowDecoder.rows``' layout) with each image converted to its value
    payload; ``after``: each row's single image is its after image, (None, payload)."""
    if after:
        return [(None, convert(image) if image is not None else None) for image, _ in rows]
    return [
        (convert(first) if first is not None else None, convert(second) if second is not None else None)
        for first, second in rows
    ]


def _full_images(event: Any, update: bool) -> bool:
    count = len(event.columns)
    return _all_present(event.columns_present_bitmap, count) and (
        not update or _all_present(event.columns_present_bitmap2, count)
    )


def _read_rows(reader: ImageReader, data: bytes, update: bool, after: bool) -> Rows:
    """Every row image in ``data`` read by ``reader``: (before, after) pairs for an update, else
    (image, None), or (None, image) with ``after``."""
    end = len(data)
    p = 0
    out: Rows = []
    append = out.append
    if update:
        while p < end:
            before, p = reader(data, p)
            image, p = reader(data, p)
            append((before, image))
    elif after:
        while p < end:
            image, p = reader(data, p)
            append((None, image))
    else:
        while p < end:
            image, p = reader(data, p)
            append((image, None))
    return out


class _LibraryRows:
    """The library's own row decoding, through a private copy of the event whose text columns carry
    our codecs, and ENUM/SET columns our labels where the table map has none (the event and the table
    map's shared column objects stay as they were)."""

    __slots__ = (
        "encodings",
        "labels",
        "left_out",
        "_source_columns",
        "_columns",
        "_adapted_columns",
        "_adapters",
    )

    def __init__(
        self,
        encodings: tuple[tuple[int, str], ...],
        labels: _LabelsFromModel | None = None,
        left_out: bytes | None = None,
    ) -> None:
        self.encodings = encodings
        self.labels = labels
        self.left_out = left_out  # what a column an image leaves out (NOBLOB) reads as
        self._source_columns: Sequence[Any] | None = None
        self._columns: list[Any] = []
        self._adapted_columns: Sequence[Any] | None = None
        self._adapters: tuple[Any, ...] = ()

    def _columns_for(self, columns: Sequence[Any]) -> list[Any]:
        if columns is not self._source_columns:
            copies = list(self.labels.columns(columns) if self.labels else columns)
            for index, encoding in self.encodings:
                if index < len(copies):
                    column = copy.copy(copies[index])
                    column.character_set_name = encoding
                    copies[index] = column
            self._source_columns, self._columns = columns, copies
        return self._columns

    def rows(self, event: Any, update: bool) -> Rows:
        if self.encodings or (self.labels and self.labels.needed(event.columns)):
            view = copy.copy(event)  # reads the same packet; the event itself is left as it is
            view.columns = self._columns_for(event.columns)
            rows = view.rows
            columns = view.columns
        else:
            rows = event.rows
            columns = event.columns
        adapters = self._adapters_for(columns)
        left_out = self._left_out_values(len(columns))
        if update:
            return [
                (
                    library_image(row["before_values"], row["before_none_sources"], adapters, left_out),
                    library_image(row["after_values"], row["after_none_sources"], adapters, left_out),
                )
                for row in rows
            ]
        return [(library_image(row["values"], row["none_sources"], adapters, left_out), None) for row in rows]

    def _left_out_values(self, count: int) -> tuple[Any, ...] | None:
        """Per column, what it reads as when an image leaves it out: the placeholder as text for a
        text column (one with a character set), as bytes for a binary one."""
        if self.left_out is None:
            return None
        text = self.left_out.decode()
        texts = {index for index, encoding in self.encodings if encoding != "binary"}
        return tuple(text if i in texts else self.left_out for i in range(count))

    def _adapters_for(self, columns: Sequence[Any]) -> tuple[Any, ...]:
        if columns is not self._adapted_columns:
            self._adapted_columns, self._adapters = columns, value_adapters(columns)
        return self._adapters


class _LabelsFromModel:
    """ENUM/SET labels and integer signedness from our table model for table maps that carry none.

    mysql-replication takes ENUM/SET labels and the UNSIGNED flags from the TABLE_MAP's optional
    metadata, which it reads only with ``binlog_row_metadata=FULL``; without them the library (and
    a reader compiled from its columns) yields None for every ENUM, an empty SET, and unsigned integers
    read as signed (BIGINT UNSIGNED 2^64-1 as -1). A server connection refuses MINIMAL metadata, but a
    replayed binlog file may have it, with the structure from the file's DDL or a schema history: then
    these come from that structure (table-map columns are the table's columns, in order, as for
    ``binlog_encodings``)."""

    __slots__ = ("_facts", "_source", "_patched")

    def __init__(self, schema: RowSchema) -> None:
        self._facts = tuple(
            (index, column.data_type.upper(), tuple(column.enum_values), column.unsigned, column.name)
            for index, column in enumerate(schema.table.columns)
            if column.data_type.upper() in ("ENUM", "SET") or column.unsigned
        )
        self._source: Sequence[Any] | None = None
        self._patched: Sequence[Any] = ()

    def needed(self, columns: Sequence[Any]) -> bool:
        return self.columns(columns) is not columns

    def columns(self, columns: Sequence[Any]) -> Sequence[Any]:
        """``columns``, or copies of them with the model's facts where the table map had none."""
        if columns is self._source:
            return self._patched
        patched = list(columns)
        changed = False
        for index, kind, options, unsigned, name in self._facts:
            if index >= len(patched):
                continue
            column = patched[index]
            if kind == "ENUM" and column.type == FIELD_TYPE.ENUM and not getattr(column, "enum_values", None):
                column = copy.copy(column)
                column.enum_values = ["", *options]  # the library's list: index 0 is ''
                column.name = column.name or name  # for messages (the library names values itself)
            elif kind == "SET" and column.type == FIELD_TYPE.SET and not getattr(column, "set_values", None):
                column = copy.copy(column)
                column.set_values = list(options)
            elif unsigned and column.type in _INTEGER_TYPES and not getattr(column, "unsigned", False):
                column = copy.copy(column)
                column.unsigned = True
            else:
                continue
            patched[index] = column
            changed = True
        self._source, self._patched = columns, patched if changed else columns
        return self._patched


_INTEGER_TYPES = frozenset(
    (FIELD_TYPE.TINY, FIELD_TYPE.SHORT, FIELD_TYPE.INT24, FIELD_TYPE.LONG, FIELD_TYPE.LONGLONG)
)
