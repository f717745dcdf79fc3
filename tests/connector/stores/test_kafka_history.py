"""KafkaSchemaHistory against a real broker: Debezium's pretty-printed documents in partition 0,
read back in order by a fresh instance, and a multi-partition topic refused with the fix."""

from __future__ import annotations

import logging

import orjson
import pytest

from connector.config import ConfigError, ConnectorConfig
from ddl.history.kafka import jackson_pretty, kafka_schema_history_from_config
from ddl.history.record import HistoryRecord
from ddl.history.record import history_record_to_document as record_to_document
from mysql_cdc_base.errors import SchemaHistoryError
from tests.kafka_support import KafkaBroker, consume_all, partitions_of

BASE_PROPS = {
    "database.hostname": "127.0.0.1",
    "database.user": "cdc",
    "database.server.id": "5400",
    "topic.prefix": "srv",
    "schema.history.internal": "kafka",
}

COLUMN = {
    "name": "id",
    "jdbcType": 4,
    "typeName": "INT",
    "typeExpression": "INT",
    "charsetName": None,
    "position": 1,
    "optional": False,
    "autoIncremented": True,
    "generated": True,
    "comment": None,
    "hasDefaultValue": False,
    "enumValues": [],
}
CREATE = HistoryRecord(
    source={"server": "srv"},
    position={"ts_sec": 1_700_000_000, "file": "mysql-bin.000003", "pos": 157, "snapshot": "INITIAL"},
    ts_ms=1_700_000_000_123,
    database_name="inventory",
    ddl="CREATE TABLE `customers` (\n  `id` int NOT NULL AUTO_INCREMENT,\n  PRIMARY KEY (`id`)\n)",
    table_changes=(
        {
            "type": "CREATE",
            "id": '"inventory"."customers"',
            "table": {
                "defaultCharsetName": "utf8mb4",
                "primaryKeyColumnNames": ["id"],
                "columns": [COLUMN, {**COLUMN, "name": "note", "position": 2, "enumValues": ["'a'", "'b'"]}],
                "attributes": [],
            },
            "comment": None,
        },
    ),
)
SET = HistoryRecord(
    source={"server": "srv"},
    position={"file": "mysql-bin.000003", "pos": 157},
    ts_ms=1_700_000_000_001,
    database_name="",
    ddl="SET character_set_server=utf8mb4, collation_server=utf8mb4_general_ci;",
)
ALTER = HistoryRecord(
    source={"server": "srv"},
    position={"file": "mysql-bin.000003", "pos": 900, "gtids": "0-1-7", "event": 2},
    ts_ms=1_700_000_009_000,
    database_name="inventory",
    ddl="ALTER TABLE customers COMMENT 'Kunden – ü'",
    table_changes=(),
)


def history_config(broker: KafkaBroker, topic: str, **extra: str) -> ConnectorConfig:
    return ConnectorConfig.from_mapping(
        {
            **BASE_PROPS,
            "schema.history.internal.kafka.topic": topic,
            "schema.history.internal.kafka.bootstrap.servers": broker,
            **extra,
        }
    )


def test_documents_are_jackson_pretty_printed() -> None:
    expected = (
        "{\n"
        '  "source" : {\n'
        '    "server" : "srv"\n'
        "  },\n"
        '  "position" : {\n'
        '    "ts_sec" : 1700000000,\n'
        '    "file" : "mysql-bin.000003",\n'
        '    "pos" : 157,\n'
        '    "snapshot" : "INITIAL"\n'
        "  },\n"
        '  "ts_ms" : 1700000000123,\n'
        '  "databaseName" : "inventory",\n'
        '  "ddl" : "CREATE TABLE `customers` (\\n  `id` int NOT NULL AUTO_INCREMENT,\\n'
        '  PRIMARY KEY (`id`)\\n)",\n'
        '  "tableChanges" : [ {\n'
        '    "type" : "CREATE",\n'
        '    "id" : "\\"inventory\\".\\"customers\\"",\n'
        '    "table" : {\n'
        '      "defaultCharsetName" : "utf8mb4",\n'
        '      "primaryKeyColumnNames" : [ "id" ],\n'
        '      "columns" : [ {\n'
        '        "name" : "id",\n'
        '        "jdbcType" : 4,\n'
        '        "typeName" : "INT",\n'
        '        "typeExpression" : "INT",\n'
        '        "charsetName" : null,\n'
        '        "position" : 1,\n'
        '        "optional" : false,\n'
        '        "autoIncremented" : true,\n'
        '        "generated" : true,\n'
        '        "comment" : null,\n'
        '        "hasDefaultValue" : false,\n'
        '        "enumValues" : [ ]\n'
        "      }, {\n"
        '        "name" : "note",\n'
        '        "jdbcType" : 4,\n'
        '        "typeName" : "INT",\n'
        '        "typeExpression" : "INT",\n'
        '        "charsetName" : null,\n'
        '        "position" : 2,\n'
        '        "optional" : false,\n'
        '        "autoIncremented" : true,\n'
        '        "generated" : true,\n'
        '        "comment" : null,\n'
        '        "hasDefaultValue" : false,\n'
        '        "enumValues" : [ "\'a\'", "\'b\'" ]\n'
        "      } ],\n"
        '      "attributes" : [ ]\n'
        "    },\n"
        '    "comment" : null\n'
        "  } ]\n"
        "}"
    )
    assert jackson_pretty(record_to_document(CREATE)).decode() == expected
    assert jackson_pretty({}) == b"{ }"
    # schemaName is omitted when null; an empty tableChanges stays.
    assert (
        jackson_pretty(record_to_document(SET))
        .decode()
        .endswith(
            '"databaseName" : "",\n  "ddl" : "SET character_set_server=utf8mb4, '
            'collation_server=utf8mb4_general_ci;",\n  "tableChanges" : [ ]\n}'
        )
    )


def test_round_trip_and_rebuild_from_the_topic(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.unique("schema-changes")
    history = kafka_schema_history_from_config(history_config(kafka_broker, topic))
    history.start()
    assert not history.exists()
    assert list(history.records()) == []
    for record in (SET, CREATE, ALTER):
        history.record(record)
    history.stop()

    again = kafka_schema_history_from_config(history_config(kafka_broker, topic))
    again.start()
    assert again.exists()
    assert list(again.records()) == [SET, CREATE, ALTER]
    again.record(ALTER)
    assert list(again.records())[-1] == ALTER
    again.stop()

    # Whatever the JSON layout (a history copied from a file store is compact), it reads back.
    from kafka import KafkaProducer

    from ddl.history.record import history_record_to_json

    producer = KafkaProducer(bootstrap_servers=str(kafka_broker), acks="all")
    producer.send(topic, value=history_record_to_json(SET), partition=0).get(10)
    producer.close()
    assert list(kafka_schema_history_from_config(history_config(kafka_broker, topic)).records()) == [
        SET,
        CREATE,
        ALTER,
        ALTER,
        SET,
    ]

    raw = consume_all(kafka_broker, [topic])
    assert [(m.partition, m.key) for m in raw] == [(0, None)] * 5
    assert raw[1].value == jackson_pretty(record_to_document(CREATE))
    assert raw[1].value.startswith(b'{\n  "source" : {\n    "server" : "srv"\n  },')
    assert orjson.loads(raw[2].value)["ddl"] == "ALTER TABLE customers COMMENT 'Kunden – ü'"


def test_multi_partition_topic_is_refused_with_the_fix(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.unique("history-3p")
    kafka_broker.create_topic(topic, 3)
    history = kafka_schema_history_from_config(history_config(kafka_broker, topic))
    with pytest.raises(SchemaHistoryError) as refused:
        history.start()
    message = str(refused.value)
    assert topic in message and "3 partitions" in message and "exactly one" in message
    assert "schema.history.internal.kafka.topic" in message and "snapshot.mode=recovery" in message
    with pytest.raises(SchemaHistoryError, match="exactly one"):
        history.exists()


def test_topic_creation_or_refusal_of_a_broker_made_topic(
    kafka_broker: KafkaBroker, caplog: pytest.LogCaptureFixture
) -> None:
    topic = kafka_broker.unique("history-new")
    history = kafka_schema_history_from_config(history_config(kafka_broker, topic))
    with caplog.at_level(logging.INFO, logger="sink.kafka"):
        history.start()
    history.record(SET)
    assert [m.partition for m in consume_all(kafka_broker, [topic])] == [0]
    assert any("created Kafka topic " + topic in r.message for r in caplog.records)
    assert partitions_of(kafka_broker, topic) == {0}
    history.stop()


def test_without_create_topics_a_multi_partition_auto_created_topic_is_noticed_at_the_first_write(
    mock_kafka: KafkaBroker, caplog: pytest.LogCaptureFixture
) -> None:
    # On librdkafka's mock: it answers CreateTopics as unsupported (as Kafka before 0.10.1 did) and
    # auto-creates 4 partitions; Kafka 4 always creates the topic itself, so only the mock gets here.
    topic = mock_kafka.unique("history-auto")
    history = kafka_schema_history_from_config(history_config(mock_kafka, topic))
    with caplog.at_level(logging.INFO, logger="sink.kafka"):
        history.start()
    lines = [r.message for r in caplog.records if "CreateTopics" in r.message]
    assert len(lines) == 1 and topic in lines[0]
    with pytest.raises(SchemaHistoryError, match="4 partitions"):
        history.record(SET)
    history.stop()


def test_configuration_errors_name_the_key() -> None:
    with pytest.raises(ConfigError) as missing:
        kafka_schema_history_from_config(ConnectorConfig.from_mapping(BASE_PROPS))
    assert missing.value.key == "schema.history.internal.kafka.topic"
    with pytest.raises(ConfigError) as no_brokers:
        kafka_schema_history_from_config(
            ConnectorConfig.from_mapping({**BASE_PROPS, "schema.history.internal.kafka.topic": "h"})
        )
    assert no_brokers.value.key == "schema.history.internal.kafka.bootstrap.servers"
    with pytest.raises(ConfigError) as bad:
        kafka_schema_history_from_config(
            ConnectorConfig.from_mapping(
                {
                    **BASE_PROPS,
                    "schema.history.internal.kafka.topic": "h",
                    "schema.history.internal.kafka.bootstrap.servers": "127.0.0.1:9",
                    "schema.history.internal.consumer.max.poll.recordz": "5",
                }
            )
        )
    assert bad.value.key == "schema.history.internal.consumer.max.poll.recordz"
    history = kafka_schema_history_from_config(
        ConnectorConfig.from_mapping(
            {
                **BASE_PROPS,
                "schema.history.internal.kafka.topic": "h",
                "schema.history.internal.kafka.bootstrap.servers": "127.0.0.1:9",
                "schema.history.internal.producer.security.protocol": "SSL",
                "schema.history.internal.kafka.recovery.attempts": "7",
            }
        )
    )
    assert history.producer_kwargs == {"security_protocol": "SSL", "client_id": "srv-schemahistory"}
    assert history.recovery_attempts == 7


def test_unreachable_broker_is_named(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.unique("history-down")
    kafka_broker.stop()
    history = kafka_schema_history_from_config(
        history_config(
            kafka_broker, topic, **{"schema.history.internal.consumer.api.version.auto.timeout.ms": "1000"}
        )
    )
    with pytest.raises(SchemaHistoryError) as failed:
        history.start()
    assert str(kafka_broker) in str(failed.value) and "refused the connection" in str(failed.value)
