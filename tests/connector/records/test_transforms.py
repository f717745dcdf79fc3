"""Transforms and custom converters beyond the golden records (tests/golden/test_golden_transforms.py
compares their output with real Debezium): configuration errors at start-up, the same chain in the
embedded engine, the fake and the CLI, offsets of dropped records, and the Python hooks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connector import EmbeddedEngine
from connector.cli.commands import main as cli_main
from connector.config import ConnectorConfig
from connector.delivery.batches import Delivery
from connector.engine import Engine
from connector.records.custom_converters import CONVERTERS, CustomConversion, register_converter
from connector.stores.offsets import MemoryOffsetStore
from connector.testing.fake import FakeConnector
from connector.transforms import TRANSFORMS, Options, build_chain, register_transform
from ddl.model import Column, Table
from mysql_cdc_base.connect import ConnectSchema
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink

UNWRAP = "io.debezium.transforms.ExtractNewRecordState"
KAFKA = "org.apache.kafka.connect.transforms."
BASE = {
    "database.hostname": "127.0.0.1",
    "database.user": "cdc",
    "database.server.id": "9",
    "topic.prefix": "p",
}
ITEMS = "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20), price INT)"


@pytest.mark.parametrize(
    ("props", "key", "words"),
    [
        (
            {"transforms": "x", "transforms.x.type": "com.example.Nope"},
            "transforms.x.type",
            "com.example.Nope",
        ),
        ({"transforms": "x"}, "transforms.x.type", "is required"),
        (
            {"transforms": "x", "transforms.x.type": KAFKA + "Filter", "transforms.x.predicate": "p1"},
            "transforms.x.predicate",
            "p1",
        ),
        (
            {
                "transforms": "x",
                "transforms.x.type": KAFKA + "Filter",
                "predicates": "p1",
                "predicates.p1.type": "Q",
            },
            "predicates.p1.type",
            "unknown predicate class Q",
        ),
        ({"transforms": "x,x", "transforms.x.type": KAFKA + "Filter"}, "transforms", "more than once"),
        (
            {
                "transforms": "x",
                "transforms.x.type": UNWRAP,
                "transforms.x.delete.tombstone.handling.mode": "keep",
            },
            "transforms.x.delete.tombstone.handling.mode",
            "expected one of",
        ),
        (
            {"transforms": "r", "transforms.r.type": KAFKA + "RegexRouter", "transforms.r.regex": "("},
            "transforms.r.regex",
            "regular",
        ),
        (
            {"converters": "c", "c.type": "com.example.Conv"},
            "c.type",
            "unknown converter class com.example.Conv",
        ),
        (
            {
                "transforms": "r",
                "transforms.r.type": "io.debezium.transforms.ByLogicalTableRouter",
                "transforms.r.topic.regex": "a",
                "transforms.r.topic.replacement": "b",
                "transforms.r.schema.name.adjustment.mode": "avro",
            },
            "transforms.r.schema.name.adjustment.mode",
            "only none",
        ),
        (
            {
                "transforms": "i",
                "transforms.i.type": KAFKA + "InsertField$Value",
                "transforms.i.offset.field": "o",
            },
            "transforms.i.offset.field",
            "not supported",
        ),
        (
            {
                "transforms": "u",
                "transforms.u.type": UNWRAP,
                "transforms.u.replace.null.with.default": "false",
            },
            "transforms.u.replace.null.with.default",
            "only true",
        ),
    ],
)
def test_configuration_errors_stop_start_up_naming_the_key(
    props: dict[str, str], key: str, words: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        Engine(ConnectorConfig({**BASE, **props}), sinks=[MemorySink()], offsets=MemoryOffsetStore())
    assert raised.value.key == key
    assert key in str(raised.value) and words in str(raised.value)


def test_cli_refuses_an_unknown_transform_class_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.properties"
    config.write_text(
        "\n".join(
            f"{k}={v}" for k, v in {**BASE, "transforms": "t", "transforms.t.type": "com.acme.Magic"}.items()
        )
    )
    assert cli_main(["run", "--config", str(config), "--set", f"data.dir={tmp_path}"]) == 2
    err = capsys.readouterr().err
    assert "transforms.t.type" in err and "com.acme.Magic" in err


def test_transform_and_converter_keys_are_not_reported_unknown() -> None:
    config = ConnectorConfig(
        {
            **BASE,
            "transforms": "u",
            "transforms.u.type": UNWRAP,
            "predicates": "p",
            "predicates.p.type": KAFKA + "predicates.RecordIsTombstone",
            "converters": "b",
            "b.type": "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter",
            "b.selector": ".*",
            "bb.type": "x",
        }
    )
    assert config.unknown_keys() == ["bb.type"]


def _fake(props: dict[str, str]) -> FakeConnector:
    return FakeConnector(ITEMS, topic_prefix="shop", properties=props)


def test_the_fake_applies_the_same_chain() -> None:
    fake = _fake(
        {
            "transforms": "unwrap,route",
            "transforms.unwrap.type": UNWRAP,
            "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
            "transforms.unwrap.add.fields": "op",
            "transforms.route.type": KAFKA + "RegexRouter",
            "transforms.route.regex": "shop\\.inventory\\.(.*)",
            "transforms.route.replacement": "$1-changes",
        }
    )
    [created] = fake.insert("items", {"id": 1, "name": "pen", "price": 150})
    assert created.topic == "items-changes"
    assert created.value == {"id": 1, "name": "pen", "price": 150, "__deleted": "false", "__op": "c"}
    deleted = fake.delete("items", {"id": 1, "name": "pen", "price": 150})
    assert [r.value for r in deleted] == [
        {"id": 1, "name": "pen", "price": 150, "__deleted": "true", "__op": "d"}
    ]
    assert [r.value for r in fake.events] == [created.value, deleted[0].value]


def test_predicates_and_negate_select_the_records_a_transform_applies_to() -> None:
    fake = FakeConnector(
        [ITEMS, "CREATE TABLE audit (n INT)"],
        topic_prefix="shop",
        properties={
            "transforms": "dropAllButItems",
            "transforms.dropAllButItems.type": KAFKA + "Filter",
            "transforms.dropAllButItems.predicate": "items",
            "transforms.dropAllButItems.negate": "true",
            "predicates": "items",
            "predicates.items.type": KAFKA + "predicates.TopicNameMatches",
            "predicates.items.pattern": ".*\\.items",
        },
    )
    assert fake.insert("audit", {"n": 1}) == []
    assert [r.topic for r in fake.insert("items", {"id": 2})] == ["shop.inventory.items"]


def test_dropped_records_still_advance_the_stored_offset() -> None:
    fake = FakeConnector(ITEMS, topic_prefix="shop")
    records = fake.insert("items", {"id": 1}) + fake.insert("items", {"id": 2})
    offsets = MemoryOffsetStore()
    sink = MemorySink()
    chain = build_chain({"transforms": "all", "transforms.all.type": KAFKA + "Filter"})
    delivery = Delivery([sink], offsets, max_batch=10, interval_s=60, transforms=chain)
    delivery.emit(records)
    delivery.flush()
    assert sink.records == []
    assert records[-1].offset is not None and offsets.load() == records[-1].offset


def test_a_python_transform_can_be_registered() -> None:
    class Upper:
        def __init__(self, options: Options) -> None:
            self.field = options.require("field")

        def apply(self, record: ChangeRecord) -> ChangeRecord | None:
            if record.kind is not RecordKind.DATA or not record.after:
                return record
            after = {**record.after, self.field: str(record.after[self.field]).upper()}
            from dataclasses import replace

            return replace(record, value={**record.value, "after": after})

    register_transform("com.example.Upper", Upper)
    try:
        fake = _fake(
            {"transforms": "up", "transforms.up.type": "com.example.Upper", "transforms.up.field": "name"}
        )
        assert fake.insert("items", {"id": 1, "name": "pen"})[0].after == {
            "id": 1,
            "name": "PEN",
            "price": None,
        }
    finally:
        TRANSFORMS.pop("com.example.Upper")


class CentsToEuros:
    """The custom converter example of docs/guides/configuration.md."""

    def __init__(self, options: Options) -> None:
        selector = options.get_regex("selector")
        assert selector is not None
        self.selector = selector

    def converter_for(self, column: Column, table: Table) -> CustomConversion | None:
        name = f"{table.id.database}.{table.id.table}.{column.name}"
        if column.data_type.upper() != "INT" or not self.selector.fullmatch(name):
            return None
        return CustomConversion(ConnectSchema("float64"), lambda cents: cents / 100)


@pytest.fixture
def euros() -> Iterator[dict[str, str]]:
    register_converter("com.example.CentsToEuros", CentsToEuros)
    yield {
        "converters": "euros",
        "euros.type": "com.example.CentsToEuros",
        "euros.selector": ".*\\.items\\.price",
    }
    CONVERTERS.pop("com.example.CentsToEuros")


def test_a_python_converter_replaces_the_column_schema_and_value(euros: dict[str, str]) -> None:
    fake = _fake(euros)
    [record] = fake.insert("items", {"id": 1, "name": "pen", "price": 150})
    assert record.after == {"id": 1, "name": "pen", "price": 1.5}
    after_schema = record.value_schema.field("after").schema  # type: ignore[union-attr]
    price = after_schema.field("price").schema
    assert (price.type, price.optional) == ("float64", True)
    assert after_schema.field("id").schema.type == "int32"  # not selected


def test_embedded_engine_applies_transforms_and_converters_on_both_paths(
    mysql_server: Any, unique_db: str, euros: dict[str, str]
) -> None:
    mysql_server.execute(ITEMS, "INSERT INTO items VALUES (1, 'pen', 150)", database=unique_db)
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "emb",
            "database.include.list": unique_db,
            "offset.storage": "memory",
            "schema.history.internal": "memory",
            "transforms": "unwrap,insert",
            "transforms.unwrap.type": UNWRAP,
            "transforms.unwrap.delete.tombstone.handling.mode": "delete-to-tombstone",
            "transforms.insert.type": KAFKA + "InsertField$Value",
            "transforms.insert.static.field": "origin",
            "transforms.insert.static.value": "shop-db",
            **euros,
        }
    )
    with EmbeddedEngine(props) as engine:
        mysql_server.execute(
            "INSERT INTO items VALUES (2, 'ink', 99)", "DELETE FROM items WHERE id = 1", database=unique_db
        )
        records = [r for r in engine.drain() if r.topic == f"emb.{unique_db}.items"]
    assert [(r.key, r.value) for r in records] == [
        ({"id": 1}, {"id": 1, "name": "pen", "price": 1.5, "origin": "shop-db"}),  # snapshot
        ({"id": 2}, {"id": 2, "name": "ink", "price": 0.99, "origin": "shop-db"}),  # binlog
        ({"id": 1}, None),  # the delete as a tombstone
    ]
