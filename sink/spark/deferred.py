"""Deferred current-state MERGEs: the changelog is appended every batch, each table's current state
is folded on its own cadence (``sink.spark.merge.interval.ms``, ``sink.spark.merge.max.rows``).

A batch's rows steps for a keyed table are folded into one pending step per table (the net effect
per key: the later image wins, a truncate restarts it) instead of being MERGEd at once; the pending
step is MERGEd (or appended, when every key's first event was an insert) when it is due, when the
table's next step cannot be folded (a schema change, snapshot rows), before a snapshot, and at
``flush``/``close``. Until then the events are held by the changelog only.

Crash safety: the engine's resume point is never past the oldest event a current-state table has
not folded yet. Every commit records it (``CommitMeta.resume``); after a crash the connector
resumes there, each changelog skips the replayed events it already holds (its commit offset) and
each current state takes those after the offset of its own last fold: nothing lost, nothing
applied twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.table_id import TableId
from sink.spark.batch import EvolveStep, RowsStep


@dataclass
class Pending:
    step: RowsStep
    since: SourceOffset | None  # the resume point before the step's first event
    batch: int  # the batch that deferred the first of its events
    started: float  # when (monotonic seconds)


def fold(first: RowsStep, then: RowsStep) -> RowsStep | None:
    """One step with the net effect of ``first`` and then ``then``; None when they cannot be
    folded (another schema or key)."""
    if first.schema != then.schema or first.key != then.key:
        return None
    if then.truncated:
        return then
    net = dict(first.net)
    net.update(then.net)
    return RowsStep(
        first.schema,
        first.key,
        net,
        first.truncated,
        then.offset or first.offset,
        inserts_only=first.inserts_only and then.inserts_only and not first.truncated,
    )


class DeferredMerges:
    """The pending current-state steps per table, and when each is due."""

    def __init__(self, interval_ms: int, max_rows: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_ms / 1000
        self.max_rows = max_rows
        self._clock = clock
        self._pending: dict[TableId, Pending] = {}

    @property
    def enabled(self) -> bool:
        return self.interval_s > 0

    def __bool__(self) -> bool:
        return bool(self._pending)

    def defer(
        self, table_id: TableId, steps: list[RowsStep | EvolveStep], since: SourceOffset | None, batch: int
    ) -> list[RowsStep | EvolveStep]:
        """Fold the table's leading rows steps into its pending step; returns the steps to apply
        now: the pending step first (when any step is left), then the rest."""
        index = 0
        for step in steps:
            if (
                not isinstance(step, RowsStep)
                or step.snapshot_rows
                or not self._fold(table_id, step, since, batch)
            ):
                break
            index += 1
        rest = steps[index:]
        if rest:
            taken = self.take(table_id)
            return ([taken] if taken is not None else []) + rest
        return []

    def _fold(self, table_id: TableId, step: RowsStep, since: SourceOffset | None, batch: int) -> bool:
        pending = self._pending.get(table_id)
        if pending is None:
            self._pending[table_id] = Pending(step, since, batch, self._clock())
            return True
        folded = fold(pending.step, step)
        if folded is None:
            return False
        pending.step = folded
        return True

    def take(self, table_id: TableId) -> RowsStep | None:
        pending = self._pending.pop(table_id, None)
        return pending.step if pending is not None else None

    def due(self, everything: bool = False) -> list[TableId]:
        """The tables whose pending step is due: older than the interval, or holding more keys
        than the row bound (``everything``: all of them)."""
        now = self._clock()
        return [
            table_id
            for table_id, p in self._pending.items()
            if everything or now - p.started >= self.interval_s or len(p.step.net) >= self.max_rows
        ]

    def resume_point(self, end: SourceOffset | None) -> SourceOffset | None:
        """Where the engine resumes: ``end`` (the last batch's end), or the resume point before the
        oldest pending step's first event."""
        if not self._pending:
            return end
        return min(self._pending.values(), key=lambda p: p.batch).since
