"""The Kafka schema history built from the connector's ``schema.history.internal.*`` properties.

``ddl.history.kafka.store.KafkaSchemaHistory`` keeps the store logic; here its Kafka clients are
configured with the shared Kafka client settings (``ddl.kafka.client``): the
``schema.history.internal.producer.*`` and ``schema.history.internal.consumer.*`` Java client
settings, topic creation through the admin API and broker reachability for error messages. A bad
setting is a ``ConfigError`` naming its key.
"""

from __future__ import annotations

from ddl.history.kafka.store import (
    BOOTSTRAP_KEY,
    CONSUMER_PREFIX,
    PREFIX,
    PRODUCER_PREFIX,
    TOPIC_KEY,
    KafkaSchemaHistory,
)
from ddl.kafka.client import (
    SINK_BOOTSTRAP_KEY,
    bootstrap_list,
    describe_reachability,
    security_kwargs,
    store_client_kwargs,
)
from ddl.kafka.topics import topic_ensurer
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertySource, parse_int

TOPIC_PREFIX_KEY = "topic.prefix"


def kafka_schema_history_from_config(config: PropertySource) -> KafkaSchemaHistory:
    """``schema.history.internal=kafka``: the history topic on its own brokers or the sink's."""
    topic = config.get(TOPIC_KEY)
    if not topic:
        raise ConfigError(
            TOPIC_KEY,
            "is required for schema.history.internal=kafka (a topic only "
            "this connector writes, e.g. schema-changes.<topic.prefix>)",
        )
    bootstrap = config.get(BOOTSTRAP_KEY) or config.get(SINK_BOOTSTRAP_KEY)
    if not bootstrap:
        raise ConfigError(
            BOOTSTRAP_KEY,
            "is required for schema.history.internal=kafka (host:port[,host:port...] of the Kafka brokers)",
        )

    def number(name: str, default: int) -> int:
        text = config.get(PREFIX + name)
        value = default if text is None else parse_int(PREFIX + name, text)
        if value < 1:
            raise ConfigError(PREFIX + name, f"must be a positive integer, got {value}")
        return value

    producer, consumer = store_client_kwargs(config, PRODUCER_PREFIX, CONSUMER_PREFIX)
    client_id = config.get(PREFIX + "name") or f"{config.get(TOPIC_PREFIX_KEY) or ''}-schemahistory"
    poll_interval_ms = number("kafka.recovery.poll.interval.ms", 100)
    recovery_attempts = number("kafka.recovery.attempts", 100)
    query_timeout_ms = number("kafka.query.timeout.ms", 3000)
    create_timeout_ms = number("kafka.create.timeout.ms", 30_000)
    # The admin client that creates the topic has the producer's identity (its client id included).
    ensure_topic = topic_ensurer(
        bootstrap,
        security_kwargs({"client_id": client_id, **producer}),
        create_timeout_ms,
        "the schema history topic's settings (1 partition, infinite retention)",
    )
    return KafkaSchemaHistory(
        bootstrap,
        topic,
        bootstrap_servers=bootstrap_list(bootstrap),
        producer_kwargs=producer,
        consumer_kwargs=consumer,
        client_id=client_id,
        poll_interval_ms=poll_interval_ms,
        recovery_attempts=recovery_attempts,
        query_timeout_ms=query_timeout_ms,
        ensure_topic=ensure_topic,
        describe_reachability=describe_reachability,
    )
