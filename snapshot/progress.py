"""Showing a snapshot's progress: on an interactive terminal, an overall rich progress bar (rows of all
tables against their estimates, with the time remaining) above one bar per table; periodic log lines
(Debezium's "Exported N of M records for table ..." every 10 s) everywhere else."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Mapping
from typing import Any, Protocol, TextIO

from mysql_cdc_base.table_id import TableId

log = logging.getLogger("snapshot.progress")

LOG_INTERVAL_SECONDS = 10.0


def _duration(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600:d}:{whole % 3600 // 60:02d}:{whole % 60:02d}.{int(seconds * 1000) % 1000:03d}"


class ProgressReporter(Protocol):
    def planned(self, estimates: Mapping[TableId, int | None]) -> None:
        """The tables to be read, with their row estimates (None: unknown), before the first."""

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

    def planned(self, estimates: Mapping[TableId, int | None]) -> None:
        known = [e for e in estimates.values() if e is not None]
        self.log.info(
            "Snapshot of %d tables, about %d rows by the servers' estimates%s",
            len(estimates),
            sum(known),
            "" if len(known) == len(estimates) else f" ({len(estimates) - len(known)} without one)",
        )

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
    """Live progress bars: all tables together (rows done against the estimates, time remaining),
    then one per table (rows done / estimated rows, rate, elapsed time)."""

    def __init__(self, stream: TextIO | None = None, width: int | None = None) -> None:
        from rich.console import Console  # noqa: PLC0415 - only for an interactive terminal
        from rich.progress import (  # noqa: PLC0415
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=stream or sys.stderr, width=width),
            transient=False,
        )
        self._tasks: dict[TableId, Any] = {}
        self._totals: dict[TableId, int | None] = {}
        self._started: dict[TableId, float] = {}
        self._rows: dict[TableId, int] = {}
        self._overall: Any = None
        self._overall_total = 0
        self._planned: set[TableId] = set()
        self._overall_started = time.monotonic()
        self._progress.start()

    def planned(self, estimates: Mapping[TableId, int | None]) -> None:
        self._overall_total = sum(e for e in estimates.values() if e is not None)
        self._overall_started = time.monotonic()
        self._planned = set(estimates)
        self._overall = self._progress.add_task(
            f"all {len(estimates)} tables", total=self._overall_total or None, rate=""
        )

    def table_started(self, table_id: TableId, estimated_rows: int | None, order: int, count: int) -> None:
        self._tasks[table_id] = self._progress.add_task(
            f"{table_id} ({order}/{count})", total=estimated_rows, rate=""
        )
        self._totals[table_id] = estimated_rows
        self._started[table_id] = time.monotonic()
        self._rows[table_id] = 0

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
        self._rows[table_id] = rows_done
        self._update_overall()

    def table_finished(self, table_id: TableId, rows: int) -> None:
        task = self._tasks.pop(table_id)
        self._progress.update(task, total=rows, completed=rows)
        self._started.pop(table_id, None)
        self._totals.pop(table_id, None)
        self._rows[table_id] = rows
        self._planned.discard(table_id)
        self._update_overall()

    def _update_overall(self) -> None:
        if self._overall is None:
            return
        done = sum(self._rows.values())
        if not self._planned:  # every table read: the estimates give way to the rows read
            self._overall_total = done
            self._progress.update(self._overall, total=done)
        elapsed = time.monotonic() - self._overall_started
        rate = f"{done / elapsed:,.0f} rows/s" if elapsed > 0 else ""
        if done > self._overall_total:  # estimates are low: the total grows, the ETA stays honest
            self._overall_total = done
            self._progress.update(self._overall, total=done)
        self._progress.update(self._overall, completed=done, rate=rate)

    def close(self) -> None:
        self._progress.stop()


class NoProgress:
    def planned(self, estimates: Mapping[TableId, int | None]) -> None:
        pass

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
