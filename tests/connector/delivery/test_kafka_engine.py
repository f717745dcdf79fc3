"""The connector end to end into Kafka: the engine and the ``mysql-cdc run`` daemon against a real
MariaDB/MySQL server and a real Apache Kafka broker (the session's local KRaft broker, or the
docker-compose Kafka), every topic consumed back with a plain kafka-python consumer.

* the records in Kafka are the jsonl sink's records for the same run, in per-partition and per-key
  order, tombstones null-valued; a restart from the offset topic and the history topic alone
  resumes with the recovered schema and repeats nothing;
* the broker closed in the middle of a 50,000-transaction stream: the daemon retries within
  ``delivery.timeout.ms``, stops naming the broker and the cause, its stored offset covers only
  acknowledged records, and after the broker returns every change is delivered (duplicates counted);
* SIGKILL, repeatedly: the offset topic never points past a record the broker did not acknowledge.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import orjson
from kafka import KafkaConsumer, TopicPartition

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.stores.kafka_offsets import KafkaOffsetStore
from connector.testing.local_server import LocalMySQLServer, MySQLServerHandle
from sink.jsonl import JsonlSink
from sink.kafka.sink import KafkaSink
from tests.connector.crash_support import start_connector, wait_for
from tests.connector.kafka_engine_support import (
    FAST_SERVER_OPTIONS,
    current_gtid_seq,
    gtid_seq,
    insert_rows,
    topics_with_prefix,
    write_config,
)
from tests.kafka_support import KafkaBroker, consume_all
from tests.sink.kafka_sink_support import jsonl_form


def kafka_props(broker: KafkaBroker, prefix: str, **extra: str) -> dict[str, str]:
    """Sink, offsets and schema history all in Kafka: a user with only MySQL and Kafka."""
    history_topic = f"{prefix}.schema-history"
    return {
        "topic.prefix": prefix,
        "sink.type": "kafka",
        "sink.kafka.bootstrap.servers": broker,
        "offset.storage": "kafka",
        "offset.storage.topic": f"{prefix}.offsets",
        "offset.storage.replication.factor": "1",
        "schema.history.internal": "kafka",
        "schema.history.internal.kafka.topic": history_topic,
        "schema.history.internal.kafka.bootstrap.servers": broker,
        **extra,
    }


# -- in-process engine ------------------------------------------------------------------------------


def test_kafka_topics_equal_the_jsonl_sink_and_restart_from_kafka_alone(
    mysql_server: MySQLServerHandle, unique_db: str, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    db = unique_db
    prefix = kafka_broker.unique("it")
    mysql_server.execute(
        "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40), balance DECIMAL(10,2) DEFAULT 15.28)",
        "CREATE TABLE notes (body TEXT, score DOUBLE)",
        "CREATE TABLE pairs (a INT, b VARCHAR(5), v INT, PRIMARY KEY (a, b))",
        database=db,
    )
    props = mysql_server.connector_properties(
        **kafka_props(
            kafka_broker,
            prefix,
            **{
                "database.include.list": db,
                "data.dir": str(tmp_path / "first"),
                "max.batch.size": "64",
                "heartbeat.interval.ms": "100",
                "provide.transaction.metadata": "true",
                # The sink creates its topics (the broker's own default is one partition), so
                # keys spread over partitions below.
                "topic.creation.default.partitions": "4",
                "topic.creation.default.replication.factor": "1",
            },
        )
    )
    config = ConnectorConfig.from_mapping(props)
    jsonl_path = tmp_path / "events.jsonl"
    engine = Engine(config, sinks=[KafkaSink.from_config(config), JsonlSink(jsonl_path)])
    engine.catch_up(60)
    with mysql_server.connect(db) as conn, conn.cursor() as cur:
        for i in range(1, 61):
            cur.execute("INSERT INTO customers (id, name) VALUES (%s, %s)", (i, f"c{i} – ü"))
            cur.execute("INSERT INTO notes VALUES (%s, %s)", (f"note {i}", i / 3))
        cur.execute("INSERT INTO pairs VALUES (1,'x',1),(1,'y',2),(2,'x',3)")
        for round_ in range(3):
            cur.execute("UPDATE customers SET balance = balance + %s WHERE id %% 4 = 0", (round_,))
        cur.execute("UPDATE pairs SET v = v * 10")
        cur.execute("DELETE FROM customers WHERE id > 50")
        cur.execute("UPDATE customers SET id = 1000 WHERE id = 7")  # key change: delete+tombstone+create
        cur.execute("ALTER TABLE customers ADD COLUMN tier INT NOT NULL DEFAULT 3")
        cur.execute("INSERT INTO customers (id, name) VALUES (2000, 'after alter')")
        cur.execute("DELETE FROM notes WHERE score > 15")
        conn.commit()
    engine.catch_up(60)
    engine.close()

    jsonl_lines = jsonl_path.read_bytes().splitlines()
    topics = topics_with_prefix(kafka_broker, prefix)
    # data, schema-change, transaction and heartbeat topics
    assert {
        f"{prefix}.{db}.customers",
        prefix,
        f"{prefix}.transaction",
        f"__debezium-heartbeat.{prefix}",
    } <= set(topics)
    consumed = consume_all(
        kafka_broker, [t for t in topics if not t.endswith((".offsets", ".schema-history"))]
    )
    kafka_lines = [jsonl_form(m.topic, m.key, m.value, m.headers) for m in consumed]
    assert len(jsonl_lines) > 200
    assert sorted(kafka_lines) == sorted(jsonl_lines)  # the same records, byte for byte

    # Per topic-partition the broker log is in emission order (checked on the lines that occur
    # once; identical tombstones of a keyless table may repeat) ...
    counts = Counter(jsonl_lines)
    emitted_at = {line: i for i, line in enumerate(jsonl_lines) if counts[line] == 1}
    per_partition: dict[tuple[str, int], list[int]] = defaultdict(list)
    for m, line in zip(consumed, kafka_lines, strict=True):
        if line in emitted_at:
            per_partition[(m.topic, m.partition)].append(emitted_at[line])
    assert all(order == sorted(order) for order in per_partition.values())
    assert len({p for (t, p) in per_partition if t == f"{prefix}.{db}.customers"}) > 1

    # ... and every key's records, tombstones included, are in one partition in emission order.
    def key_of(topic: str, key: Any) -> tuple[str, bytes]:
        return topic, orjson.dumps(key)

    jsonl_per_key: dict[tuple[str, bytes], list[bytes]] = defaultdict(list)
    for line in jsonl_lines:
        parsed = orjson.loads(line)
        if parsed["key"] is not None:
            jsonl_per_key[key_of(parsed["topic"], parsed["key"])].append(line)
    kafka_per_key: dict[tuple[str, bytes], list[bytes]] = defaultdict(list)
    key_partitions: dict[tuple[str, bytes], set[int]] = defaultdict(set)
    for m, line in zip(consumed, kafka_lines, strict=True):
        if m.key is not None:
            kafka_per_key[key_of(m.topic, orjson.loads(m.key))].append(line)
            key_partitions[key_of(m.topic, orjson.loads(m.key))].add(m.partition)
    assert kafka_per_key == jsonl_per_key
    assert all(len(partitions) == 1 for partitions in key_partitions.values())

    customer_msgs = [m for m in consumed if m.topic == f"{prefix}.{db}.customers"]
    tombstones = [m for m in customer_msgs if m.value is None]
    assert len(tombstones) == 11 and all(m.key is not None for m in tombstones)  # 10 deletes + key change
    deletes = [
        orjson.loads(m.value)
        for m in customer_msgs
        if m.value is not None and orjson.loads(m.value)["payload"]["op"] == "d"
    ]
    assert len(deletes) == 11
    headers = dict(next(m for m in customer_msgs if m.value is not None).headers)
    assert headers["__debezium.context.connectorLogicalName"] == prefix.encode()
    assert any("__debezium.newkey" in dict(m.headers) for m in customer_msgs)
    heartbeats = [m for m in consumed if m.topic == f"__debezium-heartbeat.{prefix}"]
    assert all(m.partition == 0 for m in heartbeats)
    assert all(m.partition == 0 for m in consumed if m.topic == prefix)

    # Restart with no local state at all: offsets and schema come from Kafka only.
    with mysql_server.connect(db) as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO customers (id, name) VALUES (3000, 'after restart')")
        conn.commit()
    props["data.dir"] = str(tmp_path / "second")
    restarted = Engine(ConnectorConfig.from_mapping(props))
    restarted.catch_up(60)
    restarted.close()
    assert not (tmp_path / "second" / "offsets.json").exists()
    after = consume_all(kafka_broker, [f"{prefix}.{db}.customers"])
    seen = {(m.partition, m.offset) for m in customer_msgs}
    new = [orjson.loads(m.value)["payload"] for m in after if (m.partition, m.offset) not in seen]
    assert len(after) == len(customer_msgs) + 1, "a restart from the stored offsets repeats nothing"
    assert new[0]["op"] == "c" and new[0]["after"] == {
        "id": 3000,
        "name": "after restart",
        "balance": "Bfg=",
        "tier": 3,
    }  # 15.28; tier: recovered ALTER


# -- the daemon ---------------------------------------------------------------------------------------


class TopicCounter:
    """Counts the records in a topic (sum of end offsets) without reading them."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=5000)
        self.partitions = [TopicPartition(topic, p) for p in range(partitions)]

    def count(self) -> int:
        try:
            return sum(self.consumer.end_offsets(self.partitions).values())
        except Exception:  # noqa: BLE001 - broker away: report nothing new
            return -1

    def close(self) -> None:
        self.consumer.close()


def delivered_rows(bootstrap: str, topic: str) -> list[tuple[int, int]]:
    """(row id, GTID sequence) of every insert in the data topic."""
    out = []
    for m in consume_all(bootstrap, [topic], timeout=120):
        if m.value is None:
            continue
        payload = orjson.loads(m.value)
        payload = payload.get("payload", payload)
        out.append((payload["after"]["id"], gtid_seq(payload["source"]["gtid"])))
    return out


def assert_offset_covers_only_acknowledged(
    store: KafkaOffsetStore, bootstrap: str, topic: str, first_seq: int
) -> tuple[int, int]:
    """Every insert transaction the stored offset says is done is in the topic.

    The offset's ``gtids`` is the set of completed transactions (Debezium's restart set); each
    insert is its own transaction, so every sequence number from the first insert up to the
    stored one must be in the data topic. Returns (stored sequence, records in the topic)."""
    offset = store.load()
    assert offset is not None and offset.get("gtids"), f"no GTID offset stored: {offset}"
    stored_seq = gtid_seq(str(offset["gtids"]))
    delivered = delivered_rows(bootstrap, topic)
    acknowledged = {seq for _, seq in delivered}
    missing = [seq for seq in range(first_seq, stored_seq + 1) if seq not in acknowledged]
    assert not missing, (
        f"offset {offset} points past {len(missing)} transactions the broker never "
        f"acknowledged (first {missing[:5]})"
    )
    return stored_seq, len(delivered)


def daemon_setup(
    server: LocalMySQLServer, broker: KafkaBroker, tmp_path: Path, name: str, partitions: int, **extra: str
) -> tuple[dict[str, str], str, int]:
    server.execute(f"CREATE DATABASE {name}", f"CREATE TABLE {name}.t (id INT PRIMARY KEY, v VARCHAR(40))")
    prefix = broker.unique(name)
    topic = f"{prefix}.{name}.t"
    broker.create_topic(topic, partitions)
    props = server.connector_properties(
        **kafka_props(
            broker,
            prefix,
            **{
                "database.include.list": name,
                "data.dir": str(tmp_path / "data"),
                "max.batch.size": "2048",
                "poll.interval.ms": "100",
                "sink.kafka.producer.compression.type": "gzip",
                "sink.kafka.producer.batch.size": "131072",
                "sink.kafka.producer.linger.ms": "5",
                "offset.storage.partitions": "1",
                **extra,
            },
        )
    )
    return props, topic, current_gtid_seq(server) + 1


TRANSACTIONS = 50_000


def test_daemon_survives_a_broker_outage_mid_stream_without_losing_acknowledged_records(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    with LocalMySQLServer(options=FAST_SERVER_OPTIONS) as server:
        props, topic, first_seq = daemon_setup(
            server,
            kafka_broker,
            tmp_path,
            "outage",
            8,
            **{
                "sink.kafka.producer.delivery.timeout.ms": "6000",
                "sink.kafka.producer.request.timeout.ms": "2000",
                "sink.kafka.producer.reconnect.backoff.max.ms": "500",
                "offset.storage.kafka.timeout.ms": "5000",
            },
        )
        config = write_config(tmp_path / "connector.properties", props)
        log = tmp_path / "connector.log"
        store = KafkaOffsetStore.from_config(ConnectorConfig.from_mapping(props))
        counter = TopicCounter(kafka_broker, topic, 8)

        daemon = start_connector(config, log)
        try:
            wait_for(lambda: store.load() is not None, 90, "the daemon to store its first offset")
            written = threading.Event()
            writer = insert_rows(server, "outage", 1, TRANSACTIONS, written, per_second=2500)
            wait_for(lambda: counter.count() >= 8_000, 120, "8,000 delivered changes")
            assert not written.is_set(), "the outage must land while MySQL is still taking writes"
            kafka_broker.stop()
            stopped_at = time.monotonic()
            exit_code = daemon.wait(timeout=90)
            gave_up_after = time.monotonic() - stopped_at
        finally:
            if daemon.poll() is None:
                os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait()
        stderr = log.read_text()
        assert exit_code == 1, stderr[-3000:]
        failure = [line for line in stderr.splitlines() if line.startswith("mysql-cdc: error:")]
        assert failure, stderr[-3000:]
        assert str(kafka_broker) in failure[-1] and "refused the connection" in failure[-1], failure[-1]
        assert "delivery.timeout.ms=6000" in failure[-1] or "offset" in failure[-1], failure[-1]
        assert 3 < gave_up_after < 60  # retried within its limits, then stopped
        assert not written.is_set(), "MySQL kept taking writes while the connector was down"

        kafka_broker.start()  # the broker returns with its log (a restarted broker / container)
        stored_seq, before_restart = assert_offset_covers_only_acknowledged(
            store, kafka_broker, topic, first_seq
        )
        assert before_restart < TRANSACTIONS

        daemon = start_connector(config, log)
        try:
            writer.join(timeout=120)
            assert written.is_set()
            wait_for(lambda: counter.count() >= TRANSACTIONS, 300, "as many records as transactions")
            wait_for(
                lambda: len({i for i, _ in delivered_rows(kafka_broker, topic)}) >= TRANSACTIONS,
                120,
                "every change after the stored offset",
                interval=2.0,
            )
        finally:
            os.killpg(daemon.pid, signal.SIGTERM)
            assert daemon.wait(timeout=60) == 0, log.read_text()[-3000:]
        counter.close()
        final_seq, _ = assert_offset_covers_only_acknowledged(store, kafka_broker, topic, first_seq)
        store.close()

        counts = Counter(i for i, _ in delivered_rows(kafka_broker, topic))
        assert set(counts) == set(range(1, TRANSACTIONS + 1)), "no change may be lost"
        duplicates = sum(n - 1 for n in counts.values())
        # At least once: only records after the stored offset may come twice.
        assert duplicates <= before_restart - (stored_seq - first_seq + 1)
        print(
            f"\nbroker outage: delivered before outage {before_restart}, covered by stored offset "
            f"{stored_seq - first_seq + 1}, gave up after {gave_up_after:.1f}s, delivered twice {duplicates}"
        )


def streaming_starts(log: Path) -> int:
    """How many starts in the connector's log reached streaming."""
    return log.read_text(errors="replace").count("connector.engine: streaming from") if log.exists() else 0


def test_sigkill_repeatedly_never_leaves_the_offset_topic_past_an_unacknowledged_record(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    rows = 15_000
    rng = random.Random(6)
    with LocalMySQLServer(options=FAST_SERVER_OPTIONS) as server:
        props, topic, first_seq = daemon_setup(server, kafka_broker, tmp_path, "killed", 4)
        config = write_config(tmp_path / "connector.properties", props)
        log = tmp_path / "connector.log"
        store = KafkaOffsetStore.from_config(ConnectorConfig.from_mapping(props))
        written = threading.Event()
        writer: threading.Thread | None = None
        checks: list[tuple[int, int]] = []
        kills_mid_stream = 0
        while len(checks) < 6 and not (written.is_set() and len(checks) >= 3):
            streams_before = streaming_starts(log)
            daemon = start_connector(config, log)
            try:
                # Past the instance guard (which may wait for the killed instance's group membership
                # to expire): the kill lands while this start streams.
                wait_for(lambda: streaming_starts(log) > streams_before, 90, "this start streaming")  # noqa: B023
                if writer is None:
                    wait_for(lambda: store.load() is not None, 90, "the first stored offset")
                    # 300 rows/s: the writes outlast at least three starts, each of which may wait seconds for
                    # the killed instance's group membership to expire before it streams.
                    writer = insert_rows(server, "killed", 1, rows, written, per_second=300)
                time.sleep(rng.uniform(2.0, 4.0))
            finally:
                os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait()
            kills_mid_stream += not written.is_set()
            checks.append(assert_offset_covers_only_acknowledged(store, kafka_broker, topic, first_seq))
        assert kills_mid_stream >= 3, "the kills must land while the stream is running"
        assert writer is not None
        writer.join(timeout=120)
        assert written.is_set()
        stored = [seq for seq, _ in checks]
        assert stored == sorted(stored) and stored[-1] > stored[0], f"offsets must advance: {checks}"

        daemon = start_connector(config, log)
        try:
            wait_for(
                lambda: len({i for i, _ in delivered_rows(kafka_broker, topic)}) >= rows,
                300,
                "every row after the last kill",
                interval=2.0,
            )
        finally:
            os.killpg(daemon.pid, signal.SIGTERM)
            assert daemon.wait(timeout=60) == 0, log.read_text()[-3000:]
        assert_offset_covers_only_acknowledged(store, kafka_broker, topic, first_seq)
        store.close()
        counts = Counter(i for i, _ in delivered_rows(kafka_broker, topic))
        assert set(counts) == set(range(1, rows + 1))
        duplicates = sum(n - 1 for n in counts.values())
        print(
            f"\nSIGKILL x{len(checks)} ({kills_mid_stream} mid-stream): stored offsets (GTID seq) {stored}; delivered twice {duplicates}"
        )
