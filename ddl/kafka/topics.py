"""Kafka topic creation through the admin API (``TopicCreator``, ``topic_ensurer``), for the Kafka
sink and the Kafka offset and schema-history stores.

Apart from the client settings (``ddl.kafka.client``) because it loads kafka-python, which only a
connector with a Kafka sink or store needs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kafka import errors as kafka_errors
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

from ddl.kafka.client import bootstrap_list

# The Kafka sink's logger: topic creation messages keep the name they always had.
log = logging.getLogger("sink.kafka")


class TopicCreator:
    """Creates topics through the admin API the first time they are used, where the broker
    allows it; where it does not (no CreateTopics, or not authorised) it says so once and leaves
    creation to the broker's ``auto.create.topics.enable``."""

    def __init__(self, bootstrap: str, admin_kwargs: Mapping[str, Any], timeout_ms: int, what: str) -> None:
        self.bootstrap = bootstrap
        self.admin_kwargs = dict(admin_kwargs)
        self.timeout_ms = timeout_ms
        self.what = what
        self._admin: KafkaAdminClient | None = None
        self.unavailable_reason: str | None = None

    def create(
        self, topic: str, partitions: int, replication_factor: int, configs: Mapping[str, str]
    ) -> bool:
        """True if the topic now exists because of us or already did; False if creation is not
        possible on this cluster (logged once). Other failures raise ``KafkaError``."""
        if self.unavailable_reason is not None:
            return False
        try:
            if self._admin is None:
                self._admin = KafkaAdminClient(
                    **{
                        **self.admin_kwargs,
                        "request_timeout_ms": self.timeout_ms,
                        "bootstrap_servers": bootstrap_list(self.bootstrap),
                    }
                )
            if partitions == -1 or replication_factor == -1:
                partitions, replication_factor = self._broker_defaults(partitions, replication_factor)
            self._admin.create_topics(
                [NewTopic(topic, partitions, replication_factor, topic_configs=dict(configs))],
                timeout_ms=self.timeout_ms,
            )
            log.info(
                "created Kafka topic %s (%d partitions, replication factor %d, %s)",
                topic,
                partitions,
                replication_factor,
                ", ".join(f"{k}={v}" for k, v in configs.items()) or "broker default configs",
            )
            return True
        except kafka_errors.TopicAlreadyExistsError:
            return True
        except (
            kafka_errors.IncompatibleBrokerVersion,
            kafka_errors.UnsupportedVersionError,
            kafka_errors.TopicAuthorizationFailedError,
            kafka_errors.ClusterAuthorizationFailedError,
        ) as exc:
            kind = (
                "does not support CreateTopics"
                if isinstance(
                    exc, kafka_errors.IncompatibleBrokerVersion | kafka_errors.UnsupportedVersionError
                )
                else "does not allow this client to create topics"
            )
            self.unavailable_reason = kind
            log.warning(
                "Kafka cluster at %s %s; %s not applied: topics such as %s are created by the "
                "broker's auto.create.topics.enable with its default partition count and configs",
                self.bootstrap,
                kind,
                self.what,
                topic,
            )
            return False

    def _broker_defaults(self, partitions: int, replication_factor: int) -> tuple[int, int]:
        """Resolve -1 ("the broker's default") ourselves: kafka-python speaks CreateTopics up to v3,
        and only v4+ lets the broker fill in defaults (KIP-464). Like Debezium, read the broker's
        num.partitions / default.replication.factor, else 1 / min(3, brokers)."""
        assert self._admin is not None
        values: dict[str, str] = {}
        # kafka-python's describe_cluster() chokes on some brokers' ACL bitfields; the client's
        # own metadata cache has the broker list without that decoding.
        brokers = sorted(b.nodeId for b in self._admin._client.cluster.brokers())
        try:
            responses = self._admin.describe_configs(
                [
                    ConfigResource(
                        ConfigResourceType.BROKER,
                        str(brokers[0]),
                        {"num.partitions": None, "default.replication.factor": None},
                    )
                ]
            )
            for response in responses:
                for resource in response.resources:
                    for entry in resource[4]:
                        values[entry[0]] = entry[1]
        except (kafka_errors.KafkaError, IndexError, ValueError):
            log.debug("could not read the broker's topic defaults", exc_info=True)
        if partitions == -1:
            partitions = int(values.get("num.partitions") or 1)
        if replication_factor == -1:
            replication_factor = int(values.get("default.replication.factor") or max(1, min(3, len(brokers))))
        return partitions, replication_factor

    def close(self) -> None:
        if self._admin is not None:
            try:
                self._admin.close()
            except Exception:  # noqa: BLE001 - closing a client must not mask the real outcome
                log.debug("closing the Kafka admin client failed", exc_info=True)
            self._admin = None


def topic_ensurer(
    bootstrap: str, admin_kwargs: Mapping[str, Any], timeout_ms: int, what: str
) -> Callable[[str, int, int, Mapping[str, str]], bool]:
    """``TopicCreator.create`` with a short-lived admin client (closed again before it returns), for
    a store that creates its one topic once at start (a ``ddl.kafka.log.TopicEnsurer``)."""

    def ensure(topic: str, partitions: int, replication_factor: int, configs: Mapping[str, str]) -> bool:
        creator = TopicCreator(bootstrap, admin_kwargs, timeout_ms, what)
        try:
            return creator.create(topic, partitions, replication_factor, configs)
        finally:
            creator.close()

    return ensure
