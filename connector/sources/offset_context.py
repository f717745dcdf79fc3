"""Where the stream is: one object that produces both the ``source`` block of each record and the
offset to store, as Debezium's ``BinlogOffsetContext`` with its ``SourceInfo`` does.

Offsets follow Debezium (docs/guides/positions.md): outside a transaction the restart point is the end of the
last committed event; inside one it is the transaction's first event (the GTID event, or BEGIN
without GTIDs) plus ``event`` = events of the transaction already fully processed and ``row`` = rows
of the current rows event already emitted. A restart re-reads the transaction from its start, replays
the bookkeeping of the first ``event`` events without emitting (``skip_events``), skips ``row`` rows
(``skip_rows``), and continues: nothing lost, nothing repeated.

The streaming source moves the context as events arrive (``on_event``, ``begin``, ``count``,
``commit``, ``rotate``); everything that reads a position asks it (``offset``, ``position``).

A snapshot reads at one binlog position (``at_snapshot``): its rows carry that position with a
``source.snapshot`` marker (``snapshot_position``), and their offset names the position with the
snapshot kind (``snapshot_offset``: a restart redoes an unfinished initial snapshot), until the
snapshot completes (``snapshot_offset(None)``: streaming starts at that position).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from connector.binlog.server_stream import RawEvent
from connector.records.builder import SourcePosition
from connector.records.transactions import TransactionMetadata
from mysql_cdc_base.position import BinlogPosition, GtidSet, SourceOffset

OffsetItems = tuple[tuple[str, Any], ...]


@dataclass
class Transaction:
    """The transaction being read: where it started and what of it is done."""

    file: str
    pos: int
    gtid: str | None = None
    thread: int | None = None
    events_done: int = 0
    query: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    # Its GTID source is left out by gtid.source.includes/excludes.
    filtered: bool = False


class BinlogOffsetContext:
    """The stream's position and restart bookkeeping, from a stored ``start`` offset on."""

    def __init__(
        self,
        start: SourceOffset,
        transactions: TransactionMetadata | None = None,
        gtid_filter: Callable[[str], bool] | None = None,
    ) -> None:
        self.restart_file, self.restart_pos = start.file, start.pos
        self.skip_events, self.skip_rows = start.event, start.row
        gtids = start.gtids
        if gtids is not None and gtid_filter is not None:
            gtids = gtids.retain(gtid_filter)
        self.gtids: GtidSet | None = gtids
        # None until the stored offset or an event names the server (then absent from offsets).
        self.server_id: int | None = start.server_id
        self.ts_sec = start.ts_sec or 0
        self.transactions = transactions
        self.txn: Transaction | None = None
        self.last_end: tuple[str, int] = (start.file, start.pos)
        # The offset items of a running incremental snapshot (set by the streaming source).
        self.extra_items: Callable[[], OffsetItems] | None = None

    @classmethod
    def at_snapshot(cls, position: BinlogPosition) -> BinlogOffsetContext:
        """The context of a snapshot read at ``position`` (the server's binlog position and
        executed GTIDs under the snapshot's lock)."""
        return cls(SourceOffset.at(position))

    # -- what it says ----------------------------------------------------------------------------
    def offset(self, row: int = 0) -> SourceOffset:
        """The restart point now: the current transaction's start (plus events and rows done in
        it), else the end of the last committed event."""
        txn = self.txn
        file, pos, events = (
            (txn.file, txn.pos, txn.events_done) if txn else (self.restart_file, self.restart_pos, 0)
        )
        offset = SourceOffset.in_stream(file, pos, self.gtids, events, row, self.server_id, self.ts_sec)
        return self._with_context(offset)

    def offset_after_commit(self, raw: RawEvent, gtid: str | None) -> SourceOffset:
        """The offset once ``raw`` (a statement that commits at once: DDL) has committed."""
        gtids = _with_gtid(self.gtids, gtid) if gtid else self.gtids
        offset = SourceOffset(raw.file, raw.end_pos, gtids, 0, 0, self.server_id, self.ts_sec)
        return self.transactions.apply_to(offset) if self.transactions is not None else offset

    def position(self, raw: RawEvent, row: int = 0) -> SourcePosition:
        """The ``source`` block's position of a row of ``raw`` (in the current transaction)."""
        txn = self.txn
        return SourcePosition(
            file=raw.file,
            pos=raw.start_pos,
            server_id=raw.server_id,
            ts_ms=raw.timestamp * 1000,
            gtid=txn.gtid if txn else None,
            row=row,
            thread=txn.thread if txn else None,
            query=txn.query if txn else None,
        )

    def idle_position(self) -> SourcePosition:
        """Between events: the last event's end."""
        return SourcePosition(file=self.last_end[0], pos=self.last_end[1], server_id=self.server_id or 0)

    def snapshot_offset(self, kind: str | None) -> SourceOffset:
        """The offset of a snapshot row read at the current position: ``kind`` is the offset's
        ``snapshot`` entry (``INITIAL``, ``INCREMENTAL``; None once the snapshot completed). No
        event or row counts: a snapshot is not inside a binlog transaction."""
        file, pos = self.last_end
        return SourceOffset(file, pos, self.gtids, snapshot=kind)

    def snapshot_position(self, marker: str | None, ts_ms: int) -> SourcePosition:
        """The ``source`` block's position of a snapshot row read at ``ts_ms``: the current
        position, ``source.snapshot`` = ``marker`` (``first``, ``true``, ``last`` ...)."""
        file, pos = self.last_end
        return SourcePosition(file=file, pos=pos, ts_ms=ts_ms, snapshot=marker)

    def in_transaction(self) -> bool:
        return self.txn is not None

    def _with_context(self, offset: SourceOffset) -> SourceOffset:
        if self.transactions is not None:
            offset = self.transactions.apply_to(offset)
        extra = self.extra_items() if self.extra_items is not None else ()
        return offset.with_(extra=extra) if extra else offset

    # -- moving it ---------------------------------------------------------------------------------
    def on_event(self, raw: RawEvent) -> None:
        """A real event arrives: the server and time it reports (``StreamingSource._handle`` does
        this and ``event_done`` inline for the events of every transaction)."""
        self.server_id = raw.server_id
        if raw.timestamp:
            self.ts_sec = raw.timestamp

    def event_done(self, raw: RawEvent) -> None:
        self.last_end = (raw.file, raw.end_pos)

    def begin(self, raw: RawEvent) -> Transaction:
        self.txn = Transaction(raw.file, raw.start_pos)
        return self.txn

    def count(self) -> None:
        """One more event of the current transaction is fully processed (or was replayed)."""
        if self.txn is not None:
            self.txn.events_done += 1
            if self.skip_events:
                self.skip_events -= 1

    def advance_restart(self, raw: RawEvent) -> None:
        self.restart_file, self.restart_pos = raw.file, raw.end_pos

    def commit(self, raw: RawEvent) -> None:
        """The transaction ended with ``raw``: its GTID is done, the restart point is after it."""
        txn, self.txn = self.txn, None
        if txn is not None and txn.gtid and not txn.filtered:
            self.gtids = _with_gtid(self.gtids, txn.gtid)
        self.advance_restart(raw)
        self.skip_events = self.skip_rows = 0

    def rotate(self, raw: RawEvent, next_file: str, position: int) -> None:
        """A real rotate (the end of a file) moves the restart point; the artificial one a dump
        starts with does not: by file/pos it repeats the start, by GTID it names the file's start."""
        if self.txn is None and raw.end_pos:
            self.restart_file, self.restart_pos = next_file, position

    def restart_point(self) -> tuple[str, int]:
        """Where to read from after a (re)connect: the current transaction's start, whose events
        done are then replayed without emitting, else the restart point."""
        if self.txn is not None:
            self.skip_events, self.skip_rows = self.txn.events_done, 0
            file, pos = self.txn.file, self.txn.pos
            self.txn = None
            return file, pos
        return self.restart_file, self.restart_pos

    def take_skipped_rows(self) -> int:
        """Rows of the current rows event emitted before the restart (once)."""
        skip, self.skip_rows = self.skip_rows, 0
        return skip

    def reposition(self, file: str | None, pos: int | None, gtids: GtidSet | None) -> None:
        """``set-binlog-position``: the restart point (and GTIDs) the operator gave."""
        if gtids is not None:
            self.gtids = gtids
        if file is not None and pos is not None:
            self.restart_file, self.restart_pos = file, pos
        self.skip_events = self.skip_rows = 0


def _with_gtid(gtids: GtidSet | None, gtid: str) -> GtidSet:
    return gtids.add(gtid) if gtids is not None else GtidSet.parse(gtid)
