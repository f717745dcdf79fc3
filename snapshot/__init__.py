"""Initial consistent snapshot (Debezium's snapshot workflows, locking modes and snapshot modes)."""

from snapshot.listener import SnapshotListener, resolve_marker
from snapshot.modes import SnapshotPlan, decide
from snapshot.snapshotter import (
    SnapshotCancelled,
    SnapshotError,
    SnapshotSettings,
    SnapshotSummary,
    Snapshotter,
    connection_factory,
)

__all__ = [
    "SnapshotCancelled",
    "SnapshotError",
    "SnapshotListener",
    "SnapshotPlan",
    "SnapshotSettings",
    "SnapshotSummary",
    "Snapshotter",
    "connection_factory",
    "decide",
    "resolve_marker",
]
