"""``snapshot.locking.mode``: which locks the snapshot takes and when it lets go of them.

One row per mode (reference section 5.2, Debezium's ``SnapshotLockingMode`` / ``snapshot/lock/*``).
The snapshotter follows the row; no mode-specific branches elsewhere.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from mysql_cdc_base.table_id import TableId
from snapshot.spi import SnapshotLock

LOCKING_MODE_KEY: Final = "snapshot.locking.mode"
CUSTOM_LOCKING: Final = "custom"  # a snapshot.spi.SnapshotLock named by snapshot.locking.mode.custom.name

FLUSH_TABLES_WITH_READ_LOCK: Final = "FLUSH TABLES WITH READ LOCK"
BACKUP_LOCK: Final = "LOCK TABLES FOR BACKUP"  # Percona Server only


@dataclass(frozen=True)
class LockingStrategy:
    """A built-in locking mode; implements the ``snapshot.spi.SnapshotLock`` protocol (its statement
    is ``global_lock_sql``)."""

    mode: str
    # Statement that blocks writes server-wide; None: no locks at all (mode ``none``).
    global_lock_sql: str | None
    # Minimal modes release the global lock as soon as the structure is read: the consistent-snapshot
    # transaction keeps the data view. Otherwise the lock is held until every row was read.
    release_after_schema: bool
    # FLUSH TABLES resets the transaction isolation level, so it is set again after the lock.
    reset_isolation_after_lock: bool
    # START TRANSACTION WITH CONSISTENT SNAPSHOT after the lock (InnoDB MVCC view of the lock point).
    consistent_snapshot_transaction: bool
    # When the global lock is refused (no RELOAD, RDS/Aurora): LOCK TABLES ... READ on the captured
    # tables instead. False: fail (the *_no_table_locks modes).
    table_lock_fallback: bool

    @property
    def locking(self) -> bool:
        return self.global_lock_sql is not None

    # -- snapshot.spi.SnapshotLock ------------------------------------------------------------------
    def name(self) -> str:
        return self.mode

    def configure(self, properties: Mapping[str, str]) -> None:
        """The built-in modes take no properties of their own."""

    def table_locking_statement(self, lock_timeout: dt.timedelta, table_id: TableId | None) -> str | None:
        return self.global_lock_sql


LOCKING_STRATEGIES: Final[dict[str, LockingStrategy]] = {
    s.mode: s
    for s in (
        LockingStrategy("minimal", FLUSH_TABLES_WITH_READ_LOCK, True, True, True, True),
        LockingStrategy("extended", FLUSH_TABLES_WITH_READ_LOCK, False, True, False, True),
        LockingStrategy("minimal_percona", BACKUP_LOCK, True, False, True, True),
        LockingStrategy("minimal_percona_no_table_locks", BACKUP_LOCK, True, False, True, False),
        # MyRocks (no MVCC): lock only for the structure, then read without a snapshot view.
        LockingStrategy("minimal_at_least_once", FLUSH_TABLES_WITH_READ_LOCK, True, True, False, True),
        # No locks: the data may not match the position if anything writes during the snapshot, and a
        # DDL during the snapshot can make the schema disagree with the rows. Only safe for a quiet
        # server or with snapshot.mode=no_data / recovery.
        LockingStrategy("none", None, False, False, False, False),
    )
}


def locking_strategy(name: str | None) -> LockingStrategy:
    """A built-in mode's strategy (``custom`` is ``custom_locking``'s)."""
    key = (name or "minimal").strip().lower()
    strategy = LOCKING_STRATEGIES.get(key)
    if strategy is None:
        raise ValueError(
            f"{LOCKING_MODE_KEY}: expected one of {', '.join((*LOCKING_STRATEGIES, CUSTOM_LOCKING))}, "
            f"got {name!r}"
            + (
                " without a plugin: set snapshot.locking.mode.custom.name (an entry point of "
                "mysql_cdc.snapshot_locks or package.module:Class)"
                if key == CUSTOM_LOCKING
                else ""
            )
        )
    return strategy


def custom_locking(lock: SnapshotLock, lock_timeout: dt.timedelta) -> LockingStrategy:
    """``snapshot.locking.mode=custom``: the ``minimal`` workflow with the plugin's statement as the
    global lock (asked with ``table_id`` None, as Debezium's MySQL connector does);
    the plugin returning None takes no locks, as ``none``."""
    statement = lock.table_locking_statement(lock_timeout, None)
    if statement is None:
        return replace(LOCKING_STRATEGIES["none"], mode=CUSTOM_LOCKING)
    return replace(LOCKING_STRATEGIES["minimal"], mode=CUSTOM_LOCKING, global_lock_sql=statement)


@dataclass
class LockState:
    """Which locks a snapshot run holds and has held, since when, and how long writes were blocked."""

    global_lock: bool = False
    table_lock: bool = False
    used_global: bool = False
    used_table: bool = False
    refusal: str = ""
    acquired_at: float = 0.0
    blocked_seconds: float = 0.0

    def lock_acquired(self, kind: str) -> None:
        self.acquired_at = time.monotonic()
        if kind == "global":
            self.global_lock = self.used_global = True
        else:
            self.table_lock = self.used_table = True

    def lock_released(self) -> float:
        held = time.monotonic() - self.acquired_at
        self.blocked_seconds += held
        self.global_lock = self.table_lock = False
        return held
