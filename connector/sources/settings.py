"""The sources' typed settings, read once through the property table's declarations (where their
defaults are written once).

``HeartbeatSettings``: ``heartbeat.interval.ms`` and ``heartbeat.action.query``.
``SignalSettings``: the signal channels (``signal.*``). ``IncrementalSettings``: the incremental
snapshot (``incremental.snapshot.*``, ``read.only``, ``signal.emit.failure.*``).
``StreamingSettings``: the binlog stream's switches and failure modes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from connector.core_properties import EVENT_PROPERTIES
from connector.post_processors.properties import DEFAULT_PLACEHOLDER, PLACEHOLDER_KEY, reselects
from connector.records.settings import CaptureSettings
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
from sink.kafka.properties import KAFKA_SINK_PROPERTIES

_SPECS = by_name(EVENT_PROPERTIES, SIGNAL_PROPERTIES, KAFKA_SINK_PROPERTIES)
# The Kafka signal channel's consumer settings (pass-through: Kafka's own names under the prefix).
CONSUMER_PREFIX = "signal.consumer."


class HeartbeatSettings(NamedTuple):
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


class IncrementalSettings(NamedTuple):
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


class StreamingSettings(NamedTuple):
    """The stream's switches (``include.query``, ``provide.transaction.metadata``,
    ``skip.messages.without.change``, ``gtid.source.filter.dml.events``), its failure modes
    (``inconsistent.schema.handling.mode``, ``event.processing.failure.handling.mode``), its retry
    and poll periods, the GTID source filters, and the NOBLOB placeholder (None unless the reselect
    post-processor re-reads what such images leave out)."""

    include_query: bool
    max_attempts: int
    poll_interval_s: float
    transaction_metadata: bool
    inconsistent_schema_mode: str
    event_failure_mode: str
    skip_unchanged: bool
    filter_dml: bool
    capture: CaptureSettings
    left_out_placeholder: bytes | None
    buffer_size: int  # binlog.buffer.size

    @classmethod
    def from_config(cls, config: PropertyReader) -> StreamingSettings:
        placeholder = config.get(PLACEHOLDER_KEY) or DEFAULT_PLACEHOLDER
        return cls(
            include_query=config.get_bool("include.query"),
            max_attempts=config.int_of("connect.max.attempts"),
            poll_interval_s=config.int_of("poll.interval.ms") / 1000,
            transaction_metadata=config.get_bool("provide.transaction.metadata"),
            inconsistent_schema_mode=config.get_choice("inconsistent.schema.handling.mode"),
            event_failure_mode=config.get_choice("event.processing.failure.handling.mode"),
            skip_unchanged=config.get_bool("skip.messages.without.change"),
            filter_dml=config.get_bool("gtid.source.filter.dml.events"),
            capture=CaptureSettings.from_config(config),
            left_out_placeholder=placeholder.encode() if reselects(config.raw) else None,
            buffer_size=config.int_of("binlog.buffer.size"),
        )


class StartupDelays(NamedTuple):
    """``snapshot.delay.ms`` and ``streaming.delay.ms``, in seconds: Debezium's waits before the
    snapshot and before streaming."""

    snapshot_s: float
    streaming_s: float

    @classmethod
    def from_config(cls, config: PropertyReader) -> StartupDelays:
        return cls(config.int_of("snapshot.delay.ms") / 1000, config.int_of("streaming.delay.ms") / 1000)
