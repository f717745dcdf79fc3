"""``sink.kafka.client=confluent``: the Kafka sink's librdkafka producer against a real broker.

The same change records through both clients end up as the same (topic, partition, key, value,
headers) sequences; failures name the topic and the setting as the kafka-python sink's do; the
Java-named producer settings reach librdkafka or are refused naming the key; passwords stay out of
logs and errors; the transactional primitives commit, abort and fence.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.partitioner.default import murmur2

from connector.config import ConfigError, ConnectorConfig
from connector.engine import Engine
from connector.factories import build_sinks
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.records import ChangeRecord, jsonl_line
from sink.base import Sink, SinkError, TransactionAbandonedError
from sink.kafka.confluent import ConfluentKafkaSink, confluent_settings
from sink.kafka.sink import KafkaSink
from tests.kafka_support import KafkaBroker, consume_all, partitions_of
from tests.sink.kafka_sink_support import Table, jsonl_form, mixed_stream, sink_config

Row = tuple[str, int, bytes | None, bytes | None, tuple[tuple[str, bytes], ...]]

CLIENTS: dict[str, Callable[[ConnectorConfig], Sink]] = {
    "kafka-python": KafkaSink.from_config,
    "confluent": ConfluentKafkaSink.from_config,
}


def confluent_config(bootstrap: str, **extra: str) -> ConnectorConfig:
    return sink_config(bootstrap, **{"sink.kafka.client": "confluent", **extra})


def client_sink(bootstrap: str, client: str, **producer: str) -> Any:
    """The kafka sink of ``client`` with ``sink.kafka.producer.<key>`` settings (``_`` for ``.``)."""
    settings = {f"sink.kafka.producer.{k.replace('_', '.')}": v for k, v in producer.items()}
    return CLIENTS[client](sink_config(bootstrap, **{"sink.kafka.client": client, **settings}))


def deliver(sink: Sink, records: list[ChangeRecord], batch: int = 100) -> None:
    sink.start()
    try:
        for start in range(0, len(records), batch):
            sink.send(records[start : start + batch])
        sink.flush()
    finally:
        sink.close()


def create_topic(bootstrap: str, name: str, partitions: int, **configs: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs)])
    finally:
        admin.close()


# -- the same records ------------------------------------------------------------------------------


def test_both_clients_write_the_same_records(kafka_broker: KafkaBroker) -> None:
    prefix = kafka_broker.unique("same")
    records = mixed_stream(prefix)
    topics = sorted({r.topic for r in records})
    create_topic(kafka_broker, f"{prefix}.inventory.customers", 4)
    create_topic(kafka_broker, f"{prefix}.inventory.orders", 3)
    create_topic(kafka_broker, f"__debezium-heartbeat.{prefix}", 3)  # pinned to 0 all the same

    # One client after the other into the same topics: per partition, the kafka-python records
    # come first, the confluent ones after them.
    python_sink = KafkaSink.from_config(sink_config(kafka_broker))
    deliver(python_sink, records)
    confluent_sink = build_sinks(confluent_config(kafka_broker))[0]
    assert isinstance(confluent_sink, ConfluentKafkaSink)
    deliver(confluent_sink, records, batch=37)
    assert python_sink.acknowledged == confluent_sink.acknowledged == len(records)

    consumed = consume_all(kafka_broker, topics)
    assert len(consumed) == 2 * len(records)
    per_partition: dict[tuple[str, int], list[Row]] = defaultdict(list)
    for m in consumed:
        per_partition[(m.topic, m.partition)].append(
            (m.topic, m.partition, m.key, m.value, tuple((k, v) for k, v in m.headers))
        )
    by_python: list[Row] = []
    by_confluent: list[Row] = []
    for rows in per_partition.values():
        assert len(rows) % 2 == 0, rows[:2]
        by_python += rows[: len(rows) // 2]
        by_confluent += rows[len(rows) // 2 :]
    assert by_confluent == by_python  # same topic, partition, key, value, headers, in order

    # And both are what was sent: the jsonl sink's bytes, in send order per partition, with Java's
    # partitioner for keys and partition 0 for heartbeats and schema changes.
    sent_order = {line: i for i, line in enumerate(jsonl_line(r) for r in records)}
    lines = [jsonl_form(t, k, v, list(h)) for t, _, k, v, h in by_confluent]
    assert sorted(lines) == sorted(sent_order)
    counts = {t: len(partitions_of(kafka_broker, t)) for t in topics}
    for topic, partition, key, _, _ in by_confluent:
        if topic in (prefix, f"__debezium-heartbeat.{prefix}"):
            assert partition == 0
        elif key is not None:
            assert partition == (murmur2(key) & 0x7FFFFFFF) % counts[topic]
    assert {p for t, p, *_ in by_confluent if t == f"{prefix}.inventory.customers"} == {0, 1, 2, 3}
    for (_topic, _partition), rows in per_partition.items():
        order = [sent_order[jsonl_form(t, k, v, list(h))] for t, _, k, v, h in rows[len(rows) // 2 :]]
        assert order == sorted(order)


def test_engine_streams_through_librdkafka_what_it_writes_to_jsonl(
    mysql_server: MySQLServerHandle, unique_db: str, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    """The connector configured with sink.type=kafka,jsonl and sink.kafka.client=confluent: the
    topics hold the jsonl file's records, byte for byte, each partition in emission order."""
    prefix = kafka_broker.unique("eng")
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40), qty INT)",
        "CREATE TABLE notes (body TEXT)",
        database=db,
    )
    create_topic(kafka_broker, f"{prefix}.{db}.items", 3)
    config = ConnectorConfig.from_mapping(
        mysql_server.connector_properties(
            **{
                "topic.prefix": prefix,
                "database.include.list": db,
                "data.dir": str(tmp_path),
                "sink.type": "kafka,jsonl",
                "sink.kafka.bootstrap.servers": kafka_broker,
                "sink.kafka.client": "confluent",
                "max.batch.size": "50",
            }
        )
    )
    engine = Engine(config)
    assert [type(s).__name__ for s in engine.sinks] == ["ConfluentKafkaSink", "JsonlSink"]
    engine.catch_up(60)
    with mysql_server.connect(db) as conn, conn.cursor() as cur:
        for i in range(1, 201):
            cur.execute("INSERT INTO items VALUES (%s, %s, %s)", (i, f"item {i} ü", i))
            cur.execute("INSERT INTO notes VALUES (%s)", (f"note {i}",))
        cur.execute("UPDATE items SET qty = qty + 1 WHERE id % 3 = 0")
        cur.execute("DELETE FROM items WHERE id > 180")
        conn.commit()
    engine.catch_up(60)
    engine.close()

    jsonl_lines = (tmp_path / "events.jsonl").read_bytes().splitlines()
    topics = sorted({orjson.loads(line)["topic"] for line in jsonl_lines})
    consumed = consume_all(kafka_broker, topics)
    kafka_lines = [jsonl_form(m.topic, m.key, m.value, m.headers) for m in consumed]
    assert len(jsonl_lines) > 480  # 400 inserts, 66 updates, 20 deletes and their tombstones, DDL
    assert sorted(kafka_lines) == sorted(jsonl_lines)
    emitted_at = {line: i for i, line in enumerate(jsonl_lines)}
    per_partition: dict[tuple[str, int], list[int]] = defaultdict(list)
    for m, line in zip(consumed, kafka_lines, strict=True):
        per_partition[(m.topic, m.partition)].append(emitted_at[line])
    assert all(order == sorted(order) for order in per_partition.values())
    assert {p for t, p in per_partition if t == f"{prefix}.{db}.items"} == {0, 1, 2}


# -- failures ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_topic_refusing_large_records_fails_naming_topic_and_setting(
    kafka_broker: KafkaBroker, client: str
) -> None:
    table = Table(kafka_broker.unique("small"), "events")
    create_topic(kafka_broker, table.topic, 1, **{"max.message.bytes": "600"})
    sink = client_sink(kafka_broker, client)
    sink.start()
    sink.send([table.change("c", i, 1) for i in range(1, 6)])  # ~1.5 KB each with schemas
    with pytest.raises(SinkError) as failed:
        sink.flush()
    message = str(failed.value)
    assert f"topic '{table.topic}'" in message and str(kafka_broker) in message
    assert "max.message.bytes" in message and "max.request.size" in message
    with pytest.raises(SinkError) as again:  # sticky: no offset can be stored past it
        sink.send([table.change("c", 9, 1)])
    assert str(again.value) == message
    sink.close()
    assert consume_all(kafka_broker, [table.topic]) == []


def test_record_larger_than_max_request_size_is_refused_before_sending(kafka_broker: KafkaBroker) -> None:
    table = Table(kafka_broker.unique("big"), "events")
    sink = ConfluentKafkaSink.from_config(
        confluent_config(kafka_broker, **{"sink.kafka.producer.max.request.size": "1000"})
    )
    sink.start()
    with pytest.raises(SinkError) as failed:
        sink.send([table.change("c", 1, 1)])
    message = str(failed.value)
    assert f"topic '{table.topic}'" in message and "max.request.size" in message
    sink.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_broker_gone_longer_than_delivery_timeout_fails_naming_it(
    kafka_broker: KafkaBroker, client: str
) -> None:
    table = Table(kafka_broker.unique("down"), "events")
    sink = client_sink(
        kafka_broker,
        client,
        delivery_timeout_ms="2500",
        request_timeout_ms="1000",
        reconnect_backoff_max_ms="200",
    )
    sink.start()
    sink.send([table.change("c", 1, 1)])
    sink.flush()
    kafka_broker.stop()
    started = time.monotonic()
    sink.send([table.change("c", i, 1) for i in range(2, 50)])
    with pytest.raises(SinkError) as failed:
        sink.flush()
    elapsed = time.monotonic() - started
    message = str(failed.value)
    assert f"topic '{table.topic}'" in message and "delivery.timeout.ms=2500" in message
    assert "refused the connection" in message
    assert 2.0 < elapsed < 15
    assert sink.acknowledged == 1
    with pytest.raises(SinkError):
        sink.send([table.change("c", 99, 1)])
    sink.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_reader_waits_within_buffer_memory_while_broker_is_down(
    kafka_broker: KafkaBroker, client: str
) -> None:
    table = Table(kafka_broker.unique("bp"), "events")
    sink = client_sink(
        kafka_broker,
        client,
        buffer_memory="20000",
        delivery_timeout_ms="60000",
        reconnect_backoff_max_ms="200",
    )
    sink.start()
    first = [table.change("c", i, 1) for i in range(1, 11)]
    sink.send(first)
    sink.flush()

    kafka_broker.stop()
    rest = [table.change("u", i % 10 + 1, 2 + i // 10) for i in range(400)]  # ~600 KB ≫ 20 KB
    progress: list[int] = []
    failure: list[BaseException] = []

    def reader() -> None:
        try:
            for record in rest:
                sink.send([record])
                progress.append(1)
            sink.flush()
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            failure.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(2.0)
    blocked_at = len(progress)
    assert thread.is_alive() and blocked_at < 40  # 20 KB holds about a dozen records
    time.sleep(1.0)
    assert len(progress) == blocked_at

    kafka_broker.start()
    thread.join(90)
    assert not thread.is_alive() and not failure, failure
    sink.close()
    got = [jsonl_form(m.topic, m.key, m.value, m.headers) for m in consume_all(kafka_broker, [table.topic])]
    # One partition: all of it, in order. A request the broker wrote as it went down may have been
    # retried (at least once), so a record may follow its own copy, never overtake a later one.
    assert [line for i, line in enumerate(got) if line not in got[max(0, i - 100) : i]] == [
        jsonl_line(r) for r in first + rest
    ]


# -- settings --------------------------------------------------------------------------------------


def test_java_settings_become_librdkafka_properties() -> None:
    sink = ConfluentKafkaSink.from_config(
        confluent_config(
            "127.0.0.1:9",
            **{
                f"sink.kafka.producer.{k}": v
                for k, v in {
                    "security.protocol": "SASL_SSL",
                    "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                    'required username="cdc" password="s3cr3t-Pw";',
                    "ssl.truststore.location": "/etc/kafka/ca.pem",
                    "ssl.truststore.type": "PEM",
                    "ssl.endpoint.identification.algorithm": "",
                    "compression.type": "zstd",
                    "max.request.size": "2097152",
                    "buffer.memory": "1048576",
                    "send.buffer.bytes": "-1",
                    "delivery.timeout.ms": "90000",
                    "linger.ms": "20",
                }.items()
            },
        )
    )
    config = sink.producer_config()
    expected = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "cdc",
        "sasl.password": "s3cr3t-Pw",
        "ssl.ca.location": "/etc/kafka/ca.pem",
        "ssl.endpoint.identification.algorithm": "none",
        "compression.type": "zstd",
        "message.max.bytes": "2097152",
        "queue.buffering.max.kbytes": 1024,
        "socket.send.buffer.bytes": "0",
        "delivery.timeout.ms": 90000,
        "linger.ms": "20",
        "acks": "all",
        "max.in.flight.requests.per.connection": 1,
        "partitioner": "murmur2_random",
    }
    assert {k: config[k] for k in expected} == expected
    assert "s3cr3t-Pw" not in repr(config)
    # The admin client that creates topics has the same identity, in kafka-python's terms.
    assert sink.settings.admin_kwargs["sasl_plain_password"] == "s3cr3t-Pw"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("max.block.ms", "1000", "does not apply to sink.kafka.client=confluent"),
        ("api.version", "2.8", "does not apply to sink.kafka.client=confluent"),
        ("sasl.kerberos.domain.name", "EXAMPLE.COM", "does not apply to sink.kafka.client=confluent"),
        ("max.request.size", "500", "at least 1000"),
        ("acks", "1", "must be all"),
        ("max.in.flight.requests.per.connection", "5", "must be 1"),
        ("compression.type", "brotli", "expected none, gzip"),
        ("ssl.truststore.type", "JKS", "PEM"),
        ("transactional.id", "x", "cannot be set"),
        ("queue.buffering.max.ms", "5", "is not a Kafka client setting"),
    ],
)
def test_settings_that_do_not_apply_are_refused_naming_the_key(key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as failed:
        ConfluentKafkaSink.from_config(
            confluent_config("127.0.0.1:9", **{f"sink.kafka.producer.{key}": value})
        )
    assert failed.value.key == f"sink.kafka.producer.{key}"


def test_client_setting_picks_the_producer() -> None:
    assert type(build_sinks(sink_config("127.0.0.1:9"))[0]) is KafkaSink
    assert type(build_sinks(confluent_config("127.0.0.1:9"))[0]) is ConfluentKafkaSink
    with pytest.raises(ConfigError) as failed:
        build_sinks(sink_config("127.0.0.1:9", **{"sink.kafka.client": "librdkafka"}))
    assert failed.value.key == "sink.kafka.client"


def test_unreachable_bootstrap_fails_at_start(kafka_broker: KafkaBroker) -> None:
    kafka_broker.stop()
    sink = ConfluentKafkaSink.from_config(confluent_config(kafka_broker))
    with pytest.raises(SinkError, match="refused the connection") as failed:
        sink.start()
    assert "sink.kafka.bootstrap.servers" in str(failed.value)


def test_password_never_reaches_logs_or_errors(
    kafka_broker: KafkaBroker, caplog: pytest.LogCaptureFixture
) -> None:
    # SASL against a plaintext listener: the handshake fails and librdkafka logs and retries.
    config = confluent_config(
        kafka_broker,
        **{
            "sink.kafka.producer.security.protocol": "SASL_PLAINTEXT",
            "sink.kafka.producer.sasl.mechanism": "PLAIN",
            "sink.kafka.producer.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule "
            'required username="cdc" password="Very-Secret-9";',
            "sink.kafka.producer.delivery.timeout.ms": "3000",
        },
    )
    with caplog.at_level(logging.DEBUG):
        sink = ConfluentKafkaSink.from_config(config)
        with pytest.raises(SinkError) as failed:
            sink.start()
            sink.send([Table(kafka_broker.unique("sec"), "t").change("c", 1, 1)])
            sink.flush()
        sink.close()
    assert caplog.text  # librdkafka's complaints did reach the log
    assert "Very-Secret-9" not in str(failed.value)
    assert "Very-Secret-9" not in caplog.text
    assert "Very-Secret-9" not in repr(sink.producer_config())


# -- transactions ----------------------------------------------------------------------------------


def committed(bootstrap: str, topic: str) -> list[bytes | None]:
    """The values a read_committed consumer sees in a one-partition topic."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level="read_committed",
        enable_auto_commit=False,
        group_id=None,
    )
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]  # the last stable offset under read_committed
        values: list[bytes | None] = []
        deadline = time.monotonic() + 30
        while consumer.position(tp) < end and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                values.extend(m.value for m in batch)
        return values
    finally:
        consumer.close()


def test_transactions_commit_abort_and_fence(kafka_broker: KafkaBroker) -> None:
    """The sink's transactions as exactly once drives them (sink.base.TransactionalSink)."""
    table = Table(kafka_broker.unique("txn"), "events")
    create_topic(kafka_broker, table.topic, 1)
    txn_id = kafka_broker.unique("cdc-txn")
    first = ConfluentKafkaSink(confluent_settings(confluent_config(kafka_broker)))
    first.enable_transactions(txn_id, "orders")
    first.start()
    assert first.transactions is not None

    offsets = kafka_broker.unique("offsets")
    create_topic(kafka_broker, offsets, 1)
    kept = [table.change("c", i, 1) for i in range(1, 4)]
    first.send(kept)  # begins a transaction
    first.add_to_transaction(offsets, b'["cdc",{"server":"srv"}]', b'{"pos":3}')
    first.commit_transaction()
    dropped = [table.change("c", i, 1) for i in range(10, 14)]
    first.send(dropped)
    first.add_to_transaction(offsets, b'["cdc",{"server":"srv"}]', b'{"pos":13}')
    first.flush()  # on the broker, but in a transaction that is then abandoned
    first.restart_transactions()  # a new producer with the same id aborts it
    assert committed(kafka_broker, table.topic) == [r.value_bytes() for r in kept]
    assert committed(kafka_broker, offsets) == [b'{"pos":3}']  # the offset went with its records

    # A second producer with the same transactional.id fences the first.
    first.send([table.change("c", 20, 1)])
    second = ConfluentKafkaSink(first.settings)
    second.enable_transactions(txn_id, "orders")
    second.start()  # initialising its transactions fences the first
    with pytest.raises(SinkError, match="connector 'orders' was fenced") as fenced:
        first.commit_transaction()
    assert txn_id in str(fenced.value)
    after = [table.change("c", 30, 1)]
    second.send(after)
    second.commit_transaction()
    first.close()
    second.close()
    assert committed(kafka_broker, table.topic) == [r.value_bytes() for r in kept + after]


def test_a_transaction_whose_records_time_out_is_abandoned_and_sent_again(kafka_broker: KafkaBroker) -> None:
    """The brokers gone longer than delivery.timeout.ms mid-transaction: under exactly once the
    failure is ``TransactionAbandonedError`` (none of it is visible, so the connector's delivery
    restarts the producer and sends it again), as kafka-python's; then a new producer sends it once."""
    table = Table(kafka_broker.unique("lapse"), "events")
    create_topic(kafka_broker, table.topic, 1)
    producer = {
        "delivery.timeout.ms": "2500",
        "request.timeout.ms": "1000",
        "reconnect.backoff.max.ms": "200",
    }
    sink = ConfluentKafkaSink(
        confluent_settings(
            confluent_config(kafka_broker, **{f"sink.kafka.producer.{k}": v for k, v in producer.items()})
        )
    )
    sink.enable_transactions(kafka_broker.unique("cdc-txn"), "orders")
    sink.start()
    kept = [table.change("c", i, 1) for i in range(1, 4)]
    sink.send(kept)
    sink.commit_transaction()
    lapsed = [table.change("c", i, 1) for i in range(10, 20)]
    kafka_broker.stop()
    try:
        sink.send(lapsed)
        with pytest.raises(TransactionAbandonedError, match=r"delivery\.timeout\.ms=2500"):
            sink.flush()  # a delivery report, before any commit (as while the connector sends)
    finally:
        kafka_broker.start()
    sink.restart_transactions()  # a new producer with the same transactional.id
    sink.send(lapsed)
    sink.commit_transaction()
    sink.close()
    assert committed(kafka_broker, table.topic) == [r.value_bytes() for r in kept + lapsed]
