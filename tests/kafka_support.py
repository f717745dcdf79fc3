"""Kafka brokers for tests: a real Apache Kafka (KRaft, from Kafka's own jars), the docker-compose
Kafka, or librdkafka's in-process mock cluster for error injection.

``kafka_broker`` is a real broker: one ``connector.testing.local_kafka`` node per test session, each
test with its own topic namespace (``broker.unique()``); ``stop()``/``start()`` kill and restart the
broker process on the same port with its data. ``kafka_cluster`` is a 3-broker cluster for the
replication tests, one per test. ``acl_kafka`` is a second session broker that enforces ACLs
(``deny_write``), for authorization failures.

The mock cluster below is only for errors a real broker cannot be made to give on cue (a produce
error on exactly the next requests; no CreateTopics); each test that uses it says why.

The mock cluster is driven through librdkafka's C API (the copy bundled with confluent-kafka, a
test-only dependency) with ctypes, because the Python binding only exposes
``test.mock.num.brokers``; the C API also lets a test pre-create topics with a partition count
(the mock has no CreateTopics), take a broker down and bring it back on the same port with its
log intact, and make the broker answer produce requests with an error code.

``kafka_broker`` yields a ``KafkaBroker``: a ``str`` holding ``"host:port"`` (so it can be used as a
bootstrap address directly) with ``stop()``/``start()`` to simulate an outage. With
``MYSQL_CDC_TEST_TARGET=docker`` it is the ``kafka`` service of ``docker-compose.yml`` (started by
pytest-docker's ``docker_services``, stopped/started with ``docker compose stop|start kafka``) instead; topics there outlive a test, so tests name theirs with ``broker.unique()``.
Tests that need error injection use ``mock_kafka`` (always a mock cluster, under either target).

The mock keeps only the newest 5 MiB (or 100,000 batches) of each partition (librdkafka's
``rd_kafka_mock_partition`` limits), so large tests compress or spread their data over partitions;
``consume_all`` fails loudly if a partition was truncated.
"""

from __future__ import annotations

import ctypes
import glob
import os
import socket
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.consumer.fetcher import ConsumerRecord

from connector.testing.local_kafka import LocalKafkaCluster

# Kafka protocol error codes the mock can be told to answer with.
MESSAGE_TOO_LARGE = 10
NOT_LEADER_OR_FOLLOWER = 6
TOPIC_AUTHORIZATION_FAILED = 29
PRODUCE_API_KEY = 0

_RD_KAFKA_PRODUCER = 0


def _load_librdkafka() -> ctypes.CDLL:
    import confluent_kafka

    package_dir = Path(confluent_kafka.__file__).resolve().parent
    candidates = sorted(glob.glob(str(package_dir.parent / "confluent_kafka.libs" / "librdkafka*.so*")))
    if not candidates:
        # A confluent-kafka built against a system librdkafka: the extension already loaded it.
        candidates = ["librdkafka.so.1"]
    lib = ctypes.CDLL(candidates[0])
    vp, cp, i32 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32
    signatures: dict[str, tuple[Any, list[Any]]] = {
        "rd_kafka_conf_new": (vp, []),
        "rd_kafka_conf_set": (ctypes.c_int, [vp, cp, cp, cp, ctypes.c_size_t]),
        "rd_kafka_new": (vp, [ctypes.c_int, vp, cp, ctypes.c_size_t]),
        "rd_kafka_destroy": (None, [vp]),
        "rd_kafka_mock_cluster_new": (vp, [vp, ctypes.c_int]),
        "rd_kafka_mock_cluster_destroy": (None, [vp]),
        "rd_kafka_mock_cluster_bootstraps": (cp, [vp]),
        "rd_kafka_mock_topic_create": (ctypes.c_int, [vp, cp, ctypes.c_int, ctypes.c_int]),
        "rd_kafka_mock_broker_set_down": (ctypes.c_int, [vp, i32]),
        "rd_kafka_mock_broker_set_up": (ctypes.c_int, [vp, i32]),
        "rd_kafka_mock_push_request_errors_array": (None, [vp, ctypes.c_int16, ctypes.c_size_t, vp]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


class MockKafkaCluster:
    """One librdkafka mock cluster listening on 127.0.0.1 (random port per broker)."""

    _lib: ctypes.CDLL | None = None

    def __init__(self, brokers: int = 1) -> None:
        if MockKafkaCluster._lib is None:
            MockKafkaCluster._lib = _load_librdkafka()
        self.lib = MockKafkaCluster._lib
        self.broker_ids = list(range(1, brokers + 1))
        errstr = ctypes.create_string_buffer(512)
        conf = self.lib.rd_kafka_conf_new()
        # The handle only hosts the cluster; keep its own logging quiet.
        self.lib.rd_kafka_conf_set(conf, b"log_level", b"2", errstr, len(errstr))
        self._rk = self.lib.rd_kafka_new(_RD_KAFKA_PRODUCER, conf, errstr, len(errstr))
        if not self._rk:
            raise RuntimeError(f"rd_kafka_new failed: {errstr.value.decode()}")
        self._cluster = self.lib.rd_kafka_mock_cluster_new(self._rk, brokers)
        if not self._cluster:
            self.lib.rd_kafka_destroy(self._rk)
            raise RuntimeError("rd_kafka_mock_cluster_new failed")
        self.bootstrap: str = self.lib.rd_kafka_mock_cluster_bootstraps(self._cluster).decode()

    def create_topic(self, name: str, partitions: int, replication_factor: int = 1) -> None:
        err = self.lib.rd_kafka_mock_topic_create(
            self._cluster, name.encode(), partitions, replication_factor
        )
        if err:
            raise RuntimeError(f"mock topic create {name} failed with error {err}")

    def set_down(self) -> None:
        """Close every broker's listener and connections (clients get connection refused)."""
        for broker_id in self.broker_ids:
            self.lib.rd_kafka_mock_broker_set_down(self._cluster, broker_id)

    def set_up(self) -> None:
        """Listen again on the same ports; the topics and their records are still there."""
        for broker_id in self.broker_ids:
            self.lib.rd_kafka_mock_broker_set_up(self._cluster, broker_id)

    def push_produce_errors(self, *error_codes: int) -> None:
        """The next ``len(error_codes)`` produce requests fail with these codes, in order."""
        array = (ctypes.c_int * len(error_codes))(*error_codes)
        self.lib.rd_kafka_mock_push_request_errors_array(
            self._cluster, PRODUCE_API_KEY, len(error_codes), ctypes.cast(array, ctypes.c_void_p)
        )

    def destroy(self) -> None:
        if self._cluster:
            self.lib.rd_kafka_mock_cluster_destroy(self._cluster)
            self._cluster = None
        if self._rk:
            self.lib.rd_kafka_destroy(self._rk)
            self._rk = None


class KafkaBroker(str):
    """A bootstrap address (``"host:port"``) plus control of the broker behind it."""

    mock: MockKafkaCluster | None
    compose: Any  # pytest-docker's compose executor for the docker-compose ``kafka`` service
    local: LocalKafkaCluster | None
    namespace: str

    def __new__(
        cls,
        bootstrap: str,
        mock: MockKafkaCluster | None,
        namespace: str,
        compose: Any = None,
        local: LocalKafkaCluster | None = None,
    ) -> KafkaBroker:
        self = super().__new__(cls, bootstrap)
        self.mock = mock
        self.compose = compose
        self.local = local
        self.namespace = namespace
        return self

    def unique(self, name: str) -> str:
        """A topic/prefix name unique to this test (topics outlive a test on a real broker)."""
        return f"{name}_{self.namespace}"

    def create_topic(self, name: str, partitions: int, configs: Mapping[str, str] | None = None) -> None:
        """Create a topic with a given partition count (and topic configs, real brokers only)."""
        if self.mock is not None:
            assert not configs, "the mock cluster has no topic configs"
            self.mock.create_topic(name, partitions)
            return
        create_topic(str(self), name, partitions, 1, configs)

    def stop(self) -> None:
        """Take the broker away: connections are refused until ``start()``."""
        if self.mock is not None:
            self.mock.set_down()
        elif self.local is not None:
            for node in self.local.brokers:
                self.local.kill(node)
        else:
            self.compose.execute("stop kafka")

    def start(self) -> None:
        """Bring the broker back on the same address with its data."""
        if self.mock is not None:
            self.mock.set_up()
        elif self.local is not None:
            for node in self.local.nodes:
                self.local.start_node(node)
            self.local.wait_ready()
            return
        else:
            self.compose.execute("start kafka")
        wait_until_reachable(str(self), timeout=90)


def create_topic(
    bootstrap: str,
    name: str,
    partitions: int,
    replication_factor: int,
    configs: Mapping[str, str] | None = None,
) -> None:
    """CreateTopics on a real broker, returning once every broker knows the topic's leaders."""
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics(
            [NewTopic(name, partitions, replication_factor, topic_configs=dict(configs or {}))]
        )
    finally:
        admin.close()
    deadline = time.monotonic() + 30
    while len(partitions_of(bootstrap, name)) < partitions:
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {name} has no metadata 30 s after CreateTopics")
        time.sleep(0.1)


def deny_write(bootstrap: str, topic: str) -> None:
    """ACLs that let every PLAINTEXT client (principal ``User:ANONYMOUS``) see ``topic`` but not
    write to it: ALLOW DESCRIBE, DENY WRITE (once a topic has an ACL, what no ACL allows is
    denied). The broker must run an authorizer (``acl_kafka``)."""
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePattern,
        ResourceType,
    )

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        pattern = ResourcePattern(ResourceType.TOPIC, topic, ACLResourcePatternType.LITERAL)
        result = admin.create_acls(
            [
                ACL("User:ANONYMOUS", "*", ACLOperation.DESCRIBE, ACLPermissionType.ALLOW, pattern),
                ACL("User:ANONYMOUS", "*", ACLOperation.WRITE, ACLPermissionType.DENY, pattern),
            ]
        )
    finally:
        admin.close()
    assert not result["failed"], result


def wait_until_reachable(bootstrap: str, timeout: float) -> None:
    host, _, port = bootstrap.rpartition(":")
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _docker_target() -> bool:
    return os.environ.get("MYSQL_CDC_TEST_TARGET", "local") == "docker"


@pytest.fixture(scope="session")
def local_kafka_broker() -> Iterator[LocalKafkaCluster]:
    """One real single-node Kafka for the whole session (tests keep apart by topic names)."""
    cluster = LocalKafkaCluster(1)
    try:
        yield cluster.start()
    finally:
        cluster.destroy()


@pytest.fixture
def kafka_broker(request: pytest.FixtureRequest) -> Iterator[KafkaBroker]:
    """A real Kafka broker for this test: the session's local broker, or the docker-compose Kafka."""
    namespace = uuid.uuid4().hex[:10]
    if _docker_target():
        services = request.getfixturevalue("docker_services")  # pytest-docker: compose up --wait
        bootstrap = f"127.0.0.1:{services.port_for('kafka', 9092)}"
        wait_until_reachable(bootstrap, timeout=120)
        broker = KafkaBroker(bootstrap, None, namespace, services._docker_compose)
        try:
            yield broker
        finally:
            # A test that stopped the broker must not leave it down for the next one.
            broker.start()
        return
    local: LocalKafkaCluster = request.getfixturevalue("local_kafka_broker")
    broker = KafkaBroker(local.bootstrap, None, namespace, local=local)
    try:
        yield broker
    finally:
        if not all(node.running for node in local.nodes):
            broker.start()


@pytest.fixture(scope="session")
def local_acl_kafka() -> Iterator[LocalKafkaCluster]:
    """A second real single-node Kafka that enforces ACLs (KRaft's StandardAuthorizer). With no ACL
    on a resource everyone may use it, so the broker runs as usual until a test denies something."""
    cluster = LocalKafkaCluster(
        1,
        broker_properties={
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "true",
        },
    )
    try:
        yield cluster.start()
    finally:
        cluster.destroy()


@pytest.fixture
def acl_kafka(local_acl_kafka: LocalKafkaCluster) -> KafkaBroker:
    """A real broker that enforces ACLs (``deny_write``), with a topic namespace for this test.
    Always local (the docker-compose Kafka has no authorizer)."""
    return KafkaBroker(local_acl_kafka.bootstrap, None, uuid.uuid4().hex[:10], local=local_acl_kafka)


@pytest.fixture
def kafka_cluster() -> Iterator[LocalKafkaCluster]:
    """Three real brokers and a controller, for replication and broker-loss tests."""
    cluster = LocalKafkaCluster(3)
    try:
        yield cluster.start()
    finally:
        cluster.destroy()


@pytest.fixture
def mock_kafka() -> Iterator[KafkaBroker]:
    """Always a mock cluster (for tests that inject broker errors), under either target."""
    cluster = MockKafkaCluster()
    try:
        yield KafkaBroker(cluster.bootstrap, cluster, uuid.uuid4().hex[:10])
    finally:
        cluster.destroy()


def consume_all(bootstrap: str, topics: Iterable[str], timeout: float = 30.0) -> list[ConsumerRecord]:
    """Every record of ``topics`` from the beginning to the current end, in partition order
    (per partition, by offset), with a plain kafka-python consumer and no consumer group."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        group_id=None,
        consumer_timeout_ms=1000,
        allow_auto_create_topics=False,
    )
    try:
        partitions: list[TopicPartition] = []
        for topic in topics:
            ids = _wait_for_partitions(consumer, topic, timeout)
            partitions.extend(TopicPartition(topic, p) for p in sorted(ids))
        if not partitions:
            return []
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        end = consumer.end_offsets(partitions)
        truncated = {tp: o for tp, o in consumer.beginning_offsets(partitions).items() if o > 0}
        if truncated:
            # The mock broker keeps only the last 5 MiB (or 100,000 batches) of each partition.
            raise AssertionError(
                f"partitions lost their oldest records (log start offsets {truncated}); "
                "keep a test's data under 5 MiB per partition (compress, or more partitions)"
            )
        out: dict[TopicPartition, list[ConsumerRecord]] = {tp: [] for tp in partitions}
        deadline = time.monotonic() + timeout
        while any(consumer.position(tp) < end[tp] for tp in partitions):
            if time.monotonic() > deadline:
                raise TimeoutError(f"could not read {topics} to their end within {timeout}s")
            for tp, batch in consumer.poll(timeout_ms=500).items():
                out[tp].extend(batch)
        return [r for tp in partitions for r in out[tp] if r.offset < end[tp]]
    finally:
        consumer.close()


def _wait_for_partitions(consumer: KafkaConsumer, topic: str, timeout: float) -> set[int]:
    deadline = time.monotonic() + timeout
    while True:
        ids = consumer.partitions_for_topic(topic)
        if ids:
            return set(ids)
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {topic} does not exist")
        time.sleep(0.1)


def partitions_of(bootstrap: str, topic: str) -> set[int]:
    """The partition ids of an existing topic (empty if it does not exist; never creates it)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, allow_auto_create_topics=False)
    try:
        return set(consumer.partitions_for_topic(topic) or ())
    finally:
        consumer.close()


def record_count(bootstrap: str, topic: str) -> int:
    """How many records a topic's partitions hold in all (the sum of their end offsets)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, allow_auto_create_topics=False)
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        return sum(consumer.end_offsets(partitions).values()) if partitions else 0
    finally:
        consumer.close()


def topic_config(bootstrap: str, topic: str) -> dict[str, str]:
    """A topic's effective configuration as the broker describes it (DescribeConfigs)."""
    from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        (response,) = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        admin.close()
    (resource,) = response.resources
    error_code, error_message, _type, _name, entries = resource[:5]
    if error_code:
        raise AssertionError(f"DescribeConfigs {topic}: error {error_code} {error_message}")
    return {entry[0]: entry[1] for entry in entries}
