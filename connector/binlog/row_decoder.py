"""Reading a rows event's row images ourselves, with a decoder generated per table structure.

mysql-replication stays in charge of the replication protocol, the event headers and TABLE_MAP;
decoding the rows is where its time goes (a method dispatch, a ``BitGet`` and several small reads
per column, a dict per image). ``ImageReader`` instead compiles, once per table map, one Python
function that walks a row image with ``struct.unpack_from`` over the event's raw bytes, with every
column's type, metadata and codec baked in. It yields exactly the values the library yields (the
differential tests in ``tests/connector/test_row_decoder.py`` hold it to that, type by type), so
``TableSchema.value_from_binlog`` converts them as before, and snapshot and streaming stay equal.

What it does not compile (a column type it has no reader for, columns missing from the image
because of ``binlog_row_image=MINIMAL/NOBLOB``, partial JSON) is read through the library's own
decoder, via a private copy of the event (``_LibraryRows``); the guards in
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
import datetime as dt
import decimal
import struct
from collections.abc import Callable, Sequence
from typing import Any

from pymysqlreplication.constants import FIELD_TYPE
from pymysqlreplication.row_event import RowsEvent

from connector.binlog.json_diff import apply_json_diffs, decode_json_diffs, read_length_encoded
from connector.binlog.library_support import VECTOR
from connector.binlog.mysql_json import BinaryJson
from connector.errors import ReplicationError
from connector.records.builder import TableSchema
from connector.records.converters import EMPTY_SET, binlog_row_values

# One row image: the values in column order, and the position after it.
ImageReader = Callable[[bytes, int], tuple[list[Any], int]]
Rows = list[tuple[list[Any] | None, list[Any] | None]]

_EPOCH = dt.datetime(1970, 1, 1)

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
    "Decimal": decimal.Decimal,
    "datetime": dt.datetime,
    "date": dt.date,
    "timedelta": dt.timedelta,
    "EPOCH": _EPOCH,
    "EMPTY_SET": EMPTY_SET,
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
    # which the converter renders the way Debezium's binlog client does (connector.binlog.json_render).
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
    side in fewer; the sign in the first bit, negative values stored inverted. The value is built
    from the same digit text as the library's (leading group unpadded), so ``Decimal`` is equal."""
    integral = column.precision - column.decimals
    full_int, left_int = divmod(integral, 9)
    full_frac, left_frac = divmod(column.decimals, 9)
    size = _DIG2BYTES[left_int] + 4 * full_int + 4 * full_frac + _DIG2BYTES[left_frac]
    src.emit(d, f"raw = bytearray(data[p:p + {size}]); p += {size}")
    src.emit(d, "negative = not raw[0] & 0x80")
    src.emit(d, "raw[0] ^= 0x80")
    src.emit(d, "if negative:")
    src.emit(d + 1, "raw = bytes(b ^ 0xFF for b in raw)")
    parts: list[str] = []
    offset = 0
    if _DIG2BYTES[left_int]:
        width = _DIG2BYTES[left_int]
        parts.append(f"str(from_bytes(raw[{offset}:{offset + width}], 'big'))")
        offset += width
    for _ in range(full_int):
        parts.append(f"'%09d' % be_i32(raw, {offset})[0]")
        offset += 4
    parts.append("'.'")
    for _ in range(full_frac):
        parts.append(f"'%09d' % be_i32(raw, {offset})[0]")
        offset += 4
    if _DIG2BYTES[left_frac]:
        width = _DIG2BYTES[left_frac]
        parts.append(f"'%0{left_frac}d' % from_bytes(raw[{offset}:{offset + width}], 'big')")
    src.emit(d, f"{var} = Decimal(('-' if negative else '') + {' + '.join(parts)})")


def _fsp_micros(src: _Source, column: Any, d: int) -> str:
    """Code reading the fractional seconds of a TIME2/DATETIME2/TIMESTAMP2 into ``us``."""
    fsp = column.fsp
    size = (fsp + 1) // 2
    if size == 0:
        return "0"
    # Read signed, as the library does: a negative TIME's fraction is stored negative.
    src.emit(d, f"us = from_bytes(data[p:p + {size}], 'big', signed=True); p += {size}")
    if fsp % 2:
        src.emit(d, "us = int(us / 10)")
    return f"us * {10 ** (6 - fsp)}"


def _datetime2(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    src.emit(d, "hi, lo = be_u40(data, p); p += 5")
    src.emit(d, "packed = (hi << 8) | lo")
    src.emit(d, "ym = (packed >> 22) & 0x1FFFF")
    micros = _fsp_micros(src, column, d)
    src.emit(d, "try:")
    src.emit(
        d + 1,
        f"{var} = datetime(ym // 13, ym % 13, (packed >> 17) & 31, (packed >> 12) & 31, "
        f"(packed >> 6) & 63, packed & 63, {micros})",
    )
    src.emit(d, "except ValueError:")  # zero or invalid dates: the library's None
    src.emit(d + 1, f"{var} = None")


def _timestamp2(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    src.emit(d, "seconds = be_i32(data, p)[0]; p += 4")
    micros = _fsp_micros(src, column, d)
    src.emit(d, f"{var} = EPOCH + timedelta(0, seconds, {micros})")


def _timestamp(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    src.emit(d, f"{var} = EPOCH + timedelta(0, u32(data, p)[0]); p += 4")


def _time2(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    # The library reads the 3 bytes as a signed big-endian number and takes its bits from there,
    # negative values included (connector.records.converters undoes its result for negative times).
    src.emit(d, "packed = from_bytes(data[p:p + 3], 'big', signed=True); p += 3")
    src.emit(d, "sign = 1 if (packed >> 23) & 1 else -1")
    src.emit(d, "if sign == -1:")
    src.emit(d + 1, "packed = ~packed + 1")
    micros = _fsp_micros(src, column, d)
    src.emit(
        d,
        f"{var} = timedelta(hours=(packed >> 12) & 0x3FF, minutes=(packed >> 6) & 63, "
        f"seconds=packed & 63, microseconds={micros}) * sign",
    )


def _time(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    src.emit(d, "packed = from_bytes(data[p:p + 3], 'little'); p += 3")
    src.emit(
        d,
        f"{var} = timedelta(hours=packed // 10000, minutes=packed % 10000 // 100, seconds=packed % 100)",
    )


def _date(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    src.emit(d, "packed = from_bytes(data[p:p + 3], 'little'); p += 3")
    src.emit(d, "year, month, day = packed >> 9, (packed >> 5) & 15, packed & 31")
    # Zero parts are the library's None; other invalid dates raise, as in the library.
    src.emit(d, f"{var} = date(year, month, day) if year and month and day else None")


def _datetime(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    src.emit(d, "packed = u64(data, p)[0]; p += 8")
    src.emit(d, "ymd, hms = divmod(packed, 1000000)")
    src.emit(d, "year, month, day = ymd // 10000, ymd % 10000 // 100, ymd % 100")
    src.emit(d, "if year and month and day:")
    src.emit(d + 1, f"{var} = datetime(year, month, day, hms // 10000, hms % 10000 // 100, hms % 100)")
    src.emit(d, "else:")
    src.emit(d + 1, f"{var} = None")


def _year(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    src.emit(d, f"{var} = data[p] + 1900; p += 1")


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
    # The library yields None for an empty set (and says so in none_sources): the empty set itself.
    src.emit(d, f"{var} = {{v for i, v in enumerate({options}) if mask >> i & 1}} or EMPTY_SET")


def _bit(src: _Source, var: str, column: Any, codec: str | None, d: int) -> None:
    bits, size = column.bits, column.bytes
    src.emit(
        d,
        f"{var} = format(from_bytes(data[p:p + {size}], 'big') & {(1 << bits) - 1}, '0{bits}b'); p += {size}",
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
    # MySQL 9 VECTOR: length-prefixed float32 bytes (converted by connector.records.converters).
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
    columns: Sequence[Any], encodings: dict[int, str], raw_json: bool = False
) -> ImageReader:
    """One function reading a full row image (null bitmap, then every non-null column) of a table
    with these table-map ``columns``; ``encodings`` = column index -> codec for text columns;
    ``raw_json``: JSON columns as their bytes (a partial update's after image).
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
    src.emit(1, f"return [{', '.join(f'c{i}' for i in range(count))}], p")
    namespace = {**_NAMESPACE, **src.constants}
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
    the image. A diff list applies to the before image's document (``connector.binlog.json_diff``); an
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

    __slots__ = ("encodings", "_source_columns", "_reader", "_labels", "_library")

    def __init__(self, schema: TableSchema) -> None:
        self.encodings = schema.binlog_encodings
        self._source_columns: Sequence[Any] | None = None
        self._reader: ImageReader | None = None
        self._labels = _LabelsFromModel(schema)
        self._library = _LibraryRows(self.encodings, self._labels)

    def _reader_for(self, columns: Sequence[Any]) -> ImageReader | None:
        # A table map's column list is shared by the rows events of its table until the next map;
        # every transaction brings a new map of the same structure, so readers are kept by structure.
        if columns is not self._source_columns:
            self._reader = self._compiled(columns, raw_json=False)
            self._source_columns = columns
        return self._reader

    def _compiled(self, columns: Sequence[Any], raw_json: bool) -> ImageReader | None:
        columns = self._labels.columns(columns)
        key = (repr([column.__dict__ for column in columns]), self.encodings, raw_json)
        if key not in _COMPILED:
            if len(_COMPILED) >= _COMPILED_LIMIT:
                _COMPILED.pop(next(iter(_COMPILED)))
            try:
                _COMPILED[key] = compile_image_reader(columns, dict(self.encodings), raw_json)
            except _Unsupported:
                _COMPILED[key] = None
        return _COMPILED[key]

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
        count = len(event.columns)
        if type(event).__name__ == "PartialUpdateRowsEvent":
            partial = self._partial_rows(event, reader)
            return partial if partial is not None else self._library.rows(event, update)
        if (
            reader is None
            or not _all_present(event.columns_present_bitmap, count)
            or (update and not _all_present(event.columns_present_bitmap2, count))
        ):
            return self._library.rows(event, update)
        data = remaining_body(event)
        end = len(data)
        p = 0
        out: Rows = []
        append = out.append
        if update:
            while p < end:
                before, p = reader(data, p)
                after, p = reader(data, p)
                append((before, after))
        else:
            while p < end:
                image, p = reader(data, p)
                append((image, None))
        return out


class _LibraryRows:
    """The library's own row decoding, through a private copy of the event whose text columns carry
    our codecs, and ENUM/SET columns our labels where the table map has none (the event and the table
    map's shared column objects stay as they were)."""

    __slots__ = ("encodings", "labels", "_source_columns", "_columns")

    def __init__(
        self, encodings: tuple[tuple[int, str], ...], labels: _LabelsFromModel | None = None
    ) -> None:
        self.encodings = encodings
        self.labels = labels
        self._source_columns: Sequence[Any] | None = None
        self._columns: list[Any] = []

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
        else:
            rows = event.rows
        if update:
            return [
                (
                    binlog_row_values(row["before_values"], row["before_none_sources"]),
                    binlog_row_values(row["after_values"], row["after_none_sources"]),
                )
                for row in rows
            ]
        return [(binlog_row_values(row["values"], row["none_sources"]), None) for row in rows]


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

    def __init__(self, schema: TableSchema) -> None:
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
