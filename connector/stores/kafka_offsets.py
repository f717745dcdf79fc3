"""Offsets in a Kafka topic, laid out as Kafka Connect's ``KafkaOffsetBackingStore`` lays them out.

Key ``["<connector name>",{"server":"<topic.prefix>"}]`` and value the offset map, both JSON without
schemas, in a compacted topic (``offset.storage.topic``). A Connect worker that took over this
connector would find its position, and so would we after a Connect deployment.

The topic is a ``ddl.kafka.log.KafkaTopicLog``. ``save`` produces with ``acks=all`` and waits for
the acknowledgement, so once it returns a crash cannot lose the offset; the engine calls it only
after every sink has flushed, so the stored offset never points past a record a sink had not
confirmed. With ``exactly.once.support`` the offset is not saved here but written by the sink's
transactional producer in the transaction of the records it covers (``connector.delivery.exactly_once``).
``load`` reads the topic ``read_committed`` from the beginning to its current end and keeps the
newest value for our key (a null value, as Connect writes to reset a connector, means "no offset").
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import orjson

from connector.stores.offsets import OffsetStore, OffsetStoreError, partition_key
from ddl.kafka.client import (
    PRODUCER_SETTINGS,
    SINK_BOOTSTRAP_KEY,
    bootstrap_list,
    client_kwargs,
    describe_reachability,
    security_kwargs,
    store_client_kwargs,
)
from ddl.kafka.log import KafkaTopicLog
from ddl.kafka.topics import topic_ensurer
from mysql_cdc_base.errors import ConfigError, OffsetError
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.properties import PropertyReader
from sink.kafka.settings import PRODUCER_PREFIX

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
        self._log: KafkaTopicLog | None = None
        self._topic_checked = False

    @classmethod
    def from_config(cls, config: PropertyReader) -> KafkaOffsetStore:
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
        producer, consumer = store_client_kwargs(config, PRODUCER_KEY_PREFIX, CONSUMER_KEY_PREFIX)
        if not own_bootstrap:
            # Same brokers as the sink: same TLS/SASL identity unless told otherwise.
            shared = security_kwargs(
                client_kwargs(config.subset(PRODUCER_PREFIX), PRODUCER_PREFIX, PRODUCER_SETTINGS)
            )
            producer = {**shared, **producer}
            consumer = {**shared, **consumer}
        partitions = config.int_of(PARTITIONS_KEY)
        replication = config.int_of(REPLICATION_KEY)
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
    @property
    def topic_log(self) -> KafkaTopicLog:
        if self._log is None:
            self._log = KafkaTopicLog(
                self.bootstrap,
                self.topic,
                what="offset topic",
                error=OffsetStoreError,
                bootstrap_key=BOOTSTRAP_KEY,
                bootstrap_servers=bootstrap_list(self.bootstrap),
                producer_kwargs=self.producer_kwargs,
                consumer_kwargs=self.consumer_kwargs,
                ensure_topic=topic_ensurer(
                    self.bootstrap,
                    security_kwargs(self.producer_kwargs),
                    min(self.timeout_ms, 30_000),
                    "the offset topic's cleanup.policy=compact",
                ),
                describe_reachability=describe_reachability,
                ack_timeout_ms=self.timeout_ms,
            )
        return self._log

    def load(self) -> SourceOffset | None:
        """The newest value of our key among the topic's committed records (read_committed: an
        offset written in a transaction counts only once the transaction committed)."""
        ids = self.topic_log.partitions()
        if not ids:
            log.info("offset topic %s does not exist yet on %s: no stored offset", self.topic, self.bootstrap)
            return None
        found: SourceOffset | None = None
        seen = False
        for message in self.topic_log.read(
            ids,
            max_empty_polls=max(self.timeout_ms // 500, 1),
            hint=f"consider increasing {TIMEOUT_KEY} (now {self.timeout_ms} ms)",
        ):
            if self._is_our_key(message.key):
                seen = True
                found = self._parse_value(message.value, message.partition, message.offset)
        if seen:
            log.info(
                "loaded offset %s from Kafka topic %s", None if found is None else found.to_map(), self.topic
            )
        return found

    def save(self, offset: SourceOffset | Mapping[str, Any]) -> None:
        if not self._topic_checked:
            self.ensure_topic()
        try:
            self.topic_log.append(self.key, self.value_of(offset))
        except OffsetStoreError as exc:
            raise OffsetStoreError(
                f"{exc}; the connector stops so that it does not run ahead of its stored position"
            ) from exc

    def value_of(self, offset: SourceOffset | Mapping[str, Any]) -> bytes:
        """The record value that stores ``offset`` (Connect's JSON offset map)."""
        return orjson.dumps(SourceOffset.from_map(offset).to_map())

    def ensure_topic(self) -> None:
        """Create the compacted topic if it does not exist (a transaction writing to it needs it
        first: broker auto-creation would make an uncompacted one)."""
        self.topic_log.create(
            self.partitions,
            self.replication_factor,
            {"cleanup.policy": "compact"},
            f"check {PARTITIONS_KEY} / {REPLICATION_KEY} or create the topic yourself",
        )
        self._topic_checked = True

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    # -- internals ------------------------------------------------------------------------------
    def _is_our_key(self, key: bytes | None) -> bool:
        # Exact bytes, as Connect's store keys its map by the serialized key: the JSON converter
        # always writes it compactly, so a differently spaced key is another connector's.
        return key == self.key

    def _parse_value(self, value: bytes | None, partition: int, offset: int) -> SourceOffset | None:
        if value is None:
            return None  # tombstone: the connector's offsets were reset
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            raise OffsetStoreError(
                f"offset topic {self.topic} partition {partition} offset {offset} "
                f"holds invalid JSON for key {self.key.decode()} ({exc})"
            ) from exc
        if not isinstance(parsed, dict):
            raise OffsetStoreError(
                f"offset topic {self.topic} partition {partition} offset {offset} "
                f"does not hold a JSON object for key {self.key.decode()}"
            )
        try:
            return SourceOffset.from_map(parsed)
        except OffsetError as exc:
            raise OffsetStoreError(
                f"offset topic {self.topic} partition {partition} offset {offset} "
                f"holds an invalid offset for key {self.key.decode()}: {exc}"
            ) from exc
