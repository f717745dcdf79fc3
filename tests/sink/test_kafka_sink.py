"""The kafka sink against a real Apache Kafka broker (the session's local KRaft broker, or the
docker-compose Kafka): records consumed back with a plain kafka-python consumer are byte-for-byte the jsonl sink's
key/value/headers, keys keep their partition and order, tombstones are null, and broker faults
end in a clear ``SinkError`` instead of lost or reordered records."""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict

import orjson
import pytest
from kafka.partitioner.default import murmur2

from connector.config import ConfigError, ConnectorConfig
from ddl.kafka.client import client_kwargs
from mysql_cdc_base.records import ChangeRecord, RecordKind, jsonl_line
from sink.base import SinkError
from sink.kafka.sink import KafkaSink
from tests.kafka_support import (
    NOT_LEADER_OR_FOLLOWER,
    KafkaBroker,
    consume_all,
    deny_write,
    partitions_of,
    record_count,
    topic_config,
)
from tests.sink.kafka_sink_support import (
    BASE_PROPS,
    Table,
    jsonl_form,
    mixed_stream,
    sink_config,
)

# -- records shaped like the connector's ----------------------------------------------------------


def run_sink(config: ConnectorConfig, records: list[ChangeRecord], batch: int = 100) -> KafkaSink:
    sink = KafkaSink.from_config(config)
    sink.start()
    try:
        for start in range(0, len(records), batch):
            sink.send(records[start : start + batch])
        sink.flush()
    finally:
        sink.close()
    return sink


# -- delivery ------------------------------------------------------------------------------------


def test_consumed_records_equal_the_jsonl_sink_form(kafka_broker: KafkaBroker) -> None:
    prefix = kafka_broker.unique("srv")
    records = mixed_stream(prefix)
    # A real broker auto-creates topics with num.partitions=1: give the keyed tables several, so
    # that the partitioner check below has a choice to get wrong.
    kafka_broker.create_topic(f"{prefix}.inventory.customers", 3)
    kafka_broker.create_topic(f"{prefix}.inventory.orders", 5)
    sink = run_sink(sink_config(kafka_broker), records)
    assert sink.acknowledged == len(records)

    topics = sorted({r.topic for r in records})
    consumed = consume_all(kafka_broker, topics)
    assert len(consumed) == len(records)

    # Same multiset of jsonl lines, and per topic-partition the same order as sent.
    got = sorted(jsonl_form(m.topic, m.key, m.value, m.headers) for m in consumed)
    assert got == sorted(jsonl_line(r) for r in records)

    by_partition: dict[tuple[str, int], list[bytes]] = defaultdict(list)
    for m in consumed:
        by_partition[(m.topic, m.partition)].append(jsonl_form(m.topic, m.key, m.value, m.headers))
    sent_order = {line: i for i, line in enumerate(jsonl_line(r) for r in records)}
    for lines in by_partition.values():
        assert [sent_order[line] for line in lines] == sorted(sent_order[line] for line in lines)

    partition_counts = {t: len(partitions_of(kafka_broker, t)) for t in topics}
    for m in consumed:
        if m.topic in (prefix, f"__debezium-heartbeat.{prefix}"):
            assert m.partition == 0  # pinned like Debezium's heartbeat/schema-change records
        elif m.key is not None:
            # Java's default partitioner: murmur2 of the key bytes, so Connect would agree.
            assert m.partition == (murmur2(m.key) & 0x7FFFFFFF) % partition_counts[m.topic]
    assert max(partition_counts.values()) > 1  # so the check above is not trivially true
    tombstones = [m for m in consumed if m.value is None]
    assert len(tombstones) == sum(1 for r in records if r.kind is RecordKind.TOMBSTONE) == 10
    assert [m.key is None for m in tombstones].count(True) == 1  # the keyless table's
    assert all(m.key is not None for m in tombstones if m.topic != f"{prefix}.inventory.audit_log")
    newkey = [m for m in consumed if any(h[0] == "__debezium.newkey" for h in m.headers)]
    assert len(newkey) == 1 and dict(newkey[0].headers)["__debezium.newkey"] == b'{"id":1000}'


def test_schemas_disabled_writes_bare_payloads(kafka_broker: KafkaBroker) -> None:
    prefix = kafka_broker.unique("bare")
    table = Table(prefix, "items")
    records = [table.change("c", 1, 1), table.change("u", 1, 2), table.change("d", 1, 3), table.tombstone(1)]
    run_sink(
        sink_config(
            kafka_broker,
            **{"key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false"},
        ),
        records,
    )
    consumed = consume_all(kafka_broker, [table.topic])
    assert [(m.key, m.value) for m in consumed] == [
        (r.key_bytes(False), r.value_bytes(False)) for r in records
    ]
    assert orjson.loads(consumed[0].value)["after"]["qty"] == 1
    assert b'"schema"' not in consumed[0].key


def test_per_key_order_holds_across_partitions_and_batches(kafka_broker: KafkaBroker) -> None:
    prefix = kafka_broker.unique("order")
    table = Table(prefix, "counters")
    kafka_broker.create_topic(table.topic, 4)
    records = [table.change("u", key, version) for version in range(1, 201) for key in range(1, 51)]
    run_sink(
        sink_config(
            kafka_broker,
            **{
                "sink.kafka.producer.batch.size": "8192",
                "sink.kafka.producer.linger.ms": "2",
                "sink.kafka.producer.compression.type": "gzip",
            },
        ),
        records,
        batch=333,
    )
    consumed = consume_all(kafka_broker, [table.topic])
    assert len(consumed) == len(records) == 10_000
    versions: dict[int, list[int]] = defaultdict(list)
    partition_of: dict[int, set[int]] = defaultdict(set)
    for m in consumed:
        after = orjson.loads(m.value)["payload"]["after"]
        versions[after["id"]].append(int(after["name"].split("-v")[1].split()[0]))
        partition_of[after["id"]].add(m.partition)
    assert {k: v for k, v in versions.items()} == {k: list(range(1, 201)) for k in range(1, 51)}
    assert all(len(p) == 1 for p in partition_of.values())
    assert len({p for ps in partition_of.values() for p in ps}) > 1  # keys really spread out


# -- backpressure and faults -----------------------------------------------------------------------


def test_reader_waits_while_broker_is_down_and_resumes(
    kafka_broker: KafkaBroker, caplog: pytest.LogCaptureFixture
) -> None:
    prefix = kafka_broker.unique("bp")
    table = Table(prefix, "events")
    config = sink_config(
        kafka_broker,
        **{
            "sink.kafka.producer.buffer.memory": "20000",
            "sink.kafka.producer.delivery.timeout.ms": "60000",
            "sink.kafka.producer.reconnect.backoff.max.ms": "200",
        },
    )
    sink = KafkaSink.from_config(config)
    sink.start()
    first = [table.change("c", i, 1) for i in range(1, 11)]
    sink.send(first)
    sink.flush()

    kafka_broker.stop()
    rest = [table.change("u", i % 10 + 1, 2 + i // 10) for i in range(400)]  # ~400 KB ≫ 20 KB
    progress: list[int] = []
    failure: list[BaseException] = []

    def reader() -> None:
        try:
            for record in rest:
                sink.send([record])
                progress.append(1)
                assert sink._pending_bytes <= 20_000 + 2_000  # bounded by buffer.memory (+1 record)
            sink.flush()
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            failure.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(2.0)
    blocked_at = len(progress)
    assert thread.is_alive() and blocked_at < len(rest)  # the reader is waiting, not buffering
    time.sleep(1.0)
    assert len(progress) == blocked_at
    # The wait is reported: a warning naming the brokers and the topic, and waiting_seconds().
    with caplog.at_level(logging.INFO, logger="sink.kafka"):
        deadline = time.monotonic() + 30
        while not any("waiting" in r.message for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sink.waiting_seconds() > 0 and sink.waits() == 1
        waiting = [r.message for r in caplog.records if "waiting" in r.message]
        assert waiting and table.topic in waiting[0] and str(kafka_broker) in waiting[0]
        assert "refused the connection" in waiting[0] and "delivery.timeout.ms=60000" in waiting[0]

        kafka_broker.start()
        thread.join(60)
    assert not thread.is_alive() and not failure
    assert sink.waiting_seconds() == 0 and sink.waits() == 1
    assert any("acknowledged again" in r.message for r in caplog.records)
    sink.close()

    consumed = consume_all(kafka_broker, [table.topic])
    sent = [jsonl_line(r) for r in first + rest]
    got = [jsonl_form(m.topic, m.key, m.value, m.headers) for m in consumed]
    # Nothing lost; per key in order (a batch the broker took before the outage may appear twice
    # only if it was retried, which acks=all + one request in flight make harmless but possible).
    assert set(got) == set(sent)
    per_key: dict[bytes | None, list[bytes]] = defaultdict(list)
    for m, line in zip(consumed, got, strict=True):
        per_key[m.key].append(line)
    sent_per_key: dict[bytes | None, list[bytes]] = defaultdict(list)
    for r, line in zip(first + rest, sent, strict=True):
        sent_per_key[r.key_bytes()].append(line)
    for key, lines in per_key.items():
        deduped = [line for i, line in enumerate(lines) if i == 0 or line != lines[i - 1]]
        assert deduped == sent_per_key[key]


def test_broker_gone_longer_than_delivery_timeout_fails_naming_broker_and_cause(
    kafka_broker: KafkaBroker,
) -> None:
    table = Table(kafka_broker.unique("down"), "events")
    config = sink_config(
        kafka_broker,
        **{
            "sink.kafka.producer.delivery.timeout.ms": "2500",
            "sink.kafka.producer.request.timeout.ms": "1000",
            "sink.kafka.producer.reconnect.backoff.max.ms": "200",
        },
    )
    sink = KafkaSink.from_config(config)
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
    assert table.topic in message
    assert str(kafka_broker) in message and "refused the connection" in message
    assert "delivery.timeout.ms=2500" in message
    assert 2.0 < elapsed < 15
    assert sink.acknowledged == 1
    with pytest.raises(SinkError):  # sticky: nothing after the failure can be confirmed
        sink.send([table.change("c", 99, 1)])
    sink.close()


def test_new_topic_while_the_broker_is_down_fails_after_max_block_ms(kafka_broker: KafkaBroker) -> None:
    table = Table(kafka_broker.unique("meta"), "events")
    sink = KafkaSink.from_config(sink_config(kafka_broker, **{"sink.kafka.producer.max.block.ms": "1500"}))
    sink.start()
    kafka_broker.stop()
    started = time.monotonic()
    with pytest.raises(SinkError) as failed:
        sink.send([table.change("c", 1, 1)])
    assert time.monotonic() - started < 10
    message = str(failed.value)
    assert f"topic '{table.topic}'" in message and "max.block.ms=1500" in message
    assert "refused the connection" in message
    sink.close()


def test_unreachable_bootstrap_fails_at_start(kafka_broker: KafkaBroker) -> None:
    kafka_broker.stop()
    sink = KafkaSink.from_config(
        sink_config(kafka_broker, **{"sink.kafka.producer.api.version.auto.timeout.ms": "1000"})
    )
    with pytest.raises(SinkError, match="refused the connection") as failed:
        sink.start()
    assert "sink.kafka.bootstrap.servers" in str(failed.value)


def test_retriable_errors_are_retried_without_reordering(mock_kafka: KafkaBroker) -> None:
    # On librdkafka's mock: it answers exactly the next three produce requests with
    # NOT_LEADER_OR_FOLLOWER. A real broker says so only around a leader change, which cannot be
    # aimed at given requests; the broker-loss tests (test_kafka_broker_loss.py) kill real leaders.
    assert mock_kafka.mock is not None
    table = Table("retry", "events")
    mock_kafka.create_topic(table.topic, 1)
    config = sink_config(mock_kafka, **{"sink.kafka.producer.retry.backoff.ms": "50"})
    sink = KafkaSink.from_config(config)
    sink.start()
    sink.send([table.change("c", 1, 1)])
    sink.flush()
    mock_kafka.mock.push_produce_errors(*[NOT_LEADER_OR_FOLLOWER] * 3)
    records = [table.change("u", 1, v) for v in range(2, 300)]
    sink.send(records)
    sink.flush()
    sink.close()
    consumed = consume_all(mock_kafka, [table.topic])
    versions = [
        int(orjson.loads(m.value)["payload"]["after"]["name"].split("-v")[1].split()[0]) for m in consumed
    ]
    assert versions == list(range(1, 300))


def refused_by_the_broker(broker: KafkaBroker, refused_topic: str, expected: str) -> SinkError:
    """One record acknowledged on a writable topic, then one the broker refuses on ``refused_topic``:
    the flush fails naming the topic and the cause, and the refused record is not acknowledged."""
    fine, refused = Table(broker.unique("fine"), "events"), Table(refused_topic, "events")
    sink = KafkaSink.from_config(sink_config(broker))
    sink.start()
    try:
        sink.send([fine.change("c", 1, 1)])
        sink.flush()
        with pytest.raises(SinkError, match=expected) as failed:
            sink.send([refused.change("c", 2, 1)])  # refused here if the metadata says so ...
            sink.flush()  # ... else when the broker answers the produce request
        assert f"topic '{refused.topic}'" in str(failed.value)
        assert str(broker) in str(failed.value)
        assert sink.acknowledged == 1
        with pytest.raises(SinkError):  # sticky: nothing after the refusal can be confirmed
            sink.send([fine.change("c", 3, 1)])
    finally:
        sink.close()
    return failed.value


def test_a_topic_whose_max_message_bytes_is_too_small_stops_the_sink_naming_the_setting(
    kafka_broker: KafkaBroker,
) -> None:
    prefix = kafka_broker.unique("small")
    kafka_broker.create_topic(f"{prefix}.inventory.events", 1, {"max.message.bytes": "500"})
    refused_by_the_broker(kafka_broker, prefix, r"MessageSizeTooLargeError.*max\.message\.bytes")
    assert record_count(kafka_broker, f"{prefix}.inventory.events") == 0


def test_records_that_fit_max_message_bytes_only_one_by_one_are_refused_naming_batch_size(
    kafka_broker: KafkaBroker,
) -> None:
    # kafka-python sends a batch the broker refuses as too large no further (Kafka's Java producer
    # splits it and retries): the message must point at batch.size, and lowering it must work.
    table = Table(kafka_broker.unique("batch"), "events")
    records = [table.change("c", i, 1) for i in range(1, 20)]
    assert all(len(r.key_bytes()) + len(r.value_bytes()) < 2_000 for r in records)
    kafka_broker.create_topic(table.topic, 1, {"max.message.bytes": "6000"})
    with pytest.raises(SinkError, match=r"MessageSizeTooLarge.*lower sink\.kafka\.producer\.batch\.size"):
        run_sink(sink_config(kafka_broker), records)
    assert record_count(kafka_broker, table.topic) == 0
    run_sink(sink_config(kafka_broker, **{"sink.kafka.producer.batch.size": "3000"}), records)
    consumed = consume_all(kafka_broker, [table.topic])
    assert [jsonl_form(m.topic, m.key, m.value, m.headers) for m in consumed] == [
        jsonl_line(r) for r in records
    ]


def test_a_topic_the_connector_may_not_write_stops_the_sink_naming_the_acl(acl_kafka: KafkaBroker) -> None:
    prefix = acl_kafka.unique("denied")
    acl_kafka.create_topic(f"{prefix}.inventory.events", 1)
    deny_write(acl_kafka, f"{prefix}.inventory.events")
    refused_by_the_broker(
        acl_kafka, prefix, "TopicAuthorizationFailedError.*grant the connector's principal WRITE"
    )
    assert record_count(acl_kafka, f"{prefix}.inventory.events") == 0


def test_record_larger_than_max_request_size_is_refused_before_sending(kafka_broker: KafkaBroker) -> None:
    table = Table(kafka_broker.unique("big"), "events")
    sink = KafkaSink.from_config(sink_config(kafka_broker, **{"sink.kafka.producer.max.request.size": "300"}))
    sink.start()
    with pytest.raises(SinkError, match=rf"topic '{table.topic}'.*MessageSizeTooLarge"):
        sink.send([table.change("c", 1, 1)])
    sink.close()


def test_illegal_topic_name_is_a_sink_error(kafka_broker: KafkaBroker) -> None:
    record = ChangeRecord("bad topic/name", None, None, None, {"x": 1})
    sink = KafkaSink.from_config(sink_config(kafka_broker))
    sink.start()
    with pytest.raises(SinkError, match=r"topic 'bad topic/name'.*topic.prefix / topic.delimiter"):
        sink.send([record])
    sink.close()


# -- topic creation ------------------------------------------------------------------------------


def test_topic_creation_settings(kafka_broker: KafkaBroker, caplog: pytest.LogCaptureFixture) -> None:
    prefix = kafka_broker.unique("tc")
    a, b = Table(prefix, "a"), Table(prefix, "b")
    config = sink_config(
        kafka_broker,
        **{
            "topic.creation.default.partitions": "3",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.cleanup.policy": "compact",
        },
    )
    with caplog.at_level(logging.INFO, logger="sink.kafka"):
        run_sink(config, [a.change("c", 1, 1), b.change("c", 1, 1), a.change("c", 2, 1)])
    assert len(consume_all(kafka_broker, [a.topic, b.topic])) == 3
    assert partitions_of(kafka_broker, a.topic) == partitions_of(kafka_broker, b.topic) == {0, 1, 2}
    assert sum("created Kafka topic" in r.message for r in caplog.records) == 2
    assert topic_config(kafka_broker, a.topic)["cleanup.policy"] == "compact"


def test_a_broker_without_create_topics_leaves_creation_to_auto_creation(
    mock_kafka: KafkaBroker, caplog: pytest.LogCaptureFixture
) -> None:
    # On librdkafka's mock: it answers CreateTopics as unsupported, as Kafka before 0.10.1 did.
    # Kafka 4 always has CreateTopics, so a real broker cannot take this path.
    a, b = Table("nocreate", "a"), Table("nocreate", "b")
    config = sink_config(
        mock_kafka,
        **{"topic.creation.default.partitions": "3", "topic.creation.default.replication.factor": "1"},
    )
    with caplog.at_level(logging.INFO, logger="sink.kafka"):
        run_sink(config, [a.change("c", 1, 1), b.change("c", 1, 1), a.change("c", 2, 1)])
    assert len(consume_all(mock_kafka, [a.topic, b.topic])) == 3
    lines = [r.message for r in caplog.records if "CreateTopics" in r.message]
    assert len(lines) == 1  # said once, not per topic
    assert str(mock_kafka) in lines[0] and "topic.creation.default.*" in lines[0]
    assert "auto.create.topics.enable" in lines[0]


# -- configuration -------------------------------------------------------------------------------


def test_partitioner_is_kafkas_murmur2() -> None:
    import random as rnd

    from kafka.partitioner.default import murmur2 as reference

    from sink.kafka.partitioner import java_default_partition, murmur2

    rng = rnd.Random(7)
    for size in range(0, 300):
        data = bytes(rng.randrange(256) for _ in range(size))
        assert murmur2(data) == reference(data) & 0xFFFFFFFF
    # Values from Kafka's own partitioner tests (Utils.murmur2 on these strings).
    assert murmur2(b"21") == (-973932308) & 0xFFFFFFFF
    assert murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8") == (-58897971) & 0xFFFFFFFF
    assert java_default_partition(b"21", [0, 1, 2], [0, 1, 2]) == ((-973932308) & 0x7FFFFFFF) % 3
    assert java_default_partition(None, [0, 1, 2], [1]) == 1


def test_bootstrap_servers_is_required() -> None:
    with pytest.raises(ConfigError, match="sink.kafka.bootstrap.servers") as failed:
        KafkaSink.from_config(ConnectorConfig.from_mapping({**BASE_PROPS, "sink.type": "kafka"}))
    assert failed.value.key == "sink.kafka.bootstrap.servers"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("sink.kafka.producer.sasl.mechansim", "PLAIN", "not a Kafka client setting"),
        ("sink.kafka.producer.acks", "1", "must be all"),
        ("sink.kafka.producer.max.in.flight.requests.per.connection", "5", "must be 1"),
        ("sink.kafka.producer.compression.type", "brotli", "expected none, gzip"),
        ("sink.kafka.producer.linger.ms", "soon", "expected an integer"),
        ("sink.kafka.producer.ssl.truststore.type", "JKS", "PEM"),
        ("sink.kafka.producer.value.serializer", "x", "JSON converter"),
        ("sink.kafka.producer.security.protocol", "TLS", "SASL_SSL"),
        ("topic.creation.default.partitions", "3", "topic.creation.default.replication.factor"),
    ],
)
def test_bad_producer_settings_name_the_key(key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as failed:
        KafkaSink.from_config(sink_config("127.0.0.1:9", **{key: value}))
    expected_key = "topic.creation.default.replication.factor" if key.startswith("topic.") else key
    assert failed.value.key == expected_key


def test_missing_compression_codec_names_the_package() -> None:
    from kafka import codec

    if codec.has_lz4():
        settings = client_kwargs({"compression.type": "lz4"}, "p.")
        assert settings["compression_type"] == "lz4"
    else:
        with pytest.raises(ConfigError, match="needs the Python package lz4"):
            client_kwargs({"compression.type": "lz4"}, "p.")
    assert client_kwargs({"compression.type": "gzip"}, "p.")["compression_type"] == "gzip"
    assert client_kwargs({"compression.type": "none"}, "p.")["compression_type"] is None


def test_security_settings_translate_and_passwords_stay_hidden() -> None:
    kwargs = client_kwargs(
        {
            "security.protocol": "sasl_ssl",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="cdc" password="s3cr3t-Pw";',
            "ssl.truststore.location": "/etc/kafka/ca.pem",
            "ssl.truststore.type": "PEM",
            "ssl.keystore.location": "/etc/kafka/client.pem",
            "ssl.key.password": "k3y-Pw",
            "ssl.endpoint.identification.algorithm": "",
            "batch.size": "65536",
            "compression.type": "gzip",
        },
        "sink.kafka.producer.",
    )
    assert kwargs == {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "cdc",
        "sasl_plain_password": "s3cr3t-Pw",
        "ssl_cafile": "/etc/kafka/ca.pem",
        "ssl_certfile": "/etc/kafka/client.pem",
        "ssl_password": "k3y-Pw",
        "ssl_check_hostname": False,
        "batch_size": 65536,
        "compression_type": "gzip",
    }
    assert "s3cr3t-Pw" not in repr(kwargs) and "k3y-Pw" not in repr(kwargs)


def test_password_never_reaches_logs_or_errors(
    kafka_broker: KafkaBroker, caplog: pytest.LogCaptureFixture
) -> None:
    kafka_broker.stop()  # the connection attempt fails: the error path must not leak either
    config = sink_config(
        kafka_broker,
        **{
            "sink.kafka.producer.security.protocol": "SASL_PLAINTEXT",
            "sink.kafka.producer.sasl.mechanism": "PLAIN",
            "sink.kafka.producer.sasl.plain.username": "cdc",
            "sink.kafka.producer.sasl.plain.password": "Very-Secret-9",
            "sink.kafka.producer.api.version": "2.4",
            "topic.creation.default.partitions": "1",
            "topic.creation.default.replication.factor": "1",
        },
    )
    with caplog.at_level(logging.DEBUG):
        sink = KafkaSink.from_config(config)
        sink.start()
        with pytest.raises(SinkError) as failed:
            sink.send([Table("sec", "t").change("c", 1, 1)])
            sink.flush()
        sink.close()
    assert "Very-Secret-9" not in str(failed.value)
    assert "Very-Secret-9" not in caplog.text
    assert "Very-Secret-9" not in repr(config)
