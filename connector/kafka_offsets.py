"""Offsets in a Kafka topic, laid out as Kafka Connect's ``KafkaOffsetBackingStore`` lays them out.

Key ``["<connector name>",{"server":"<topic.prefix>"}]`` and value the offset map, both JSON without
schemas, in a compacted topic (``offset.storage.topic``). A Connect worker that took over this
connector would find its position, and so would we after a Connect deployment.

``save`` produces with ``acks=all`` and waits for the acknowledgement, so once it returns a crash
cannot lose the offset; the engine calls it only after every sink has flushed, so the stored offset
never points past a record a sink had not confirmed. ``load`` reads the topic from the beginning to
its current end and keeps the newest value for our key (a null value, as Connect writes to reset a
connector, means "no offset").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

import orjson
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as kafka_errors

from connector.config import ConfigError, ConnectorConfig
from connector.offsets import OffsetStore, OffsetStoreError, partition_key
from ddl.errors import OffsetError
from ddl.position import SourceOffset
from sink.kafka import BOOTSTRAP_KEY as SINK_BOOTSTRAP_KEY
from sink.kafka import PRODUCER_PREFIX
from sink.kafka_client import (
    CONSUMER_SETTINGS,
    PRODUCER_SETTINGS,
    TopicCreator,
    bootstrap_list,
    client_kwargs,
    describe_reachability,
    security_kwargs,
)

log = logging.getLogger(__name__)

TOPIC_KEY = "offset.storage.topic"
BOOTSTRAP_KEY = "offset.storage.kafka.bootstrap.servers"
PRODUCER_KEY_PREFIX = "offset.storage.kafka.producer."
CONSUMER_KEY_PREFIX = "offset.storage.kafka.consumer."
PARTITIONS_KEY = "offset.storage.partitions"
REPLICATION_KEY = "offset.storage.replication.factor"
TIMEOUT_KEY = "offset.storage.kafka.timeout.ms"


class KafkaOffsetStore(OffsetStore):
    def __init__(
        self,
        bootstrap: str,
        topic: str,
        connector_name: str,
        server: str,
        *,
        producer_kwargs: Mapping[str, Any] | None = None,
        consumer_kwargs: Mapping[str, Any] | None = None,
        partitions: int = 25,
        replication_factor: int = -1,
        timeout_ms: int = 60_000,
    ) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.key = partition_key(connector_name, server)
        self.producer_kwargs = dict(producer_kwargs or {})
        self.consumer_kwargs = dict(consumer_kwargs or {})
        self.partitions = partitions
        self.replication_factor = replication_factor
        self.timeout_ms = timeout_ms
        self._producer: KafkaProducer | None = None
        self._topic_checked = False

    @classmethod
    def from_config(cls, config: ConnectorConfig) -> KafkaOffsetStore:
        topic = config.get(TOPIC_KEY)
        if not topic:
            raise ConfigError(
                TOPIC_KEY,
                "is required for offset.storage=kafka (the compacted topic "
                "that holds the connector's offsets, e.g. my-connect-offsets)",
            )
        own_bootstrap = config.get(BOOTSTRAP_KEY)
        bootstrap = own_bootstrap or config.get(SINK_BOOTSTRAP_KEY)
        if not bootstrap:
            raise ConfigError(
                BOOTSTRAP_KEY,
                f"is required for offset.storage=kafka (or set "
                f"{SINK_BOOTSTRAP_KEY} to keep offsets on the sink's brokers)",
            )
        producer = client_kwargs(config.subset(PRODUCER_KEY_PREFIX), PRODUCER_KEY_PREFIX, PRODUCER_SETTINGS)
        consumer = client_kwargs(config.subset(CONSUMER_KEY_PREFIX), CONSUMER_KEY_PREFIX, CONSUMER_SETTINGS)
        if not own_bootstrap:
            # Same brokers as the sink: same TLS/SASL identity unless told otherwise.
            shared = security_kwargs(
                client_kwargs(config.subset(PRODUCER_PREFIX), PRODUCER_PREFIX, PRODUCER_SETTINGS)
            )
            producer = {**shared, **producer}
            consumer = {**shared, **consumer}
        partitions = config.get_int(PARTITIONS_KEY, 25)
        replication = config.get_int(REPLICATION_KEY, -1)
        assert partitions is not None and replication is not None
        if partitions < 1:
            raise ConfigError(PARTITIONS_KEY, f"must be at least 1, got {partitions}")
        if replication == 0 or replication < -1:
            raise ConfigError(REPLICATION_KEY, f"must be positive or -1 (broker default), got {replication}")
        return cls(
            bootstrap,
            topic,
            config.connector_name,
            config.topic_prefix,
            producer_kwargs=producer,
            consumer_kwargs=consumer,
            partitions=partitions,
            replication_factor=replication,
            timeout_ms=config.get_int(TIMEOUT_KEY, 60_000) or 60_000,
        )

    # -- OffsetStore ----------------------------------------------------------------------------
    def load(self) -> SourceOffset | None:
        consumer = self._consumer()
        try:
            ids = consumer.partitions_for_topic(self.topic)
            if not ids:
                log.info(
                    "offset topic %s does not exist yet on %s: no stored offset", self.topic, self.bootstrap
                )
                return None
            partitions = [TopicPartition(self.topic, p) for p in sorted(ids)]
            consumer.assign(partitions)
            consumer.seek_to_beginning(*partitions)
            end = consumer.end_offsets(partitions)
            found: SourceOffset | None = None
            seen = False
            deadline = time.monotonic() + self.timeout_ms / 1000
            while any(consumer.position(tp) < end[tp] for tp in partitions):
                if time.monotonic() > deadline:
                    raise OffsetStoreError(
                        f"could not read offset topic {self.topic} to its end on {self.bootstrap} within "
                        f"{self.timeout_ms} ms ({describe_reachability(self.bootstrap)})"
                    )
                for tp, messages in consumer.poll(timeout_ms=500).items():
                    for message in messages:
                        if message.offset >= end[tp] or not self._is_our_key(message.key):
                            continue
                        seen = True
                        found = self._parse_value(message.value, tp, message.offset)
            if seen:
                log.info(
                    "loaded offset %s from Kafka topic %s",
                    None if found is None else found.to_map(),
                    self.topic,
                )
            return found
        except kafka_errors.KafkaError as exc:
            raise OffsetStoreError(
                f"cannot read offset topic {self.topic} on {self.bootstrap}: "
                f"{type(exc).__name__}: {exc} ({describe_reachability(self.bootstrap)})"
            ) from exc
        finally:
            consumer.close()

    def save(self, offset: SourceOffset | Mapping[str, Any]) -> None:
        value = orjson.dumps(SourceOffset.from_map(offset).to_map())
        producer = self._ensure_producer()
        try:
            future = producer.send(self.topic, key=self.key, value=value)
            future.get(timeout=self.timeout_ms / 1000)
        except kafka_errors.KafkaError as exc:
            raise OffsetStoreError(
                f"cannot store the offset in topic {self.topic} on {self.bootstrap}: {type(exc).__name__}: "
                f"{exc} ({describe_reachability(self.bootstrap)}); the connector stops so that it does not "
                "run ahead of its stored position"
            ) from exc

    def close(self) -> None:
        if self._producer is not None:
            self._producer.close(timeout=5)
            self._producer = None

    # -- internals ------------------------------------------------------------------------------
    def _is_our_key(self, key: bytes | None) -> bool:
        # Exact bytes, as Connect's store keys its map by the serialized key: the JSON converter
        # always writes it compactly, so a differently spaced key is another connector's.
        return key == self.key

    def _parse_value(self, value: bytes | None, tp: TopicPartition, offset: int) -> SourceOffset | None:
        if value is None:
            return None  # tombstone: the connector's offsets were reset
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            raise OffsetStoreError(
                f"offset topic {self.topic} partition {tp.partition} offset {offset} "
                f"holds invalid JSON for key {self.key.decode()} ({exc})"
            ) from exc
        if not isinstance(parsed, dict):
            raise OffsetStoreError(
                f"offset topic {self.topic} partition {tp.partition} offset {offset} "
                f"does not hold a JSON object for key {self.key.decode()}"
            )
        try:
            return SourceOffset.from_map(parsed)
        except OffsetError as exc:
            raise OffsetStoreError(
                f"offset topic {self.topic} partition {tp.partition} offset {offset} "
                f"holds an invalid offset for key {self.key.decode()}: {exc}"
            ) from exc

    def _consumer(self) -> KafkaConsumer:
        try:
            return KafkaConsumer(
                bootstrap_servers=bootstrap_list(self.bootstrap),
                group_id=None,
                enable_auto_commit=False,
                allow_auto_create_topics=False,
                **self.consumer_kwargs,
            )
        except kafka_errors.KafkaError as exc:
            raise OffsetStoreError(
                f"cannot connect to {BOOTSTRAP_KEY}={self.bootstrap} to read offset topic "
                f"{self.topic}: {type(exc).__name__} "
                f"({describe_reachability(self.bootstrap)})"
            ) from exc

    def _ensure_producer(self) -> KafkaProducer:
        if self._producer is not None:
            return self._producer
        if not self._topic_checked:
            self._create_topic()
        try:
            self._producer = KafkaProducer(
                **{
                    "retries": 2_147_483_647,
                    **self.producer_kwargs,
                    "bootstrap_servers": bootstrap_list(self.bootstrap),
                    "acks": "all",
                    "max_in_flight_requests_per_connection": 1,
                }
            )
        except kafka_errors.KafkaError as exc:
            raise OffsetStoreError(
                f"cannot connect to {BOOTSTRAP_KEY}={self.bootstrap} to store offsets in "
                f"{self.topic}: {type(exc).__name__} "
                f"({describe_reachability(self.bootstrap)})"
            ) from exc
        return self._producer

    def _create_topic(self) -> None:
        creator = TopicCreator(
            self.bootstrap,
            security_kwargs(self.producer_kwargs),
            min(self.timeout_ms, 30_000),
            "the offset topic's cleanup.policy=compact",
        )
        try:
            creator.create(
                self.topic, self.partitions, self.replication_factor, {"cleanup.policy": "compact"}
            )
        except kafka_errors.KafkaError as exc:
            raise OffsetStoreError(
                f"cannot create offset topic {self.topic} on {self.bootstrap} ({self.partitions} partitions, "
                f"replication factor {self.replication_factor}, compacted): {type(exc).__name__}: {exc}; "
                f"check {PARTITIONS_KEY} / {REPLICATION_KEY} or create the topic yourself"
            ) from exc
        finally:
            creator.close()
        self._topic_checked = True
