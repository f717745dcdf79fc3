"""Delivery's typed settings: ``BatchSettings`` (``max.batch.size``, ``max.queue.size``,
``poll.interval.ms``, ``offset.flush.interval.ms``), ``GuardTarget`` (the single-instance guard's
Kafka) and ``ExactlyOnceSettings`` (``exactly.once.support``,
``transaction.boundary``, ``transaction.boundary.interval.ms``), built once from the properties and
validated here against the sink and offset-store settings exactly-once delivery needs (a setting that
rules it out is named: an error under ``required``, a warning under ``requested``)."""

from __future__ import annotations

import logging
from typing import NamedTuple

from connector.core_properties import EVENT_PROPERTIES
from connector.stores.properties import STORE_PROPERTIES
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertyReader, PropertySource, by_name, int_of

log = logging.getLogger(__name__)

_SPECS = by_name(EVENT_PROPERTIES, STORE_PROPERTIES)


class BatchSettings(NamedTuple):
    """How records are batched to the sinks and how often the offset is committed."""

    max_batch_size: int
    max_queue_size: int
    poll_interval_s: float
    offset_flush_interval_ms: int

    @classmethod
    def from_config(cls, config: PropertySource) -> BatchSettings:
        def number(key: str) -> int:
            return int_of(config, _SPECS[key]) or 0

        return cls(
            number("max.batch.size"),
            number("max.queue.size"),
            number("poll.interval.ms") / 1000,
            number("offset.flush.interval.ms"),
        )


SUPPORT_KEY = "exactly.once.support"
BOUNDARY_KEY = "transaction.boundary"
INTERVAL_KEY = "transaction.boundary.interval.ms"
TRANSACTION_TIMEOUT_KEY = "sink.kafka.producer.transaction.timeout.ms"
DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000


class ExactlyOnceSettings(NamedTuple):
    enabled: bool
    boundary: str = "poll"  # poll | interval
    interval_ms: int = 1000

    @classmethod
    def from_config(cls, config: PropertyReader) -> ExactlyOnceSettings:
        support = config.get_choice(SUPPORT_KEY)
        if support == "disabled":
            return cls(False)
        boundary = config.get_choice(BOUNDARY_KEY)
        if boundary == "connector":
            raise ConfigError(
                BOUNDARY_KEY,
                "connector is not implemented (the connector defines no transaction boundaries of "
                "its own); use poll (a transaction per batch) or interval",
            )
        problems = incompatibilities(config)
        if problems:
            if support == "required":
                key, reason = problems[0]
                raise ConfigError(key, f"{reason} ({SUPPORT_KEY}=required)")
            log.warning(
                "%s=requested, but delivery is at least once: %s",
                SUPPORT_KEY,
                "; ".join(f"{key} {reason}" for key, reason in problems),
            )
            return cls(False)
        interval = config.get_int(INTERVAL_KEY) or config.int_of("offset.flush.interval.ms") or 1
        timeout = config.get_int(TRANSACTION_TIMEOUT_KEY, DEFAULT_TRANSACTION_TIMEOUT_MS)
        assert timeout is not None
        if boundary == "interval" and interval >= timeout:
            raise ConfigError(
                INTERVAL_KEY,
                f"must be shorter than {TRANSACTION_TIMEOUT_KEY} ({timeout} ms), got {interval}: the "
                "broker would abort every transaction before it is committed",
            )
        return cls(True, boundary, interval)


def incompatibilities(config: PropertyReader) -> list[tuple[str, str]]:
    """(key, why) for every setting that rules out exactly-once delivery."""
    problems: list[tuple[str, str]] = []
    sinks = [s.lower() for s in config.sink_types]
    if sinks != ["kafka"]:
        problems.append(
            (
                "sink.type",
                f"must be kafka alone, got {','.join(sinks) or 'jsonl'}: only the Kafka sink can "
                "commit its records and the offset in one transaction",
            )
        )
    if config.get_choice("offset.storage") != "kafka":
        problems.append(
            (
                "offset.storage",
                f"must be kafka, got {config.get_choice('offset.storage')}: the offset is committed in "
                "the same Kafka transaction as the records, which a file or memory offset cannot be",
            )
        )
    own = config.get("offset.storage.kafka.bootstrap.servers")
    if own and own != config.get("sink.kafka.bootstrap.servers"):
        problems.append(
            (
                "offset.storage.kafka.bootstrap.servers",
                "must be unset or equal to sink.kafka.bootstrap.servers: a Kafka transaction cannot "
                "span two clusters",
            )
        )
    for key in sorted(config.subset("offset.storage.kafka.producer.")):
        problems.append(
            (
                "offset.storage.kafka.producer." + key,
                "has no effect: the offset is written by the sink's transactional producer "
                "(set producer settings under sink.kafka.producer.)",
            )
        )
    if (config.get("sink.kafka.producer.enable.idempotence") or "true").strip().lower() == "false":
        problems.append(
            (
                "sink.kafka.producer.enable.idempotence",
                "must be true (or unset): transactions need the idempotent producer",
            )
        )
    return problems


class GuardTarget(NamedTuple):
    """Where the single-instance guard joins its consumer group: the Kafka sink's brokers, else the
    Kafka offset store's; ``producer_prefix`` and ``producer`` are the pass-through producer
    settings its client identity (security) is taken from."""

    bootstrap: str
    bootstrap_key: str
    producer_prefix: str
    producer: dict[str, str]
    connector_name: str
    topic_prefix: str

    @classmethod
    def from_config(cls, config: PropertyReader) -> GuardTarget | None:
        """None when the connector uses no Kafka."""
        if "kafka" in [s.lower() for s in config.sink_types]:
            key, prefix = "sink.kafka.bootstrap.servers", "sink.kafka.producer."
        elif config.get_choice("offset.storage") == "kafka":
            key, prefix = "offset.storage.kafka.bootstrap.servers", "offset.storage.kafka.producer."
        else:
            return None
        bootstrap = config.get(key)
        if not bootstrap:
            return None
        return cls(bootstrap, key, prefix, config.subset(prefix), config.connector_name, config.topic_prefix)
