"""The ``kafka`` sink's librdkafka producer: ``sink.kafka.client=confluent`` (confluent-kafka, the
``librdkafka`` extra: ``pip install 'mysql-cdc[librdkafka]'``).

The same sink as ``sink.kafka.sink.KafkaSink`` with librdkafka producing instead of kafka-python:
* the same records: topic, key and value bytes (the JSON converter's), headers, the pinned
  partition 0 of heartbeats and schema changes, and keyed records partitioned by librdkafka's
  ``murmur2_random``, which is Java's default partitioner (``toPositive(murmur2(key)) %
  partitions``) for a non-null key, so a key lands where the kafka-python sink and Kafka Connect
  put it. Null-key records (keyless tables) go to a random partition, as with kafka-python;
* the same at-least-once delivery: ``acks=all``, one request in flight, retries until
  ``delivery.timeout.ms``; unacknowledged bytes bounded by ``buffer.memory`` (librdkafka's
  ``queue.buffering.max.kbytes``: ``send()`` waits for room); ``flush()`` returns once every record
  is acknowledged or raises ``SinkError`` naming the topic and the setting to change (the messages
  ``sink.kafka.sink`` writes for kafka-python), and the failure is sticky;
* the same settings: ``sink.kafka.producer.*`` in Kafka's Java names, translated to librdkafka's
  properties by ``RDKAFKA_PRODUCER_SETTINGS`` (``sink.kafka.rdkafka_settings``); a setting
  librdkafka has no equivalent for is a ``ConfigError`` naming the key, as is an unknown or
  connector-owned one. Topics are created from ``topic.creation.default.*`` by the same admin
  client as the kafka-python sink's.

The hot path asks librdkafka for delivery reports of failed records only
(``delivery.report.only.error``), so an acknowledged record costs no Python call at all; ``flush()``
waits for librdkafka's queue to empty.

``RdkafkaTransactions`` wraps the transactional primitives (``transactional.id``,
``init_transactions``, begin, commit, abort) for exactly-once delivery: a producer with a
``transactional_id`` has them as ``ConfluentKafkaSink.transactions``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from ddl.kafka.client import (
    describe_reachability,
)
from mysql_cdc_base.records import ChangeRecord
from sink.base import InstanceFencedError, SinkConfig, SinkError, TransactionAbandonedError
from sink.kafka.confluent_transactions import (
    ClientLog,
    RdkafkaTransactions,
    error_text,
    fenced_kafka_error,
    is_fenced_error,
)
from sink.kafka.delivery import (
    HINT_BATCH_TOO_LARGE,
    HINT_CLUSTER_AUTHORIZATION,
    HINT_INVALID_TOPIC,
    HINT_TOO_LARGE,
    HINT_TOPIC_AUTHORIZATION,
    delivery_failure,
    fenced_failure,
    topic_creator,
)
from sink.kafka.properties import BOOTSTRAP_KEY
from sink.kafka.rdkafka_settings import (
    RDKAFKA_PRODUCER_SETTINGS,
)
from sink.kafka.settings import DEFAULT_BATCH_SIZE, KafkaSinkSettings
from sink.kafka.sink_base import KafkaSinkBase

log = logging.getLogger("sink.kafka")


# librdkafka error codes → what an operator can do (the kafka-python sink's hints).
_HINTS: dict[int, str] = {
    KafkaError.MSG_SIZE_TOO_LARGE: HINT_TOO_LARGE,
    KafkaError.RECORD_LIST_TOO_LARGE: HINT_BATCH_TOO_LARGE,
    KafkaError.TOPIC_AUTHORIZATION_FAILED: HINT_TOPIC_AUTHORIZATION,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED: HINT_CLUSTER_AUTHORIZATION,
    KafkaError.TOPIC_EXCEPTION: HINT_INVALID_TOPIC,
}
START_TIMEOUT_S = 10.0
# A failure that may be the producer's fatal state (a fencing): records purged from the queue, or
# refused because the producer failed fatally.
_FATAL_SIGNS = ("_PURGE_QUEUE", "_FATAL")


# -- the sink --------------------------------------------------------------------------------------


class ConfluentKafkaSink(KafkaSinkBase):
    def __init__(
        self,
        settings: KafkaSinkSettings,
        producer_factory: Callable[..., Producer] = Producer,
        transactional_id: str | None = None,
    ) -> None:
        super().__init__(settings)
        self._producer_factory = producer_factory
        self._producer: Producer | None = None
        self._transactional_id = transactional_id
        self.transactions: RdkafkaTransactions | None = None
        self._owner = ""  # the connector named when another instance fences this one
        self._in_transaction = False
        self._fenced_error: KafkaError | None = None
        self.committed_transactions = 0
        self._unacknowledged = 0  # records sent since the last successful flush
        self._client_error: str | None = None

    @classmethod
    def from_config(cls, config: SinkConfig) -> ConfluentKafkaSink:
        return cls(confluent_settings(config))

    # -- lifecycle ------------------------------------------------------------------------------
    def producer_config(self) -> dict[str, Any]:
        """The librdkafka configuration (secrets included: never log it)."""
        s = self.settings
        config: dict[str, Any] = {
            "linger.ms": 5,  # as the kafka-python sink (Kafka 4.0's default)
            "batch.size": DEFAULT_BATCH_SIZE,
            "compression.type": "none",
            "retries": 2_147_483_647,
            **s.producer_kwargs,
            "bootstrap.servers": s.bootstrap,
            "acks": "all",
            "max.in.flight.requests.per.connection": 1,
            "delivery.timeout.ms": s.delivery_timeout_ms,
            "request.timeout.ms": s.request_timeout_ms,
            "partitioner": "murmur2_random",  # Java's default partitioner for non-null keys
            "socket.nagle.disable": True,  # TCP_NODELAY, as Kafka's Java client and kafka-python
            # buffer.memory bounds the bytes of unacknowledged records, as Kafka's does; the count
            # is left to the bytes (librdkafka's default of 100,000 would cap it first).
            "queue.buffering.max.kbytes": max(1, -(-s.buffer_memory // 1024)),
            "queue.buffering.max.messages": 10_000_000,
            "delivery.report.only.error": True,
            "on_delivery": self._on_failed_delivery,
            "error_cb": self._on_client_error,
            "logger": ClientLog(log),
        }
        if self._transactional_id is not None:
            config["transactional.id"] = self._transactional_id
            config["enable.idempotence"] = True
            # librdkafka requires delivery.timeout.ms <= transaction.timeout.ms (60 s by default;
            # the broker allows up to transaction.max.timeout.ms, 15 min by default).
            config["transaction.timeout.ms"] = max(60_000, s.delivery_timeout_ms)
        return config

    def start(self) -> None:
        s = self.settings
        try:
            producer = self._producer_factory(self.producer_config())
        except KafkaException as exc:  # a value librdkafka refuses (a file that is not there ...)
            raise SinkError(f"Kafka sink: librdkafka refused the producer settings: {exc}") from None
        # kafka-python's producer connects in its constructor; librdkafka's does not: ask for the
        # cluster's metadata so that a wrong address fails at start, as it does with kafka-python.
        try:
            producer.list_topics(timeout=min(START_TIMEOUT_S, s.request_timeout_ms / 1000))
        except KafkaException:
            producer.poll(0)  # serve the client's error reports and log lines
            cause = f"; last client error: {self._client_error}" if self._client_error else ""
            raise SinkError(
                f"Kafka sink: no broker of {BOOTSTRAP_KEY}={s.bootstrap} answered "
                f"({describe_reachability(s.bootstrap)}){cause}"
            ) from None
        self._producer = producer
        self._creator = topic_creator(s)
        if self._transactional_id is not None:
            self.transactions = RdkafkaTransactions(producer, self._transactional_id, s.ack_bound_seconds)
            self.transactions.init()  # fences earlier producers with the id, aborts their transaction
            log.info(
                "Kafka sink: transactional producer %s initialised (exactly once; earlier instances fenced)",
                self._transactional_id,
            )
        log.info(
            "Kafka sink connected to %s with librdkafka %s (acks=all, max.in.flight=1, "
            "buffer.memory=%d bytes)",
            s.bootstrap,
            _librdkafka_version(),
            s.buffer_memory,
        )

    def close(self) -> None:
        self._close_creator()
        producer, self._producer = self._producer, None
        if producer is not None:
            # Records still pending here were never confirmed, so their offsets were not stored.
            try:
                producer.flush(5)
                producer.purge()
                producer.poll(0)
            except (KafkaException, SystemError):  # a producer that failed fatally (fenced ...)
                log.debug("closing the librdkafka producer", exc_info=True)

    # -- delivery -------------------------------------------------------------------------------
    def send(self, records: Sequence[ChangeRecord]) -> None:
        self._raise_if_failed()
        producer = self._producer
        if producer is None:
            raise SinkError("Kafka sink: send() before start()")
        s = self.settings
        key_schemas, value_schemas = s.key_schemas, s.value_schemas
        if self.transactions is not None and not self._in_transaction:
            self._begin()
        produce = producer.produce
        ready = self._ready_topics
        for record in records:
            topic = record.topic
            if topic not in ready:
                self._prepare_topic(topic)
            key = record.key_bytes(key_schemas)
            value = record.value_bytes(value_schemas)
            headers: Any = record.header_items() or None
            partition = record.partition
            try:
                produce(topic, value, key, -1 if partition is None else partition, headers=headers)
            except BufferError:
                self._produce_when_room(topic, value, key, partition, headers)
            except KafkaException as exc:  # refused before sending (e.g. larger than max.request.size)
                self._fail(topic, partition, exc.args[0])
        self._unacknowledged += len(records)
        self._poll(producer, 0)  # serve failure reports
        self._raise_if_failed()

    def flush(self) -> None:
        self._raise_if_failed()
        producer = self._producer
        if producer is None:
            return
        bound = self.settings.ack_bound_seconds
        try:
            remaining = producer.flush(bound)
        except (KafkaException, SystemError) as exc:  # the producer failed fatally (fenced, ...)
            self._producer_failed(exc)
            self._raise_if_failed()  # (says so when the producer was fenced)
        self._raise_if_failed()
        if remaining:
            self._failure = self._retriable(
                delivery_failure(
                    self.settings,
                    "?",
                    None,
                    f"{remaining} records still unacknowledged after {bound:.0f} s",
                    timed_out=True,
                )
            )
            raise self._failure
        self.acknowledged += self._unacknowledged
        self._unacknowledged = 0

    # -- transactions (exactly.once.support; sink.base.TransactionalSink) ------------------------
    def enable_transactions(self, transactional_id: str, owner: str) -> None:
        if self._producer is not None:
            raise SinkError("Kafka sink: enable_transactions() after start()")
        self._transactional_id = transactional_id
        self._owner = owner

    def add_to_transaction(self, topic: str, key: bytes | None, value: bytes | None) -> None:
        self._raise_if_failed()
        if self._producer is None or self.transactions is None:
            raise SinkError("Kafka sink: add_to_transaction() needs a started transactional producer")
        if not self._in_transaction:
            self._begin()
        try:
            self._producer.produce(topic, value, key)
        except KafkaException as exc:
            self._fail(topic, None, exc.args[0])
        self._unacknowledged += 1

    def commit_transaction(self) -> None:
        """Wait for every record of the transaction, then commit it: a read_committed consumer
        sees all of them (the offset record included) or, after a crash or a fence, none."""
        if self.transactions is None:
            raise SinkError("Kafka sink: commit_transaction() needs a started transactional producer")
        if not self._in_transaction:
            return
        try:
            self.flush()
            self.transactions.commit()
        except SinkError as exc:
            self._in_transaction = False
            self._failure = self._transaction_failure(exc)
            if self._failure is exc:  # already the sink's failure (flush): not its own cause
                raise
            raise self._failure from exc
        self._in_transaction = False
        self.committed_transactions += 1

    def restart_transactions(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            try:
                producer.purge()
                producer.poll(0)
            except KafkaException:
                log.debug("dropping the abandoned librdkafka producer", exc_info=True)
        self._failure = None
        self._fenced_error = None
        self._in_transaction = False
        self._unacknowledged = 0
        log.warning(
            "Kafka sink: replacing the producer of %s; its open transaction is aborted and its records sent again",
            self._transactional_id,
        )
        self.start()

    def _raise_if_failed(self) -> None:
        if self._failure is not None and self.transactions is not None and self._producer is not None:
            self._learn_fencing(self._producer)
            if self._fenced_error is not None and not isinstance(self._failure, InstanceFencedError):
                self._failure = self._transaction_failure(self._failure)
        super()._raise_if_failed()

    def _learn_fencing(self, producer: Producer) -> None:
        """A fenced producer's records fail (purged, or refused as fatal) before its fatal error is
        served: serve it, so that the error says the connector was fenced rather than that a record
        failed. When the failure is the producer's fatal state, aborting names its cause (librdkafka
        does not always call error_cb first)."""
        try:
            producer.poll(0)
            if self._fenced_error is None and any(w in str(self._failure) for w in _FATAL_SIGNS):
                producer.abort_transaction(1.0)
        except (KafkaException, SystemError) as exc:
            self._fenced_error = self._fenced_error or fenced_kafka_error(exc)

    def _poll(self, producer: Producer, timeout: float) -> None:
        """``producer.poll``: a fatal error it raises (fenced ...) becomes the sink's failure."""
        try:
            producer.poll(timeout)
        except (KafkaException, SystemError) as exc:
            self._producer_failed(exc)
            self._raise_if_failed()

    def _producer_failed(self, exc: KafkaException | SystemError) -> None:
        """The producer failed fatally: ``poll``/``flush`` raised its error, or a ``SystemError``
        whose context is that error (confluent-kafka 2.x, when a delivery report ran while the fatal
        error was pending)."""
        self._fenced_error = self._fenced_error or fenced_kafka_error(exc)
        if self._failure is None:
            cause = error_text(exc.args[0]) if isinstance(exc, KafkaException) else str(exc)
            self._failure = SinkError(
                f"Kafka sink: the librdkafka producer for {self.settings.bootstrap} failed: {cause}"
            )

    def _begin(self) -> None:
        assert self.transactions is not None
        try:
            self.transactions.begin()
        except SinkError as exc:
            self._failure = self._transaction_failure(exc)
            raise self._failure from exc
        self._in_transaction = True

    def _transaction_failure(self, exc: SinkError) -> SinkError:
        """A fenced producer's error names the connector and says another instance took over;
        any other failure abandons the transaction (a new producer may send it again)."""
        if isinstance(exc, InstanceFencedError) and exc is self._failure:
            return exc  # the sink's own (from flush)
        if self._fenced_error is not None or isinstance(exc, InstanceFencedError):
            cause = error_text(self._fenced_error) if self._fenced_error is not None else str(exc)
            return fenced_failure(self._owner, self._transactional_id, self.settings.bootstrap, cause)
        return TransactionAbandonedError(
            f"Kafka sink: could not commit transaction of {self._transactional_id} on "
            f"{self.settings.bootstrap}: {exc}; the connector stops, and a restart resumes from the "
            "offset of the last committed transaction"
        )

    # -- internals ------------------------------------------------------------------------------
    def _produce_when_room(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        partition: int | None,
        headers: Any,
    ) -> None:
        """Backpressure: librdkafka's queue holds buffer.memory bytes of unacknowledged records;
        wait for acknowledgements (each record is acknowledged or fails within delivery.timeout.ms)."""
        assert self._producer is not None
        while True:
            # Acknowledged records make no delivery report (delivery.report.only.error), so poll()
            # sleeps its whole timeout: keep it short, the queue may have room again at any moment.
            self._poll(self._producer, 0.005)
            self._raise_if_failed()
            try:
                self._producer.produce(
                    topic, value, key, -1 if partition is None else partition, headers=headers
                )
                return
            except BufferError:
                continue
            except KafkaException as exc:
                self._fail(topic, partition, exc.args[0])

    def _on_failed_delivery(self, error: KafkaError | None, message: Any) -> None:
        """librdkafka's delivery report, for failed records only (delivery.report.only.error);
        the first failure, in delivery order, is the one ``flush`` and ``send`` raise."""
        if error is None or self._failure is not None:
            return
        if is_fenced_error(error):
            self._fenced_error = error
        self._failure = self._failure_of(error, message.topic(), message.partition())

    def _failure_of(self, error: KafkaError, topic: str, partition: int | None) -> SinkError:
        timed_out = error.code() == KafkaError._MSG_TIMED_OUT
        hint = _HINTS.get(error.code())
        failure = delivery_failure(
            self.settings,
            topic,
            None if partition is None or partition < 0 else partition,
            error_text(error),
            timed_out=timed_out,
            hint=hint,
        )
        # Not when the operator must fix it, nor when another instance took over.
        return self._retriable(failure, hint is None and not is_fenced_error(error))

    def _retriable(self, failure: SinkError, retriable: bool = True) -> SinkError:
        """Exactly once: nothing of the open transaction is visible after a record the brokers did
        not take (e.g. a leader lost for longer than delivery.timeout.ms), so a new producer can
        send its records again in a new transaction, as with kafka-python."""
        if self._transactional_id is None or not retriable:
            return failure
        return TransactionAbandonedError(str(failure))

    def _on_client_error(self, error: KafkaError) -> None:
        """Errors of the client rather than of a record: brokers down (retried; records wait and
        fail at delivery.timeout.ms if they stay down) or a fatal producer error."""
        if error.fatal():
            # librdkafka reports a fatal error as _FATAL; the fencing is in its text. A fencing is
            # not logged as an error: the sink stops with InstanceFencedError, which says it.
            fenced = is_fenced_error(error)
            if fenced:
                self._fenced_error = error
            level = logging.INFO if fenced else logging.ERROR
            log.log(
                level, "Kafka sink: fatal producer error %s (%s)", error_text(error), self.settings.bootstrap
            )
            if self._failure is None:
                self._failure = SinkError(
                    f"Kafka sink: the librdkafka producer for {self.settings.bootstrap} failed: "
                    f"{error_text(error)}"
                )
            return
        self._client_error = error_text(error)
        log.warning("Kafka sink: %s (%s)", self._client_error, self.settings.bootstrap)

    def _fail(self, topic: str, partition: int | None, error: KafkaError) -> None:
        if is_fenced_error(error):
            self._fenced_error = error
        self._failure = self._failure_of(error, topic, partition)
        self._raise_if_failed()


def confluent_settings(config: SinkConfig) -> KafkaSinkSettings:
    """The Kafka sink's settings with ``sink.kafka.producer.*`` as librdkafka properties."""
    return KafkaSinkSettings.from_config(config, RDKAFKA_PRODUCER_SETTINGS)


def _librdkafka_version() -> str:
    from confluent_kafka import libversion

    return str(libversion()[0])


__all__ = [
    "ConfluentKafkaSink",
    "RDKAFKA_PRODUCER_SETTINGS",
    "RdkafkaTransactions",
    "confluent_settings",
]
