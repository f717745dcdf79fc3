"""The ``kafka`` sink's settings, for both clients: brokers, producer properties under
``sink.kafka.producer.``, the bounds on unacknowledged records and topic.creation.default.*."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ddl.kafka.client import (
    COMMON_SETTINGS,
    PRODUCER_SETTINGS,
    Setting,
    client_kwargs,
    security_kwargs,
)
from mysql_cdc_base.connect import schemas_enabled
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import parse_int
from sink.base import SinkConfig
from sink.kafka.properties import BOOTSTRAP_KEY

PRODUCER_PREFIX = "sink.kafka.producer."
TOPIC_CREATION_PREFIX = "topic.creation.default."
DEFAULT_BUFFER_MEMORY = 32 * 1024 * 1024  # Kafka's buffer.memory default
DEFAULT_DELIVERY_TIMEOUT_MS = 120_000
DEFAULT_BATCH_SIZE = 1024 * 1024  # see KafkaSink.start
DEFAULT_REQUEST_TIMEOUT_MS = 30_000

# While brokers leave records unacknowledged (the producer retrying), a line every this many seconds.
WAIT_REPORT_INTERVAL_S = 5.0


# -- topic creation ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicCreation:
    """Kafka Connect's ``topic.creation.default.*`` group: applies when both partitions and
    replication factor are set; other keys of the group are topic configs (cleanup.policy, ...)."""

    partitions: int
    replication_factor: int
    configs: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, enabled: bool, group: Mapping[str, str]) -> TopicCreation | None:
        if not enabled or not group:
            return None
        missing = [k for k in ("partitions", "replication.factor") if not group.get(k, "").strip()]
        if missing:
            raise ConfigError(
                TOPIC_CREATION_PREFIX + missing[0],
                "is required when other topic.creation.default.* keys are set "
                "(Kafka Connect creates topics only when both partitions and "
                "replication.factor are given; -1 means the broker's default)",
            )
        partitions = parse_int(TOPIC_CREATION_PREFIX + "partitions", group["partitions"])
        replication = parse_int(TOPIC_CREATION_PREFIX + "replication.factor", group["replication.factor"])
        for name, value in (("partitions", partitions), ("replication.factor", replication)):
            if value == 0 or value < -1:
                raise ConfigError(TOPIC_CREATION_PREFIX + name, f"must be positive or -1, got {value}")
        configs = {
            k: v.strip()
            for k, v in group.items()
            if k not in ("partitions", "replication.factor", "include", "exclude")
        }
        return cls(partitions, replication, configs)


# -- the sink --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KafkaSinkSettings:
    bootstrap: str
    # The producer's configuration in its client's terms: kafka-python keyword arguments, or
    # librdkafka properties (sink.kafka.confluent).
    producer_kwargs: Mapping[str, Any] = field(default_factory=dict)
    buffer_memory: int = DEFAULT_BUFFER_MEMORY
    key_schemas: bool = True
    value_schemas: bool = True
    topic_creation: TopicCreation | None = None
    delivery_timeout_ms: int = DEFAULT_DELIVERY_TIMEOUT_MS
    request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS
    # kafka-python arguments of the client's identity (TLS, SASL) for the admin client that
    # creates topics, whichever client produces.
    admin_kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ack_bound_seconds(self) -> float:
        """How long every record sent may take to be acknowledged or fail: a batch either succeeds
        or expires within delivery.timeout.ms; the margin covers the last request's own timeout."""
        return (self.delivery_timeout_ms + self.request_timeout_ms) / 1000 + 5

    @classmethod
    def from_config(
        cls, config: SinkConfig, table: Mapping[str, Setting] = PRODUCER_SETTINGS
    ) -> KafkaSinkSettings:
        """The sink's settings, with ``sink.kafka.producer.*`` translated by ``table`` (Java name →
        the client's own setting)."""
        bootstrap = config.get(BOOTSTRAP_KEY)
        if not bootstrap:
            raise ConfigError(
                BOOTSTRAP_KEY,
                "is required for sink.type=kafka (host:port[,host:port...] of the Kafka brokers)",
            )
        producer = config.subset(PRODUCER_PREFIX)
        kwargs = client_kwargs(producer, PRODUCER_PREFIX, table)
        identity = {k: v for k, v in producer.items() if k in COMMON_SETTINGS}
        timeouts = {
            name: parse_int(PRODUCER_PREFIX + name, producer[name]) if name in producer else default
            for name, default in (
                ("delivery.timeout.ms", DEFAULT_DELIVERY_TIMEOUT_MS),
                ("request.timeout.ms", DEFAULT_REQUEST_TIMEOUT_MS),
            )
        }
        buffer_memory = (
            parse_int(PRODUCER_PREFIX + "buffer.memory", producer["buffer.memory"])
            if "buffer.memory" in producer
            else DEFAULT_BUFFER_MEMORY
        )
        if buffer_memory < 1:
            raise ConfigError(PRODUCER_PREFIX + "buffer.memory", "must be positive")
        creation = TopicCreation.from_settings(
            config.get_bool("topic.creation.enable", True), config.subset(TOPIC_CREATION_PREFIX)
        )
        key_schemas, value_schemas = schemas_enabled(config)
        return cls(
            bootstrap=bootstrap,
            producer_kwargs=kwargs,
            buffer_memory=buffer_memory,
            key_schemas=key_schemas,
            value_schemas=value_schemas,
            topic_creation=creation,
            delivery_timeout_ms=timeouts["delivery.timeout.ms"],
            request_timeout_ms=timeouts["request.timeout.ms"],
            admin_kwargs=security_kwargs(client_kwargs(identity, PRODUCER_PREFIX, COMMON_SETTINGS)),
        )
