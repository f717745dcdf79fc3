"""The events an embedded engine or the fake connector hands a test: the log of change records,
queries that match them by table, operation and row, and ``EventStream``'s ``wait_for``/``drain``/
``mark``/``events_since``, shared by ``connector.embedded.api.EmbeddedEngine`` and
``connector.testing.fake.FakeConnector`` so that a test drives either with the same calls."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mysql_cdc_base.errors import MysqlCdcError
from mysql_cdc_base.records import ChangeRecord, RecordKind
from mysql_cdc_base.table_id import TableId

Row = Mapping[str, Any]
RowPredicate = Callable[[Row], bool]


class EngineFailed(MysqlCdcError, RuntimeError):
    """The embedded connector stopped with an error; ``__cause__`` is the original exception."""


class EventWaitTimeout(MysqlCdcError, AssertionError):
    """``wait_for``/``drain`` gave up; the message lists the events that did arrive.

    An ``AssertionError`` so that pytest reports it as a failed expectation, not a crash."""


# -- matching and describing records -----------------------------------------------------------------
def record_row(record: ChangeRecord) -> Row | None:
    """The row a predicate looks at: ``after``, or ``before`` for deletes; None for other records."""
    after = record.after
    return after if after is not None else record.before


def _table_matches(record: ChangeRecord, table: str | TableId) -> bool:
    table_id = record.table_id
    if table_id is None:
        return False
    if isinstance(table, TableId):
        return table_id == table
    return table in (table_id.table, str(table_id))


@dataclass
class EventQuery:
    """What ``wait_for`` looks for. Unset criteria match anything."""

    table: str | TableId | None = None
    op: str | Collection[str] | None = None
    where: RowPredicate | None = None
    topic: str | None = None
    kind: RecordKind | str | None = RecordKind.DATA
    predicate_errors: list[str] = field(default_factory=list)

    def matches(self, record: ChangeRecord) -> bool:
        if self.kind is not None and record.kind != RecordKind(self.kind):
            return False
        if self.topic is not None and record.topic != self.topic:
            return False
        if self.table is not None and not _table_matches(record, self.table):
            return False
        if self.op is not None:
            wanted = (self.op,) if isinstance(self.op, str) else self.op
            if record.op not in wanted:
                return False
        if self.where is not None:
            row = record_row(record)
            if row is None:
                return False
            try:
                return bool(self.where(row))
            except Exception as exc:  # noqa: BLE001 - a predicate failing on an unrelated row is no match
                if len(self.predicate_errors) < 3:
                    self.predicate_errors.append(f"{type(exc).__name__}: {exc} on {_short(row)}")
                return False
        return True

    def describe(self) -> str:
        parts = []
        for name in ("table", "op", "topic"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={value!r}")
        if self.where is not None:
            parts.append(f"where={getattr(self.where, '__qualname__', self.where)}")
        if self.kind is not None and RecordKind(self.kind) != RecordKind.DATA:
            parts.append(f"kind={RecordKind(self.kind).value}")
        return ", ".join(parts) or "any data event"


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_record(record: ChangeRecord) -> str:
    """One line per record for failure messages: topic, kind/op, key and row image."""
    if record.kind == RecordKind.DATA:
        image = record.after if record.after is not None else record.before
        what = f"op={record.op} key={_short(record.key, 60)} row={_short(image)}"
    elif record.kind == RecordKind.SCHEMA_CHANGE and isinstance(record.value, dict):
        what = f"schema change {_short(record.value.get('ddl'), 100)}"
    else:
        what = f"{record.kind.value} key={_short(record.key, 60)}"
    return f"{record.topic}  {what}"


def describe_records(records: Sequence[ChangeRecord], start: int = 0, limit: int = 30) -> str:
    if not records:
        return "  (no events)"
    shown = records[-limit:]
    first = start + len(records) - len(shown)
    lines = [f"  #{first + i}  {describe_record(r)}" for i, r in enumerate(shown)]
    if len(records) > limit:
        lines.insert(0, f"  ... {len(records) - limit} earlier events not shown")
    return "\n".join(lines)


# -- the received-events log --------------------------------------------------------------------------
class EventLog:
    """Every record received, in order, with blocking reads. Thread-safe; one writer."""

    def __init__(self) -> None:
        self._records: list[ChangeRecord] = []
        self._cond = threading.Condition()
        self._closed = False
        self.error: BaseException | None = None

    def append(self, records: Sequence[ChangeRecord]) -> None:
        with self._cond:
            self._records.extend(records)
            self._cond.notify_all()

    def close(self, error: BaseException | None = None) -> None:
        with self._cond:
            self._closed = True
            self.error = self.error or error
            self._cond.notify_all()

    def reopen(self) -> None:
        with self._cond:
            self._closed = False
            self.error = None

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return len(self._records)

    def since(self, index: int) -> list[ChangeRecord]:
        with self._cond:
            return self._records[index:]

    def wait_beyond(self, index: int, deadline: float | None) -> bool:
        """Block until there is a record at ``index`` (True) or the log is closed / time is up."""
        with self._cond:
            while len(self._records) <= index and not self._closed:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining if remaining is None else min(remaining, 1.0))
            return len(self._records) > index


class EventStream:
    """The consumer-side API shared by ``EmbeddedEngine`` and ``FakeConnector``."""

    _log: EventLog
    _drain_mark: int = 0

    # -- reading ------------------------------------------------------------------------------------
    @property
    def events(self) -> list[ChangeRecord]:
        """Every record received so far (a copy)."""
        return self._log.since(0)

    def data_events(self, table: str | TableId | None = None) -> list[ChangeRecord]:
        """Data change records (no tombstones or schema changes), optionally of one table."""
        query = EventQuery(table=table)
        return [r for r in self._log.since(0) if query.matches(r)]

    def mark(self) -> int:
        """A position in the received events, for ``events_since`` / ``wait_for(since=...)``."""
        return len(self._log)

    def events_since(self, mark: int) -> list[ChangeRecord]:
        """Records received after ``mark`` (no waiting; call ``drain()`` first to catch up)."""
        return self._log.since(mark)

    def __iter__(self) -> Iterator[ChangeRecord]:
        return self.records()

    def _require_log(self, what: str) -> None:
        """Sources that may run without keeping events refuse the helpers that need them."""

    def records(self, since: int = 0, idle_timeout: float | None = None) -> Iterator[ChangeRecord]:
        """Yield records from ``since`` on, blocking for new ones. Ends when the source stops, or when
        nothing new arrives for ``idle_timeout`` seconds."""
        self._require_log("iterating over records")
        index = since
        while True:
            deadline = None if idle_timeout is None else time.monotonic() + idle_timeout
            if not self._log.wait_beyond(index, deadline):
                self._raise_if_failed()
                return
            for record in self._log.since(index):
                index += 1
                yield record

    # -- waiting ------------------------------------------------------------------------------------
    def wait_for(
        self,
        table: str | TableId | None = None,
        op: str | Collection[str] | None = None,
        where: RowPredicate | None = None,
        timeout: float = 10.0,
        *,
        since: int = 0,
        topic: str | None = None,
        kind: RecordKind | str | None = RecordKind.DATA,
    ) -> ChangeRecord:
        """The first record from ``since`` on that matches, waiting up to ``timeout`` seconds.

        ``table`` is ``"name"`` or ``"db.name"``; ``op`` one of c/u/d/r/t (or several); ``where``
        gets the row (``after``, or ``before`` for a delete) and returns whether it matches.
        Only data records are considered unless ``kind`` says otherwise (``"schema_change"``,
        ``"tombstone"``, ``None`` for any). On timeout raises ``EventWaitTimeout`` listing what
        did arrive."""
        self._require_log("wait_for()")
        query = EventQuery(table, op, where, topic, kind)
        started = len(self._log)
        deadline = time.monotonic() + timeout
        index = since
        while True:
            for record in self._log.since(index):
                index += 1
                if query.matches(record):
                    return record
            if not self._log.wait_beyond(index, deadline):
                break
        self._raise_if_failed()
        raise EventWaitTimeout(self._timeout_message(query, timeout, since, started))

    def _timeout_message(self, query: EventQuery, timeout: float, since: int, started: int) -> str:
        searched = self._log.since(since)
        arrived = len(self._log) - started
        lines = [
            f"no event matching {query.describe()} within {timeout}s: searched {len(searched)} "
            f"event(s) from #{since}, {arrived} of them arrived during the wait."
        ]
        if self._log.closed:
            lines.append("The event source is stopped: nothing more will arrive.")
        if query.predicate_errors:
            lines.append(
                "The where predicate raised on some rows (treated as no match): "
                + "; ".join(query.predicate_errors)
            )
        lines.append("Events received:")
        lines.append(describe_records(searched, since))
        return "\n".join(lines)

    def drain(self, timeout: float = 30.0) -> list[ChangeRecord]:
        """Wait until everything the source had produced when called is received, then return the
        records since the previous ``drain()`` (or since the start)."""
        self._require_log("drain()")
        self._catch_up(timeout)
        records = self._log.since(self._drain_mark)
        self._drain_mark += len(records)
        return records

    def _catch_up(self, timeout: float) -> None:
        """Block until every event the source has produced so far is in the log."""

    def _raise_if_failed(self) -> None:
        error = self._log.error
        if error is not None:
            raise EngineFailed(
                f"the connector stopped with an error: {type(error).__name__}: {error}"
            ) from error
