"""The snapshot's errors, in the connector's one hierarchy (``mysql_cdc_base.errors.MysqlCdcError``)."""

from __future__ import annotations

from mysql_cdc_base.errors import ConfigError, MysqlCdcError


class SnapshotError(MysqlCdcError, RuntimeError):
    """The snapshot cannot be taken or completed; the message says why and what to do."""


class SnapshotConfigError(ConfigError):
    """A snapshot property with a missing or invalid value."""


class SnapshotCancelled(SnapshotError):
    """The snapshot was stopped (``stop()``) before it completed."""


class BinlogStatusError(SnapshotError):
    """The server's binlog position or file list could not be read."""
