"""The JSON-lines form of records (``mysql_cdc_base.records``): each line is exactly the topic, the key and
value as the JSON converter writes them (``ChangeRecord.key_bytes``/``value_bytes``) and the headers,
whatever mix of tables, record kinds and schema settings a batch holds."""

from __future__ import annotations

import orjson
import pytest

from connector.testing.fake import FakeConnector
from mysql_cdc_base.records import ChangeRecord, jsonl_chunks, jsonl_line, jsonl_lines, jsonl_parts

DDL = (
    "CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2))",
    "CREATE TABLE shop.log (at DATETIME(3), msg TEXT)",  # no key: null record keys
)


def mixed_records() -> list[ChangeRecord]:
    fake = FakeConnector(";\n".join(DDL), topic_prefix="shop")
    records: list[ChangeRecord] = []
    records += fake.insert("shop.items", {"id": 1, "name": "a", "price": "1.50"}, {"id": 2, "name": "b"})
    records += fake.insert("shop.log", {"at": "2024-01-01 10:00:00.5", "msg": "x"})
    records += fake.update("shop.items", {"id": 1, "name": "a"}, {"id": 1, "name": "c"})
    records += fake.update("shop.items", {"id": 2, "name": "b"}, {"id": 7, "name": "b"})  # key change
    records += fake.delete("shop.items", {"id": 7, "name": "b"})  # a delete and its tombstone
    records += fake.delete("shop.log", {"at": "2024-01-01 10:00:00.5", "msg": "x"})
    return records


def expected_line(record: ChangeRecord, key_schemas: bool, value_schemas: bool) -> bytes:
    """The line put together the plain way, from the converter's own bytes."""
    headers = {h: v.decode() for h, v in record.header_items()}
    return (
        b'{"topic":'
        + orjson.dumps(record.topic)
        + b',"key":'
        + (record.key_bytes(key_schemas) or b"null")
        + b',"value":'
        + (record.value_bytes(value_schemas) or b"null")
        + b',"headers":'
        + orjson.dumps(headers)
        + b"}"
    )


@pytest.mark.parametrize(
    ("key_schemas", "value_schemas"), [(True, True), (False, True), (True, False), (False, False)]
)
def test_every_line_is_the_converter_output_of_its_record(key_schemas: bool, value_schemas: bool) -> None:
    records = mixed_records()
    kinds = {(r.key is None, r.value is None, bool(r.headers)) for r in records}
    assert len(kinds) >= 4  # keyed, key-less, tombstone, key-change headers all present
    expected = [expected_line(r, key_schemas, value_schemas) for r in records]
    for _ in range(2):  # the second pass takes the cached frames
        assert jsonl_lines(records, key_schemas, value_schemas).split(b"\n")[:-1] == expected
        assert [jsonl_line(r, key_schemas, value_schemas) for r in records] == expected
    assert b"".join(jsonl_parts(records, key_schemas, value_schemas)) == b"".join(e + b"\n" for e in expected)


@pytest.mark.parametrize("max_pieces", [1, 3, 7, 1024])
def test_chunks_are_whole_lines_and_make_up_the_batch(max_pieces: int) -> None:
    records = mixed_records() * 3  # runs of one table's records share their frames across lines
    chunks = list(jsonl_chunks(records, max_pieces=max_pieces))
    assert b"".join(b"".join(chunk) for chunk in chunks) == jsonl_lines(records)
    assert all(b"".join(chunk).endswith(b"\n") for chunk in chunks)
    # A chunk ends at the first line end at or after max_pieces pieces.
    assert all(len(chunk) < max_pieces + 6 for chunk in chunks)
    if max_pieces == 1:
        assert len(chunks) == len(records)
