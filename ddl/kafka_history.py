"""Schema history in a Kafka topic, as Debezium's ``KafkaSchemaHistory`` keeps it.

One partition (0), null keys, and each ``HistoryRecord`` as a **pretty-printed** JSON document in
Jackson's default layout (Debezium writes it with Jackson's ``DefaultPrettyPrinter``), so Debezium
and this connector can read each other's history topics. Order is everything in a history, so a
topic with more than one partition is refused rather than read in an arbitrary interleaving.

Writes wait for ``acks=all`` (one request in flight), so ``record()`` returning means the DDL is
durably stored before any change event that depends on it is delivered. Recovery reads partition 0
from the beginning to the end offset observed at the start, tolerating
``recovery.attempts`` consecutive empty polls of ``recovery.poll.interval.ms``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import orjson
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as kafka_errors

from ddl.errors import SchemaHistoryError
from ddl.history import SchemaHistory
from ddl.history_record import HistoryRecord, history_record_from_json, history_record_to_document

log = logging.getLogger(__name__)

PREFIX = "schema.history.internal."
TOPIC_KEY = PREFIX + "kafka.topic"
BOOTSTRAP_KEY = PREFIX + "kafka.bootstrap.servers"
PRODUCER_PREFIX = PREFIX + "producer."
CONSUMER_PREFIX = PREFIX + "consumer."
JAVA_LONG_MAX = 9_223_372_036_854_775_807
# What Debezium creates the topic with: keep every record forever, never compact.
TOPIC_CONFIGS = {"cleanup.policy": "delete", "retention.ms": str(JAVA_LONG_MAX), "retention.bytes": "-1"}

TopicEnsurer = Callable[[str, int, int, Mapping[str, str]], bool]
"""``(topic, partitions, replication factor, topic configs) -> bool``: create the topic if the
cluster allows it (True: it exists now; False: creation is not possible here and the broker's
auto-creation will make it); raises ``kafka.errors.KafkaError`` for other failures."""


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
    arguments (identity, TLS/SASL, tuning) to which the store adds what its guarantees need (acks=all,
    one request in flight, no consumer group); ``ensure_topic`` creates the topic at start (without
    it the broker's auto-creation makes it on the first write); ``describe_reachability(bootstrap)``
    adds a phrase on whether the brokers answer to the error messages."""

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
        # The addresses the clients connect to (kafka-python splits a comma-separated text itself).
        self.bootstrap_servers: str | list[str] = (
            list(bootstrap_servers) if bootstrap_servers is not None else bootstrap
        )
        self.topic = topic
        self.producer_kwargs = dict(producer_kwargs or {})
        self.consumer_kwargs = dict(consumer_kwargs or {})
        if client_id is not None:
            self.producer_kwargs.setdefault("client_id", client_id)
            self.consumer_kwargs.setdefault("client_id", client_id)
        self.poll_interval_ms = poll_interval_ms
        self.recovery_attempts = recovery_attempts
        self.query_timeout_ms = query_timeout_ms
        self._ensure_topic = ensure_topic
        self._describe_reachability = describe_reachability
        self._producer: KafkaProducer | None = None
        self._partition_count_checked = False

    # -- SchemaHistory ----------------------------------------------------------------------------
    def start(self) -> None:
        partitions = self._partitions()
        if partitions is None:
            self._create_topic()
        else:
            self._check_single_partition(partitions)

    def exists(self) -> bool:
        partitions = self._partitions()
        if not partitions:
            return False
        self._check_single_partition(partitions)
        tp = TopicPartition(self.topic, 0)
        with self._consumer() as consumer:
            return bool(consumer.end_offsets([tp])[tp] > consumer.beginning_offsets([tp])[tp])

    def record(self, record: HistoryRecord) -> None:
        producer = self._ensure_producer()
        value = jackson_pretty(history_record_to_document(record))
        try:
            producer.send(self.topic, key=None, value=value, partition=0).get(
                timeout=max(self.query_timeout_ms, 30_000) / 1000
            )
        except kafka_errors.KafkaError as exc:
            raise SchemaHistoryError(
                f"cannot store DDL in schema history topic {self.topic} on {self.bootstrap}: "
                f"{type(exc).__name__}: {exc}{self._reachability()}"
            ) from exc
        if not self._partition_count_checked:
            # The broker may just have auto-created the topic with its own partition count.
            self._check_single_partition(self._partitions() or {0})

    def records(self) -> Iterator[HistoryRecord]:
        if not self._partitions():
            return
        tp = TopicPartition(self.topic, 0)
        with self._consumer() as consumer:
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            end = consumer.end_offsets([tp])[tp]
            empty_polls = 0
            while consumer.position(tp) < end:
                batch = consumer.poll(timeout_ms=self.poll_interval_ms).get(tp, [])
                if not batch:
                    empty_polls += 1
                    if empty_polls > self.recovery_attempts:
                        raise SchemaHistoryError(
                            f"schema history topic {self.topic} could not be read to its end offset {end} "
                            f"(stuck at {consumer.position(tp)}) on {self.bootstrap}; consider increasing "
                            f"{PREFIX}kafka.recovery.poll.interval.ms or {PREFIX}kafka.recovery.attempts"
                            f"{self._reachability()}"
                        )
                    continue
                empty_polls = 0
                for message in batch:
                    if message.offset >= end or message.value is None:
                        continue
                    yield self._parse(message.value, message.offset)

    def stop(self) -> None:
        if self._producer is not None:
            self._producer.close(timeout=5)
            self._producer = None

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

    def _partitions(self) -> set[int] | None:
        """The topic's partition ids, or None when it does not exist (never auto-creates it)."""
        with self._consumer() as consumer:
            ids = consumer.partitions_for_topic(self.topic)
        return set(ids) if ids else None

    def _create_topic(self) -> None:
        if self._ensure_topic is None:
            return  # the broker creates it on the first write; record() then checks its partitions
        try:
            if self._ensure_topic(self.topic, 1, -1, TOPIC_CONFIGS):
                self._partition_count_checked = True
        except kafka_errors.KafkaError as exc:
            raise SchemaHistoryError(
                f"cannot create schema history topic {self.topic} on {self.bootstrap}: "
                f"{type(exc).__name__}: {exc}; create it yourself with 1 partition, "
                "cleanup.policy=delete and retention.ms=-1"
            ) from exc

    def _reachability(self) -> str:
        """`` (<whether each broker answers>)`` for an error message, or nothing."""
        if self._describe_reachability is None:
            return ""
        return f" ({self._describe_reachability(self.bootstrap)})"

    def _consumer(self) -> _ClosingConsumer:
        try:
            consumer = KafkaConsumer(
                bootstrap_servers=self.bootstrap_servers,
                group_id=None,
                enable_auto_commit=False,
                allow_auto_create_topics=False,
                **self.consumer_kwargs,
            )
        except kafka_errors.KafkaError as exc:
            raise SchemaHistoryError(
                f"cannot connect to {BOOTSTRAP_KEY}={self.bootstrap} to read schema history "
                f"topic {self.topic}: {type(exc).__name__}"
                f"{self._reachability()}"
            ) from exc
        return _ClosingConsumer(consumer)

    def _ensure_producer(self) -> KafkaProducer:
        if self._producer is None:
            try:
                self._producer = KafkaProducer(
                    **{
                        "retries": 2_147_483_647,
                        **self.producer_kwargs,
                        "bootstrap_servers": self.bootstrap_servers,
                        "acks": "all",
                        "max_in_flight_requests_per_connection": 1,
                    }
                )
            except kafka_errors.KafkaError as exc:
                raise SchemaHistoryError(
                    f"cannot connect to {BOOTSTRAP_KEY}={self.bootstrap} to write schema history topic "
                    f"{self.topic}: {type(exc).__name__}{self._reachability()}"
                ) from exc
        return self._producer


class _ClosingConsumer:
    """``with`` support for kafka-python's consumer (it has ``close`` but no context manager)."""

    def __init__(self, consumer: KafkaConsumer) -> None:
        self.consumer = consumer

    def __enter__(self) -> KafkaConsumer:
        return self.consumer

    def __exit__(self, *exc: object) -> None:
        self.consumer.close()
