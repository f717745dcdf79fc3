"""The ``kafka`` sink: change records into Kafka topics with kafka-python, at least once, in order.

Each record goes to ``record.topic`` with key and value exactly as the JSON converter writes them
(the bytes the ``jsonl`` sink writes), its headers, the partition Debezium pins (0 for heartbeats and
schema changes) or the producer's murmur2 partitioner on the key bytes (Java's default partitioner,
so a key lands in the same partition Kafka Connect would put it in), and a null value for tombstones.

Delivery guarantees:
* ``acks=all`` and one in-flight request per connection, so a retried batch can never overtake the
  batch after it: per partition, the broker log is in send order.
* ``send()`` keeps the futures of unacknowledged records; when their bytes exceed ``buffer.memory``
  (kafka-python has no buffer pool of its own) it waits for the oldest ones, so a slow or absent
  broker makes the binlog reader wait instead of growing memory. The wait is bounded: a batch the
  broker does not acknowledge within ``delivery.timeout.ms`` fails.
* ``flush()`` returns once every record sent is acknowledged, or raises ``SinkError`` naming the
  topic, the brokers and the cause; the failure is sticky, so the engine cannot store an offset past
  a record the broker did not take.
* While it waits for acknowledgements (brokers down, too few in-sync replicas) it logs a warning
  every ``WAIT_REPORT_INTERVAL_S`` naming the brokers and the topic, and ``waiting_seconds()`` (the
  ``mysql_cdc_sink_waiting_seconds`` metric) says how long; a line says when they answer again.

Producer settings use Kafka's Java names under ``sink.kafka.producer.`` and are translated to
kafka-python's arguments by ``sink.kafka.client``, shared with the Kafka-backed offset store and
schema history.

``sink.kafka.client=confluent`` puts librdkafka (confluent-kafka, the ``librdkafka`` extra) in
kafka-python's place: ``sink.kafka.confluent.ConfluentKafkaSink``, built by ``kafka_sink`` from the
same settings, with the same topics, bytes, partitions and failure messages.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from kafka import KafkaProducer
from kafka import errors as kafka_errors

from ddl.kafka.client import bootstrap_list, describe_reachability, unreachable_message
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.records import ChangeRecord
from sink.base import InstanceFencedError, Sink, SinkConfig, SinkError, TransactionAbandonedError
from sink.kafka.delivery import (
    HINTS,
    delivery_failure,
    error_text,
    fenced_failure,
    is_fenced,
    topic_creator,
)
from sink.kafka.partitioner import (
    KeyPartitioner,
    java_default_partition,
)
from sink.kafka.properties import BOOTSTRAP_KEY, CLIENT_KEY, CLIENTS
from sink.kafka.settings import (
    DEFAULT_BATCH_SIZE,
    WAIT_REPORT_INTERVAL_S,
    KafkaSinkSettings,
)
from sink.kafka.sink_base import KafkaSinkBase

log = logging.getLogger("sink.kafka")  # one logger for the sink, whichever client sends


def kafka_sink(config: SinkConfig) -> Sink:
    """The ``kafka`` sink with the producer ``sink.kafka.client`` names: kafka-python (the
    default) or confluent (librdkafka, the ``librdkafka`` extra)."""
    client = (config.get(CLIENT_KEY) or CLIENTS[0]).strip().lower()
    if client == "confluent":
        from sink.kafka.confluent import ConfluentKafkaSink  # needs the librdkafka extra

        return ConfluentKafkaSink.from_config(config)
    if client != CLIENTS[0]:
        raise ConfigError(CLIENT_KEY, f"expected one of {', '.join(CLIENTS)}, got {client!r}")
    return KafkaSink.from_config(config)


_NULL_KEY: Any = object()


def _serialize_key(key: Any) -> bytes | None:
    return None if key is _NULL_KEY else key


@dataclass(slots=True)
class _Pending:
    future: Any  # kafka-python FutureRecordMetadata
    topic: str
    size: int


# What an operator can do about the non-retriable errors a broker answers with (both clients).


class _Settled(Exception):
    """A future completed with a timeout error of its own while ``_settle`` waited in slices."""


class KafkaSink(KafkaSinkBase):
    def __init__(
        self, settings: KafkaSinkSettings, producer_factory: Callable[..., KafkaProducer] = KafkaProducer
    ) -> None:
        super().__init__(settings)
        self._producer_factory = producer_factory
        self._producer: KafkaProducer | None = None
        self._pending: deque[_Pending] = deque()
        self._pending_bytes = 0
        self._partitioner = KeyPartitioner()
        # exactly.once.support: the transactional producer's id, the connector named when fenced,
        # and whether a transaction is open.
        self.transactional_id: str | None = None
        self._owner = ""
        self._in_transaction = False
        self.committed_transactions = 0
        self._waiting_since: float | None = None  # monotonic start of the current wait, if any
        self._waits = 0

    @classmethod
    def from_config(cls, config: SinkConfig) -> KafkaSink:
        return cls(KafkaSinkSettings.from_config(config))

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        s = self.settings
        kwargs: dict[str, Any] = {
            "retries": 2_147_483_647,  # Kafka's default: retry until delivery.timeout.ms
            # Kafka 4.0's default (KIP-1030); with kafka-python it also means far fewer, fuller
            # batches and sender wake-ups than linger 0.
            "linger_ms": 5,
            # Change records with their schemas inline run to kilobytes: Kafka's 16 KiB default
            # batch holds a handful, and with one request in flight each batch costs a round trip.
            # 1 MiB (Kafka's max.request.size) lets a request carry hundreds; set
            # sink.kafka.producer.batch.size to change it.
            "batch_size": DEFAULT_BATCH_SIZE,
            **s.producer_kwargs,
            "bootstrap_servers": bootstrap_list(s.bootstrap),
            "acks": "all",
            "max_in_flight_requests_per_connection": 1,
            "key_serializer": _serialize_key,
            "partitioner": java_default_partition,
        }
        if self.transactional_id is not None:
            kwargs["transactional_id"] = self.transactional_id
            kwargs["enable_idempotence"] = True
        try:
            self._producer = self._producer_factory(**kwargs)
            if self.transactional_id is not None:
                # Fences every earlier producer with this id: a transaction it left open is aborted
                # (or completed if it had begun committing) before this one starts.
                self._producer.init_transactions()
        except kafka_errors.NoBrokersAvailable:
            raise SinkError(f"Kafka sink: {unreachable_message(BOOTSTRAP_KEY, s.bootstrap)}") from None
        except kafka_errors.KafkaError as exc:
            if self.transactional_id is not None and self._producer is not None:
                hint = (
                    "; lower sink.kafka.producer.transaction.timeout.ms to at most the brokers' "
                    "transaction.max.timeout.ms"
                    # kafka-python wraps the broker's error in a plain KafkaError naming it
                    if isinstance(exc, kafka_errors.InvalidTransactionTimeoutError)
                    or "InvalidTransactionTimeout" in str(exc)
                    else ""
                )
                raise SinkError(
                    f"Kafka sink: cannot initialise the transactions of {self.transactional_id} on "
                    f"{s.bootstrap} (exactly.once.support): {error_text(exc)}{hint}"
                ) from exc
            raise SinkError(f"Kafka sink: cannot connect to {s.bootstrap}: {error_text(exc)}") from exc
        if self.transactional_id is not None:
            log.info(
                "Kafka sink: transactional producer %s initialised (exactly once; earlier instances fenced)",
                self.transactional_id,
            )
        if self._creator is None:
            self._creator = topic_creator(s)
        log.info(
            "Kafka sink connected to %s (acks=all, max.in.flight=1, buffer.memory=%d bytes)",
            s.bootstrap,
            s.buffer_memory,
        )

    def close(self) -> None:
        self._close_creator()
        if self._producer is not None and self._in_transaction:
            self._abort_quietly(self._producer)
        if self._producer is not None:
            # Records still pending here were never confirmed, so their offsets were not stored.
            self._producer.close(timeout=5)
            self._producer = None

    # -- delivery -------------------------------------------------------------------------------
    def send(self, records: Sequence[ChangeRecord]) -> None:
        self._raise_if_failed()
        producer = self._producer
        if producer is None:
            raise SinkError("Kafka sink: send() before start()")
        if self.transactional_id is not None and not self._in_transaction:
            self._begin(producer)
        s = self.settings
        limit = s.buffer_memory
        for record in records:
            topic = record.topic
            if topic not in self._ready_topics:
                self._prepare_topic(topic)
            key = record.key_bytes(s.key_schemas)
            value = record.value_bytes(s.value_schemas)
            headers = record.header_items()

            size = (
                (len(key) if key else 0)
                + (len(value) if value else 0)
                + sum(len(n) + len(v) for n, v in headers)
            )
            try:
                partition = record.partition
                if partition is None and key is not None:
                    partition = self._key_partition(producer, topic, key, record)
                future = producer.send(
                    topic,
                    value=value,
                    key=_NULL_KEY if key is None and value is None else key,
                    headers=headers or None,
                    partition=partition,
                )
            except kafka_errors.KafkaTimeoutError as exc:
                # send() (and partitions_for) only time out waiting for the topic's metadata
                # (max.block.ms).
                self._failure = SinkError(
                    f"Kafka sink: brokers {s.bootstrap} gave no metadata for topic '{topic}' within "
                    f"max.block.ms={self.settings.producer_kwargs.get('max_block_ms', 60_000)} "
                    f"({describe_reachability(s.bootstrap)}); cause: {error_text(exc)}"
                )
                raise self._failure from exc
            except kafka_errors.KafkaError as exc:
                self._fail(topic, record.partition, exc)
            except ValueError as exc:  # kafka-python's check of the topic name
                self._fail(topic, record.partition, kafka_errors.InvalidTopicError(str(exc)))
            if future.is_done and future.failed():  # refused client-side (e.g. max.request.size)
                self._fail(topic, record.partition, future.exception)
            self._pending.append(_Pending(future, topic, size))
            self._pending_bytes += size
            if self._pending_bytes > limit:
                self._wait_for_room(limit)
            elif len(self._pending) > 4096:
                self._reap_done()

    def _key_partition(
        self, producer: KafkaProducer, topic: str, key: bytes, record: ChangeRecord
    ) -> int | None:
        """The partition of a keyed record, as the producer's partitioner would choose it (None: the
        topic's partitions are not known yet; the producer then waits for them and partitions)."""
        partitions = self._partitioner.partitions.get(topic)
        if partitions is None:
            known = producer.partitions_for(topic)
            if not known:
                return None
            partitions = self._partitioner.partitions[topic] = sorted(known)
        schema = record.key_schema if self.settings.key_schemas else None
        return self._partitioner.partition(partitions, key, schema.json_bytes if schema is not None else None)

    def flush(self) -> None:
        self._raise_if_failed()
        producer = self._producer
        if producer is None:
            return
        self._partitioner.partitions.clear()  # topics may have gained partitions: ask again
        bound = self.settings.ack_bound_seconds
        try:
            head_topic = self._pending[0].topic if self._pending else "?"
            self._wait(lambda timeout: producer.flush(timeout=timeout), bound, head_topic)
        except kafka_errors.KafkaTimeoutError:
            head = self._pending[0] if self._pending else None
            self._fail(
                head.topic if head else "?",
                None,
                kafka_errors.KafkaTimeoutError(f"records still unacknowledged after {bound:.0f} s"),
            )
        # Every future is complete now; the first failure in send order is the one to report.
        for pending in self._pending:
            future = pending.future
            if not future.is_done:  # flush() promises completion; offsets depend on it, so check
                with contextlib.suppress(kafka_errors.KafkaError):
                    future.get(timeout=bound)
            if not future.is_done or future.failed():
                self._fail(
                    pending.topic,
                    None,
                    future.exception
                    if future.is_done
                    else kafka_errors.KafkaTimeoutError(f"no acknowledgement after {bound:.0f} s"),
                )
        self.acknowledged += len(self._pending)
        self._pending.clear()
        self._pending_bytes = 0

    # -- transactions (exactly.once.support; sink.base.TransactionalSink) ------------------------
    def enable_transactions(self, transactional_id: str, owner: str) -> None:
        if self._producer is not None:
            raise SinkError("Kafka sink: enable_transactions() after start()")
        self.transactional_id = transactional_id
        self._owner = owner

    def add_to_transaction(self, topic: str, key: bytes | None, value: bytes | None) -> None:
        self._raise_if_failed()
        producer = self._producer
        if producer is None or self.transactional_id is None:
            raise SinkError("Kafka sink: add_to_transaction() needs a started transactional producer")
        if not self._in_transaction:
            self._begin(producer)
        try:
            future = producer.send(topic, key=key, value=value)
        except kafka_errors.KafkaError as exc:
            self._fail(topic, None, exc)
        self._pending.append(_Pending(future, topic, (len(key) if key else 0) + (len(value) if value else 0)))

    def commit_transaction(self) -> None:
        """Wait for every record of the transaction, then commit it: a read_committed consumer
        sees all of them (the offset record included) or, after a crash or a fence, none."""
        producer = self._producer
        if producer is None or self.transactional_id is None:
            raise SinkError("Kafka sink: commit_transaction() needs a started transactional producer")
        if not self._in_transaction:
            return
        self.flush()
        try:
            self._bounded_commit(producer)
        except kafka_errors.KafkaError as exc:
            self._in_transaction = False
            if is_fenced(exc):
                self._failure = self._fenced(exc)
            else:
                self._failure = TransactionAbandonedError(
                    f"Kafka sink: could not commit transaction of {self.transactional_id} on "
                    f"{self.settings.bootstrap}: {error_text(exc)} "
                    f"({describe_reachability(self.settings.bootstrap)}); the connector stops, and "
                    "a restart resumes from the offset of the last committed transaction"
                )
            raise self._failure from exc
        self._in_transaction = False
        self.committed_transactions += 1

    def _bounded_commit(self, producer: KafkaProducer) -> None:
        """``commit_transaction`` within the acknowledgement bound: kafka-python's own wait has no
        limit, and a coordinator lost mid-commit must not hang the connector. A commit that times
        out here may still complete; ``connector.delivery.exactly_once`` reads the offset topic to tell."""
        outcome: list[BaseException | None] = []

        def commit() -> None:
            try:
                producer.commit_transaction()
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                outcome.append(exc)

        thread = threading.Thread(target=commit, name="kafka-commit", daemon=True)
        thread.start()
        bound = self.settings.ack_bound_seconds
        thread.join(timeout=bound)
        if not outcome:
            raise kafka_errors.KafkaTimeoutError(f"the commit was not acknowledged after {bound:.0f} s")
        if outcome[0] is not None:
            raise outcome[0]

    def restart_transactions(self) -> None:
        old, self._producer = self._producer, None
        if old is not None:
            self._abort_quietly(old)
            with contextlib.suppress(Exception):
                old.close(timeout=0)
        self._pending.clear()
        self._pending_bytes = 0
        self._failure = None
        self._in_transaction = False
        self._partitioner.partitions.clear()
        log.warning(
            "Kafka sink: replacing the producer of %s; its open transaction is aborted and its records sent again",
            self.transactional_id,
        )
        self.start()

    def _begin(self, producer: KafkaProducer) -> None:
        try:
            producer.begin_transaction()
        except kafka_errors.KafkaError as exc:
            if is_fenced(exc):
                self._failure = self._fenced(exc)
            else:
                self._failure = TransactionAbandonedError(
                    f"Kafka sink: could not begin a transaction of {self.transactional_id}: {error_text(exc)}"
                )
            raise self._failure from exc
        self._in_transaction = True

    def _fenced(self, exc: BaseException) -> InstanceFencedError:
        return fenced_failure(self._owner, self.transactional_id, self.settings.bootstrap, error_text(exc))

    @staticmethod
    def _abort_quietly(producer: KafkaProducer) -> None:
        """Abort the open transaction so read_committed consumers need not wait for its timeout;
        bounded (kafka-python's abort waits without a limit), and any failure is left to the broker
        (the transaction times out, or the next instance's init_transactions aborts it)."""

        def abort() -> None:
            with contextlib.suppress(Exception):
                producer.abort_transaction()

        thread = threading.Thread(target=abort, name="kafka-abort", daemon=True)
        thread.start()
        thread.join(timeout=5)

    # -- internals ------------------------------------------------------------------------------
    def _reap_done(self) -> None:
        while self._pending and self._pending[0].future.is_done:
            self._settle(self._pending[0], timeout=0)

    def _wait_for_room(self, limit: int) -> None:
        """Backpressure: the reader waits here while unacknowledged bytes exceed the limit."""
        bound = self.settings.ack_bound_seconds
        while self._pending and self._pending_bytes > limit:
            self._settle(self._pending[0], timeout=bound)

    def waiting_seconds(self) -> float:
        since = self._waiting_since
        return 0.0 if since is None else time.monotonic() - since

    def waits(self) -> int:
        return self._waits

    def _wait(self, wait: Callable[[float], Any], bound: float, topic: str) -> None:
        """``wait(timeout)`` (raising ``KafkaTimeoutError`` at the timeout), in slices, for up to
        ``bound`` seconds: while the brokers stay silent the producer retries, and each slice
        without an answer is logged so an operator sees the connector waiting, and on what."""
        started = time.monotonic()
        deadline = started + bound
        try:
            while True:
                remaining = deadline - time.monotonic()
                try:
                    wait(max(0.0, min(WAIT_REPORT_INTERVAL_S, remaining)))
                    break
                except kafka_errors.KafkaTimeoutError:
                    if remaining <= WAIT_REPORT_INTERVAL_S:
                        raise
                if self._waiting_since is None:
                    self._waiting_since = started
                    self._waits += 1
                s = self.settings
                log.warning(
                    "Kafka sink: waiting %.0f s for brokers %s to acknowledge %d records (topic '%s'); "
                    "the producer retries until delivery.timeout.ms=%d (%s)",
                    time.monotonic() - started,
                    s.bootstrap,
                    len(self._pending),
                    topic,
                    s.delivery_timeout_ms,
                    describe_reachability(s.bootstrap),
                )
            if self._waiting_since is not None:
                log.info(
                    "Kafka sink: brokers %s acknowledged again after %.0f s",
                    self.settings.bootstrap,
                    time.monotonic() - self._waiting_since,
                )
        finally:
            self._waiting_since = None

    def _settle(self, pending: _Pending, timeout: float) -> None:
        started = time.monotonic()
        future = pending.future

        def get(slice_s: float) -> None:
            try:
                future.get(timeout=slice_s)
            except kafka_errors.KafkaTimeoutError:
                if future.is_done:  # the batch expired: a result, not the slice's end
                    raise _Settled() from None
                raise

        try:
            try:
                self._wait(get, timeout, pending.topic)
            except _Settled:
                future.get(timeout=0)  # raises the batch's own error
        except kafka_errors.KafkaError as exc:
            if isinstance(exc, kafka_errors.KafkaTimeoutError) and not pending.future.is_done:
                exc = kafka_errors.KafkaTimeoutError(
                    f"no acknowledgement after {time.monotonic() - started:.0f} s"
                )
            self._fail(pending.topic, None, exc)
        self._pending.popleft()
        self._pending_bytes -= pending.size
        self.acknowledged += 1

    def _fail(self, topic: str, partition: int | None, exc: Exception) -> NoReturn:
        s = self.settings
        if is_fenced(exc):
            self._failure = self._fenced(exc)
            raise self._failure from exc
        if isinstance(exc, kafka_errors.KafkaTimeoutError):
            message = str(delivery_failure(s, topic, partition, error_text(exc), timed_out=True))
        else:
            hint = next((h for t, h in HINTS.items() if isinstance(exc, t)), None)
            message = str(delivery_failure(s, topic, partition, error_text(exc), False, hint))
            if hint is not None:  # the operator must fix it: retrying would fail the same way
                self._failure = SinkError(message)
                raise self._failure from exc
        if self.transactional_id is not None:
            # Nothing of the open transaction is visible (kafka-python also reports a broker lost
            # under a transaction request as a fatal producer error): a new producer can send the
            # records again in a new transaction.
            self._failure = TransactionAbandonedError(message)
        else:
            self._failure = SinkError(message)
        raise self._failure from exc
