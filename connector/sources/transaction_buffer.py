"""``binlog.buffer.size``: the look-ahead buffer that holds a transaction's events until its end, so
that what the binlog holds but the server rolled back is never emitted.

With ``binlog_format=ROW`` a transaction's events reach the binlog at its commit, so a rolled-back
transaction is normally absent. Two cases are not:

- ``SAVEPOINT s`` ... ``ROLLBACK TO s`` inside a transaction that also changed a non-transactional
  table: the server writes the whole transaction, the rows it rolled back to the savepoint included,
  followed by a ``ROLLBACK TO`` statement;
- a transaction the server had to log although it ended with ``ROLLBACK`` (Debezium's DBZ-390).

The buffer (after Debezium's ``EventBuffer``) holds the events from the transaction's start: at its
commit they go to the stream's handler in binlog order; a ``ROLLBACK`` drops them; a ``ROLLBACK TO s``
drops those after the savepoint. Unlike Debezium's, it also honours savepoints (Debezium's buffer
passes ``ROLLBACK TO`` on and emits the rolled-back rows).

Memory is bounded by ``binlog.buffer.size`` events. A longer transaction is handed on as it comes
once the buffer is full (its start first); should it then roll back (wholly or to a savepoint set
before), rows already emitted cannot be taken back, and the connector stops naming the setting and
the position instead of leaving them standing (Debezium rewinds the binlog in that case).
Without the buffer (the default, 0), a rollback that covers rows stops the connector the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pymysqlreplication.event import MariadbGtidEvent, QueryEvent, XidEvent
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    PartialUpdateRowsEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from connector.binlog.server_stream import RawEvent
from connector.errors import ReplicationError

log = logging.getLogger(__name__)

# MariaDB GTID event flag: a statement without BEGIN/COMMIT (DDL), not a transaction start.
_FL_STANDALONE = 0x01
_ROWS_EVENTS = (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent, PartialUpdateRowsEvent)


class RolledBackRowsEmitted(ReplicationError):
    """A rollback in the binlog covers rows that were already handed on (no or too small a buffer)."""


# Not frozen: one is made per QUERY event (every transaction's BEGIN), and a frozen dataclass's
# __init__ costs three times as much.
@dataclass(slots=True)
class QueryStatement:
    """A QUERY event's statement, read once for the buffer and the stream (``StreamingSource``):
    ``sql`` as written, stripped (a DDL statement is recorded with it); ``text`` with its white space
    folded (savepoint names are read from it); ``keyword`` that upper-cased, what BEGIN, COMMIT,
    ROLLBACK [TO], SAVEPOINT and the XA statements are told by."""

    sql: str
    text: str
    keyword: str


def query_statement(event: Any) -> QueryStatement:
    sql = str(event.query).strip()
    text = " ".join(sql.split())
    return QueryStatement(sql, text, text.upper())


# An event held until its transaction ends, with its statement when it is a QUERY event.
Held = tuple[RawEvent, QueryStatement | None]
# Where the buffer hands events on: the event, and its statement when it is a QUERY event.
Handler = Callable[[RawEvent, QueryStatement | None], None]


def _rows_events(events: list[Held]) -> int:
    return sum(isinstance(raw.event, _ROWS_EVENTS) for raw, _ in events)


def _savepoint_name(statement: str, keyword: str) -> str:
    name = statement[len(keyword) :].strip()
    if name.upper().startswith("SAVEPOINT "):
        name = name[len("SAVEPOINT ") :].strip()
    return name.strip("`")


@dataclass
class TransactionBuffer:
    """Feeds raw events to ``handle``, holding each transaction's until its end (see the module)."""

    capacity: int
    handle: Handler
    _held: list[Held] = field(default_factory=list)
    _in_transaction: bool = False
    _overflowed: bool = False  # handed on as it came since the buffer filled
    _passed_rows: int = 0  # rows events handed on unbuffered in this transaction
    # Savepoint name -> (held events, rows events passed on) when it was set.
    _savepoints: dict[str, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.capacity:
            self.feed = self._feed_unbuffered  # type: ignore[method-assign]

    def _feed_unbuffered(self, raw: RawEvent) -> None:
        """``feed`` without a buffer (``binlog.buffer.size=0``): nothing is ever held, so every
        event goes on at once; what is kept is whether a transaction is open and how many rows
        events it handed on (a rollback over them stops the connector, ``_end``)."""
        kind = _UNBUFFERED_KINDS.get(type(raw.event))
        if kind is None:
            self.handle(raw, None)
        else:
            kind(self, raw)

    def _on_rows_unbuffered(self, raw: RawEvent) -> None:
        if self._in_transaction:
            self._passed_rows += 1
        self.handle(raw, None)

    def _on_xid_unbuffered(self, raw: RawEvent) -> None:
        self.handle(raw, None)
        self._reset()

    def feed(self, raw: RawEvent) -> None:
        kind = _KINDS.get(type(raw.event))
        if kind is not None:
            kind(self, raw)
        elif not self._in_transaction or not self.capacity or self._overflowed:
            self.handle(raw, None)  # _pass without holding: every TABLE_MAP of an unbuffered stream
        else:
            self._pass(raw)

    def _on_query(self, raw: RawEvent) -> None:
        statement = query_statement(raw.event)
        keyword = statement.keyword
        if keyword == "BEGIN":
            self._begin(raw, statement)
        elif keyword in ("COMMIT", "ROLLBACK") or keyword.startswith("ROLLBACK TO "):
            self._end(raw, keyword, statement.text, statement)
        else:
            if keyword.startswith("SAVEPOINT ") and self._in_transaction:
                # Savepoint names are case-insensitive.
                self._savepoints[_savepoint_name(statement.text, "SAVEPOINT").lower()] = (
                    len(self._held),
                    self._passed_rows,
                )
            self._pass(raw, statement)

    def _on_gtid(self, raw: RawEvent) -> None:
        if raw.event.flags & _FL_STANDALONE:
            self._pass(raw)
        else:
            self._begin(raw)

    def _on_xid(self, raw: RawEvent) -> None:
        self._end(raw, "COMMIT", "COMMIT")

    def _on_rows(self, raw: RawEvent) -> None:
        if not self._in_transaction:
            self.handle(raw, None)
        elif not self.capacity or self._overflowed:  # _is_passing
            self._passed_rows += 1
            self.handle(raw, None)
        else:
            self._pass(raw)

    # -- the transaction --------------------------------------------------------------------------
    def _begin(self, raw: RawEvent, statement: QueryStatement | None = None) -> None:
        if self._in_transaction:
            log.warning(
                "a transaction starts at %s:%s before the previous one ended; handing the previous one on",
                raw.file,
                raw.start_pos,
            )
            self._release()
        self._in_transaction = True
        self._pass(raw, statement)

    def _end(self, raw: RawEvent, keyword: str, text: str, statement: QueryStatement | None = None) -> None:
        if keyword == "COMMIT" or not self._in_transaction:
            self._pass(raw, statement)
            self._release()
            return
        if keyword == "ROLLBACK":
            self._refuse_if_passed(raw, self._passed_rows, "ROLLBACK")
            log.info("dropped a transaction rolled back at %s:%s", raw.file, raw.start_pos)
            self._held.clear()
            self._reset()
            return
        name = _savepoint_name(text, "ROLLBACK TO")
        held, passed = self._savepoints.get(name.lower(), (0, 0))
        self._refuse_if_passed(raw, self._passed_rows - passed, f"ROLLBACK TO {name}")
        if held < len(self._held):
            log.info("dropped %d events rolled back to savepoint %s", len(self._held) - held, name)
            del self._held[held:]
        self._pass(raw, statement)

    def _refuse_if_passed(self, raw: RawEvent, rows_events: int, what: str) -> None:
        if rows_events <= 0:
            return
        bound = (
            f"the transaction outgrew binlog.buffer.size={self.capacity} events"
            if self.capacity
            else "binlog.buffer.size is 0"
        )
        raise RolledBackRowsEmitted(
            f"the binlog at {raw.file}:{raw.start_pos} rolls back ({what}) {rows_events} rows "
            f"event(s) that were already emitted: {bound}. Those records stand for rows the server "
            "rolled back. Set binlog.buffer.size above the event count of such transactions so that "
            "their rows are held until the transaction ends"
        )

    # -- holding and handing on ---------------------------------------------------------------------
    def _is_passing(self) -> bool:
        return self.capacity == 0 or self._overflowed

    def _pass(self, raw: RawEvent, statement: QueryStatement | None = None) -> None:
        if not self._in_transaction or self._is_passing():
            self.handle(raw, statement)
            return
        self._held.append((raw, statement))
        if len(self._held) >= self.capacity:
            log.info(
                "transaction at %s:%s outgrew binlog.buffer.size=%d events: handing it on as it comes",
                raw.file,
                raw.start_pos,
                self.capacity,
            )
            held, self._held = self._held, []
            self._overflowed = True
            # Each savepoint now counts the rows events handed on before it.
            self._savepoints = {
                name: (0, passed + _rows_events(held[:index]))
                for name, (index, passed) in self._savepoints.items()
            }
            self._passed_rows += _rows_events(held)
            for event, query in held:
                self.handle(event, query)

    def discard(self) -> None:
        """Forget the transaction in hand: the stream re-reads it from its start (a reconnect)."""
        self._held.clear()
        self._reset()

    def _release(self) -> None:
        held, self._held = self._held, []
        self._reset()
        for raw, statement in held:
            self.handle(raw, statement)

    def _reset(self) -> None:
        self._in_transaction = False
        self._overflowed = False
        self._passed_rows = 0
        self._savepoints = {}


# Event class -> how the buffer treats it (every other event is held or handed on as it is).
_KINDS: dict[type, Callable[[TransactionBuffer, RawEvent], None]] = {
    QueryEvent: TransactionBuffer._on_query,
    MariadbGtidEvent: TransactionBuffer._on_gtid,
    XidEvent: TransactionBuffer._on_xid,
    **{cls: TransactionBuffer._on_rows for cls in _ROWS_EVENTS},
}
# The same without a buffer (``TransactionBuffer._feed_unbuffered``).
_UNBUFFERED_KINDS: dict[type, Callable[[TransactionBuffer, RawEvent], None]] = {
    **_KINDS,
    XidEvent: TransactionBuffer._on_xid_unbuffered,
    **{cls: TransactionBuffer._on_rows_unbuffered for cls in _ROWS_EVENTS},
}
