"""The row image reader generated per table structure (``compile_image_reader``).

One Python function per table map walks a row image with ``struct.unpack_from`` over the event's
raw bytes, with every column's type, metadata and codec baked in, and yields the forms the
converters take (``connector.records.conversion``): DECIMAL as its unscaled integer, DATETIME and
TIMESTAMP as microseconds since the epoch, DATE as days since it, TIME as signed microseconds, YEAR
as the year, BIT as an integer, SET as its members' text; zero dates are None. A column type it has
no reader for raises ``Unsupported`` (the table is then read by the library's decoder:
``connector.binlog.library_rows``). ``connector.binlog.row_decoder`` drives it.
"""

from __future__ import annotations

import codecs
import struct
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pymysqlreplication.constants import FIELD_TYPE
from pymysqlreplication.row_event import RowsEvent

from connector.binlog.calendar import days_from_civil, month_length
from connector.binlog.json.binary import BinaryJson
from connector.binlog.library_support import VECTOR
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


class Unsupported(Exception):
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
    Raises ``Unsupported`` for a column type it has no reader for."""
    readers = {**_READERS, FIELD_TYPE.JSON: _json_raw} if raw_json else _READERS
    src = _Source()
    count = len(columns)
    src.emit(0, "def read_image(data, p):")
    src.emit(1, f"nulls = from_bytes(data[p:p + {(count + 7) // 8}], 'little'); p += {(count + 7) // 8}")
    for index, column in enumerate(columns):
        reader = readers.get(column.type)
        if reader is None:
            raise Unsupported(f"column type {column.type}")
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
