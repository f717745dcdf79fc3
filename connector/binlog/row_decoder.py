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
decoder, via a private copy of the event (``LibraryRows``), whose values are brought to the same
forms at that edge (``connector.binlog.library_values`` undoes the library's quirks); the guards in
``connector.binlog.guard`` stop such events before they get here unless the operator chose to pass
them.

Text columns are decoded with the codec our table model says is right
(``ColumnConverter.binlog_encoding``), not the library's idea of the charset (MySQL latin1 as strict
cp1252, utf16/utf32 in the wrong byte order, nothing for some single-byte charsets); columns without
one use the library's choice, so the values are the ones the library would give.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pymysqlreplication.constants import FIELD_TYPE

from connector.binlog.image_reader import (
    ImageReader,
    PayloadDisplay,
    Rows,
    RowSchema,
    Unsupported,
    compile_image_reader,
)
from connector.binlog.json.binary import BinaryJson
from connector.binlog.json.diff import apply_json_diffs, decode_json_diffs, read_length_encoded
from connector.binlog.library_rows import (
    LabelsFromModel,
    LibraryRows,
)
from connector.binlog.raw_event import ROWS_BODY


def _all_present(bitmap: bytes, count: int) -> bool:
    # Only the first ``count`` bits count: MySQL 8 sets the padding bits of the last byte too
    # (MariaDB clears them), and a full image must not go the slow way because of them.
    mask = (1 << count) - 1
    return int.from_bytes(bitmap, "little") & mask == mask


def remaining_body(event: Any) -> bytes:
    """The unread rest of a rows event's body: its row images. ``event_size`` excludes the header
    and the checksum (the library sizes it from the server's ``binlog_checksum``); ``read_bytes``
    counts what the event's constructor read (table id, flags, extra data, column bitmaps). An
    event ``connector.binlog.fast_events`` built holds them already."""
    body: bytes | None = event.__dict__.get(ROWS_BODY)
    if body is not None:
        return body
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
        self._labels = LabelsFromModel(schema)
        self._library = LibraryRows(self.encodings, self._labels, left_out)
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
            except Unsupported:
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
