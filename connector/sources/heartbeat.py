"""Heartbeats (``heartbeat.interval.ms``, ``heartbeat.action.query``).

When the interval has passed, the next processed binlog event (or idle tick) produces a record on
``__debezium-heartbeat.<prefix>`` carrying the current offset, so the stored offset keeps up with the
binlog even when only tables that are not captured change. ``heartbeat.action.query`` runs on a
separate connection at the same cadence (typically an UPDATE of a captured heartbeat table, which
then produces change events of its own).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import pymysql

from connector.records.topic_naming import topic_naming_strategy
from connector.server.connection import connect
from connector.sources.settings import HeartbeatSettings
from mysql_cdc_base.debezium_schemas import HEARTBEAT_KEY_SCHEMA, HEARTBEAT_VALUE_SCHEMA
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.properties import PropertyReader
from mysql_cdc_base.records import ChangeRecord, RecordKind

log = logging.getLogger(__name__)


def heartbeat_topic(config: PropertyReader) -> str:
    """The naming strategy's heartbeat topic: ``topic.heartbeat.name``, else
    ``<topic.heartbeat.prefix><topic.delimiter><topic.prefix>`` (``AbstractTopicNamingStrategy``)."""
    return topic_naming_strategy(config).heartbeat_topic()


class Heartbeat:
    """The heartbeat timer, record maker and action query of one stream."""

    def __init__(
        self,
        config: PropertyReader,
        settings: HeartbeatSettings,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config  # the action query's server connection
        self.interval_s = settings.interval_ms / 1000
        self.topic = heartbeat_topic(config)
        self.key = {"serverName": config.topic_prefix}
        self.action_query = settings.action_query
        self._clock = clock
        self._next = clock() + self.interval_s
        self._connection: Any = None

    @classmethod
    def from_config(cls, config: PropertyReader) -> Heartbeat | None:
        """None when heartbeats are off (``heartbeat.interval.ms`` = 0, the default)."""
        settings = HeartbeatSettings.from_config(config)
        return cls(config, settings) if settings.enabled else None

    def due(self) -> bool:
        return self._clock() >= self._next

    def beat(self, offset: Mapping[str, Any] | None) -> list[ChangeRecord]:
        """Runs the action query and returns the heartbeat record for ``offset`` (none for an empty
        offset, as Debezium); restarts the interval."""
        self._next = self._clock() + self.interval_s
        if self.action_query:
            self._run_action_query()
        if not offset:
            return []
        return [
            ChangeRecord(
                self.topic,
                HEARTBEAT_KEY_SCHEMA,
                self.key,
                HEARTBEAT_VALUE_SCHEMA,
                {"ts_ms": time.time_ns() // 1_000_000},
                RecordKind.HEARTBEAT,
                (),
                SourceOffset.from_map(offset),
                0,
                None,
            )
        ]

    def _run_action_query(self) -> None:
        # Debezium logs a failed action query and carries on (DatabaseHeartbeatImpl#forcedBeat); the
        # connection is re-opened on the next beat.
        assert self.action_query is not None
        try:
            if self._connection is None:
                self._connection = connect(self.config, autocommit=True)
            with self._connection.cursor() as cur:
                cur.execute(self.action_query)
        except (pymysql.err.Error, OSError, RuntimeError) as exc:
            log.error("heartbeat.action.query failed (it runs again at the next heartbeat): %s", exc)
            self.close()

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.close()
            except Exception:  # noqa: BLE001 - closing a broken connection may fail in many ways
                log.debug("error closing the heartbeat connection", exc_info=True)
