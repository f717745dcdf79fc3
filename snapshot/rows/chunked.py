"""Chunked snapshot: each table with a primary key is split into key ranges that reader processes
read at once, all inside the snapshot's one consistent view; rows are emitted in key order.

Debezium (3.5+, ``snapshot.max.threads`` > 1 without ``legacy.snapshot.max.threads``) splits every
table with a key into ``snapshot.max.threads`` x ``snapshot.max.threads.multiplier`` key ranges
(boundaries read with ``ORDER BY key LIMIT 1 OFFSET n``), a keyless table into one chunk, and reads
the chunks of all tables on a pool of connections; rows of different chunks of a table interleave,
only the markers are ordered (``first`` before anything, ``last_in_data_collection`` after every
other chunk of its table, ``last`` after every other table). This module emits a stricter order
that Debezium's also allows: tables one after the other in snapshot order, each table's rows in key
order (chunk after chunk). The markers are then exactly those of a one-thread snapshot.

Because the parent emits chunks in order, a reader ahead of it waits on its bounded queue; to keep
every reader busy the table is cut into more, smaller chunks than Debezium's count (at least one per
``CHUNK_ROWS`` estimated rows), and chunk ``i`` goes to reader ``i mod N``, so the parent reads the
readers' queues round robin and memory stays at N x ``QUEUE_BATCHES`` batches.

The readers are processes (``spawn``): pymysql decodes rows in Python, and threads would decode one
row at a time under the GIL. Each opens its connection before the lock is taken and starts its
``START TRANSACTION WITH CONSISTENT SNAPSHOT`` while the lock is still held (as Debezium's extra
snapshot connections do), so every reader sees the table exactly as of the binlog position.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pymysql

from mysql_cdc_base.table_id import TableId
from snapshot.errors import SnapshotCancelled, SnapshotError
from snapshot.listener import SnapshotListener
from snapshot.policy.queries import quote_identifier, quote_table
from snapshot.progress import ProgressReporter
from snapshot.rows.chunk_worker import BEGUN, DONE, ERROR, READY, ROWS, reader_main
from snapshot.rows.scan import Row, Specials, TableJob, batch_markers, emit_table

log = logging.getLogger(__name__)

Key = tuple[Any, ...]

# A table is cut into at least one chunk per this many estimated rows (see the module docstring):
# about what a reader's queue holds, so that while the parent drains chunk i from one reader, the
# next reader can read all of chunk i+1 instead of stalling on a full queue.
CHUNK_ROWS = 20_000
# Batches a reader may hold ready before the parent takes them.
QUEUE_BATCHES = 24
# Seconds to wait for a reader process to start and connect, or to begin its transaction.
READER_START_TIMEOUT = 60.0
_POLL_SECONDS = 0.2


@dataclass(frozen=True)
class Chunk:
    """One key range of a table: ``sql``/``params`` read it in key order."""

    job: TableJob
    number: int  # 0-based within the table
    count: int  # chunks of the table
    sql: str
    params: tuple[Any, ...]


# -- planning (pure, plus the two catalogue reads) ---------------------------------------------------
def primary_key(cur: Any, table_id: TableId) -> tuple[str, ...]:
    """The table's primary key columns in key order (empty: no primary key). Debezium orders its
    chunks by the primary key (or ``message.key.columns``); unique keys are not used."""
    cur.execute(f"SHOW KEYS FROM {quote_table(table_id)} WHERE Key_name = 'PRIMARY'")
    rows = cur.fetchall()
    # SHOW KEYS columns: Table, Non_unique, Key_name, Seq_in_index, Column_name, ...
    return tuple(_text(row[4]) for row in sorted(rows, key=lambda r: int(r[3])))


def chunk_count(estimated_rows: int | None, threads: int, multiplier: int) -> int:
    """How many key ranges to cut a table into (1: read it whole)."""
    if not estimated_rows or threads < 2:
        return 1
    wanted = max(threads * multiplier, -(-estimated_rows // CHUNK_ROWS))
    return max(1, min(wanted, estimated_rows))


def chunk_boundaries(cur: Any, table_id: TableId, key: Sequence[str], chunks: int, rows: int) -> list[Key]:
    """Keys that cut the table into ``chunks`` ranges of about equal size, in one pass over the key
    (a window function numbers the keys; every ``rows // chunks``-th one is a boundary)."""
    if chunks < 2:
        return []
    keys = ", ".join(map(quote_identifier, key))

    def every(step: int) -> list[Key]:
        cur.execute(
            f"SELECT {keys} FROM (SELECT {keys}, ROW_NUMBER() OVER (ORDER BY {keys}) AS mysql_cdc_rn "
            f"FROM {quote_table(table_id)}) AS numbered WHERE MOD(mysql_cdc_rn, %s) = 0 "
            f"ORDER BY mysql_cdc_rn LIMIT %s",
            (step, chunks - 1),
        )
        return [tuple(row) for row in cur.fetchall()]

    boundaries = every(max(1, rows // chunks))
    if len(boundaries) < chunks - 1 and rows >= chunks:
        # The row estimate was high (InnoDB statistics): cut again by the exact count, so the
        # table still gets the chunks snapshot.max.threads x multiplier promise.
        cur.execute(f"SELECT COUNT(*) FROM {quote_table(table_id)}")
        boundaries = every(max(1, int(cur.fetchone()[0]) // chunks))
    return boundaries


def _key_compare_sql(columns: Sequence[str], values: Key, last: str) -> tuple[str, list[Any]]:
    """``key > values`` (``last`` ``>``) or ``key <= values`` (``last`` ``<=``) for a primary key
    (never NULL), written so that the range optimizer can use the key: a bound on its first column,
    and the lexicographic comparison as an OR chain."""
    strict = ">" if last == ">" else "<"
    first = ">=" if last == ">" else "<="
    terms: list[str] = []
    params: list[Any] = []
    for index, column in enumerate(columns):
        parts = [f"{quote_identifier(prior)} = %s" for prior in columns[:index]]
        params.extend(values[:index])
        op = last if index == len(columns) - 1 else strict
        parts.append(f"{quote_identifier(column)} {op} %s")
        params.append(values[index])
        terms.append("(" + " AND ".join(parts) + ")")
    head = f"{quote_identifier(columns[0])} {first} %s"
    return f"{head} AND ({' OR '.join(terms)})", [values[0], *params]


def chunk_statements(
    select: str, key: Sequence[str], boundaries: Sequence[Key]
) -> list[tuple[str, tuple[Any, ...]]]:
    """One SELECT per range ``(b[i-1], b[i]]`` (the first without a lower, the last without an upper
    bound), each in key order, so that every row is in exactly one range."""
    order = " ORDER BY " + ", ".join(map(quote_identifier, key))
    bounds: list[Key | None] = [None, *boundaries, None]
    statements = []
    for lower, upper in zip(bounds, bounds[1:], strict=False):
        conditions: list[str] = []
        params: list[Any] = []
        for bound, comparison in ((lower, ">"), (upper, "<=")):
            if bound is not None:
                sql, values = _key_compare_sql(key, bound, comparison)
                conditions.append(sql)
                params.extend(values)
        where = " WHERE " + " AND ".join(conditions) if conditions else ""
        statements.append((f"{select}{where}{order}", tuple(params)))
    return statements


def plan_chunks(
    cur: Any,
    jobs: Sequence[TableJob],
    threads: int,
    multiplier: int,
    splittable: Callable[[TableJob], bool],
) -> list[Chunk]:
    """Every table's chunks in snapshot order. A table is read whole (one chunk, its own SELECT)
    when ``splittable`` says no (select overrides, custom queries), when it has no primary key, or
    when it is too small to cut."""
    chunks: list[Chunk] = []
    for job in jobs:
        key = primary_key(cur, job.table_id) if splittable(job) else ()
        count = chunk_count(job.estimated_rows, threads, multiplier) if key else 1
        if count < 2:
            if not key:
                log.info("Table '%s' has no primary key (or a custom SELECT): one chunk", job.table_id)
            chunks.append(Chunk(job, 0, 1, job.select, ()))
            continue
        boundaries = chunk_boundaries(cur, job.table_id, key, count, job.estimated_rows or 0)
        statements = chunk_statements(job.select, key, boundaries)
        log.info("Table '%s' will be processed in %d chunks", job.table_id, len(statements))
        chunks.extend(Chunk(job, i, len(statements), sql, p) for i, (sql, p) in enumerate(statements))
    return chunks


# -- the reader processes -------------------------------------------------------------------------
class ReaderPool:
    """``readers`` processes, each with its own connection, reading the chunks given to ``submit``;
    ``batches`` hands a chunk's rows back in order. ``close`` stops them (also on errors)."""

    def __init__(self, connect: Callable[[], Any], readers: int, batch_rows: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._commands = [context.Queue() for _ in range(readers)]
        self._results = [context.Queue(maxsize=QUEUE_BATCHES) for _ in range(readers)]
        self._processes = [
            context.Process(
                target=reader_main,
                args=(connect, self._commands[i], self._results[i], batch_rows),
                name=f"snapshot-chunk-reader-{i}",
                daemon=True,
            )
            for i in range(readers)
        ]
        self.readers = readers

    def start(self, cancelled: threading.Event) -> None:
        for process in self._processes:
            process.start()
        try:
            self._expect_all(READY, cancelled)
        except SnapshotError as exc:
            # The usual cause: 'spawn' re-imports the program's main module in every reader, and a
            # module that starts the connector at import time (no __main__ guard) cannot be imported.
            raise SnapshotError(
                f"{exc}. The snapshot.max.threads={self.readers} readers are processes started with "
                "multiprocessing 'spawn': the program's main module must start the connector only under "
                "if __name__ == '__main__':, and the connect callable must be importable; or set "
                "legacy.snapshot.max.threads=true (threads, one table each)"
            ) from exc

    def begin(self, cancelled: threading.Event) -> None:
        """Every reader starts its consistent-snapshot transaction (call it while the lock is held)."""
        for commands in self._commands:
            commands.put(("begin",))
        self._expect_all(BEGUN, cancelled)

    def _expect_all(self, kind: str, cancelled: threading.Event) -> None:
        for reader in range(self.readers):
            message = self._receive(reader, cancelled, READER_START_TIMEOUT)
            if message[0] != kind:
                raise SnapshotError(f"snapshot chunk reader {reader}: expected {kind}, got {message[0]}")

    def submit(self, chunks: Sequence[Chunk]) -> None:
        """Chunk ``i`` goes to reader ``i mod readers``; each reader reads its chunks in order."""
        for i, chunk in enumerate(chunks):
            self._commands[i % self.readers].put(("chunk", i, chunk.sql, chunk.params))

    def batches(self, index: int, chunk: Chunk, cancelled: threading.Event) -> Iterator[list[Row]]:
        reader = index % self.readers
        while True:
            kind, got, payload = self._receive(reader, cancelled, None)
            if kind == ERROR:
                raise SnapshotError(
                    f"reading chunk {chunk.number + 1} of {chunk.count} of {chunk.job.table_id} "
                    f"({chunk.sql}) failed: {payload}"
                )
            if got != index:
                raise SnapshotError(f"snapshot chunk reader {reader}: chunk {got} arrived, {index} expected")
            if kind == DONE:
                return
            if kind == ROWS:
                yield payload

    def _receive(
        self, reader: int, cancelled: threading.Event, timeout: float | None
    ) -> tuple[str, int, Any]:
        waited = 0.0
        results = self._results[reader]
        while True:
            if cancelled.is_set():
                raise SnapshotCancelled("snapshot cancelled while reading chunks")
            try:
                message: tuple[str, int, Any] = results.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                waited += _POLL_SECONDS
                if not self._processes[reader].is_alive() and results.empty():
                    code = self._processes[reader].exitcode
                    raise SnapshotError(f"snapshot chunk reader {reader} exited (code {code})") from None
                if timeout is not None and waited >= timeout:
                    raise SnapshotError(
                        f"snapshot chunk reader {reader} did not answer within {timeout:.0f} s"
                    ) from None
                continue
            if message[0] == ERROR and message[1] < 0:
                raise SnapshotError(f"snapshot chunk reader {reader} failed: {message[2]}")
            return message

    def close(self) -> None:
        """Stop the readers: politely when they are idle, by force when they are mid-chunk."""
        for commands in self._commands:
            with contextlib.suppress(Exception):
                commands.put(("stop",))
        for process in self._processes:
            if process.pid is None:  # never started (an earlier one failed to)
                continue
            process.join(timeout=2)
            if process.is_alive():
                process.terminate()
                process.join(timeout=2)
        for q in (*self._commands, *self._results):
            q.cancel_join_thread()
            q.close()


# -- emitting ----------------------------------------------------------------------------------------
def _with_markers(batches: Iterator[list[Row]], job: TableJob) -> Iterator[tuple[list[Row], Specials]]:
    """The table's non-empty batches with their markers (one batch of lookahead finds the last)."""
    pending: list[Row] | None = None
    first = True
    for batch in batches:
        if not batch:
            continue
        if pending is not None:
            specials = (
                batch_markers(len(pending), True, False, job.first_table, job.last_table) if first else ()
            )
            yield pending, specials
            first = False
        pending = batch
    if pending is not None:
        yield pending, batch_markers(len(pending), first, True, job.first_table, job.last_table)


def scan_chunked(
    conn: pymysql.connections.Connection,
    pool: ReaderPool,
    chunks: Sequence[Chunk],
    listener: SnapshotListener,
    progress: ProgressReporter,
    cancelled: threading.Event,
) -> dict[TableId, int]:
    """Emit every chunk's rows, table after table, chunk after chunk; listener calls stay on the
    calling thread. ``conn`` (the snapshot's main connection) reads the tables' ``source.ts_ms``."""
    pool.submit(chunks)
    counts: dict[TableId, int] = {}
    cur = conn.cursor()
    start = 0
    while start < len(chunks):
        job = chunks[start].job
        end = start + chunks[start].count

        def table_batches(first: int = start, last: int = end) -> Iterator[list[Row]]:
            for index in range(first, last):
                yield from pool.batches(index, chunks[index], cancelled)

        counts[job.table_id] = emit_table(cur, job, _with_markers(table_batches(), job), listener, progress)
        start = end
    return counts


def _text(value: Any) -> str:
    return bytes(value).decode() if isinstance(value, bytes | bytearray) else str(value)
