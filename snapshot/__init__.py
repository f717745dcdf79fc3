"""Consistent snapshots (Debezium's snapshot workflows, locking modes and snapshot modes).

The snapshot reads rows under the chosen lock and hands ``(table, row values, position, snapshot
marker)`` to a ``snapshot.listener.SnapshotListener``; it never builds change events. It imports only
``ddl`` (and the database driver).
"""
