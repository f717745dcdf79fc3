"""An in-memory binlog: scripted events through the connector's own streaming source, no server.

``InMemoryBinlog`` turns a script of binlog-level steps (GTID, BEGIN, rows events with their
before/after images, XID, DDL and TRUNCATE query events, ROWS_QUERY, rotates, idle time for
heartbeats) into the ``RawEvent``s a binlog reader yields, positions counting up, and runs them
through ``StreamingSource`` with a ``reader_factory``, exactly as ``replay-binlog`` feeds it files.
So the event handlers, the ``EventDispatcher``, the ``BinlogOffsetContext``, the filters, the
converters and the record builder are the product's; only the bytes are missing: a rows event
carries its row images already decoded (values as ``connector.binlog.row_decoder`` yields them, the
dispatcher's ``RowForm.BINLOG``), and ``InMemoryStreamingSource`` reads them instead of decoding a
packet.

Tables, properties, the deterministic clock and the sinks come from a ``FakeConnector`` (the DDL it
is given is the structure the stream starts with), which is also where the records go.

A run can stop after any event (``run(stop_after=n)``, a crash) and the next run starts from the
offset an offset store would hold then (the last record's or commit's), as a restarted connector
does: the current transaction is read again from its start, its done events replayed without
emitting, its done rows skipped. The table structures are kept across runs (the schema history
recovery of a real restart gives the same model when no DDL is cut in half).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pymysqlreplication.event import (
    GtidEvent,
    HeartbeatLogEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    RowsQueryLogEvent,
    XidEvent,
)
from pymysqlreplication.row_event import DeleteRowsEvent, TableMapEvent, UpdateRowsEvent, WriteRowsEvent

from connector.binlog.row_decoder import converted_rows
from connector.binlog.server_stream import EventReader, RawEvent
from connector.errors import MysqlCdcError
from connector.records.builder import TableSchema
from connector.sources.heartbeat import Heartbeat
from connector.sources.settings import HeartbeatSettings
from connector.sources.streaming import StreamingSource
from connector.testing.fake import FakeConnector
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord

# Binlog event type codes (the RawEvent carries them; streaming looks some up).
_EVENT_TYPES: dict[type, int] = {
    QueryEvent: 0x02,
    RotateEvent: 0x04,
    XidEvent: 0x10,
    TableMapEvent: 0x13,
    WriteRowsEvent: 0x1E,
    UpdateRowsEvent: 0x1F,
    DeleteRowsEvent: 0x20,
    HeartbeatLogEvent: 0x1B,
    RowsQueryLogEvent: 0x1D,
    GtidEvent: 0x21,
    MariadbGtidEvent: 0xA2,
}
# Sizes of the events the script pretends to write: only the ordering of positions matters.
_SIZES: dict[type, int] = {
    GtidEvent: 65,
    MariadbGtidEvent: 42,
    QueryEvent: 80,
    TableMapEvent: 60,
    WriteRowsEvent: 100,
    UpdateRowsEvent: 100,
    DeleteRowsEvent: 100,
    XidEvent: 31,
    RowsQueryLogEvent: 50,
    RotateEvent: 44,
}
_ROWS_EVENTS: dict[str, type] = {"c": WriteRowsEvent, "u": UpdateRowsEvent, "d": DeleteRowsEvent}
# MariaDB GTID event flag: a statement without BEGIN/COMMIT (DDL).
_FL_STANDALONE = 0x01

# One row image: column name -> value, or every column's value in table order (binlog form).
Image = Mapping[str, Any] | Sequence[Any]


class ScriptError(MysqlCdcError, ValueError):
    """A scripted step the in-memory binlog cannot turn into events (names the step)."""


# -- the steps ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Gtid:
    """A GTID event; without ``gtid`` the next one of the script's server (``uuid:n``, MariaDB
    ``0-server-n``). ``standalone``: MariaDB's flag for a statement without BEGIN (DDL)."""

    gtid: str | None = None
    standalone: bool = False


@dataclass(frozen=True)
class Begin:
    """The ``BEGIN`` query event (its thread id goes into ``source.thread``). MariaDB writes none
    after a transaction's GTID event, which is its BEGIN: there the step writes nothing."""

    thread: int = 7


@dataclass(frozen=True)
class Rows:
    """A TABLE_MAP and one rows event of ``table`` (``db.table``): ``op`` c/u/d and per row its
    (before, after) images (None where the operation has none)."""

    table: str
    op: str
    images: tuple[tuple[Image | None, Image | None], ...]


def insert(table: str, *rows: Image) -> Rows:
    return Rows(table, "c", tuple((None, r) for r in rows))


def update(table: str, *pairs: tuple[Image, Image]) -> Rows:
    return Rows(table, "u", tuple((before, after) for before, after in pairs))


def delete(table: str, *rows: Image) -> Rows:
    return Rows(table, "d", tuple((r, None) for r in rows))


@dataclass(frozen=True)
class Commit:
    """The XID event that commits the transaction."""


@dataclass(frozen=True)
class Query:
    """A query event: DDL (``TRUNCATE`` included), ``COMMIT``/``ROLLBACK``, in ``database``."""

    sql: str
    database: str = ""


@dataclass(frozen=True)
class RowsQuery:
    """A ROWS_QUERY event: the statement of the next rows events (``include.query``)."""

    sql: str


@dataclass(frozen=True)
class Rotate:
    """The end of the current file: the stream continues in ``next_file`` at 4."""

    next_file: str


@dataclass(frozen=True)
class Idle:
    """``ms`` pass without events, then the server's binlog heartbeat arrives (an idle tick)."""

    ms: int


Step = Gtid | Begin | Rows | Commit | Query | RowsQuery | Rotate | Idle


def transaction(*steps: Step, gtid: str | None = None, thread: int = 7) -> list[Step]:
    """GTID, BEGIN, ``steps``, XID: one committed transaction."""
    return [Gtid(gtid), Begin(thread), *steps, Commit()]


def ddl(sql: str, database: str = "", gtid: str | None = None) -> list[Step]:
    """GTID and the DDL query event (a statement that commits at once)."""
    return [Gtid(gtid, standalone=True), Query(sql, database)]


# -- events -------------------------------------------------------------------------------------------
def _library_event(cls: type, **attributes: Any) -> Any:
    """An instance of the library's event class with only the attributes streaming reads (no
    packet behind it): the streaming source dispatches on the class."""
    event: Any = object.__new__(cls)
    event.__dict__.update(attributes)
    return event


def _all_present(count: int) -> bytes:
    return ((1 << count) - 1).to_bytes((count + 7) // 8, "little")


@dataclass
class _Writer:
    """Where the script writes next."""

    file: str
    pos: int
    ts_sec: int
    server_id: int
    flavor: str
    server_uuid: str
    next_gno: int
    events: list[RawEvent] = field(default_factory=list)

    def write(self, event: Any, size: int | None = None) -> RawEvent:
        cls = type(event)
        size = size if size is not None else _SIZES[cls]
        raw = RawEvent(
            event, self.file, self.pos, self.pos + size, self.ts_sec, self.server_id, _EVENT_TYPES[cls]
        )
        self.pos += size
        self.events.append(raw)
        return raw

    def gtid(self, step: Gtid) -> None:
        gno = self.next_gno
        self.next_gno += 1
        if self.flavor == "mariadb":
            text = step.gtid or f"0-{self.server_id}-{gno}"
            flags = _FL_STANDALONE if step.standalone else 0
            self.write(_library_event(MariadbGtidEvent, gtid=text, flags=flags))
            return
        text = step.gtid or f"{self.server_uuid}:{gno}"
        uuid, _, number = text.rpartition(":")
        if uuid.count(":"):  # a tagged GTID (uuid:tag:n) has no GTID_EVENT form here
            raise ScriptError(f"Gtid({text!r}): tagged GTIDs are not scripted")
        sid = bytes.fromhex(uuid.replace("-", ""))
        self.write(_library_event(GtidEvent, sid=sid, gno=int(number)))

    def rows(self, step: Rows) -> None:
        database, _, table = step.table.partition(".")
        if not table or step.op not in _ROWS_EVENTS:
            raise ScriptError(f"Rows({step.table!r}, {step.op!r}): give db.table and op c, u or d")
        self.write(_library_event(TableMapEvent, schema=database, table=table))
        cls = _ROWS_EVENTS[step.op]
        width = max((len(image) for pair in step.images for image in pair if image is not None), default=0)
        self.write(
            _library_event(
                cls,
                schema=database,
                table=table,
                number_of_columns=width,
                columns_present_bitmap=_all_present(width),
                columns_present_bitmap2=_all_present(width),
                scripted_rows=step.images,
            )
        )

    def query(self, sql: str, database: str, thread: int = 7) -> None:
        self.write(
            _library_event(QueryEvent, query=sql, schema=database.encode(), slave_proxy_id=thread),
            size=_SIZES[QueryEvent] + len(sql),
        )

    def begin(self, step: Begin) -> None:
        last = self.events[-1].event if self.events else None
        if isinstance(last, MariadbGtidEvent) and not last.flags & _FL_STANDALONE:
            return  # MariaDB: the GTID event started the transaction
        self.query("BEGIN", "", step.thread)

    def rotate(self, step: Rotate) -> None:
        self.write(_library_event(RotateEvent, next_binlog=step.next_file, position=4))
        self.file, self.pos = step.next_file, 4


# Step type -> how it is written (a dispatch table).
_WRITE: dict[type, Callable[[_Writer, Any], object]] = {
    Gtid: lambda w, s: w.gtid(s),
    Begin: lambda w, s: w.begin(s),
    Rows: lambda w, s: w.rows(s),
    Commit: lambda w, s: w.write(_library_event(XidEvent, xid=1)),
    Query: lambda w, s: w.query(s.sql, s.database),
    RowsQuery: lambda w, s: w.write(_library_event(RowsQueryLogEvent, query=s.sql)),
    Rotate: lambda w, s: w.rotate(s),
}


class _ScriptedRows:
    """Stands in for ``BinlogRowDecoder``: the rows event's scripted images, in table column order."""

    def __init__(self, schema: TableSchema) -> None:
        self.columns = [c.name for c in schema.table.columns]
        self.table = schema.table.id
        self.convert = schema.binlog_image_converter

    def image_width(self, event: Any) -> int:
        """The images' width: the table's for images by column name, else their own (a width that
        is not the table's first, so the source reports it)."""
        widths = {
            len(self.columns) if isinstance(image, Mapping) else len(image)
            for pair in event.scripted_rows
            for image in pair
            if image is not None
        }
        widths.discard(len(self.columns))
        return widths.pop() if widths else len(self.columns)

    def payload_rows(self, event: Any, update: bool, after: bool = False) -> list[tuple[Any, Any]]:
        """``rows`` converted to value payloads, as ``BinlogRowDecoder.payload_rows``."""
        return converted_rows(self.rows(event, update), self.convert, after and not update)

    def image(self, image: Image | None) -> list[Any] | None:
        if image is None or not isinstance(image, Mapping):
            return None if image is None else list(image)
        unknown = [name for name in image if name not in self.columns]
        if unknown:
            raise ScriptError(f"{self.table} has no column(s) {unknown}; columns: {self.columns}")
        return [image.get(name) for name in self.columns]

    def rows(self, event: Any, update: bool) -> list[tuple[list[Any] | None, list[Any] | None]]:
        pairs = event.scripted_rows
        if update:
            return [(self.image(before), self.image(after)) for before, after in pairs]
        # Inserts carry their image as the only one, as the decoder yields them (the caller moves it).
        return [(self.image(before if before is not None else after), None) for before, after in pairs]


class InMemoryStreamingSource(StreamingSource):
    """The streaming source, reading scripted row images instead of decoding rows event bytes."""

    def _decoder(self, schema: TableSchema) -> Any:
        return _ScriptedRows(schema)


class _Reader:
    """The script's events from ``file``/``pos`` on, as a binlog reader yields them after connecting
    there (the artificial rotate first); stops after ``limit`` real events."""

    def __init__(self, events: Sequence[RawEvent], file: str, pos: int, limit: int | None) -> None:
        self.start = (file, pos)
        self.todo = [e for e in events if (e.file, e.start_pos) >= (file, pos)]
        self.limit = limit
        self.finished = not self.todo
        self.read = 0

    def events(self) -> Iterator[RawEvent]:
        file, pos = self.start
        yield RawEvent(_library_event(RotateEvent, next_binlog=file, position=pos), file, 0, 0, 0, 0, 0x04)
        for raw in self.todo:
            if self.limit is not None and self.read >= self.limit:
                break
            self.read += 1
            self.finished = self.read == len(self.todo)
            yield raw
        self.finished = True

    def close(self) -> None:
        self.finished = True


class _Recorder:
    """The stream's emitter: keeps what the dispatcher emits and the offsets it advances to, then
    hands the records to the fake (its transforms, log and sinks)."""

    def __init__(self, fake: FakeConnector) -> None:
        self.fake = fake
        self.records: list[ChangeRecord] = []
        self.advanced: list[SourceOffset] = []
        self.stored: SourceOffset | None = None

    def emit(self, records: list[ChangeRecord]) -> None:
        self.records.extend(records)
        for record in records:
            if record.offset is not None:
                self.stored = record.offset
        self.fake.emit(records)

    def advance(self, offset: SourceOffset) -> None:
        self.advanced.append(offset)
        self.stored = offset

    def tick(self) -> None:
        pass


class InMemoryBinlog:
    """A scripted binlog streamed by the connector's own streaming source (see the module text)."""

    def __init__(
        self,
        fake: FakeConnector,
        *,
        start: SourceOffset | None = None,
        server_id: int = 1,
        ts_sec: int | None = None,
        first_gno: int = 1,
    ) -> None:
        self.fake = fake
        self.start = start if start is not None else SourceOffset(fake.file, fake.pos)
        # The script is written from the fake's binlog position on; ``start`` is only where the
        # stream starts reading it (a stored offset: a restarted connector).
        self._writer = _Writer(
            fake.file,
            fake.pos,
            ts_sec if ts_sec is not None else fake.clock_ms // 1000,
            server_id,
            fake.flavor,
            fake.server_uuid,
            first_gno,
        )
        self.recorder = _Recorder(fake)
        self.heartbeat_ms = 0  # the script's clock for heartbeat.interval.ms
        self.source: InMemoryStreamingSource | None = None
        self._current: _Reader | None = None  # the reader of the run under way

    @property
    def events(self) -> list[RawEvent]:
        return self._writer.events

    @property
    def records(self) -> list[ChangeRecord]:
        """Every record the stream emitted, over all runs."""
        return self.recorder.records

    @property
    def stored_offset(self) -> SourceOffset:
        """What an offset store holds now: the offset of the last record or commit, else the start."""
        return self.recorder.stored or self.start

    def write(self, *steps: Step | Sequence[Step]) -> InMemoryBinlog:
        """Appends events for ``steps`` (steps or lists of steps) to the binlog."""
        writer = self._writer
        for item in steps:
            for step in item if isinstance(item, list | tuple) else (item,):
                if isinstance(step, Idle):
                    self._idle(step)
                    continue
                write = _WRITE.get(type(step))
                if write is None:
                    raise ScriptError(f"{step!r} is not a scripted binlog step")
                write(writer, step)
        return self

    def _idle(self, step: Idle) -> None:
        writer = self._writer
        writer.ts_sec += step.ms // 1000
        heartbeat = _library_event(HeartbeatLogEvent, idle_ms=step.ms)
        # end_pos 0: the server's heartbeat is not a binlog event (no position of its own).
        writer.events.append(RawEvent(heartbeat, writer.file, writer.pos, 0, 0, writer.server_id, 0x1B))

    def run(self, stop_after: int | None = None) -> list[ChangeRecord]:
        """Streams the binlog from the stored offset (a new source, as a restarted connector) to its
        end, or until ``stop_after`` events were read; returns the records of this run."""
        fake = self.fake
        source = InMemoryStreamingSource(
            fake.config,
            fake.flavor,
            fake.schema,
            fake.builder,
            fake.filter,
            self.recorder,
            self.stored_offset,
            reader_factory=lambda file, pos: self._reader(file, pos, stop_after),
        )
        if source.heartbeat is not None:
            source.heartbeat = Heartbeat(
                fake.config, HeartbeatSettings.from_config(fake.config), clock=self._heartbeat_clock
            )
        self.source = source
        first = len(self.recorder.records)
        try:
            source.run(lambda: self._current is not None and self._current.finished)
        finally:
            source.close()
            self._current = None
        return self.recorder.records[first:]

    def _reader(self, file: str, pos: int, stop_after: int | None) -> EventReader:
        self._current = _Reader(self._writer.events, file, pos, stop_after)
        return _IdleClock(self._current, self)

    def _heartbeat_clock(self) -> float:
        return self.heartbeat_ms / 1000


class _IdleClock:
    """Moves the script's heartbeat clock on as idle ticks pass."""

    def __init__(self, reader: _Reader, binlog: InMemoryBinlog) -> None:
        self.reader = reader
        self.binlog = binlog

    def events(self) -> Iterator[RawEvent]:
        for raw in self.reader.events():
            if isinstance(raw.event, HeartbeatLogEvent):
                self.binlog.heartbeat_ms += raw.event.idle_ms
            yield raw

    def close(self) -> None:
        self.reader.close()
