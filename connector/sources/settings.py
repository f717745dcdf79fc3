"""The sources' typed settings, read once through the property table's declarations (where their
defaults are written once).

``HeartbeatSettings``: ``heartbeat.interval.ms`` and ``heartbeat.action.query``.
``SignalSettings``: the signal channels (``signal.*``). ``IncrementalSettings``: the incremental
snapshot (``incremental.snapshot.*``, ``read.only``, ``signal.emit.failure.*``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from connector.core_properties import EVENT_PROPERTIES
from connector.sources.properties import SIGNAL_PROPERTIES
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import (
    PropertyReader,
    PropertySource,
    bool_of,
    by_name,
    choice_of,
    int_of,
    list_of,
    text_of,
)
from sink.kafka.settings import KAFKA_SINK_PROPERTIES

_SPECS = by_name(EVENT_PROPERTIES, SIGNAL_PROPERTIES, KAFKA_SINK_PROPERTIES)
# The Kafka signal channel's consumer settings (pass-through: Kafka's own names under the prefix).
CONSUMER_PREFIX = "signal.consumer."


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


def _int(config: PropertySource, key: str) -> int:
    return int_of(config, _SPECS[key]) or 0


@dataclass(frozen=True)
class SignalSettings:
    """The signal channels ``signal.enabled.channels`` names (lower case) and what each needs."""

    channels: tuple[str, ...]
    data_collection: str | None
    poll_interval_s: float
    file: str
    kafka_topic: str
    kafka_bootstrap_servers: str | None  # signal.kafka.bootstrap.servers, else the Kafka sink's
    kafka_group_id: str
    kafka_poll_timeout_ms: int
    consumer: dict[str, str] = field(repr=False)  # signal.consumer.* (may hold credentials)
    topic_prefix: str = ""

    @classmethod
    def from_config(cls, config: PropertyReader) -> SignalSettings:
        return cls(
            channels=tuple(c.lower() for c in list_of(config, _SPECS["signal.enabled.channels"])),
            data_collection=text_of(config, _SPECS["signal.data.collection"]),
            poll_interval_s=_int(config, "signal.poll.interval.ms") / 1000,
            file=text_of(config, _SPECS["signal.file"]) or "",
            kafka_topic=text_of(config, _SPECS["signal.kafka.topic"]) or f"{config.topic_prefix}-signal",
            kafka_bootstrap_servers=text_of(config, _SPECS["signal.kafka.bootstrap.servers"])
            or text_of(config, _SPECS["sink.kafka.bootstrap.servers"]),
            kafka_group_id=text_of(config, _SPECS["signal.kafka.groupId"]) or "",
            kafka_poll_timeout_ms=_int(config, "signal.kafka.poll.timeout.ms"),
            consumer=config.subset(CONSUMER_PREFIX),
            topic_prefix=config.topic_prefix,
        )

    def kafka_bootstrap(self) -> str:
        """The Kafka channel's brokers; ``ConfigError`` naming the key when there are none."""
        if not self.kafka_bootstrap_servers:
            raise ConfigError(
                "signal.kafka.bootstrap.servers",
                "is required for signal.enabled.channels=kafka (host:port[,host:port...] of the brokers)",
            )
        return self.kafka_bootstrap_servers


@dataclass(frozen=True)
class IncrementalSettings:
    """The incremental snapshot's chunking, threads, watermarking and signal-emission retries."""

    chunk_size: int
    threads: int
    strategy: str
    allow_schema_changes: bool
    read_only: bool
    emit_retries: int
    emit_backoff_s: float

    @classmethod
    def from_config(cls, config: PropertySource) -> IncrementalSettings:
        return cls(
            chunk_size=_int(config, "incremental.snapshot.chunk.size"),
            threads=_int(config, "incremental.snapshot.max.threads"),
            strategy=choice_of(config, _SPECS["incremental.snapshot.watermarking.strategy"]),
            allow_schema_changes=bool_of(config, _SPECS["incremental.snapshot.allow.schema.changes"]),
            read_only=bool_of(config, _SPECS["read.only"]),
            emit_retries=_int(config, "signal.emit.failure.max.retries"),
            emit_backoff_s=_int(config, "signal.emit.failure.backoff.ms") / 1000,
        )
