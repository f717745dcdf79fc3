"""The binlog reader's typed settings, read once through the property table's declarations: the
server connection (``connector.server.settings.ConnectionSettings``), the replica's
``database.server.id``, ``connect.keep.alive.interval.ms``, ``connect.max.attempts`` and
``include.query`` (MariaDB's ANNOTATE_ROWS events carry the statement)."""

from __future__ import annotations

from typing import NamedTuple

from connector.core_properties import CONNECTION_PROPERTIES, EVENT_PROPERTIES
from connector.server.settings import ConnectionSettings
from mysql_cdc_base.properties import PropertyReader, bool_of, by_name, int_of

_SPECS = by_name(CONNECTION_PROPERTIES, EVENT_PROPERTIES)


class ReplicationSettings(NamedTuple):
    connection: ConnectionSettings
    server_id: int
    keep_alive_ms: int
    max_attempts: int
    include_query: bool

    @classmethod
    def from_config(cls, config: PropertyReader) -> ReplicationSettings:
        return cls(
            connection=ConnectionSettings.from_config(config),
            server_id=config.server_id,
            keep_alive_ms=int_of(config, _SPECS["connect.keep.alive.interval.ms"]) or 0,
            max_attempts=int_of(config, _SPECS["connect.max.attempts"]) or 0,
            include_query=bool_of(config, _SPECS["include.query"]),
        )
