"""The sample consumer tested with the mysql-cdc pytest plugin three ways - against the live
connector, the database-free fake, and the connector's JSON-lines output - which see identical events.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from mysql_cdc_base.records import ChangeRecord, RecordKind, jsonl_line
from tests.embedded.sample_consumer.orders import OrderBook
from tests.embedded.sample_consumer.scenario import (
    EXPECTED_REVENUE,
    EXPECTED_SUMMARY,
    SHOP_DDL,
    FakeShop,
    SqlShop,
    play,
)

Message = tuple[str, bytes | None, bytes | None]


def from_records(records: list[ChangeRecord]) -> list[Message]:
    """What a Kafka consumer would receive for the connector's records."""
    return [(r.topic, r.key_bytes(), r.value_bytes()) for r in records]


def from_jsonl(path: Path) -> list[Message]:
    """The same messages read back from a ``sink.type=jsonl`` file."""
    out: list[Message] = []
    for line in path.read_bytes().splitlines():
        event = orjson.loads(line)
        key, value = event["key"], event["value"]
        out.append(
            (
                event["topic"],
                None if key is None else orjson.dumps(key),
                None if value is None else orjson.dumps(value),
            )
        )
    return out


def consume(messages: list[Message], prefix: str, database: str) -> OrderBook:
    book = OrderBook(prefix, database)
    for topic, key, value in messages:
        book.handle(topic, key, value)
    return book


def run_live(server: Any, database: str) -> None:
    server.execute(*SHOP_DDL, database=database)
    shop = SqlShop(server, database)
    try:
        play(shop)
    finally:
        shop.close()


def test_order_book_against_the_live_connector(cdc_mysql, cdc_database, cdc_connector):
    run_live(cdc_mysql, cdc_database)
    book = consume(from_records(cdc_connector.drain()), "cdc", cdc_database)
    assert book.summary() == EXPECTED_SUMMARY
    assert book.revenue() == EXPECTED_REVENUE


def test_order_book_against_the_fake(cdc_fake):
    fake = cdc_fake(SHOP_DDL, database="shop")  # no server involved
    play(FakeShop(fake))
    book = consume(from_records(fake.events), "cdc", "shop")
    assert book.summary() == EXPECTED_SUMMARY
    assert book.revenue() == EXPECTED_REVENUE


def test_order_book_against_the_jsonl_output(cdc_mysql, cdc_database, cdc_engine_factory, tmp_path):
    out = tmp_path / "events.jsonl"
    engine = cdc_engine_factory({"sink.type": "jsonl", "sink.jsonl.path": str(out)})
    run_live(cdc_mysql, cdc_database)
    engine.drain()
    engine.stop()
    book = consume(from_jsonl(out), "cdc", cdc_database)
    assert book.summary() == EXPECTED_SUMMARY
    assert book.revenue() == EXPECTED_REVENUE


SERVER_AND_CLOCK = ("ts_ms", "ts_us", "ts_ns", "file", "pos", "gtid", "server_id", "thread")


def comparable(message: Message, headers: dict[str, str]) -> dict[str, Any]:
    """A message without what depends on the server and the clock (source position, times, run id)."""
    topic, key, value = message
    decoded = orjson.loads(value) if value is not None else None
    payload = decoded.get("payload") if decoded else None
    if isinstance(payload, dict):
        for name in ("ts_ms", "ts_us", "ts_ns"):
            payload.pop(name, None)
        for name in SERVER_AND_CLOCK:
            (payload.get("source") or {}).pop(name, None)
    return {
        "topic": topic,
        "key": orjson.loads(key) if key is not None else None,
        "value": decoded,
        "headers": {k: v for k, v in headers.items() if k != "__debezium.context.runId"},
    }


def test_live_fake_and_jsonl_see_identical_events(
    cdc_mysql, cdc_database, cdc_engine_factory, cdc_fake, tmp_path
):
    out = tmp_path / "events.jsonl"
    engine = cdc_engine_factory({"sink.type": "jsonl", "sink.jsonl.path": str(out)})
    startup = len(engine.drain())  # the start-up schema events (SET, CREATE DATABASE, USE ...)
    run_live(cdc_mysql, cdc_database)
    live_records = engine.drain()
    engine.stop()

    fake = cdc_fake(database=cdc_database, flavor=cdc_mysql.flavor)
    for statement in SHOP_DDL:
        fake.ddl(statement)  # the tables are created after the connector started, as on the server
    play(FakeShop(fake))

    jsonl_lines = out.read_bytes().splitlines()
    # the file holds exactly what the application was handed, byte for byte
    assert jsonl_lines == [jsonl_line(r) for r in engine.events]
    headers_of = [{h: v.decode() for h, v in r.header_items()} for r in live_records]
    live = [comparable(m, h) for m, h in zip(from_records(live_records), headers_of, strict=True)]
    from_file = [
        comparable(m, orjson.loads(line)["headers"])
        for m, line in zip(from_jsonl(out)[startup:], jsonl_lines[startup:], strict=True)
    ]
    faked = [
        comparable(m, {h: v.decode() for h, v in r.header_items()})
        for m, r in zip(from_records(fake.events), fake.events, strict=True)
    ]

    assert len(live) == len(fake.events) == len(jsonl_lines) - startup
    assert [r.kind for r in live_records].count(RecordKind.SCHEMA_CHANGE) == 2
    assert sum(r.kind == RecordKind.DATA for r in live_records) == 16
    assert live == from_file
    for index, (ours, theirs) in enumerate(zip(faked, live, strict=True)):
        assert ours == theirs, f"event #{index} differs between the fake and the connector"
    # and the application's view agrees
    books = [
        consume(m, "cdc", cdc_database)
        for m in (from_records(live_records), from_jsonl(out), from_records(fake.events))
    ]
    assert [b.summary() for b in books] == [EXPECTED_SUMMARY] * 3
    assert [b.handled for b in books] == [16, 16, 16]
