"""The Kafka sink's property declarations, apart from its settings (``sink.kafka.settings``): the
property table (``connector.config``) loads these on every run, the settings only a run with
``sink.type=kafka`` needs (issue 41: time to the first event)."""

from __future__ import annotations

from ddl.kafka.client import SINK_BOOTSTRAP_KEY
from mysql_cdc_base.properties import Property, prop

BOOTSTRAP_KEY = SINK_BOOTSTRAP_KEY
CLIENT_KEY = "sink.kafka.client"
CLIENTS = ("kafka-python", "confluent")

# The Kafka sink's own keys; producer settings pass through under sink.kafka.producer.
KAFKA_SINK_PROPERTIES: tuple[Property, ...] = (
    prop(BOOTSTRAP_KEY, doc="Kafka brokers for sink.type=kafka."),
    prop(
        CLIENT_KEY,
        CLIENTS[0],
        "The Kafka sink's producer: kafka-python, or confluent (librdkafka through confluent-kafka, "
        "the librdkafka extra: pip install 'mysql-cdc[librdkafka]'). Same records, keys, headers, "
        "partitions and guarantees.",
        kind="choice",
        choices=CLIENTS,
    ),
)
