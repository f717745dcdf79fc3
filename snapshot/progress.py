"""Showing a snapshot's progress: a rich progress bar per table on an interactive terminal, periodic
log lines (Debezium's "Exported N of M records for table ..." every 10 s) everywhere else."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any, Protocol, TextIO

from ddl.model import TableId

log = logging.getLogger("snapshot.progress")

LOG_INTERVAL_SECONDS = 10.0


def _duration(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600:d}:{whole % 3600 // 60:02d}:{whole % 60:02d}.{int(seconds * 1000) % 1000:03d}"


class ProgressReporter(Protocol):
    def table_started(
        self, table_id: TableId, estimated_rows: int | None, order: int, count: int
    ) -> None: ...

    def advance(self, table_id: TableId, rows_done: int) -> None: ...

    def table_finished(self, table_id: TableId, rows: int) -> None: ...

    def close(self) -> None: ...


class _TableClock:
    __slots__ = ("estimate", "next_log", "order", "rows", "started")

    def __init__(self, estimate: int | None, order: int) -> None:
        self.started = time.monotonic()
        self.next_log = self.started + LOG_INTERVAL_SECONDS
        self.estimate = estimate
        self.order = order
        self.rows = 0


class LogProgress:
    """Log lines: one when a table starts, one every ``interval`` seconds, one when it is done."""

    def __init__(self, interval: float = LOG_INTERVAL_SECONDS, logger: logging.Logger = log) -> None:
        self.interval = interval
        self.log = logger
        self._tables: dict[TableId, _TableClock] = {}
        self._count = 0

    def table_started(self, table_id: TableId, estimated_rows: int | None, order: int, count: int) -> None:
        clock = _TableClock(estimated_rows, order)
        clock.next_log = clock.started + self.interval
        self._tables[table_id] = clock
        self._count = count
        self.log.info("Exporting data from table '%s' (%d of %d tables)", table_id, order, count)

    def advance(self, table_id: TableId, rows_done: int) -> None:
        clock = self._tables[table_id]
        clock.rows = rows_done
        now = time.monotonic()
        if now < clock.next_log:
            return
        clock.next_log = now + self.interval
        elapsed = now - clock.started
        rate = rows_done / elapsed if elapsed > 0 else 0.0
        if clock.estimate is not None:
            self.log.info(
                "\t Exported %d of %d records for table '%s' after %s (%.0f rows/s)",
                rows_done,
                clock.estimate,
                table_id,
                _duration(elapsed),
                rate,
            )
        else:
            self.log.info(
                "\t Exported %d records for table '%s' after %s (%.0f rows/s)",
                rows_done,
                table_id,
                _duration(elapsed),
                rate,
            )

    def table_finished(self, table_id: TableId, rows: int) -> None:
        clock = self._tables.pop(table_id)
        self.log.info(
            "\t Finished exporting %d records for table '%s' (%d of %d tables); total duration '%s'",
            rows,
            table_id,
            clock.order,
            self._count,
            _duration(time.monotonic() - clock.started),
        )

    def close(self) -> None:
        self._tables.clear()


class RichProgress:
    """A live progress bar per table: rows done / estimated rows, rate, elapsed time."""

    def __init__(self, stream: TextIO | None = None, width: int | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            console=Console(file=stream or sys.stderr, width=width),
            transient=False,
        )
        self._tasks: dict[TableId, Any] = {}
        self._totals: dict[TableId, int | None] = {}
        self._started: dict[TableId, float] = {}
        self._progress.start()

    def table_started(self, table_id: TableId, estimated_rows: int | None, order: int, count: int) -> None:
        self._tasks[table_id] = self._progress.add_task(
            f"{table_id} ({order}/{count})", total=estimated_rows, rate=""
        )
        self._totals[table_id] = estimated_rows
        self._started[table_id] = time.monotonic()

    def advance(self, table_id: TableId, rows_done: int) -> None:
        task = self._tasks[table_id]
        elapsed = time.monotonic() - self._started[table_id]
        rate = f"{rows_done / elapsed:,.0f} rows/s" if elapsed > 0 else ""
        total = self._totals.get(table_id)
        # The estimate (SHOW TABLE STATUS) can be low; never show more than 100 %.
        if total is not None and rows_done > total:
            self._totals[table_id] = rows_done
            self._progress.update(task, total=rows_done)
        self._progress.update(task, completed=rows_done, rate=rate)

    def table_finished(self, table_id: TableId, rows: int) -> None:
        task = self._tasks.pop(table_id)
        self._progress.update(task, total=rows, completed=rows)
        self._started.pop(table_id, None)
        self._totals.pop(table_id, None)

    def close(self) -> None:
        self._progress.stop()


class NoProgress:
    def table_started(self, table_id: TableId, estimated_rows: int | None, order: int, count: int) -> None:
        pass

    def advance(self, table_id: TableId, rows_done: int) -> None:
        pass

    def table_finished(self, table_id: TableId, rows: int) -> None:
        pass

    def close(self) -> None:
        pass


def auto_progress(stream: TextIO | None = None) -> ProgressReporter:
    """A progress bar when ``stream`` (stderr) is a terminal, log lines otherwise."""
    stream = stream or sys.stderr
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):
        interactive = False
    return RichProgress(stream) if interactive else LogProgress()
