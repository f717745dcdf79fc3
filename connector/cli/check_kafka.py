"""``mysql-cdc check``: the Kafka sink's brokers and the connector's rights on its topics.

The brokers are asked through the admin API (Metadata with the authorized operations, KIP-430):
which of the connector's topics (``<topic.prefix>`` and ``<topic.prefix>.*``) exist, whether the
connector's principal may WRITE each one, and whether it may CREATE the topics that do not exist
yet. Nothing is created or written.
"""

from __future__ import annotations

from typing import Any

from kafka import errors as kafka_errors
from kafka.admin import KafkaAdminClient

from connector.cli.checklist import Item, fail, ok
from connector.config import ConnectorConfig
from ddl.kafka.client import PRODUCER_SETTINGS, client_kwargs, security_kwargs, unreachable_message
from sink.kafka.properties import BOOTSTRAP_KEY
from sink.kafka.settings import PRODUCER_PREFIX

NAME = "sink kafka"
TIMEOUT_MS = 5000
# What a broker without an authorizer (or a client too old for KIP-430) reports: no list at all.
_UNKNOWN = None


def _admin(config: ConnectorConfig, bootstrap: str) -> KafkaAdminClient:
    identity = security_kwargs(
        client_kwargs(config.subset(PRODUCER_PREFIX), PRODUCER_PREFIX, PRODUCER_SETTINGS)
    )
    return KafkaAdminClient(
        bootstrap_servers=bootstrap,
        request_timeout_ms=TIMEOUT_MS,
        api_version_auto_timeout_ms=TIMEOUT_MS,
        **identity,
    )


def check_kafka_sink(config: ConnectorConfig) -> list[Item]:
    bootstrap = config.get(BOOTSTRAP_KEY)
    if not bootstrap:
        return [fail(NAME, f"{BOOTSTRAP_KEY} is not set: set it to the brokers, host:port[,host:port]")]
    try:
        admin = _admin(config, bootstrap)
    except kafka_errors.NoBrokersAvailable:
        return [fail(NAME, unreachable_message(BOOTSTRAP_KEY, bootstrap))]
    try:
        return [ok(NAME, f"brokers reached at {bootstrap}"), *_topic_rights(admin, config.topic_prefix)]
    finally:
        admin.close()


def _topic_rights(admin: KafkaAdminClient, prefix: str) -> list[Item]:
    topics = sorted(t for t in admin.list_topics() if t == prefix or t.startswith(prefix + "."))
    denied = [_write_right(t) for t in _describe(admin, topics) if not _may(t, "WRITE")]
    if denied:
        return denied
    cluster = admin.describe_cluster()
    if not _may(cluster, "CREATE") and not topics:
        return [
            fail(
                "kafka topics",
                f"no topic of topic.prefix={prefix} exists and the connector's principal may not CREATE "
                f"topics: create them beforehand, or kafka-acls --add --allow-principal <principal> "
                "--operation Create --cluster",
            )
        ]
    return [ok("kafka topics", f"{len(topics)} topic(s) of topic.prefix={prefix}, all writable")]


def _describe(admin: KafkaAdminClient, topics: list[str]) -> list[dict[str, Any]]:
    return list(admin.describe_topics(topics)) if topics else []


def _may(described: dict[str, Any], operation: str) -> bool:
    allowed = described.get("authorized_operations")
    return allowed is _UNKNOWN or operation in allowed or "ALL" in allowed


def _write_right(topic: dict[str, Any]) -> Item:
    name = topic.get("topic")
    return fail(
        "kafka topics",
        f"the connector's principal may not WRITE topic {name}: kafka-acls --add --allow-principal "
        f"<principal> --operation Write --topic {name} (and remove any DENY for it)",
    )
