"""KafkaOffsetStore against a real broker: Kafka Connect's offset-topic layout, newest value wins,
other connectors' keys and tombstones respected, durable saves, and clear failures."""

from __future__ import annotations

import time

import orjson
import pytest
from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

from connector.config import ConfigError, ConnectorConfig
from connector.stores.kafka_offsets import KafkaOffsetStore
from connector.stores.offsets import OffsetStoreError
from tests.kafka_support import KafkaBroker, consume_all, partitions_of

BASE_PROPS = {
    "database.hostname": "127.0.0.1",
    "database.user": "cdc",
    "database.server.id": "5400",
    "offset.storage": "org.apache.kafka.connect.storage.KafkaOffsetBackingStore",
}


def store_config(
    broker: KafkaBroker, topic: str, prefix: str = "srv", name: str = "inventory-connector", **extra: str
) -> ConnectorConfig:
    return ConnectorConfig.from_mapping(
        {
            **BASE_PROPS,
            "name": name,
            "topic.prefix": prefix,
            "offset.storage.topic": topic,
            "offset.storage.kafka.bootstrap.servers": broker,
            "offset.storage.partitions": "3",
            **extra,
        }
    )


def test_round_trip_in_kafka_connect_layout(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.unique("connect-offsets")
    store = KafkaOffsetStore.from_config(store_config(kafka_broker, topic))
    assert store.load() is None
    offsets = [
        {"file": "mysql-bin.000003", "pos": 154 + i, "gtids": "0-1-5", "row": 1, "event": 2} for i in range(5)
    ]
    for offset in offsets:
        store.save(offset)
    store.close()

    # A brand-new store (new clients, nothing cached) finds the newest offset in the topic alone.
    again = KafkaOffsetStore.from_config(store_config(kafka_broker, topic))
    assert again.load() == offsets[-1]
    again.close()

    records = consume_all(kafka_broker, [topic])
    assert [r.key for r in records] == [b'["inventory-connector",{"server":"srv"}]'] * 5
    assert [orjson.loads(r.value) for r in records] == offsets
    assert len({r.partition for r in records}) == 1


def test_other_connectors_keys_and_tombstones(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.unique("shared-offsets")
    ours = KafkaOffsetStore.from_config(store_config(kafka_broker, topic))
    other = KafkaOffsetStore.from_config(store_config(kafka_broker, topic, prefix="other", name="c2"))
    ours.save({"file": "b.000001", "pos": 100})
    other.save({"file": "x.000009", "pos": 9})
    ours.save({"file": "b.000001", "pos": 200})
    other.save({"file": "x.000009", "pos": 10})
    assert ours.load() == {"file": "b.000001", "pos": 200}
    assert other.load() == {"file": "x.000009", "pos": 10}

    # Kafka Connect resets a connector by writing a null value under its key.
    producer = KafkaProducer(bootstrap_servers=str(kafka_broker), acks="all")
    producer.send(topic, key=b'["inventory-connector",{"server":"srv"}]', value=None).get(10)
    assert ours.load() is None
    assert other.load() == {"file": "x.000009", "pos": 10}
    # Connect keys its offsets by the exact serialized bytes; a differently spaced key is not ours.
    producer.send(
        topic, key=b'["inventory-connector", {"server": "srv"}]', value=b'{"file":"b.000002","pos":4}'
    ).get(10)
    assert ours.load() is None
    ours.save({"file": "b.000003", "pos": 5})
    producer.close()
    assert ours.load() == {"file": "b.000003", "pos": 5}
    ours.close()
    other.close()


def test_bootstrap_and_identity_fall_back_to_the_sink(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.unique("fallback-offsets")
    config = ConnectorConfig.from_mapping(
        {
            **BASE_PROPS,
            "topic.prefix": "srv",
            "offset.storage": "kafka",
            "offset.storage.topic": topic,
            "sink.type": "kafka",
            "sink.kafka.bootstrap.servers": kafka_broker,
            "sink.kafka.producer.client.id": "cdc-client",
            "sink.kafka.producer.linger.ms": "5",
            "sink.kafka.producer.request.timeout.ms": "2000",
        }
    )
    store = KafkaOffsetStore.from_config(config)
    assert store.bootstrap == kafka_broker
    assert store.producer_kwargs == {"client_id": "cdc-client"}  # identity yes, tuning no
    store.save({"file": "b.000001", "pos": 4})
    assert store.load() == {"file": "b.000001", "pos": 4}
    store.close()


def test_missing_topic_and_bootstrap_are_named() -> None:
    base = {**BASE_PROPS, "topic.prefix": "srv"}
    with pytest.raises(ConfigError, match="offset.storage.topic") as no_topic:
        KafkaOffsetStore.from_config(ConnectorConfig.from_mapping(base))
    assert no_topic.value.key == "offset.storage.topic"
    with pytest.raises(ConfigError, match="sink.kafka.bootstrap.servers") as no_bootstrap:
        KafkaOffsetStore.from_config(ConnectorConfig.from_mapping({**base, "offset.storage.topic": "o"}))
    assert no_bootstrap.value.key == "offset.storage.kafka.bootstrap.servers"
    with pytest.raises(ConfigError) as bad_setting:
        KafkaOffsetStore.from_config(
            ConnectorConfig.from_mapping(
                {
                    **base,
                    "offset.storage.topic": "o",
                    "offset.storage.kafka.bootstrap.servers": "127.0.0.1:9",
                    "offset.storage.kafka.producer.sasl.jaas.config": "nonsense",
                }
            )
        )
    assert bad_setting.value.key == "offset.storage.kafka.producer.sasl.jaas.config"


def test_save_fails_clearly_when_the_broker_is_gone(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.unique("down-offsets")
    store = KafkaOffsetStore.from_config(
        store_config(
            kafka_broker,
            topic,
            **{
                "offset.storage.kafka.timeout.ms": "3000",
                "offset.storage.kafka.producer.reconnect.backoff.max.ms": "200",
            },
        )
    )
    store.save({"file": "b.000001", "pos": 4})
    kafka_broker.stop()
    started = time.monotonic()
    with pytest.raises(OffsetStoreError) as failed:
        store.save({"file": "b.000001", "pos": 8})
    assert time.monotonic() - started < 10
    message = str(failed.value)
    assert topic in message and str(kafka_broker) in message and "refused the connection" in message
    with pytest.raises(OffsetStoreError, match=topic):
        store.load()
    kafka_broker.start()
    assert store.load() in ({"file": "b.000001", "pos": 4}, {"file": "b.000001", "pos": 8})
    store.close()


def test_offset_topic_is_created_compacted(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.unique("created-offsets")
    store = KafkaOffsetStore.from_config(
        store_config(kafka_broker, topic, **{"offset.storage.replication.factor": "1"})
    )
    store.save({"file": "b.000001", "pos": 4})
    store.close()
    admin = KafkaAdminClient(bootstrap_servers=str(kafka_broker))
    try:
        responses = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
        configs = {
            entry[0]: entry[1]
            for response in responses
            for resource in response.resources
            for entry in resource[4]
        }
    finally:
        admin.close()
    assert configs["cleanup.policy"] == "compact"
    assert partitions_of(kafka_broker, topic) == {0, 1, 2}
