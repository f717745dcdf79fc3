"""Kafka transactions on a librdkafka producer (``sink.kafka.client=confluent``), and how
librdkafka tells that another producer with the same ``transactional.id`` fenced this one.

librdkafka reports a fencing in several shapes, all seen against a real broker:
* ``KafkaException(KafkaError{FATAL,_FENCED})`` from ``poll``, ``flush``, ``commit_transaction``,
  ``begin_transaction`` and ``abort_transaction`` once the producer has failed fatally;
* ``KafkaException(KafkaError{_FATAL})`` ("Unable to produce message") from ``produce`` after that:
  the cause is served by the next transactional call;
* a delivery report ``INVALID_PRODUCER_EPOCH`` (or ``_PURGE_QUEUE``) for the records in flight;
* a ``SystemError`` from ``flush`` whose context is the ``KafkaException`` above (a delivery
  callback ran while the fatal error was pending).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from confluent_kafka import KafkaError, KafkaException, Producer

from sink.base import InstanceFencedError, SinkError

# librdkafka's own log lines for a fencing (TXNERR, FATAL), which it logs at its most severe levels.
FENCED_LOG_PHRASES = ("fenced by newer producer instance", "has been fenced by a newer instance")

FENCED_CODES = frozenset({KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH})


def error_text(error: KafkaError) -> str:
    return f"{error.name()}: {error.str()}"


def is_fenced_error(error: KafkaError) -> bool:
    """librdkafka's error says a newer producer with our transactional.id fenced this one (a fatal
    error is reported as ``_FATAL`` or ``_FENCED``, the fencing then also in its text)."""
    return error.code() in FENCED_CODES or "fenced" in error.str().lower()


def fenced_kafka_error(exc: BaseException | None) -> KafkaError | None:
    """The fencing ``KafkaError`` in ``exc`` or its causes and contexts (None: not a fencing)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        error = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
        if isinstance(error, KafkaError) and is_fenced_error(error):
            return error
        exc = exc.__cause__ or exc.__context__
    return None


class ClientLog:
    """librdkafka's log lines into the sink's logger (its ``logger`` setting). The lines in which
    librdkafka reports a fencing come at INFO instead of CRITICAL: the sink stops with
    ``InstanceFencedError``, which carries the same words, so a fenced instance prints one error
    (which says that another instance took over), whichever client it uses."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def log(self, level: int, msg: str, *args: object) -> None:
        text = " ".join(str(arg) for arg in args)
        if level > logging.INFO and any(phrase in text for phrase in FENCED_LOG_PHRASES):
            level = logging.INFO
        self.logger.log(level, msg, *args)


class RdkafkaTransactions:
    """Kafka transactions on the sink's librdkafka producer (its ``transactional.id`` is set):
    ``init()`` once after start (fences older producers with the same id and aborts their open
    transaction), then ``begin()``, records through ``send()``, and ``commit()`` or ``abort()``.

    A producer fenced by a newer one with the same ``transactional.id`` raises ``SinkError`` saying
    so; an error that requires it aborts the transaction before raising; retriable errors are
    retried within the bound."""

    def __init__(self, producer: Producer, transactional_id: str, timeout_s: float) -> None:
        self.producer = producer
        self.transactional_id = transactional_id
        self.timeout_s = timeout_s

    def init(self) -> None:
        self._call("init", lambda: self.producer.init_transactions(self.timeout_s))

    def begin(self) -> None:
        self._call("begin", self.producer.begin_transaction)

    def produce(self, topic: str, value: bytes | None, key: bytes | None, partition: int = -1) -> None:
        """One more record in the open transaction beside the sink's, e.g. the source offset for the
        Kafka offset topic, so that the offset commits or aborts with the records it covers. A
        failed delivery fails the sink as its own records do."""
        self.producer.produce(topic, value, key, partition)

    def commit(self) -> None:
        """Every record sent in the transaction becomes visible to read_committed consumers, or
        none does (``SinkError``)."""
        self._call("commit", lambda: self.producer.commit_transaction(self.timeout_s))

    def abort(self) -> None:
        self._call("abort", lambda: self.producer.abort_transaction(self.timeout_s))

    def _call(self, what: str, operation: Callable[[], None]) -> None:
        for _ in range(3):
            try:
                operation()
                return
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                if error.retriable():
                    continue
                if is_fenced_error(error):
                    raise InstanceFencedError(
                        f"Kafka sink: fenced: another producer with transactional.id="
                        f"{self.transactional_id} started, so this one stops ({what} refused: "
                        f"{error_text(error)}); nothing it sent since its last commit is visible"
                    ) from None
                if error.txn_requires_abort() and what != "abort":
                    self.producer.abort_transaction(self.timeout_s)
                    raise SinkError(
                        f"Kafka sink: transaction {what} failed and was aborted "
                        f"(transactional.id={self.transactional_id}): {error_text(error)}"
                    ) from None
                raise SinkError(
                    f"Kafka sink: transaction {what} failed (transactional.id={self.transactional_id}): "
                    f"{error_text(error)}"
                ) from None
        raise SinkError(
            f"Kafka sink: transaction {what} still failing after 3 attempts "
            f"(transactional.id={self.transactional_id})"
        )


__all__ = [
    "FENCED_CODES",
    "FENCED_LOG_PHRASES",
    "ClientLog",
    "RdkafkaTransactions",
    "error_text",
    "fenced_kafka_error",
    "is_fenced_error",
]
