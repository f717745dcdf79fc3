"""Every error mysql-cdc raises on purpose, in one hierarchy under ``MysqlCdcError``.

The base classes that lower layers raise live there (``mysql_cdc_base.errors``, ``snapshot``, ``sink.base``);
the connector's own families are defined here, and everything is re-exported from ``connector``.
"""

from __future__ import annotations

# Re-exported (``X as X``): the lower layers' error classes, importable from here.
from mysql_cdc_base.errors import ConfigError as ConfigError
from mysql_cdc_base.errors import DdlError as DdlError
from mysql_cdc_base.errors import MysqlCdcError as MysqlCdcError
from mysql_cdc_base.errors import OffsetError as OffsetError
from mysql_cdc_base.errors import SchemaHistoryError as SchemaHistoryError
from mysql_cdc_base.errors import StoredStateError as StoredStateError
from sink.base import SinkError as SinkError
from snapshot.errors import SnapshotError as SnapshotError


class PrerequisiteError(MysqlCdcError, RuntimeError):
    """The server or the connector user is not set up for CDC; the message says how to fix it."""


class ReplicationError(MysqlCdcError, RuntimeError):
    """The binlog stream cannot be followed (lost connection, refused position, unsupported event,
    a row that does not fit the known table structure)."""
