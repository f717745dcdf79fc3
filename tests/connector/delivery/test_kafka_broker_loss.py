"""The ``mysql-cdc run`` daemon streaming into a real 3-broker Kafka cluster (``kafka_cluster``:
three brokers and a KRaft controller) while brokers die, and into topics a real broker refuses.

The connector creates its topics with replication factor 3 and ``min.insync.replicas=2``; its
producer uses ``acks=all`` (the sink always does). What arrives in Kafka is compared with what MySQL
wrote (every row, by id and value), at least once: a retried batch may come twice, nothing may be
missing, and per partition the changes stay in commit order.

* SIGKILL of the broker leading a partition, mid-stream: nothing lost, whether the offsets and
  the schema history are in files or in Kafka (the offset topic replicated 3 times too).
* Two of three brokers down: the producer cannot reach ``min.insync.replicas``; the connector waits
  and retries, says so in its log and in ``mysql_cdc_sink_waiting_seconds``, and resumes with
  nothing lost when one broker returns.
* A topic it cannot write to (``max.message.bytes`` too small; a WRITE the broker's ACLs deny):
  it stops naming the topic and the setting, and the stored offset stays before the refused change.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from kafka.admin import KafkaAdminClient

from connector.config import ConnectorConfig
from connector.factories import build_offset_store
from connector.testing.local_kafka import LocalKafkaCluster
from connector.testing.local_server import LocalMySQLServer, free_port
from tests.connector.crash_support import start_connector, wait_for
from tests.connector.kafka_engine_support import (
    FAST_SERVER_OPTIONS,
    current_gtid_seq,
    gtid_seq,
    insert_rows,
    write_config,
)
from tests.kafka_support import KafkaBroker, consume_all, deny_write, record_count, topic_config

ROWS = 12_000


@pytest.fixture
def fast_server() -> Iterator[LocalMySQLServer]:
    with LocalMySQLServer(options=FAST_SERVER_OPTIONS) as server:
        yield server


def cluster_props(
    server: LocalMySQLServer, bootstrap: str, tmp_path: Path, db: str, **extra: str
) -> tuple[dict[str, str], str]:
    """A daemon streaming ``db.t`` into Kafka; offsets and schema history in files (data.dir)."""
    server.execute(f"CREATE DATABASE {db}", f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(40))")
    props = server.connector_properties(
        **{
            "topic.prefix": db,
            "database.include.list": db,
            "sink.type": "kafka",
            "sink.kafka.bootstrap.servers": bootstrap,
            "data.dir": str(tmp_path / "data"),
            "max.batch.size": "1024",
            "poll.interval.ms": "100",
            "offset.flush.interval.ms": "500",
            "topic.creation.default.partitions": "3",
            "topic.creation.default.replication.factor": "3",
            "topic.creation.default.min.insync.replicas": "2",
            **extra,
        }
    )
    return props, f"{db}.{db}.t"


def delivered(bootstrap: str, topic: str) -> list[tuple[int, str, int, int]]:
    """(row id, value, partition, GTID sequence) of every insert in the topic, in partition order."""
    out = []
    for m in consume_all(bootstrap, [topic], timeout=120):
        if m.value is not None:
            payload = orjson.loads(m.value)["payload"]
            after = payload["after"]
            gtid = payload["source"]["gtid"]
            out.append((after["id"], after["v"], m.partition, gtid_seq(gtid) if gtid else 0))
    return out


def records_in(bootstrap: str, topic: str) -> int:
    try:
        return record_count(bootstrap, topic)
    except Exception:  # noqa: BLE001 - the topic is not there yet
        return -1


def distinct_ids(bootstrap: str, topic: str) -> int:
    try:
        return len({row[0] for row in delivered(bootstrap, topic)})
    except Exception:  # noqa: BLE001 - a broker just died: count again on the next poll
        return -1


def assert_nothing_lost_and_in_order(server: LocalMySQLServer, db: str, bootstrap: str, topic: str) -> int:
    """Every row MySQL holds is in the topic with its value; per partition, the first delivery of
    each change is in commit order. Returns how many records came twice."""
    rows = delivered(bootstrap, topic)
    in_mysql = {(int(i), str(v)) for i, v in server.query(f"SELECT id, v FROM {db}.t")}
    assert len(in_mysql) == ROWS
    assert {(i, v) for i, v, _, _ in rows} == in_mysql, "a change MySQL committed is missing"
    first_seen: dict[int, list[int]] = {}
    seen: set[int] = set()
    for i, _, partition, seq in rows:
        if i not in seen:
            seen.add(i)
            first_seen.setdefault(partition, []).append(seq)
    assert all(seqs == sorted(seqs) for seqs in first_seen.values()), "reordered within a partition"
    return sum(n - 1 for n in Counter(i for i, *_ in rows).values())


def describe(bootstrap: str, topic: str) -> dict[int, dict[str, object]]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        (description,) = admin.describe_topics([topic])
    finally:
        admin.close()
    return {p["partition"]: p for p in description["partitions"]}


def assert_replicated(bootstrap: str, topic: str) -> None:
    """The connector created the topic as configured: 3 replicas each, min.insync.replicas=2."""
    partitions = describe(bootstrap, topic)
    assert len(partitions) == 3 and all(len(p["replicas"]) == 3 for p in partitions.values())  # type: ignore[arg-type]
    assert topic_config(bootstrap, topic)["min.insync.replicas"] == "2"


def stop_daemon(daemon: subprocess.Popen[bytes], log: Path) -> None:
    os.killpg(daemon.pid, signal.SIGTERM)
    assert daemon.wait(timeout=120) == 0, log.read_text()[-3000:]


KAFKA_STORES = {
    # Offsets in a replicated Kafka topic too: a user with nothing but MySQL and Kafka.
    "offset.storage": "kafka",
    "offset.storage.topic": "leaderloss.offsets",
    "offset.storage.partitions": "1",
    "offset.storage.replication.factor": "3",
    "schema.history.internal": "kafka",
    "schema.history.internal.kafka.topic": "leaderloss.schema-history",
}


@pytest.mark.parametrize("stores", ["files", "kafka"])
def test_killing_the_partition_leader_mid_stream_loses_nothing(
    kafka_cluster: LocalKafkaCluster, fast_server: LocalMySQLServer, tmp_path: Path, stores: str
) -> None:
    bootstrap = kafka_cluster.bootstrap
    extra = (
        {}
        if stores == "files"
        else {**KAFKA_STORES, "schema.history.internal.kafka.bootstrap.servers": bootstrap}
    )
    props, topic = cluster_props(fast_server, bootstrap, tmp_path, "leaderloss", **extra)
    log = tmp_path / "connector.log"
    daemon = start_connector(write_config(tmp_path / "connector.properties", props), log)
    try:
        wait_for(lambda: "streaming from" in log.read_text(), 90, "the daemon to stream")
        done = threading.Event()
        writer = insert_rows(fast_server, "leaderloss", 1, ROWS, done, per_second=800)
        wait_for(lambda: records_in(bootstrap, topic) >= 2_000, 120, "2,000 delivered rows")
        assert not done.is_set(), "the kill must land while MySQL is still taking writes"
        assert_replicated(bootstrap, topic)
        leader = describe(bootstrap, topic)[0]["leader"]
        killed_at = records_in(bootstrap, topic)
        kafka_cluster.kill(kafka_cluster.broker(int(leader)))  # type: ignore[call-overload]
        writer.join(timeout=120)
        assert done.is_set()
        wait_for(lambda: distinct_ids(bootstrap, topic) >= ROWS, 240, "every row", 2.0)
        new_leader = describe(bootstrap, topic)[0]["leader"]
        assert new_leader != leader, "the partition must have moved to another broker"
        assert daemon.poll() is None, log.read_text()[-3000:]
    finally:
        if daemon.poll() is None:
            stop_daemon(daemon, log)
    duplicates = assert_nothing_lost_and_in_order(fast_server, "leaderloss", bootstrap, topic)
    stored = build_offset_store(ConnectorConfig.from_mapping(props)).load()
    assert stored is not None and gtid_seq(str(stored["gtids"])) >= current_gtid_seq(fast_server)
    print(
        f"\nleader {leader} killed at {killed_at} delivered rows; partition 0 moved to {new_leader}; "
        f"{ROWS} rows, all delivered, {duplicates} twice"
    )


def sink_metrics(port: int) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    figures = {}
    for line in text.splitlines():
        if line.startswith("mysql_cdc_sink_wait") and 'sink="KafkaSink"' in line:
            name, value = line.split("{", 1)[0], line.rsplit(" ", 1)[1]
            figures[name] = float(value)
    return figures


def test_with_two_of_three_brokers_down_the_connector_waits_retries_and_resumes_losing_nothing(
    kafka_cluster: LocalKafkaCluster, fast_server: LocalMySQLServer, tmp_path: Path
) -> None:
    bootstrap = kafka_cluster.bootstrap
    port = free_port()
    props, topic = cluster_props(
        fast_server,
        bootstrap,
        tmp_path,
        "quorumloss",
        **{
            "metrics.port": str(port),
            # Longer than the outage below: the producer retries instead of giving up.
            "sink.kafka.producer.delivery.timeout.ms": "300000",
            "sink.kafka.producer.request.timeout.ms": "5000",
            "sink.kafka.producer.reconnect.backoff.max.ms": "1000",
        },
    )
    log = tmp_path / "connector.log"
    daemon = start_connector(write_config(tmp_path / "connector.properties", props), log)
    try:
        wait_for(lambda: "streaming from" in log.read_text(), 90, "the daemon to stream")
        done = threading.Event()
        writer = insert_rows(fast_server, "quorumloss", 1, ROWS, done, per_second=800)
        wait_for(lambda: records_in(bootstrap, topic) >= 2_000, 120, "2,000 delivered rows")
        assert not done.is_set(), "the outage must land while MySQL is still taking writes"
        assert_replicated(bootstrap, topic)
        survivor, *down = kafka_cluster.brokers
        for node in down:
            kafka_cluster.kill(node)
        wait_for(lambda: "Kafka sink: waiting" in log.read_text(), 90, "the connector's waiting line")
        wait_for(
            lambda: sink_metrics(port).get("mysql_cdc_sink_waiting_seconds", 0) >= 5,
            60,
            "mysql_cdc_sink_waiting_seconds to say so",
        )
        line = next(x for x in log.read_text().splitlines() if "Kafka sink: waiting" in x)
        assert bootstrap in line and "refused the connection" in line and "delivery.timeout.ms=300000" in line
        assert daemon.poll() is None, "the connector must wait, not stop"
        writer.join(timeout=120)
        assert done.is_set(), "MySQL takes writes whatever Kafka does"

        kafka_cluster.start_node(down[0])  # one broker returns: two in sync again
        wait_for(lambda: distinct_ids(bootstrap, topic) >= ROWS, 240, "every row", 2.0)
        wait_for(
            lambda: sink_metrics(port).get("mysql_cdc_sink_waiting_seconds", 1) == 0, 30, "the wait to end"
        )
        assert sink_metrics(port)["mysql_cdc_sink_waits_total"] >= 1
        assert "acknowledged again" in log.read_text()
        assert daemon.poll() is None, log.read_text()[-3000:]
    finally:
        if daemon.poll() is None:
            stop_daemon(daemon, log)
    duplicates = assert_nothing_lost_and_in_order(fast_server, "quorumloss", bootstrap, topic)
    waits = [x for x in log.read_text().splitlines() if "Kafka sink: waiting" in x]
    print(f"\ntwo brokers down: {len(waits)} waiting lines; {ROWS} rows, all delivered, {duplicates} twice")


# -- a topic the connector cannot write to -----------------------------------------------------------


def refusing_broker(request: pytest.FixtureRequest, refusal: str, topic: str) -> KafkaBroker:
    """A real broker that refuses writes to ``topic``: a 300-byte ``max.message.bytes``, or ACLs."""
    if refusal == "max.message.bytes":
        broker: KafkaBroker = request.getfixturevalue("kafka_broker")
        broker.create_topic(topic, 1, {"max.message.bytes": "300"})
    else:
        broker = request.getfixturevalue("acl_kafka")
        broker.create_topic(topic, 1)
        deny_write(broker, topic)
    return broker


@pytest.mark.parametrize(
    ("refusal", "expected"),
    [
        ("max.message.bytes", "MessageSizeTooLargeError.*max.message.bytes"),
        ("acl", "TopicAuthorizationFailedError.*grant the connector's principal WRITE"),
    ],
)
def test_a_topic_the_connector_cannot_write_stops_it_with_no_offset_past_the_refused_change(
    request: pytest.FixtureRequest,
    mysql_server: LocalMySQLServer,
    unique_db: str,
    tmp_path: Path,
    refusal: str,
    expected: str,
) -> None:
    db = unique_db
    prefix = f"refused_{db}"
    refused_topic = f"{prefix}.{db}.refused"
    broker = refusing_broker(request, refusal, refused_topic)
    mysql_server.execute(
        "CREATE TABLE fine (id INT PRIMARY KEY)", "CREATE TABLE refused (id INT PRIMARY KEY)", database=db
    )
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": prefix,
            "database.include.list": db,
            "sink.type": "kafka",
            "sink.kafka.bootstrap.servers": broker,
            "data.dir": str(tmp_path / "data"),
            "poll.interval.ms": "100",
            "offset.flush.interval.ms": "200",
        }
    )
    offsets = build_offset_store(ConnectorConfig.from_mapping(props))
    log = tmp_path / "connector.log"
    daemon = start_connector(write_config(tmp_path / "connector.properties", props), log)
    try:
        wait_for(lambda: offsets.load() is not None, 90, "the first stored offset")
        mysql_server.execute("INSERT INTO fine VALUES (1)", database=db)
        fine_seq = current_gtid_seq(mysql_server)
        wait_for(lambda: gtid_seq(str(offsets.load()["gtids"])) >= fine_seq, 60, "the fine row's offset")  # type: ignore[index]
        mysql_server.execute("INSERT INTO refused VALUES (1)", database=db)
        refused_seq = current_gtid_seq(mysql_server)
        mysql_server.execute("INSERT INTO fine VALUES (2)", database=db)
        exit_code = daemon.wait(timeout=90)
    finally:
        if daemon.poll() is None:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait()
    stderr = log.read_text()
    assert exit_code == 1, stderr[-3000:]
    failure = [line for line in stderr.splitlines() if line.startswith("mysql-cdc: error:")]
    assert failure, stderr[-3000:]
    assert f"topic '{refused_topic}'" in failure[-1], failure[-1]
    assert re.search(expected, failure[-1]), failure[-1]
    stored = offsets.load()
    assert stored is not None
    assert gtid_seq(str(stored["gtids"])) < refused_seq, f"offset {stored} is past the refused change"
    # The row after the refused one may have reached its topic (at least once), the refused one not.
    fine = [orjson.loads(m.key)["payload"]["id"] for m in consume_all(broker, [f"{prefix}.{db}.fine"])]
    assert fine[0] == 1 and set(fine) <= {1, 2}
