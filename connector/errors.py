"""Every error mysql-cdc raises on purpose, in one hierarchy under ``MysqlCdcError``.

The base classes that lower layers raise live there (``ddl.errors``, ``snapshot``, ``sink.base``);
the connector's own families are defined here, and everything is re-exported from ``connector``.
"""

from __future__ import annotations

from ddl.errors import (
    ConfigError,
    DdlError,
    MysqlCdcError,
    OffsetError,
    SchemaHistoryError,
    StoredStateError,
)
from sink.base import SinkError
from snapshot.errors import SnapshotError


class PrerequisiteError(MysqlCdcError, RuntimeError):
    """The server or the connector user is not set up for CDC; the message says how to fix it."""


class ReplicationError(MysqlCdcError, RuntimeError):
    """The binlog stream cannot be followed (lost connection, refused position, unsupported event,
    a row that does not fit the known table structure)."""


__all__ = [
    "ConfigError",
    "DdlError",
    "MysqlCdcError",
    "OffsetError",
    "PrerequisiteError",
    "ReplicationError",
    "SchemaHistoryError",
    "SinkError",
    "SnapshotError",
    "StoredStateError",
]
