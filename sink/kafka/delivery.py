"""What the Kafka sink does around sending, with either client: creating a topic before its first
record, and the failures the brokers answer with, told as what to change (hints, fencing)."""

from __future__ import annotations

from kafka import errors as kafka_errors

from ddl.kafka.client import describe_reachability
from ddl.kafka.topics import TopicCreator
from sink.base import InstanceFencedError, SinkError
from sink.kafka.settings import (
    KafkaSinkSettings,
)

HINT_TOO_LARGE = (
    "raise sink.kafka.producer.max.request.size and the broker's message.max.bytes / the topic's "
    "max.message.bytes"
)
# kafka-python does not split a batch the broker refuses, as Kafka's Java producer does.
HINT_RECORDS_FIT = (
    "; where each record fits but a batch does not, lower sink.kafka.producer.batch.size below them"
)
HINT_BATCH_TOO_LARGE = "lower sink.kafka.producer.batch.size"
HINT_TOPIC_AUTHORIZATION = (
    "grant the connector's principal WRITE (and DESCRIBE) on the topic, or fix the SASL/TLS identity"
)
HINT_CLUSTER_AUTHORIZATION = "grant the connector's principal the cluster ACL it needs"
HINT_INVALID_TOPIC = "check topic.prefix / topic.delimiter: the name is not a legal topic"
HINTS: dict[type[Exception], str] = {
    kafka_errors.MessageSizeTooLargeError: HINT_TOO_LARGE + HINT_RECORDS_FIT,
    kafka_errors.RecordListTooLargeError: HINT_BATCH_TOO_LARGE,
    kafka_errors.TopicAuthorizationFailedError: HINT_TOPIC_AUTHORIZATION,
    kafka_errors.ClusterAuthorizationFailedError: HINT_CLUSTER_AUTHORIZATION,
    kafka_errors.InvalidTopicError: HINT_INVALID_TOPIC,
}


def delivery_failure(
    settings: KafkaSinkSettings,
    topic: str,
    partition: int | None,
    cause: str,
    timed_out: bool,
    hint: str | None = None,
) -> SinkError:
    """The ``SinkError`` of a record the brokers did not take, for either client: the topic (and
    partition), the brokers, the cause, and what to change."""
    s = settings
    where = f"topic '{topic}'" + (f" partition {partition}" if partition is not None else "")
    if timed_out:
        return SinkError(
            f"Kafka sink: brokers {s.bootstrap} did not acknowledge records for {where} within "
            f"delivery.timeout.ms={s.delivery_timeout_ms} ({describe_reachability(s.bootstrap)}); "
            f"cause: {cause}"
        )
    return SinkError(
        f"Kafka sink: brokers {s.bootstrap} rejected a record for {where}: {cause}"
        + (f"; {hint}" if hint else "")
    )


def create_topic(settings: KafkaSinkSettings, creator: TopicCreator | None, topic: str) -> None:
    """Create ``topic`` as topic.creation.default.* says, before the sink's first record for it
    (nothing to do when topic creation is off); ``SinkError`` naming the topic if that fails."""
    creation = settings.topic_creation
    if creation is None or creator is None:
        return
    try:
        creator.create(topic, creation.partitions, creation.replication_factor, creation.configs)
    except kafka_errors.KafkaError as exc:
        raise SinkError(
            f"Kafka sink: could not create topic '{topic}' on {settings.bootstrap} "
            f"({creation.partitions} partitions, replication factor "
            f"{creation.replication_factor}): {error_text(exc)}; check topic.creation.default.*"
        ) from exc


def topic_creator(settings: KafkaSinkSettings) -> TopicCreator | None:
    """The admin client that creates the sink's topics (None: topic creation is off)."""
    if settings.topic_creation is None:
        return None
    return TopicCreator(
        settings.bootstrap, settings.admin_kwargs, settings.request_timeout_ms, "topic.creation.default.*"
    )


FENCING_ERRORS = (
    kafka_errors.ProducerFencedError,
    kafka_errors.InvalidProducerEpochError,
    kafka_errors.TransactionCoordinatorFencedError,
)
_FENCING_NAMES = tuple(error.__name__ for error in FENCING_ERRORS)


def is_fenced(exc: BaseException | None) -> bool:
    """Another producer with our transactional.id was initialised. kafka-python reports it as the
    error itself (a record's future, ``abort_transaction``), as a plain ``KafkaError`` carrying it
    in its arguments (``send`` once the producer is in its error state), or as a plain
    ``KafkaError`` naming it in its text (``begin_transaction``, ``commit_transaction``); the
    error may also be the cause or context of another."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc] if exc is not None else []
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, FENCING_ERRORS):
            return True
        if type(current) is kafka_errors.KafkaError and any(
            name in str(arg) for arg in current.args if isinstance(arg, str) for name in _FENCING_NAMES
        ):
            return True
        pending.extend(arg for arg in current.args if isinstance(arg, BaseException))
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return False


def fenced_failure(
    owner: str, transactional_id: str | None, bootstrap: str, cause: str
) -> InstanceFencedError:
    """The error a fenced instance stops with, for either client: the connector, its
    transactional.id, that another instance took over, and the client's own words last."""
    return InstanceFencedError(
        f"connector '{owner}' was fenced: another instance with the same name took over "
        f"(Kafka transactional.id {transactional_id} was initialised again on {bootstrap}); this "
        "instance stops, and nothing it wrote since its last committed transaction becomes visible "
        f"to read_committed consumers ({cause})"
    )


def error_text(exc: BaseException) -> str:
    text = str(exc)
    name = type(exc).__name__
    return text if text.startswith(name) or name in text else f"{name}: {text}"
