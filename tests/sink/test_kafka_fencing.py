"""Fencing (``exactly.once.support``): a second producer with the same ``transactional.id`` fences
the first mid-transaction, and the first stops with ``InstanceFencedError`` naming the
transactional.id and saying another instance took over, whichever client it uses.

The fencing errors are recognised in the shapes each client really raises. The shapes below were
taken from a run against a real broker (kafka-python 2.3, confluent-kafka 2.x with librdkafka); the
real-broker tests provoke them again, so a client upgrade that changes them fails here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka import KafkaException, Producer
from kafka import KafkaProducer
from kafka import errors as kafka_errors

from sink.base import InstanceFencedError, TransactionAbandonedError
from sink.kafka.confluent import ConfluentKafkaSink
from sink.kafka.confluent_transactions import fenced_kafka_error, is_fenced_error
from sink.kafka.delivery import is_fenced
from sink.kafka.sink import KafkaSink
from tests.kafka_support import KafkaBroker
from tests.sink.kafka_sink_support import Table, sink_config
from tests.sink.test_kafka_confluent import create_topic

# -- kafka-python's shapes ------------------------------------------------------------------------

SEND_REFUSED = (
    "Cannot perform send because at least one previous transactional or idempotent request has "
    "failed with errors."
)
IN_ERROR_STATE = "Cannot execute transactional method because we are in an error state: "

KAFKA_PYTHON_FENCED = {
    # a record's future (the first send after the fence)
    "future": kafka_errors.InvalidProducerEpochError(None),
    # send() once the producer is in its error state: the cause is in args, not __cause__
    "send": kafka_errors.KafkaError(SEND_REFUSED, kafka_errors.InvalidProducerEpochError(None)),
    # begin_transaction() / commit_transaction(): the cause only in the text
    "commit": kafka_errors.KafkaError(IN_ERROR_STATE + "[Error 47] InvalidProducerEpochError: None"),
    # abort_transaction()
    "abort": kafka_errors.InvalidProducerEpochError(),
    # init_transactions() of a producer fenced while initialising (Kafka 4's error)
    "producer fenced": kafka_errors.ProducerFencedError(),
}

# Not fencing: the same forms with another cause (constructed, as kafka-python builds them).
KAFKA_PYTHON_NOT_FENCED = {
    "timeout": kafka_errors.KafkaTimeoutError("no acknowledgement after 30 s"),
    "send after a lost leader": kafka_errors.KafkaError(
        SEND_REFUSED, kafka_errors.NotLeaderForPartitionError(None)
    ),
    "commit after a timeout": kafka_errors.KafkaError(IN_ERROR_STATE + "[Error 7] RequestTimedOutError"),
    "too large": kafka_errors.MessageSizeTooLargeError("1048588 bytes"),
}


@pytest.mark.parametrize("shape", KAFKA_PYTHON_FENCED)
def test_kafka_python_fencing_is_recognised_in_every_shape(shape: str) -> None:
    exc = KAFKA_PYTHON_FENCED[shape]
    assert is_fenced(exc)
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = exc
    assert is_fenced(wrapped)


@pytest.mark.parametrize("shape", KAFKA_PYTHON_NOT_FENCED)
def test_kafka_python_other_failures_are_not_fencing(shape: str) -> None:
    assert not is_fenced(KAFKA_PYTHON_NOT_FENCED[shape])


# -- librdkafka's shapes --------------------------------------------------------------------------

FENCED_TEXT = (
    "ProduceRequest for t61bc4e [0] with 1 message(s) failed: Broker: Producer attempted an "
    "operation with an old epoch (broker 1 PID{Id:0,Epoch:0}, base seq 1): transactional producer "
    "fenced by newer producer instance"
)


def _system_error_during_flush() -> SystemError:
    """flush()'s SystemError: a delivery report ran while the fatal error was pending, so the
    fatal error is the SystemError's context."""
    try:
        try:
            raise KafkaException(RdKafkaError(RdKafkaError._FENCED, FENCED_TEXT, fatal=True))
        except KafkaException:
            raise SystemError(  # noqa: B904 - the shape confluent-kafka raises
                "<method 'topic' of 'confluent_kafka.cimpl.Message' objects> returned a result with "
                "an exception set"
            )
    except SystemError as exc:
        return exc


CONFLUENT_FENCED: dict[str, Callable[[], BaseException]] = {
    # poll(), flush(), commit/begin/abort_transaction() once fatally failed
    "fatal": lambda: KafkaException(RdKafkaError(RdKafkaError._FENCED, FENCED_TEXT, fatal=True)),
    "flush's SystemError": _system_error_during_flush,
}


@pytest.mark.parametrize("shape", CONFLUENT_FENCED)
def test_confluent_fencing_is_recognised_in_every_shape(shape: str) -> None:
    assert fenced_kafka_error(CONFLUENT_FENCED[shape]()) is not None


def test_confluent_fenced_delivery_report_is_recognised() -> None:
    """A record in flight when the fence happened: its delivery report's error (not raised)."""
    report = RdKafkaError(
        RdKafkaError.INVALID_PRODUCER_EPOCH, "Broker: Producer attempted an operation with an old epoch"
    )
    assert is_fenced_error(report)
    assert not is_fenced_error(RdKafkaError(RdKafkaError._MSG_TIMED_OUT, "Local: Message timed out"))


def test_confluent_fatal_refusal_and_other_failures_are_not_fencing_by_themselves() -> None:
    # produce() of a fatally failed producer: the cause comes from the next transactional call
    refused = KafkaException(
        RdKafkaError(RdKafkaError._FATAL, "Unable to produce message: Local: Fatal error")
    )
    timed_out = KafkaException(RdKafkaError(RdKafkaError._MSG_TIMED_OUT, "Local: Message timed out"))
    assert fenced_kafka_error(refused) is None
    assert fenced_kafka_error(timed_out) is None
    assert fenced_kafka_error(None) is None


# -- against a real broker ------------------------------------------------------------------------


def _raised(call: Callable[[], Any]) -> BaseException:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the shape is what is tested
        return exc
    raise AssertionError("expected the fenced producer to fail")


def test_the_real_kafka_python_shapes_are_recognised(kafka_broker: KafkaBroker) -> None:
    """kafka-python's own producers: the fenced one's send, commit and begin each fail, and every
    error is recognised as fencing."""
    topic = kafka_broker.unique("shapes")
    create_topic(kafka_broker, topic, 1)
    txn = kafka_broker.unique("txn")

    def producer() -> KafkaProducer:
        made = KafkaProducer(
            bootstrap_servers=str(kafka_broker), transactional_id=txn, enable_idempotence=True
        )
        made.init_transactions()
        return made

    first = producer()
    first.begin_transaction()
    first.send(topic, b"1").get(10)
    second = producer()
    try:
        raised = {
            "future": _raised(lambda: first.send(topic, b"2").get(10)),
            "send": _raised(lambda: first.send(topic, b"3")),
            "commit": _raised(first.commit_transaction),
            "begin": _raised(first.begin_transaction),
        }
    finally:
        second.close(timeout=5)
        first.close(timeout=0)
    assert isinstance(raised["send"].args[1], kafka_errors.InvalidProducerEpochError), raised
    assert all(is_fenced(exc) for exc in raised.values()), raised


def test_the_real_confluent_shapes_are_recognised(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.unique("shapes")
    create_topic(kafka_broker, topic, 1)
    txn = kafka_broker.unique("txn")

    def producer() -> Producer:
        made = Producer({"bootstrap.servers": str(kafka_broker), "transactional.id": txn})
        made.init_transactions(10)
        return made

    first = producer()
    first.begin_transaction()
    first.produce(topic, b"1")
    first.flush(10)
    second = producer()
    first.produce(topic, b"2")
    raised = {"poll": _raised(lambda: first.poll(5)), "commit": _raised(lambda: first.commit_transaction(5))}
    refused = _raised(lambda: first.produce(topic, b"3"))
    second.flush(1)
    assert all(fenced_kafka_error(exc) is not None for exc in raised.values()), raised
    assert fenced_kafka_error(refused) is None  # _FATAL: the sink asks the producer for the cause


def _send_until_refused(sink: Any, table: Table) -> None:
    """Send as the connector does, one batch every 0.2 s, until the sink refuses (10 s at most):
    a record sent with an old epoch fails asynchronously."""
    for n in range(50):
        sink.send([table.change("c", 100 + n, 1)])
        time.sleep(0.2)


SINKS: dict[str, Callable[..., Any]] = {
    "kafka-python": KafkaSink.from_config,
    "confluent": ConfluentKafkaSink.from_config,
}


@pytest.mark.parametrize("client", SINKS)
def test_a_sink_fenced_mid_transaction_stops_with_the_fencing_error(
    kafka_broker: KafkaBroker, client: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The first sink holds an open transaction when a second one with its transactional.id
    starts: its next send, flush and commit each raise ``InstanceFencedError`` naming the
    transactional.id, never a raw client error nor an error that would restart the producer
    (``TransactionAbandonedError``: a new producer would fence the newer instance in turn). The
    client's own reports of the fencing are logged below ERROR: the error says it."""
    table = Table(kafka_broker.unique("fenced"), "events")
    create_topic(kafka_broker, table.topic, 1)
    txn = kafka_broker.unique("cdc-txn")
    config = sink_config(kafka_broker, **{"sink.kafka.client": client})
    first, second = SINKS[client](config), SINKS[client](config)
    first.enable_transactions(txn, "orders")
    second.enable_transactions(txn, "orders")
    first.start()
    caplog.set_level(logging.DEBUG, logger="sink.kafka")
    try:
        first.send([table.change("c", i, 1) for i in range(5)])
        first.flush()
        second.start()  # fences the first, aborting its open transaction
        time.sleep(0.5)
        failures = [
            _raised(lambda: _send_until_refused(first, table)),
            _raised(first.flush),
            _raised(first.commit_transaction),
        ]
    finally:
        first.close()
        second.close()
    for failure in failures:
        assert isinstance(failure, InstanceFencedError), repr(failure)
        assert not isinstance(failure, TransactionAbandonedError)
        assert "connector 'orders' was fenced" in str(failure)
        assert "another instance with the same name took over" in str(failure)
        assert f"transactional.id {txn}" in str(failure)
    fencing_lines = [r for r in caplog.records if "fenced" in r.getMessage()]
    assert fencing_lines or client == "kafka-python", caplog.text  # librdkafka logs the fencing
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
