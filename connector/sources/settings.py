"""The sources' typed settings, read once through the property table's declarations.

``HeartbeatSettings``: ``heartbeat.interval.ms`` and ``heartbeat.action.query`` (declared in
``connector.core_properties``, where their defaults are written once)."""

from __future__ import annotations

from dataclasses import dataclass

from connector.core_properties import EVENT_PROPERTIES
from mysql_cdc_base.properties import PropertySource, by_name, int_of, text_of

_SPECS = by_name(EVENT_PROPERTIES)


@dataclass(frozen=True)
class HeartbeatSettings:
    """The heartbeat period (0: no heartbeats) and the SQL run at each beat (None: none)."""

    interval_ms: int
    action_query: str | None

    @property
    def enabled(self) -> bool:
        return self.interval_ms > 0

    @classmethod
    def from_config(cls, config: PropertySource) -> HeartbeatSettings:
        return cls(
            int_of(config, _SPECS["heartbeat.interval.ms"]) or 0,
            text_of(config, _SPECS["heartbeat.action.query"]),
        )
