"""Keeping the sink's Delta tables small and readable over long runs.

Every batch adds files and a log entry to each table it touches: at a commit every few seconds, a
busy table would collect tens of thousands of files a day, and every read would slow down. So:

* **Compaction:** after ``sink.spark.optimize.interval.commits`` of the sink's commits to a table,
  the table is compacted with Delta's ``OPTIMIZE`` (small files rewritten into few; a commit of its
  own, ``dataChange=false``, so streaming readers and the Change Data Feed skip it), by delta-rs
  where it writes the table (``RustAppender.compact``: no Spark job), else by Spark. Its files then
  stay bounded: the compacted ones plus what the commits since added.
* **Checkpoints:** Delta writes one every ``delta.checkpointInterval`` commits (10) by itself, and
  the sink after the commits delta-rs makes and right after its compactions (``RustAppender``):
  the log a reader replays stays short. After each checkpoint the log entries past
  ``delta.logRetentionDuration`` go, as after Spark's own checkpoints.
* **VACUUM:** every ``sink.spark.vacuum.interval.ms`` a table's files that no version of the last
  ``sink.spark.vacuum.retention.hours`` needs are deleted (Delta refuses less than 168 hours unless
  ``spark.databricks.delta.retentionDurationCheck.enabled=false``; time travel and the restore of an
  interrupted snapshot need the versions within it), by delta-rs where it writes the table
  (``RustAppender.vacuum``), else by Spark.

Maintenance runs on the sink's batch worker right after a batch's commits, for at most
``TABLES_PER_BATCH`` tables a batch (the rest follow with the next batches), so it delays the next
batch by a bounded amount and never stops the connector from reading. Each step is one atomic Delta
commit that adds and removes no rows, a checkpoint (one file more) or the removal of expired log
entries: a crash during it leaves the table as it was before or after, and the sink's commit
records (the offsets each table holds) are untouched by it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

TABLES_PER_BATCH = 4


@dataclass
class MaintenancePlan:
    """Which tables are due: counts the sink's commits per table and the time since each VACUUM."""

    optimize_every: int  # commits; 0: never
    vacuum_interval_s: float  # 0: never
    clock: Callable[[], float] = time.monotonic
    commits: dict[str, int] = field(default_factory=dict)
    vacuumed: dict[str, float] = field(default_factory=dict)

    def committed(self, path: str, count: int = 1) -> None:
        self.commits[path] = self.commits.get(path, 0) + count
        self.vacuumed.setdefault(path, self.clock())

    def due(self) -> list[tuple[str, bool, bool]]:
        """(path, compact, vacuum) for the tables due now, most behind first, at most
        ``TABLES_PER_BATCH``."""
        now = self.clock()
        out = []
        for path, count in self.commits.items():
            compact = self.optimize_every > 0 and count >= self.optimize_every
            vacuum = self.vacuum_interval_s > 0 and now - self.vacuumed[path] >= self.vacuum_interval_s
            if compact or vacuum:
                out.append((path, compact, vacuum))
        out.sort(key=lambda item: -self.commits[item[0]])
        return out[:TABLES_PER_BATCH]

    def done(self, path: str, compacted: bool, vacuumed: bool) -> None:
        if compacted:
            self.commits[path] = 0
        if vacuumed:
            self.vacuumed[path] = self.clock()
