"""Schema history in a Kafka topic, as Debezium's ``KafkaSchemaHistory`` keeps it.

One partition (0), null keys, and each ``HistoryRecord`` as a **pretty-printed** JSON document in
Jackson's default layout (Debezium writes it with Jackson's ``DefaultPrettyPrinter``), so Debezium
and this connector can read each other's history topics. Order is everything in a history, so a
topic with more than one partition is refused rather than read in an arbitrary interleaving.

The topic is a ``ddl.kafka.log.KafkaTopicLog``. Writes wait for ``acks=all`` (one request in
flight), so ``record()`` returning means the DDL is durably stored before any change event that
depends on it is delivered. Recovery reads partition 0 from the beginning to the end offset observed
at the start, tolerating ``recovery.attempts`` consecutive empty polls of
``recovery.poll.interval.ms``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import orjson

from ddl.history.record import HistoryRecord, history_record_from_json, history_record_to_document
from ddl.history.store import SchemaHistory
from ddl.kafka.log import KafkaTopicLog, TopicEnsurer
from mysql_cdc_base.errors import SchemaHistoryError

log = logging.getLogger(__name__)

PREFIX = "schema.history.internal."
TOPIC_KEY = PREFIX + "kafka.topic"
BOOTSTRAP_KEY = PREFIX + "kafka.bootstrap.servers"
PRODUCER_PREFIX = PREFIX + "producer."
CONSUMER_PREFIX = PREFIX + "consumer."
JAVA_LONG_MAX = 9_223_372_036_854_775_807
# What Debezium creates the topic with: keep every record forever, never compact.
TOPIC_CONFIGS = {"cleanup.policy": "delete", "retention.ms": str(JAVA_LONG_MAX), "retention.bytes": "-1"}

# -- the document -------------------------------------------------------------------------------


def jackson_pretty(value: Any) -> bytes:
    """JSON as Jackson's ``DefaultPrettyPrinter`` writes it: objects one entry per line indented by
    two spaces with ``" : "`` between name and value, ``{ }`` when empty; arrays inline as
    ``[ a, b ]`` (``[ ]`` when empty) without adding a nesting level, so an object inside an array
    is indented relative to the object holding the array."""
    out: list[bytes] = []
    _pretty(value, 0, out)
    return b"".join(out)


def _pretty(value: Any, level: int, out: list[bytes]) -> None:
    if isinstance(value, Mapping):
        if not value:
            out.append(b"{ }")
            return
        inner = b"\n" + b"  " * (level + 1)
        out.append(b"{")
        for i, (key, item) in enumerate(value.items()):
            out.append(inner if i == 0 else b"," + inner)
            out.append(orjson.dumps(str(key)))
            out.append(b" : ")
            _pretty(item, level + 1, out)
        out.append(b"\n" + b"  " * level + b"}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append(b"[ ]")
            return
        out.append(b"[ ")
        for i, item in enumerate(value):
            if i:
                out.append(b", ")
            _pretty(item, level, out)
        out.append(b" ]")
    else:
        out.append(orjson.dumps(value))


# -- the store ----------------------------------------------------------------------------------


class KafkaSchemaHistory(SchemaHistory):
    """The store. Its Kafka clients are configured by the caller (the connector builds them from its
    properties with the shared Kafka client settings): ``producer_kwargs``/``consumer_kwargs`` are kafka-python
    arguments (identity, TLS/SASL, tuning) to which the topic log adds what its guarantees need (acks=all,
    one request in flight, no consumer group, read_committed); ``ensure_topic`` creates the topic at
    start (without it the broker's auto-creation makes it on the first write);
    ``describe_reachability(bootstrap)`` adds a phrase on whether the brokers answer to the error
    messages."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        *,
        bootstrap_servers: Sequence[str] | None = None,
        producer_kwargs: Mapping[str, Any] | None = None,
        consumer_kwargs: Mapping[str, Any] | None = None,
        client_id: str | None = None,
        poll_interval_ms: int = 100,
        recovery_attempts: int = 100,
        query_timeout_ms: int = 3000,
        ensure_topic: TopicEnsurer | None = None,
        describe_reachability: Callable[[str], str] | None = None,
    ) -> None:
        self.bootstrap = bootstrap  # as configured: named in messages
        self.topic = topic
        producer = dict(producer_kwargs or {})
        consumer = dict(consumer_kwargs or {})
        if client_id is not None:
            producer.setdefault("client_id", client_id)
            consumer.setdefault("client_id", client_id)
        self.poll_interval_ms = poll_interval_ms
        self.recovery_attempts = recovery_attempts
        self.query_timeout_ms = query_timeout_ms
        self.topic_log = KafkaTopicLog(
            bootstrap,
            topic,
            what="schema history topic",
            error=SchemaHistoryError,
            bootstrap_key=BOOTSTRAP_KEY,
            bootstrap_servers=bootstrap_servers,
            producer_kwargs=producer,
            consumer_kwargs=consumer,
            ensure_topic=ensure_topic,
            describe_reachability=describe_reachability,
            ack_timeout_ms=max(query_timeout_ms, 30_000),
        )
        self._partition_count_checked = False

    @property
    def producer_kwargs(self) -> dict[str, Any]:
        return self.topic_log.producer_kwargs

    @property
    def consumer_kwargs(self) -> dict[str, Any]:
        return self.topic_log.consumer_kwargs

    # -- SchemaHistory ----------------------------------------------------------------------------
    def start(self) -> None:
        partitions = self.topic_log.partitions()
        if partitions is None:
            self._create_topic()
        else:
            self._check_single_partition(partitions)

    def exists(self) -> bool:
        partitions = self.topic_log.partitions()
        if not partitions:
            return False
        self._check_single_partition(partitions)
        return not self.topic_log.is_empty(0)

    def record(self, record: HistoryRecord) -> None:
        # Synchronous (acks=all): once this returns the DDL is in the history, before any record or
        # offset that depends on it is delivered or committed (also under exactly-once, where the
        # history is not part of the data's transaction: it may run ahead of the committed offset,
        # which recovery handles by applying only the DDL up to the offset).
        self.topic_log.append(None, jackson_pretty(history_record_to_document(record)), partition=0)
        if not self._partition_count_checked:
            # The broker may just have auto-created the topic with its own partition count.
            self._check_single_partition(self.topic_log.partitions() or {0})

    def records(self) -> Iterator[HistoryRecord]:
        if not self.topic_log.partitions():
            return
        for message in self.topic_log.read(
            [0],
            poll_timeout_ms=self.poll_interval_ms,
            max_empty_polls=self.recovery_attempts,
            hint=f"consider increasing {PREFIX}kafka.recovery.poll.interval.ms or {PREFIX}kafka.recovery.attempts",
        ):
            if message.value is not None:
                yield self._parse(message.value, message.offset)

    def stop(self) -> None:
        self.topic_log.close()

    # -- internals ------------------------------------------------------------------------------
    def _parse(self, value: bytes, offset: int) -> HistoryRecord:
        try:
            return history_record_from_json(value)  # any JSON layout: pretty (ours, Debezium's) or compact
        except SchemaHistoryError as exc:
            raise SchemaHistoryError(f"schema history topic {self.topic} offset {offset}: {exc}") from exc

    def _check_single_partition(self, partitions: set[int]) -> None:
        if len(partitions) > 1:
            raise SchemaHistoryError(
                f"schema history topic {self.topic} has {len(partitions)} partitions, but it must have "
                f"exactly one so the DDL is read back in the order it happened. Fix: point {TOPIC_KEY} at a "
                "new single-partition topic (cleanup.policy=delete, retention.ms=-1) or let the connector "
                "create it, and re-snapshot the schema with snapshot.mode=recovery"
            )
        self._partition_count_checked = True

    def _create_topic(self) -> None:
        # Without an ensurer the broker creates it on the first write; record() then checks its partitions.
        if self.topic_log.create(
            1,
            -1,
            TOPIC_CONFIGS,
            "create it yourself with 1 partition, cleanup.policy=delete and retention.ms=-1",
        ):
            self._partition_count_checked = True
