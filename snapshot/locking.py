"""``snapshot.locking.mode``: which locks the snapshot takes and when it lets go of them.

One row per mode (reference section 5.2, Debezium's ``SnapshotLockingMode`` / ``snapshot/lock/*``).
The snapshotter follows the row; no mode-specific branches elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

LOCKING_MODE_KEY: Final = "snapshot.locking.mode"

FLUSH_TABLES_WITH_READ_LOCK: Final = "FLUSH TABLES WITH READ LOCK"
BACKUP_LOCK: Final = "LOCK TABLES FOR BACKUP"  # Percona Server only


@dataclass(frozen=True)
class LockingStrategy:
    name: str
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


LOCKING_STRATEGIES: Final[dict[str, LockingStrategy]] = {
    s.name: s
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
    key = (name or "minimal").strip().lower()
    strategy = LOCKING_STRATEGIES.get(key)
    if strategy is None:
        raise ValueError(
            f"{LOCKING_MODE_KEY}: expected one of {', '.join(LOCKING_STRATEGIES)}, got {name!r}"
            + ("; custom locking is not supported" if key == "custom" else "")
        )
    return strategy
