"""The snapshot sources' client connections: the connector's connection with the snapshot value
conversions, which belong to the records stage (``connector.records.conversion``), so the factory
lives with the sources that read rows, above both the server and records stages."""

from __future__ import annotations

import functools
from collections.abc import Callable

import pymysql

from connector.records.conversion import SNAPSHOT_CONVERSIONS
from connector.server.connection import connect
from connector.server.settings import session_time_zone
from mysql_cdc_base.properties import PropertyReader


def snapshot_connection_factory(config: PropertyReader) -> Callable[[], pymysql.connections.Connection]:
    """Opens the snapshot's connections (``snapshot.Snapshotter``'s ``connect``): as the connector
    user, autocommit off, with the snapshot value conversions (``SNAPSHOT_CONVERSIONS``) and the
    session time zone of ``session_time_zone`` (the converters read TIMESTAMP text in it)."""
    zone, _ = session_time_zone(config)
    init = f"SET time_zone = '{zone or '+00:00'}'"
    # A partial, not a lambda: it pickles, so a chunked snapshot's reader processes can use it.
    return functools.partial(connect, config, autocommit=False, conv=SNAPSHOT_CONVERSIONS, init_command=init)
