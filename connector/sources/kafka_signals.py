"""The Kafka signal channel (``signal.enabled.channels=kafka``): the signal topic read by the
connector and appended to by ``mysql-cdc signal``.

Apart from ``connector.sources.signals`` because it loads kafka-python, which only a connector with
this channel enabled needs; ``signals`` imports it when the channel is chosen, and it
imports ``signal_records``, never ``signals``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import orjson
from kafka import errors as kafka_errors

from connector.sources.signal_names import KAFKA
from connector.sources.signal_records import SignalError, SignalRecord, parse_data, required_type
from ddl.kafka.client import bootstrap_list, describe_reachability
from ddl.kafka.log import KafkaTopicLog

# The channel logs as part of the signals, as before it had a module of its own.
log = logging.getLogger("connector.sources.signals")


class KafkaSignalChannel:
    """``signal.kafka.topic``: records keyed by the ``topic.prefix`` (others are for other
    connectors), value ``{"type", "data"}``; the consumer group commits what was read."""

    name = KAFKA

    def __init__(
        self, bootstrap: str, topic: str, group_id: str, key: str, poll_timeout_ms: int, **kwargs: Any
    ) -> None:
        self.topic = topic
        self.key = key.encode()
        self.poll_timeout_ms = poll_timeout_ms
        self.bootstrap = bootstrap
        # Debezium's signal topic has one partition.
        self._consumer = signal_log(bootstrap, topic, kwargs).follow(group_id, [0])

    def read(self) -> list[SignalRecord]:
        out = []
        batches = self._consumer.poll(timeout_ms=self.poll_timeout_ms)
        for records in batches.values():
            for record in records:
                if record.key != self.key:
                    continue
                try:
                    value = orjson.loads(record.value or b"null")
                    if not isinstance(value, dict):
                        raise SignalError('the value must be a JSON object {"type", "data"}')
                    out.append(
                        SignalRecord(
                            str(record.offset),
                            required_type(value.get("type")),
                            parse_data(value.get("data")),
                            KAFKA,
                        )
                    )
                except (orjson.JSONDecodeError, SignalError) as exc:
                    log.warning("signal at %s offset %d skipped: %s", self.topic, record.offset, exc)
        if batches:
            try:
                self._consumer.commit()
            except kafka_errors.KafkaError as exc:
                log.warning("could not commit the signal consumer's position on %s: %s", self.topic, exc)
        return out

    def close(self) -> None:
        self._consumer.close()


def signal_log(
    bootstrap: str,
    topic: str,
    consumer_kwargs: Mapping[str, Any],
    producer_kwargs: Mapping[str, Any] | None = None,
) -> KafkaTopicLog:
    """The signal topic as a ``ddl.kafka.log.KafkaTopicLog`` (the channel follows it with its
    consumer group; ``mysql-cdc signal`` appends to it)."""
    return KafkaTopicLog(
        bootstrap,
        topic,
        what="signal topic",
        error=SignalError,
        bootstrap_key="signal.kafka.bootstrap.servers",
        bootstrap_servers=bootstrap_list(bootstrap),
        producer_kwargs=producer_kwargs,
        consumer_kwargs=consumer_kwargs,
        describe_reachability=describe_reachability,
    )
