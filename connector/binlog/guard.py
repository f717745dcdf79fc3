"""Binlog events the connector cannot turn into complete change events, found before they are lost.

A server can change under a running connector: ``SET GLOBAL binlog_format='STATEMENT'`` makes the
next INSERT a query event, ``binlog_row_image='MINIMAL'`` leaves columns out of row images,
MySQL's ``binlog_row_value_options=PARTIAL_JSON`` with a MINIMAL before image sends JSON diffs
without the documents they apply to, MariaDB's compression wraps rows in events mysql-replication
cannot read. Each of these would otherwise be counted and
passed without a record (or produce wrong records), silently losing changes.

The pure functions here recognise such events (``statement_dml``, ``incomplete_image``,
``unreadable_event``); ``EventGuard`` applies ``event.deserialization.failure.handling.mode``
(Debezium's ``fail``/``warn``/``skip``): ``fail`` (the default) stops the connector with a message
naming the setting to fix and the binlog position, before the event is counted, so no stored offset
is ever past it and a plain restart stops at it again; ``warn`` passes the event and logs it with its
position and the setting; ``skip`` passes it with a debug log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from pymysqlreplication.constants import FIELD_TYPE
from pymysqlreplication.event import ExecuteLoadQueryEvent, NotImplementedEvent
from pymysqlreplication.row_event import PartialUpdateRowsEvent, RowsEvent, UpdateRowsEvent

from connector.errors import ReplicationError
from mysql_cdc_base.properties import PropertyReader
from mysql_cdc_base.table_id import TableId

log = logging.getLogger(__name__)

MODE_KEY = "event.deserialization.failure.handling.mode"
FALLBACK_MODE_KEY = "event.processing.failure.handling.mode"

# Event types that carry row data mysql-replication cannot decode (it hands them over as
# NotImplementedEvent): passing them would lose rows.
UNREADABLE_DATA_EVENTS = {
    0x06: ("LOAD_EVENT (pre-5.0 LOAD DATA)", "binlog_format=ROW"),
    0x0A: ("EXEC_LOAD_EVENT (pre-5.0 LOAD DATA)", "binlog_format=ROW"),
    0x14: ("PRE_GA_WRITE_ROWS_EVENT", "a server version that writes v1/v2 rows events"),
    0x15: ("PRE_GA_UPDATE_ROWS_EVENT", "a server version that writes v1/v2 rows events"),
    0x16: ("PRE_GA_DELETE_ROWS_EVENT", "a server version that writes v1/v2 rows events"),
    0x1A: ("INCIDENT_EVENT (the source server lost changes)", "a new snapshot of the affected tables"),
    # Compressed transactions are expanded by the readers (connector.binlog.packets); one arrives
    # here only if a reader did not expand it.
    0x28: ("TRANSACTION_PAYLOAD_EVENT (compressed transaction)", "binlog_transaction_compression=OFF"),
    0xA5: ("QUERY_COMPRESSED_EVENT", "log_bin_compress=OFF"),
    0xA6: ("WRITE_ROWS_COMPRESSED_EVENT_V1", "log_bin_compress=OFF"),
    0xA7: ("UPDATE_ROWS_COMPRESSED_EVENT_V1", "log_bin_compress=OFF"),
    0xA8: ("DELETE_ROWS_COMPRESSED_EVENT_V1", "log_bin_compress=OFF"),
    0xA9: ("WRITE_ROWS_COMPRESSED_EVENT", "log_bin_compress=OFF"),
    0xAA: ("UPDATE_ROWS_COMPRESSED_EVENT", "log_bin_compress=OFF"),
    0xAB: ("DELETE_ROWS_COMPRESSED_EVENT", "log_bin_compress=OFF"),
}
# Event types that carry no row data (or only context for a statement event caught elsewhere).
HARMLESS_EVENT_TYPES = frozenset(
    {0x03, 0x05, 0x07, 0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E, 0x11, 0x1C, 0x22, 0x23, 0x24, 0x25, 0x26}
    | {0x29, 0xA1, 0xA3, 0xA4}
)
# 0x2A GTID_TAGGED_LOG_EVENT (MySQL 8.3+) has its own handler in connector.sources.streaming
# (connector.binlog.gtid_events decodes it).

_ROW_FORMAT = "binlog_format=ROW (globally and in every writing session; STATEMENT and MIXED log DML as SQL)"
_ROW_IMAGE = "binlog_row_image=FULL (MINIMAL and NOBLOB leave columns out of row images)"
_PARTIAL_JSON = "binlog_row_value_options='' (PARTIAL_JSON sends JSON diffs instead of values)"

_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_TABLE = rf"({_NAME})(?:\s*\.\s*({_NAME}))?"
_COMMENTS = r"(?:\s|/\*.*?\*/|#[^\n]*\n|--\s[^\n]*\n)*"
_DML = re.compile(rf"^{_COMMENTS}(INSERT|REPLACE|UPDATE|DELETE|LOAD\s+(?:DATA|XML))\b", re.I | re.S)
# Which table a statement-based DML changes: compiled on first use (re's cache), since only a
# STATEMENT or MIXED binlog has such statements (issue 41: time to the first event).
_DML_TABLES: dict[str, tuple[str, int]] = {
    "INSERT": (
        rf"^INSERT\s+(?:(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE)\s+)*(?:INTO\s+)?{_TABLE}",
        re.I,
    ),
    "REPLACE": (rf"^REPLACE\s+(?:(?:LOW_PRIORITY|DELAYED)\s+)*(?:INTO\s+)?{_TABLE}", re.I),
    "UPDATE": (rf"^UPDATE\s+(?:(?:LOW_PRIORITY|IGNORE)\s+)*{_TABLE}\s+SET\b", re.I),
    "DELETE": (
        rf"^DELETE\s+(?:(?:LOW_PRIORITY|QUICK|IGNORE)\s+)*FROM\s+{_TABLE}\s*(?:WHERE|ORDER|LIMIT|$)",
        re.I,
    ),
    "LOAD": (rf"^LOAD\s+(?:DATA|XML)\b.*?\bINTO\s+TABLE\s+{_TABLE}", re.I | re.S),
}


class UnsafeEventError(ReplicationError):
    """A binlog event would lose or corrupt changes if passed; the message names the setting."""


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def statement_dml(sql: str, database: str | None) -> tuple[bool, TableId | None]:
    """Is ``sql`` a DML statement (a query event of STATEMENT/MIXED binlog format), and which single
    table does it change (None: several, or not recognisable)?"""
    match = _DML.match(sql)
    if match is None:
        return False, None
    keyword = match.group(1).split()[0].upper()
    body = sql[match.start(1) :]
    pattern, flags = _DML_TABLES[keyword]
    table = re.match(pattern, body, flags)
    if table is None:
        return True, None
    first, second = table.group(1), table.group(2)
    if second is None:
        return True, TableId(database, _unquote(first)) if database else None
    return True, TableId(_unquote(first), _unquote(second))


def _bitmap_complete(bitmap: bytes | None, columns: int) -> bool:
    return bitmap is None or int.from_bytes(bitmap, "little") & ((1 << columns) - 1) == (1 << columns) - 1


_FULL_BITMAPS: dict[int, bytes] = {}


def _full_bitmap(columns: int) -> bytes:
    """The present-columns bitmap of an image with all ``columns`` (remembered per width)."""
    full = _FULL_BITMAPS[columns] = ((1 << columns) - 1).to_bytes((columns + 7) // 8, "little")
    return full


# The binlog types of BLOB and TEXT columns (MariaDB's JSON is a LONGTEXT): what NOBLOB leaves out.
_BLOB_TYPES = frozenset(
    (FIELD_TYPE.BLOB, FIELD_TYPE.TINY_BLOB, FIELD_TYPE.MEDIUM_BLOB, FIELD_TYPE.LONG_BLOB, FIELD_TYPE.JSON)
)


def _only_blobs_missing(event: RowsEvent, bitmap: bytes) -> bool:
    present = int.from_bytes(bitmap, "little")
    return all(column.type in _BLOB_TYPES for i, column in enumerate(event.columns) if not present >> i & 1)


def incomplete_image(event: RowsEvent, table: TableId, *, blobs_left_out: bool = False) -> str | None:
    """What is missing from a rows event's images (columns left out by binlog_row_image), or None
    when every image holds every column. ``blobs_left_out``: images without some BLOB/TEXT columns
    (NOBLOB) are accepted (the reselect post-processor re-reads those)."""
    columns = int(event.number_of_columns)
    full = _FULL_BITMAPS.get(columns) or _full_bitmap(columns)
    before = event.columns_present_bitmap
    if before is None or before == full:  # every column (the rows event of nearly every server)
        if not isinstance(event, UpdateRowsEvent):
            return None
        after = event.columns_present_bitmap2
        if after is None or after == full:
            return None
    images = [("before" if isinstance(event, UpdateRowsEvent) else "row", event.columns_present_bitmap)]
    if isinstance(event, UpdateRowsEvent):
        images.append(("after", event.columns_present_bitmap2))
    for name, bitmap in images:
        if not _bitmap_complete(bitmap, columns):
            if (
                blobs_left_out
                and not isinstance(event, PartialUpdateRowsEvent)
                and _only_blobs_missing(event, bitmap)
            ):
                continue
            present = bin(int.from_bytes(bitmap, "little") & ((1 << columns) - 1)).count("1")
            if isinstance(event, PartialUpdateRowsEvent):
                # The diffs of a partial JSON update can only be applied to the whole before image.
                return (
                    f"a partial JSON update (PARTIAL_UPDATE_ROWS_EVENT) of {table} whose {name} image "
                    f"has {present} of {columns} columns, so the JSON documents the diffs change are "
                    f"unknown; set {_ROW_IMAGE}, or {_PARTIAL_JSON}"
                )
            return f"a {name} image of {table} with {present} of {columns} columns; set {_ROW_IMAGE}"
    return None


def unreadable_event(event: Any, event_type: int, captured: Callable[[TableId], bool]) -> str | None:
    """A description and the fix for an event without a handler that carries changes the connector
    cannot read (of a captured table, where the event names it), or None."""
    if isinstance(event, RowsEvent):  # a kind of rows event without a handler (the table is exact)
        if not captured(TableId(str(event.schema), str(event.table))):
            return None
        return f"a rows event of a kind the connector cannot read ({type(event).__name__})"
    if isinstance(event, ExecuteLoadQueryEvent):
        database = _text(event.schema)
        _, table = statement_dml(_text(event.query), database or None)
        if table is not None and not captured(table):
            return None
        return f"a LOAD DATA statement (EXECUTE_LOAD_QUERY_EVENT); set {_ROW_FORMAT}"
    if not isinstance(event, NotImplementedEvent) or event_type in HARMLESS_EVENT_TYPES:
        return None
    known = UNREADABLE_DATA_EVENTS.get(event_type)
    if known is not None:
        return f"{known[0]}, which cannot be decoded; set {known[1]}"
    return (
        f"an unknown binlog event type 0x{event_type:02X}; upgrade the connector or change the server "
        "setting that writes it"
    )


def statement_problem(sql: str, database: str | None, captured: Callable[[TableId], bool]) -> str | None:
    """The problem with a query event that is DML (STATEMENT/MIXED format) for a captured table (or
    one whose table cannot be told), else None."""
    is_dml, table = statement_dml(sql, database)
    if not is_dml or (table is not None and not captured(table)):
        return None
    name = str(table) if table is not None else "tables the statement names"
    return f"a DML statement logged as SQL for {name}; set {_ROW_FORMAT}"


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")


class EventGuard(NamedTuple):
    """Applies the failure handling mode to an unsafe event."""

    mode: str = "fail"

    @classmethod
    def from_config(cls, config: PropertyReader) -> EventGuard:
        key = MODE_KEY if config.raw.get(MODE_KEY, "").strip() else FALLBACK_MODE_KEY
        mode = config.get_choice(key)
        return cls("skip" if mode == "ignore" else mode)

    def reject(self, what: str, where: str) -> None:
        """``fail``: raise; ``warn``/``skip``: log and return (the caller passes the event)."""
        if self.mode == "fail":
            raise UnsafeEventError(
                f"binlog event at {where} is {what}. The connector stopped before this event (no "
                "offset past it is stored), so restarting stops here again. Fix the server setting; "
                f"then, to pass this event, restart once with {MODE_KEY}=warn and re-write or "
                "re-snapshot the rows it changed"
            )
        level = logging.WARNING if self.mode == "warn" else logging.DEBUG
        log.log(
            level,
            "passing binlog event at %s (%s=%s): %s; its changes are NOT emitted: re-write or "
            "re-snapshot the rows it changed",
            where,
            MODE_KEY,
            self.mode,
            what,
        )
