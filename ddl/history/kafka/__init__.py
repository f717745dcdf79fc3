"""Schema history in a Kafka topic, in one place: the store (``store``: Debezium's
``KafkaSchemaHistory`` layout and recovery) and its wiring from the ``schema.history.internal.*``
properties (``config``). The topic log under it and the Kafka client settings are shared with the
sink, the offset store and the signal channel, so they sit in ``ddl.kafka``."""

from ddl.history.kafka.config import kafka_schema_history_from_config
from ddl.history.kafka.store import (
    BOOTSTRAP_KEY,
    CONSUMER_PREFIX,
    PREFIX,
    PRODUCER_PREFIX,
    TOPIC_CONFIGS,
    TOPIC_KEY,
    KafkaSchemaHistory,
    jackson_pretty,
)

__all__ = [
    "BOOTSTRAP_KEY",
    "CONSUMER_PREFIX",
    "PREFIX",
    "PRODUCER_PREFIX",
    "TOPIC_CONFIGS",
    "TOPIC_KEY",
    "KafkaSchemaHistory",
    "jackson_pretty",
    "kafka_schema_history_from_config",
]
