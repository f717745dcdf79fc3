"""Several chunks per incremental snapshot window (``incremental.snapshot.max.threads`` > 1).

With N threads a window holds N chunks' worth of rows: the N x ``incremental.snapshot.chunk.size``
rows after the last key emitted. The main connection finds N - 1 boundary keys (every chunk-size-th
row after the last key, ``ORDER BY key LIMIT 1 OFFSET chunk - 1`` from the previous boundary, the way
Debezium's chunked snapshot finds its boundaries), which cut the window into N key sub-ranges:

    (last key, b1], (b1, b2], ..., (b[N-1], maximum key] LIMIT chunk size

The bounded sub-ranges are read without a LIMIT: a row inserted between the boundary query and the
read is still read (a LIMIT would cut the range short, and the next window starts after the window's
largest key, so the rows cut off would never be read). Only the last, open-ended sub-range has the
chunk's LIMIT, as the one-chunk window has.

The sub-ranges are read at once by the chunked initial snapshot's reader processes
(``snapshot.rows.chunked.ReaderPool``: pymysql decodes rows in Python, and threads would decode one row at
a time under the GIL). Each window starts a fresh ``START TRANSACTION WITH CONSISTENT SNAPSHOT`` in
every reader, after the open watermark was written, and the close watermark is written after every
sub-range was read: every row is read inside the window, as with one connection. Once all are read,
every reader starts a new transaction again, so that no transaction holds the table's metadata lock
between windows (a DDL of the table would wait for it). Sub-range ``i`` goes to reader ``i``; the
caller takes reader 0's rows, then reader 1's, ...: the ranges are disjoint and ascending and each is
read in key order, so the window is in key order. Memory is the window's rows
(N chunks) plus the readers' bounded queues.

The boundary queries select every column, so a table whose structure changed ahead of the stream
fails on the main connection (its server error code is kept, and the snapshot waits for the DDL)
before any reader is asked. A reader's error comes back as text: the window's first row is then read
on the main connection, which raises the server's own error when the structure changed between the
boundary query and the reader's read; any other reader error fails the snapshot.
"""

from __future__ import annotations

import logging
import pickle
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pymysql

from connector.errors import ConfigError
from snapshot.errors import SnapshotError
from snapshot.rows.chunked import Chunk, ReaderPool
from snapshot.rows.chunks import ChunkQuery, Key, Row, read_chunk
from snapshot.rows.scan import TableJob

log = logging.getLogger(__name__)

PROPERTY = "incremental.snapshot.max.threads"
# Rows per batch a reader hands over: the readers' queues hold a few chunks, so reader i + 1 reads
# its whole sub-range while the caller still takes reader i's rows.
_BATCHES_PER_CHUNK = 8


def is_picklable(value: object) -> bool:
    """Whether ``value`` can be handed to a spawned process (lambdas and closures cannot)."""
    try:
        pickle.dumps(value)
    except Exception:  # any pickling failure means "no"
        return False
    return True


def window_boundaries(
    conn: pymysql.connections.Connection,
    query: ChunkQuery,
    after: Key | None,
    maximum: Key,
    sub_ranges: int,
    chunk_size: int,
) -> list[Key]:
    """Up to ``sub_ranges - 1`` keys, each ``chunk_size`` rows after the previous one (the first
    after ``after``); fewer when the table has fewer rows left."""
    boundaries: list[Key] = []
    lower = after
    with conn.cursor() as cur:
        for _ in range(sub_ranges - 1):
            sql, params = query.row_at_sql(lower, maximum, chunk_size - 1)
            cur.execute(sql, params)
            row = cur.fetchone()
            if row is None:
                break
            lower = query.key_of(tuple(row))
            boundaries.append(lower)
    return boundaries


def sub_range_statements(
    query: ChunkQuery, after: Key | None, maximum: Key, boundaries: Sequence[Key], chunk_size: int
) -> list[tuple[str, list[Any]]]:
    """One SELECT per sub-range (module docstring): bounded ranges whole, the last one limited."""
    lowers: list[Key | None] = [after, *boundaries]
    statements = [
        query.chunk_sql(lower, upper, None) for lower, upper in zip(lowers, boundaries, strict=False)
    ]
    statements.append(query.chunk_sql(lowers[-1], maximum, chunk_size))
    return statements


def _probe(conn: pymysql.connections.Connection, query: ChunkQuery, after: Key | None, maximum: Key) -> None:
    """The window's first row read on ``conn``: raises the server's error if the table's structure
    no longer matches the query."""
    sql, params = query.row_at_sql(after, maximum, 0)
    with conn.cursor() as cur:
        cur.execute(sql, params)
        cur.fetchall()


class WindowReaders:
    """``threads`` reader processes that read one window's sub-ranges at once; started at the first
    window that has more than one chunk of rows, stopped by ``close`` (and when a snapshot ends)."""

    def __init__(self, connect: Callable[[], Any], threads: int, chunk_size: int) -> None:
        if not is_picklable(connect):
            raise ConfigError(
                PROPERTY,
                f"{threads} reader processes need a connection factory that pickles (multiprocessing "
                "'spawn'); set it to 1 or pass a picklable connect callable",
            )
        self.threads = threads
        self.chunk_size = chunk_size
        self._connect = connect
        self._pool: ReaderPool | None = None
        self._cancelled = threading.Event()

    def read(
        self, conn: pymysql.connections.Connection, query: ChunkQuery, after: Key | None, maximum: Key
    ) -> list[Row]:
        """The window's rows in key order: N sub-ranges on the readers, or one chunk on ``conn``
        when fewer than two chunks of rows are left."""
        boundaries = window_boundaries(conn, query, after, maximum, self.threads, self.chunk_size)
        if not boundaries:
            return read_chunk(conn, query, after, maximum, self.chunk_size)
        statements = sub_range_statements(query, after, maximum, boundaries, self.chunk_size)
        pool = self._started_pool()
        pool.begin(self._cancelled)  # a fresh read view per window, after the open watermark
        job = TableJob(query.table_id, statements[0][0], None, 0, 1)
        chunks = [
            Chunk(job, i, len(statements), sql, tuple(params)) for i, (sql, params) in enumerate(statements)
        ]
        pool.submit(chunks)
        rows: list[Row] = []
        try:
            for index, chunk in enumerate(chunks):
                for batch in pool.batches(index, chunk, self._cancelled):
                    rows.extend(batch)
            # Ends the transactions that read the window: an open one would hold the table's metadata
            # lock until the next window, and a DDL of the table would wait for it (and every query
            # of the table behind the DDL). What remains until the next window is a read view.
            pool.begin(self._cancelled)
        except SnapshotError:
            self.close()  # a failed reader leaves the others mid-window: the next window starts anew
            # A reader's error arrives as text; when the table changed on the server meanwhile, the
            # same read on the main connection raises the server's error (its code tells the caller
            # to wait for the stream to apply the DDL). Otherwise the reader's error stands.
            _probe(conn, query, after, maximum)
            raise
        except BaseException:
            self.close()
            raise
        return rows

    def _started_pool(self) -> ReaderPool:
        if self._pool is None:
            batch_rows = max(1, -(-self.chunk_size // _BATCHES_PER_CHUNK))
            pool = ReaderPool(self._connect, self.threads, batch_rows)
            try:
                pool.start(self._cancelled)
            except BaseException:
                pool.close()
                raise
            log.info("incremental snapshot: %d reader processes started (%s)", self.threads, PROPERTY)
            self._pool = pool
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
