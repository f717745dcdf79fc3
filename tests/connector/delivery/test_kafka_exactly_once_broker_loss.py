"""Broker loss under exactly once: on a 3-broker cluster (replication factor 3,
``min.insync.replicas=2``, ``acks=all``) the leader of the data topic's partition is SIGKILLed while
the connector streams mixed writes with ``exactly.once.support=required``. The connector goes on
with the two brokers left, and a ``read_committed`` consumer sees every change of an independent
binlog replay exactly once: 0 lost, 0 duplicated.

Both Kafka clients (``sink.kafka.client``) run it. ``confluent`` (librdkafka) streams fewer changes
around the kill (300 before, 600 after, against 600 and 1500) to keep CI short: the leader is lost
mid-stream the same way, and the proof (0 lost, 0 duplicated, binlog order) is the same.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

import pytest
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError

from connector.testing.local_kafka import LocalKafkaCluster
from connector.testing.local_server import LocalMySQLServer
from tests.connector.kafka_eos_support import (
    FAST_SERVER_OPTIONS,
    Daemon,
    MixedWriter,
    binlog_changes,
    create_table,
    eos_props,
    exactly_once_report,
    topic_changes,
    wait_for,
)

REPLICATED = {"min.insync.replicas": "2"}


class Run(NamedTuple):
    """One client's run: committed changes before the leader is killed, and changes written after."""

    client: str
    before: int
    after: int


RUNS = [Run("kafka-python", 600, 1500), Run("confluent", 300, 600)]


def create_replicated_topics(bootstrap: str, prefix: str, db: str) -> str:
    topic = f"{prefix}.{db}.t"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics(
            [
                NewTopic(topic, 1, 3, topic_configs=REPLICATED),
                NewTopic(
                    f"{prefix}.offsets", 1, 3, topic_configs={**REPLICATED, "cleanup.policy": "compact"}
                ),
                NewTopic(
                    f"{prefix}.schema-history",
                    1,
                    3,
                    topic_configs={**REPLICATED, "cleanup.policy": "delete", "retention.ms": "-1"},
                ),
            ]
        )
    finally:
        admin.close()
    return topic


def leader_of(bootstrap: str, topic: str) -> int:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        (description,) = admin.describe_topics([topic])
    finally:
        admin.close()
    (partition,) = description["partitions"]
    return int(partition["leader"])


def new_leader_elected(bootstrap: str, topic: str, lost: int) -> bool:
    """Has another broker become the partition's leader? (An admin client that tries the lost
    broker first fails: not yet.)"""
    try:
        return leader_of(bootstrap, topic) not in (lost, -1)
    except KafkaError:
        return False


@pytest.mark.parametrize("run", RUNS, ids=[run.client for run in RUNS])
def test_killing_the_partition_leader_mid_stream_loses_and_duplicates_nothing_exactly_once(
    kafka_cluster: LocalKafkaCluster, tmp_path: Path, run: Run
) -> None:
    db = "leaderloss"
    prefix = "leaderloss"
    bootstrap = kafka_cluster.bootstrap
    topic = create_replicated_topics(bootstrap, prefix, db)
    with LocalMySQLServer(options=FAST_SERVER_OPTIONS) as server:
        create_table(server, db)
        props = eos_props(
            server,
            bootstrap,
            prefix,
            db,
            tmp_path / "data",
            **{
                "offset.storage.replication.factor": "3",
                "sink.kafka.producer.request.timeout.ms": "5000",
                # Long enough for the controller to fence the killed broker and move its
                # partitions and transaction coordinators under CI load (Kafka's default: 120 s).
                "sink.kafka.producer.delivery.timeout.ms": "60000",
                "sink.kafka.client": run.client,
            },
        )
        daemon = Daemon(props, tmp_path)
        writer = MixedWriter(server, db, seed=5, per_second=120)
        try:
            daemon.wait_streaming()
            writer.start()
            wait_for(
                lambda: len(topic_changes(bootstrap, topic)) > run.before,
                90,
                f"{run.before} committed changes",
                daemon,
            )
            leader = leader_of(bootstrap, topic)
            kafka_cluster.kill(kafka_cluster.broker(leader))
            killed_at, killed = writer.changes, time.monotonic()
            # The controller fences the dead broker (broker.session.timeout.ms) and elects another.
            wait_for(
                lambda: new_leader_elected(bootstrap, topic, leader), 60, "a new partition leader", daemon
            )
            failover_s = time.monotonic() - killed
            wait_for(
                lambda: writer.changes > killed_at + run.after,
                90,
                f"{run.after} changes after the kill",
                daemon,
            )
            writer.finish()
            expected = binlog_changes(server, db)
            wait_for(
                lambda: len(topic_changes(bootstrap, topic)) >= len(expected),
                240,
                "every change committed through the two brokers left",
                daemon,
            )
            new_leader = leader_of(bootstrap, topic)
            assert new_leader != leader
            assert daemon.terminate() == 0, daemon.log()
        finally:
            writer.stop_event.set()
            daemon.kill()
    seen = topic_changes(bootstrap, topic)
    duplicates, missing = exactly_once_report(expected, seen)
    assert (duplicates, missing) == (0, 0), f"{duplicates} duplicated, {missing} lost of {len(expected)}"
    assert seen == expected
    print(
        f"\n{run.client}: leader broker {leader} killed mid-stream: {len(expected)} changes, 0 lost, 0 duplicated, "
        f"new leader {new_leader} after {failover_s:.1f} s ({time.strftime('%H:%M:%S')})"
    )
