"""The one error hierarchy of mysql-cdc.

Every error the connector raises on purpose derives from ``MysqlCdcError``, so a user can catch them
all in one clause (``from connector import MysqlCdcError``). It lives in the lowest layer (``ddl``)
because every package raises one of these: the sinks and the snapshot raise ``ConfigError`` for their
own properties, the schema history its own errors, and so on. ``connector.errors`` re-exports the
whole family.

The families, each with its own base so callers can be as precise as they like:

* ``ConfigError``: a missing or invalid property (names the key and the expected form);
* ``PrerequisiteError`` (``connector``): the server or the connector user is not set up as needed;
* ``ReplicationError`` (``connector``): the binlog stream cannot be followed;
* ``DdlError``: a DDL statement that cannot be parsed or applied;
* ``SchemaHistoryError`` / ``OffsetError``: the stored state is unusable;
* ``SnapshotError`` (``snapshot``), ``SinkError`` (``sink``).
"""

from __future__ import annotations


class MysqlCdcError(Exception):
    """Base class of every error mysql-cdc raises on purpose."""


class ConfigError(MysqlCdcError, ValueError):
    """A missing or invalid property. ``str()`` names the key and what is expected."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key


class DdlError(MysqlCdcError):
    """A DDL statement the connector cannot parse or apply."""


class StoredStateError(MysqlCdcError):
    """Stored connector state (offsets, schema history) that cannot be used as it is."""


class OffsetError(StoredStateError):
    """An offset that cannot be read or interpreted."""


class SchemaHistoryError(StoredStateError):
    """A schema history that cannot be read, written or replayed."""


class InvalidGtidSetError(OffsetError, SchemaHistoryError):
    """A GTID set (in a stored offset or a history record) that is not in either flavour's form."""
