"""The reader process of a chunked snapshot (``snapshot/rows/chunked.py`` drives it).

Python threads decode pymysql rows one at a time under the GIL, so a chunked snapshot reads its
key ranges in separate processes (multiprocessing ``spawn`` context). This module is what such a
process imports: pymysql and nothing of the connector beyond what its ``connect`` callable needs,
so a reader starts quickly.

Protocol, per reader (``commands`` in, ``results`` out; ``results`` is bounded, so a reader that is
ahead of the parent blocks instead of buffering a whole chunk):

    parent -> ("begin",)                       START TRANSACTION WITH CONSISTENT SNAPSHOT
    reader -> ("begun",)
    parent -> ("chunk", index, sql, params)    read one chunk, streamed
    reader -> ("rows", index, [row, ...]) ...  batches of at most ``batch_rows`` rows
    reader -> ("done", index, rows)
    parent -> ("stop",)                        roll back, close, exit
    reader -> ("error", index, text)           on any failure (then it exits)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pymysql
import pymysql.cursors

READY = "ready"
BEGUN = "begun"
ROWS = "rows"
DONE = "done"
ERROR = "error"


def _read_chunk(conn: Any, results: Any, index: int, sql: str, params: Any, batch_rows: int) -> None:
    cursor = conn.cursor(pymysql.cursors.SSCursor)
    cursor.execute(sql, params)
    count = 0
    fetch = cursor.fetchmany
    while batch := fetch(batch_rows):
        count += len(batch)
        results.put((ROWS, index, batch))
    cursor.close()
    results.put((DONE, index, count))


def reader_main(connect: Callable[[], Any], commands: Any, results: Any, batch_rows: int) -> None:
    """Entry point of one reader process; every failure is reported on ``results`` as text (the
    parent raises it naming the table and chunk)."""
    index = -1
    conn = None
    try:
        conn = connect()
        conn.autocommit(False)
        with conn.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        results.put((READY, -1, None))
        while True:
            command = commands.get()
            kind = command[0]
            if kind == "stop":
                break
            if kind == "begin":
                with conn.cursor() as cur:
                    cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                results.put((BEGUN, -1, None))
                continue
            _, index, sql, params = command
            _read_chunk(conn, results, index, sql, params, batch_rows)
            index = -1
    except BaseException as exc:  # reported to the parent, which stops the snapshot
        results.put((ERROR, index, f"{type(exc).__name__}: {exc}"))
    finally:
        if conn is not None and conn.open:
            with contextlib.suppress(Exception):
                conn.rollback()
            with contextlib.suppress(Exception):
                conn.close()
