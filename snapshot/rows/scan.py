"""Reading the captured tables' rows: one streaming SELECT per table, one-row lookahead for the
snapshot markers, serial or on several connections at once.

Rows are streamed with pymysql's ``SSCursor`` (the server sends the result as it produces it and the
client reads it packet by packet), so memory is bounded by the batch size, never by the table size.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pymysql
import pymysql.cursors

from mysql_cdc_base.table_id import TableId
from snapshot.errors import SnapshotCancelled
from snapshot.listener import TRUE, SnapshotListener, resolve_marker
from snapshot.progress import ProgressReporter

log = logging.getLogger(__name__)

DEFAULT_BATCH_ROWS = 1024
# Batches buffered between the parallel readers and the listener's thread.
PARALLEL_QUEUE_BATCHES = 32

Row = tuple[Any, ...]
Specials = tuple[tuple[int, str], ...]  # (index in batch, marker) for the rows that are not "true"


@dataclass(frozen=True)
class TableJob:
    table_id: TableId
    select: str
    estimated_rows: int | None
    order: int  # 0-based position in the snapshot order
    count: int  # number of tables in the snapshot

    @property
    def first_table(self) -> bool:
        return self.order == 0

    @property
    def last_table(self) -> bool:
        return self.order == self.count - 1


def batch_markers(
    size: int, first_batch: bool, final_batch: bool, first_table: bool, last_table: bool
) -> Specials:
    """Markers of the rows of one batch that are not plain "true": its first row when the batch is
    the table's first, its last row when the batch is the table's last."""
    marks: dict[int, str] = {}
    single = size == 1
    if first_batch:
        marks[0] = resolve_marker(
            first_table, last_table and final_batch and single, True, final_batch and single
        )
    if final_batch:
        marks[size - 1] = resolve_marker(
            first_table and first_batch and single, last_table, first_batch and single, True
        )
    return tuple(marks.items())


def _forget_result(cursor: Any) -> None:
    # pymysql's ``MySQLResult.__del__`` reads an unfinished streaming result to its end, which for an
    # aborted scan of a huge table means reading the whole table. The connection is closed instead
    # (the caller abandons it), so tell the result there is nothing left to drain.
    result = getattr(cursor, "_result", None)
    if result is not None:
        result.unbuffered_active = False


def scan_batches(
    conn: pymysql.connections.Connection, job: TableJob, batch_rows: int, cancelled: threading.Event
) -> Iterator[tuple[list[Row], Specials, bool]]:
    """(rows, specials, final) per batch of the table's SELECT, with the markers already resolved.

    The next batch is read before the current one is handed out: that lookahead is how the last row
    is known to be the last. If the scan is abandoned (exception, generator closed) the connection is
    left mid-result and must be closed by the caller."""
    cursor = conn.cursor(pymysql.cursors.SSCursor)
    try:
        cursor.execute(job.select)
        fetch = cursor.fetchmany
        batch = fetch(batch_rows)
        first = True
        while batch:
            if cancelled.is_set():
                raise SnapshotCancelled(f"snapshot cancelled while reading {job.table_id}")
            following = fetch(batch_rows)
            final = not following
            specials: Specials = ()
            if first or final:
                specials = batch_markers(len(batch), first, final, job.first_table, job.last_table)
            yield batch, specials, final
            first = False
            batch = following
    except BaseException:
        _forget_result(cursor)
        raise
    # Every row was read: closing is cheap now (no result left to drain).
    cursor.close()


def deliver(
    listener_row: Callable[[TableId, Row, str], None], table_id: TableId, rows: list[Row], specials: Specials
) -> None:
    if specials:
        marks = dict(specials)
        for index, row in enumerate(rows):
            listener_row(table_id, row, marks.get(index, TRUE))
    else:
        for row in rows:
            listener_row(table_id, row, TRUE)


def source_ts_ms(cursor: Any) -> int:
    """The server clock for ``source.ts_ms``, at second precision like Debezium's
    ``SELECT CURRENT_TIMESTAMP`` (read as an epoch so the session time zone does not matter)."""
    cursor.execute("SELECT UNIX_TIMESTAMP()")
    (value,) = cursor.fetchone()
    return int(value) * 1000


class TableScan(NamedTuple):
    """Reading the rows of ``jobs`` to ``listener``, ``batch_rows`` at a time, until ``cancelled``:
    ``serial`` on one connection, or ``parallel`` on several. Each returns the rows read per table."""

    jobs: Sequence[TableJob]
    listener: SnapshotListener
    progress: ProgressReporter
    batch_rows: int
    cancelled: threading.Event

    def serial(self, conn: pymysql.connections.Connection) -> dict[TableId, int]:
        """One table after the other on ``conn``."""
        counts: dict[TableId, int] = {}
        cur = conn.cursor()
        for job in self.jobs:
            batches = (
                (rows, specials)
                for rows, specials, _final in scan_batches(conn, job, self.batch_rows, self.cancelled)
            )
            counts[job.table_id] = emit_table(cur, job, batches, self.listener, self.progress)
        return counts

    def parallel(self, connections: Sequence[pymysql.connections.Connection]) -> dict[TableId, int]:
        """Each connection (already inside the shared consistent snapshot) reads whole tables, taking
        the next table in snapshot order when done. Listener calls stay on the calling thread."""
        readers = _TableReaders(self.jobs, self.batch_rows, self.cancelled)
        threads = readers.start(connections)
        try:
            return readers.deliver(self.listener, self.progress)
        finally:
            readers.close(threads)


def emit_table(
    cur: Any,
    job: TableJob,
    batches: Iterable[tuple[list[Row], Specials]],
    listener: SnapshotListener,
    progress: ProgressReporter,
) -> int:
    """One table's rows to the listener, between its start (with ``source.ts_ms`` read through
    ``cur``) and its end, with progress; returns the number of rows."""
    listener.on_table_start(job.table_id, job.estimated_rows, source_ts_ms(cur))
    progress.table_started(job.table_id, job.estimated_rows, job.order + 1, job.count)
    on_row = listener.on_row
    done = 0
    for rows, specials in batches:
        deliver(on_row, job.table_id, rows, specials)
        done += len(rows)
        progress.advance(job.table_id, done)
    progress.table_finished(job.table_id, done)
    listener.on_table_end(job.table_id, done)
    return done


class _Coordinator:
    """Keeps Debezium's marker order when tables are read in parallel: nothing is emitted before the
    first table's first row ("first"), and the last table's last row ("last") waits for every other
    table to finish."""

    def __init__(self, count: int, stop: threading.Event) -> None:
        self.first_emitted = threading.Event()
        self._others_left = count - 1
        self._cond = threading.Condition()
        self._stop = stop

    def wait_first(self) -> None:
        while not self.first_emitted.wait(0.1):
            if self._stop.is_set():
                raise SnapshotCancelled("snapshot aborted")

    def table_done(self, job: TableJob) -> None:
        if not job.last_table:
            with self._cond:
                self._others_left -= 1
                self._cond.notify_all()

    def wait_others(self) -> None:
        with self._cond:
            while self._others_left > 0:
                if self._stop.is_set():
                    raise SnapshotCancelled("snapshot aborted")
                self._cond.wait(0.1)


class _TableReaders:
    """``TableScan.parallel``'s reader threads, one per connection, and the queue of their messages
    (``start``/``rows``/``end`` of a table, ``exit``, ``error``) that the calling thread delivers."""

    def __init__(self, jobs: Sequence[TableJob], batch_rows: int, cancelled: threading.Event) -> None:
        self.todo: queue.SimpleQueue[TableJob] = queue.SimpleQueue()
        for job in jobs:
            self.todo.put(job)
        self.messages: queue.Queue[tuple[str, Any, Any]] = queue.Queue(maxsize=PARALLEL_QUEUE_BATCHES)
        self.stop = threading.Event()
        self.coord = _Coordinator(len(jobs), self.stop)
        self.batch_rows = batch_rows
        self.cancelled = cancelled
        self.running = 0  # reader threads that have not said ``exit`` yet

    def start(self, connections: Sequence[pymysql.connections.Connection]) -> list[threading.Thread]:
        threads = [
            threading.Thread(target=self.worker, args=(conn,), name=f"snapshot-reader-{i}", daemon=True)
            for i, conn in enumerate(connections)
        ]
        for thread in threads:
            thread.start()
        self.running = len(threads)
        return threads

    def put(self, message: tuple[str, Any, Any]) -> None:
        while True:
            if self.stop.is_set():
                raise SnapshotCancelled("snapshot aborted")
            try:
                self.messages.put(message, timeout=0.1)
                return
            except queue.Full:
                continue

    def read_table(self, conn: pymysql.connections.Connection, cur: Any, job: TableJob) -> None:
        coord = self.coord
        self.put(("start", job, source_ts_ms(cur)))
        if not job.first_table:
            coord.wait_first()
        done = 0
        try:
            for rows, specials, final in scan_batches(conn, job, self.batch_rows, self.cancelled):
                if final and job.last_table:
                    coord.wait_others()
                self.put(("rows", job, (rows, specials)))
                done += len(rows)
                if job.first_table:
                    coord.first_emitted.set()
        finally:
            if job.first_table:
                coord.first_emitted.set()  # also when the first table is empty
        coord.table_done(job)
        self.put(("end", job, done))

    def worker(self, conn: pymysql.connections.Connection) -> None:
        try:
            cur = conn.cursor()
            while not self.stop.is_set():
                try:
                    job = self.todo.get_nowait()
                except queue.Empty:
                    break
                self.read_table(conn, cur, job)
            self.put(("exit", None, None))
        except BaseException as exc:  # handed to the listener's thread, which re-raises it
            with contextlib.suppress(SnapshotCancelled):
                self.put(("error", None, exc))

    def deliver(self, listener: SnapshotListener, progress: ProgressReporter) -> dict[TableId, int]:
        """The readers' messages to the listener and the progress, on this thread, until every reader
        has exited (an error one of them hands over is raised here). Returns the rows per table."""
        counts: dict[TableId, int] = {}
        done_rows: dict[TableId, int] = {}
        on_row = listener.on_row
        messages = self.messages
        while self.running:
            kind, job, payload = messages.get()
            if kind == "rows":
                rows, specials = payload
                deliver(on_row, job.table_id, rows, specials)
                done_rows[job.table_id] = done_rows.get(job.table_id, 0) + len(rows)
                progress.advance(job.table_id, done_rows[job.table_id])
            elif kind == "start":
                listener.on_table_start(job.table_id, job.estimated_rows, payload)
                progress.table_started(job.table_id, job.estimated_rows, job.order + 1, job.count)
            elif kind == "end":
                counts[job.table_id] = payload
                progress.table_finished(job.table_id, payload)
                listener.on_table_end(job.table_id, payload)
            elif kind == "exit":
                self.running -= 1
            else:  # error
                raise payload
        return counts

    def close(self, threads: Sequence[threading.Thread]) -> None:
        self.stop.set()
        if self.running:
            # Unblock readers waiting on a full queue so they can see ``stop`` and exit.
            while any(t.is_alive() for t in threads):
                with contextlib.suppress(queue.Empty):
                    self.messages.get(timeout=0.05)
        for thread in threads:
            thread.join(timeout=5)
