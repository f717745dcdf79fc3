"""The Kafka sink's own partitioning of keyed records (``sink.kafka.sink.KeyPartitioner``) chooses the
partition Kafka's default partitioner chooses (kafka-python's murmur2, as Java's ``Utils.murmur2``):
the kept murmur2 state after the key schema's bytes changes nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kafka_murmur2

from mysql_cdc_base.connect import Field, primitive, struct
from sink.kafka.partitioner import KeyPartitioner, murmur2

KEY_SCHEMA = struct(
    "bench.inventory.orders.Key", [Field("id", primitive("int64")), Field("region", primitive("string"))]
)


def key_bytes(payload: bytes) -> bytes:
    return b'{"schema":' + KEY_SCHEMA.json_bytes + b',"payload":' + payload + b"}"


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=80), st.integers(1, 12))
def test_keyed_records_land_where_kafkas_partitioner_puts_them(payload: bytes, partitions: int) -> None:
    partitioner = KeyPartitioner()
    key = key_bytes(payload)
    expected = (kafka_murmur2(key) & 0x7FFFFFFF) % partitions
    ids = list(range(partitions))
    assert partitioner.partition(ids, key, KEY_SCHEMA.json_bytes) == expected
    assert partitioner.partition(ids, key, KEY_SCHEMA.json_bytes) == expected  # from the kept state


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_murmur2_is_kafkas(data: bytes) -> None:
    assert murmur2(data) == kafka_murmur2(data) & 0xFFFFFFFF
    assert KeyPartitioner().murmur2(data, None) == murmur2(data)
