"""What ``spark-apply`` reads: the connector's records round-trip through their Kafka bytes into
the records the connector emitted, and bad input (no schema, not a Debezium event, a key schema
that changes incompatibly) stops the real job with the topic, partition, offset and setting named,
with nothing of that micro-batch committed."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from deltalake import DeltaTable
from kafka import KafkaProducer

from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.records import ChangeRecord, RecordKind
from mysql_cdc_base.table_id import TableId
from sink.base import SinkError
from sink.spark import SparkSink
from sink.spark.apply import MicroBatchApplier, apply_settings
from sink.spark.kafka_records import BadRecordError, KafkaRow, RecordReader
from sink.spark.settings import SparkSinkSettings
from tests.kafka_support import KafkaBroker
from tests.sink.spark_apply_support import ApplyJob, job_properties, table_paths
from tests.sink.spark_support import Emitter, col, make_table

TABLE = make_table(
    "shop",
    "orders",
    [
        col("id", "BIGINT", -5, optional=False),
        col("note", "VARCHAR", 12, length=20),
        col("price", "DECIMAL", 3, length=10, scale=2),
    ],
    primary_key=["id"],
)


def kafka_row(record: ChangeRecord, offset: int, schemas: bool = True) -> KafkaRow:
    return KafkaRow(record.topic, 0, offset, record.key_bytes(schemas), record.value_bytes(schemas))


def change_records() -> list[ChangeRecord]:
    emit = Emitter()
    out = emit.snapshot_rows(TABLE, [(1, "a", "1.50"), (2, "b", "2.00")])
    out += emit.insert(TABLE, (3, "c", "3.25"))
    out += emit.update(TABLE, (3, "c", "3.25"), (30, "c", "3.25"))  # a key change: d, tombstone, c
    out += emit.delete(TABLE, (1, "a", "1.50"))
    out += emit.ddl(TABLE, "ALTER TABLE orders COMMENT 'x'")
    return out


def test_records_read_back_from_their_kafka_bytes_are_the_records_the_connector_emitted() -> None:
    reader = RecordReader()
    records = change_records()
    read = [reader.read(kafka_row(r, i)) for i, r in enumerate(records)]
    for record, got in zip(records, read, strict=True):
        if record.kind is RecordKind.TOMBSTONE:
            assert got is None
            continue
        assert got is not None
        assert got.source == "srv"
        assert got.record.value == orjson.loads(record.value_bytes(False) or b"null")
        assert got.record.value_schema == record.value_schema
        assert got.record.key_schema == record.key_schema
        assert got.record.kind is record.kind
    data = [s for s in read if s is not None and s.record.kind is RecordKind.DATA]
    assert all(s.record.table_id == TableId("shop", "orders") for s in data)
    # Rebuilt offsets order the events as the binlog did, the key change's delete before its create.
    assert [s.record.op for s in sorted(data, key=lambda s: s.order)] == ["r", "r", "c", "d", "c", "d"]
    offsets = [s.record.offset for s in data]
    assert all(o is not None for o in offsets)
    keys = [o.position_key for o in offsets if o is not None]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    # One schema object per distinct schema (the sink caches per object).
    assert len({id(s.record.value_schema) for s in data}) == 1


def test_a_record_without_schema_is_named_with_its_topic_partition_offset_and_the_setting() -> None:
    record = change_records()[2]
    with pytest.raises(BadRecordError) as err:
        RecordReader().read(
            KafkaRow("srv.shop.orders", 3, 17, record.key_bytes(False), record.value_bytes(False))
        )
    text = str(err.value)
    assert "topic srv.shop.orders, partition 3, offset 17" in text
    assert "value.converter.schemas.enable=true" in text


def test_a_key_column_whose_type_changes_incompatibly_is_named() -> None:
    reader = RecordReader()
    first = change_records()[2]
    reader.read(kafka_row(first, 0))
    key = orjson.loads(first.key_bytes() or b"")
    key["schema"]["fields"][0]["type"] = "string"
    key["payload"]["id"] = "3"
    with pytest.raises(BadRecordError) as err:
        reader.read(KafkaRow(first.topic, 0, 1, orjson.dumps(key), first.value_bytes()))
    assert "offset 1" in str(err.value) and "key column id changes type from bigint to string" in str(
        err.value
    )


def test_a_change_event_whose_source_block_names_its_table_with_no_text_is_named() -> None:
    record = change_records()[2]
    for db in ({"not": "text"}, ""):
        value = orjson.loads(record.value_bytes() or b"")
        value["payload"]["source"]["db"] = db
        with pytest.raises(BadRecordError) as err:
            RecordReader().read(KafkaRow(record.topic, 0, 5, record.key_bytes(), orjson.dumps(value)))
        assert "offset 5" in str(err.value) and "source block" in str(err.value)


BAD_VALUES = {
    "no-schema": lambda r: (r.key_bytes(False), r.value_bytes(False), "value.converter.schemas.enable=true"),
    "not-json": lambda r: (r.key_bytes(), b"hello, not json", "is not JSON"),
    "not-debezium": lambda r: (
        r.key_bytes(),
        orjson.dumps(
            {"schema": {"type": "struct", "fields": [], "optional": False, "name": "x.Value"}, "payload": {}}
        ),
        "not a Debezium change event",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("bad", sorted(BAD_VALUES))
def test_bad_input_stops_the_job_naming_where_it_is_and_commits_nothing_of_its_micro_batch(
    bad: str, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    prefix = kafka_broker.unique("bad")
    topic = f"{prefix}.shop.orders"
    good = [r for r in change_records() if r.kind is RecordKind.DATA]
    key, value, expected = BAD_VALUES[bad](good[-1])
    producer = KafkaProducer(bootstrap_servers=str(kafka_broker))
    for record in good[:-1]:
        producer.send(topic, key=record.key_bytes(), value=record.value_bytes(), partition=0)
    producer.send(topic, key=key, value=value, partition=0)
    producer.flush()
    producer.close()
    bad_offset = len(good) - 1

    job = ApplyJob(job_properties(kafka_broker, [prefix], tmp_path / "job"), tmp_path / "job")
    status = job.wait(timeout=600)
    log = job.log()
    assert status == 1, log
    assert f"topic {topic}, partition 0, offset {bad_offset}" in log, log
    assert expected in log, log
    # Nothing of the micro-batch was written: no Delta table, and the checkpoint has no finished batch.
    warehouse = tmp_path / "job" / "warehouse"
    assert not list(warehouse.rglob("_delta_log")), list(warehouse.rglob("*"))
    assert job.committed_batches() == 0


def test_job_settings_name_the_key_that_is_missing_or_wrong() -> None:
    base = {
        "kafka.bootstrap.servers": "127.0.0.1:9092",
        "topics": "srv.shop.orders",
        "sink.spark.warehouse": "/tmp/wh",
        "spark.apply.checkpoint.location": "/tmp/cp",
    }
    assert apply_settings(base).topics == ("srv.shop.orders",)
    cases = {
        "spark.apply.checkpoint.location": {**base, "spark.apply.checkpoint.location": ""},
        "topics": {**base, "topics.regex": "srv.*"},
        "spark.apply.max.offsets.per.trigger": {**base, "spark.apply.max.offsets.per.trigger": "0"},
        "spark.apply.kafka.isolation.level": {
            **base,
            "spark.apply.kafka.isolation.level": "read_uncommitted",
        },
        "sink.spark.table.name.format": {**base, "sink.spark.table.name.format": "{prefix}_{database}"},
    }
    for key, props in cases.items():
        with pytest.raises(ConfigError) as err:
            apply_settings(props)
        assert err.value.key == key, (key, str(err.value))


def test_the_jobs_kafka_reads_wait_10_ms_at_a_partitions_end_unless_spark_apply_kafka_says_otherwise() -> (
    None
):
    base = {
        "kafka.bootstrap.servers": "127.0.0.1:9092",
        "topics": "srv.shop.orders",
        "sink.spark.warehouse": "/tmp/wh",
        "spark.apply.checkpoint.location": "/tmp/cp",
        "spark.apply.kafka.metadata.max.age.ms": "2000",
    }
    assert apply_settings(base).consumer_options() == {
        "fetch.max.wait.ms": "10",
        "metadata.max.age.ms": "2000",
    }
    mine = apply_settings({**base, "spark.apply.kafka.fetch.max.wait.ms": "300"}).consumer_options()
    assert mine["fetch.max.wait.ms"] == "300"


def test_maintenance_properties_reach_the_jobs_tables_and_bad_values_are_refused() -> None:
    base = {
        "kafka.bootstrap.servers": "127.0.0.1:9092",
        "topics": "srv.shop.orders",
        "sink.spark.warehouse": "/tmp/wh",
        "spark.apply.checkpoint.location": "/tmp/cp",
    }
    default = apply_settings(base).sink_settings("srv")
    in_process = SparkSinkSettings("/tmp/wh")
    assert (
        default.optimize_interval_commits,
        default.vacuum_interval_ms,
        default.vacuum_retention_hours,
    ) == (
        in_process.optimize_interval_commits,
        in_process.vacuum_interval_ms,
        in_process.vacuum_retention_hours,
    )
    changed = {
        "sink.spark.optimize.interval.commits": "3",
        "sink.spark.vacuum.interval.ms": "60000",
        "sink.spark.vacuum.retention.hours": "240",
    }
    sink = SparkSink(apply_settings({**base, **changed}).sink_settings("srv"))  # not started: no Spark
    plan = sink._maintenance
    assert (plan.optimize_every, plan.vacuum_interval_s, sink.settings.vacuum_retention_hours) == (
        3,
        60.0,
        240,
    )
    for key in changed:
        with pytest.raises(ConfigError) as err:
            apply_settings({**base, key: "-1"})
        assert err.value.key == key


def test_two_connectors_whose_tables_would_get_one_name_stop_the_job_before_anything_is_written() -> None:
    settings = apply_settings(
        {
            "kafka.bootstrap.servers": "127.0.0.1:9092",
            "topics.regex": "(east|west).*",
            "sink.spark.warehouse": "/tmp/wh",
            "spark.apply.checkpoint.location": "/tmp/cp",
            "sink.spark.table.name.format": "{database}.{table}",
            "sink.spark.changelog.name.format": "{database}.{table}_changelog",
        }
    )
    rows = []
    for prefix in ("east", "west"):
        record = change_records()[2]
        value = orjson.loads(record.value_bytes() or b"")
        value["payload"]["source"]["name"] = prefix
        rows.append(KafkaRow(f"{prefix}.shop.orders", 0, 0, record.key_bytes(), orjson.dumps(value)))
    applier = MicroBatchApplier(None, settings)  # type: ignore[arg-type]  # no Spark: nothing is written
    with pytest.raises(SinkError) as err:
        applier.apply(rows, 0)
    assert "would both be named shop.orders" in str(err.value)
    assert "connector east" in str(err.value) and "connector west" in str(err.value)
    assert not applier.sinks


@pytest.mark.slow
def test_events_an_at_least_once_connector_wrote_twice_are_applied_once(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    prefix = kafka_broker.unique("twice")
    topic = f"{prefix}.shop.orders"
    records = [r for r in change_records() if r.kind is RecordKind.DATA]
    streamed = [r for r in records if r.op != "r"]
    producer = KafkaProducer(bootstrap_servers=str(kafka_broker))
    # The connector restarted after the snapshot and wrote its streamed events again.
    for record in [*records, *streamed]:
        value = orjson.loads(record.value_bytes() or b"")
        value["payload"]["source"]["name"] = prefix
        producer.send(topic, key=record.key_bytes(), value=orjson.dumps(value), partition=0)
    producer.flush()
    producer.close()

    # Five records per micro-batch: one copy arrives in the micro-batch of its original, the others
    # in a later one.
    props = job_properties(
        kafka_broker, [prefix], tmp_path / "job", **{"spark.apply.max.offsets.per.trigger": "5"}
    )
    job = ApplyJob(props, tmp_path / "job")
    try:
        job.wait_caught_up(str(kafka_broker), timeout=600)
    finally:
        assert job.stop() == 0, job.log()
    current, changelog = table_paths(job.settings, prefix, TableId("shop", "orders"))
    events = DeltaTable(changelog.removeprefix("file:")).to_pyarrow_table().to_pylist()
    assert sorted((e["__op"], e["__pos"], e["id"]) for e in events) == sorted(
        (r.op, r.value["source"]["pos"], (r.after or r.before or {})["id"]) for r in records
    )
    rows = DeltaTable(current.removeprefix("file:")).to_pyarrow_table().to_pylist()
    assert sorted(r["id"] for r in rows) == [2, 30]
