"""``topic.naming.strategy``, ``topic.cache.size``, ``topic.heartbeat.name`` and the name adjusters
(``connector/records/topic_naming.py``): the rules taken from Debezium 3.6's source at their edges
(the golden tests compare whole runs with real Debezium: ``tests/golden/test_golden_naming.py``),
and Python strategy plugins loaded by ``package.module:Class`` and by entry point, driving the
topics of a real run; a plugin that cannot be used stops start-up naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from connector.cli import main
from connector.config import ConfigError, ConnectorConfig
from connector.records.builder import EventBuilder
from connector.records.topic_naming import (
    DefaultTopicNamingStrategy,
    DefaultUnicodeTopicNamingStrategy,
    NameAdjuster,
    field_name_adjuster,
    schema_name_adjuster,
    topic_naming_strategy,
)
from connector.sources.heartbeat import heartbeat_topic
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.table_id import TableId
from sink.memory import MemorySink
from tests.connector.naming_plugins import (
    BASE,
    RoutingStrategy,
    names_the_key,
    plugin_engine,
    write_naming_dist,
)

PLUGIN = "tests.connector.naming_plugins:RoutingStrategy"


def config(**props: str) -> ConnectorConfig:
    return ConnectorConfig.from_mapping({**BASE, **{k.replace("_", "."): v for k, v in props.items()}})


def strategy(cls: type[DefaultTopicNamingStrategy], **props: str) -> DefaultTopicNamingStrategy:
    s = cls()
    s.configure({**BASE, **props})
    return s


def test_the_default_strategy_replaces_what_kafka_rejects_with_underscores() -> None:
    s = strategy(DefaultTopicNamingStrategy)
    assert s.data_change_topic(TableId("in_v", "t-ü 1")) == "shop.in_v.t-__1"
    assert s.data_change_topic(TableId("db", "😀")) == "shop.db.__"  # two UTF-16 code units
    assert s.schema_change_topic() == "shop"
    assert s.transaction_topic() == "shop.transaction"
    assert s.heartbeat_topic() == "__debezium-heartbeat.shop"


def test_the_unicode_strategy_escapes_the_underscore_and_each_utf16_unit() -> None:
    s = strategy(DefaultUnicodeTopicNamingStrategy, **{"topic.delimiter": "-"})
    # Integer.toHexString, padded with "00" only up to two digits (U+0100 has three).
    assert s.data_change_topic(TableId("in_v", "é\u0100中")) == "shop-in_u005fv-_u00e9_u100_u4e2d"
    assert s.data_change_topic(TableId("db", "😀")) == "shop-db-_ud83d_ude00"
    assert s.transaction_topic() == "shop-transaction"  # named as configured, not sanitised


def test_long_names_are_cut_to_kafkas_limit_and_the_cache_keeps_only_its_size() -> None:
    s = strategy(DefaultTopicNamingStrategy, **{"topic.cache.size": "2"})
    long = s.data_change_topic(TableId("db", "x" * 300))
    assert long == ("shop.db." + "x" * 300)[:249]
    for n in range(5):
        assert s.data_change_topic(TableId("db", f"t{n}")) == f"shop.db.t{n}"
    assert len(s._names) == 2


def test_the_heartbeat_topic_follows_name_prefix_and_delimiter() -> None:
    assert heartbeat_topic(config(**{"topic.heartbeat.prefix": "hb", "topic.delimiter": "-"})) == "hb-shop"
    assert heartbeat_topic(config(**{"topic.heartbeat.name": "shared-beats"})) == "shared-beats"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("topic.delimiter", "/", "has invalid format"),
        ("topic.transaction", "tx log", "has invalid format"),
        ("topic.heartbeat.name", "a:b", "has invalid format"),
        ("topic.naming.strategy", "io.debezium.schema.SchemaTopicNamingStrategy", "by schema"),
        ("topic.naming.strategy", "io.debezium.schema.Other", "not a Debezium strategy for MySQL"),
        ("topic.naming.strategy", "no_such_module_xyz:S", "cannot import 'no_such_module_xyz'"),
        ("topic.naming.strategy", "tests.connector.naming_plugins:NoHeartbeat", "missing data_change_topic"),
        (
            "topic.naming.strategy",
            "tests.connector.naming_plugins:FailsToConfigure",
            "routing.suffix is missing",
        ),
        ("topic.naming.strategy", "nothing-installed", "not an entry point"),
    ],
)
def test_a_strategy_that_cannot_be_used_names_the_key(key: str, value: str, message: str) -> None:
    with names_the_key(key, message):
        EventBuilder(config(**{key: value}))


@pytest.mark.parametrize(
    ("key", "value"), [("topic.cache.size", "0"), ("schema.name.adjustment.mode", "avro2")]
)
def test_bad_values_name_the_key(key: str, value: str) -> None:
    with pytest.raises(ConfigError, match=f"^{key}: "):
        config(**{key: value})


def test_the_cli_stops_naming_a_broken_plugin_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.properties"
    props = {**BASE, "data.dir": str(tmp_path), "topic.naming.strategy": "no_such_module_xyz:S"}
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "topic.naming.strategy: cannot import 'no_such_module_xyz'" in err
    assert "s3cret-pass" not in err


def test_avro_names_replace_with_underscores_and_keep_a_leading_digit() -> None:
    schemas = schema_name_adjuster(config(**{"schema.name.adjustment.mode": "avro"}))
    fields = field_name_adjuster(config(**{"field.name.adjustment.mode": "avro"}))
    assert schemas.adjust("shop.db.t-1.Value") == "shop.db.t_1.Value"
    assert schemas.adjust("9.x") == "_9.x"
    assert fields.adjust("a.b") == "a_b"  # a dot is valid in a schema name, not in a field name
    assert fields.adjust("9lives") == "_9lives"
    assert fields.adjust("ü") == "_"


def test_avro_unicode_names_escape_the_underscore() -> None:
    schemas = schema_name_adjuster(config(**{"schema.name.adjustment.mode": "avro_unicode"}))
    fields = field_name_adjuster(config(**{"field.name.adjustment.mode": "avro_unicode"}))
    assert schemas.adjust("shop.my_db.t.Key") == "shop.my_u005fdb.t.Key"
    assert fields.adjust("_x.9") == "_u005fx_u002e9"
    assert fields.adjust("9") == "_u0039"


def test_none_changes_nothing_and_two_names_made_equal_stop_the_connector() -> None:
    assert not schema_name_adjuster(config())
    assert schema_name_adjuster(config()).adjust("a-b ü") == "a-b ü"
    fields = field_name_adjuster(config(**{"field.name.adjustment.mode": "avro"}))
    fields.adjust("a-b")
    with pytest.raises(ConfigError, match="^field.name.adjustment.mode: .*'a b'.*'a_b' conflicts with 'a-b'"):
        fields.adjust("a b")
    assert NameAdjuster("k", None).adjust("a b") == "a b"


def run_with(server: MySQLServerHandle, db: str, tmp_path: Path, props: dict[str, str]) -> MemorySink:
    props = {"heartbeat.interval.ms": "600000", **props}
    with plugin_engine(server, db, tmp_path, props) as (engine, memory):
        server.execute(
            f"CREATE TABLE `{db}`.a (id INT PRIMARY KEY)", f"CREATE TABLE `{db}`.b (id INT PRIMARY KEY)"
        )
        engine.catch_up()
        server.execute(f"INSERT INTO `{db}`.a VALUES (1)", f"INSERT INTO `{db}`.b VALUES (2)")
        engine.catch_up()
        assert engine.streaming is not None
        engine.streaming.emit_heartbeat()
        engine.delivery.flush()
    return memory


def test_a_plugin_by_module_path_names_every_topic_of_a_run(
    mysql_server: MySQLServerHandle, tmp_path: Path
) -> None:
    db = "naming_plugin_path"
    memory = run_with(mysql_server, db, tmp_path, {"topic.naming.strategy": PLUGIN, "routing.suffix": "v1"})
    topics = {r.topic for r in memory.records}
    assert topics == {f"shop.by-db.{db}", "shop.ddl-v1", "shop.tx-v1", "shop.beat-v1"}, topics
    data = [r for r in memory.records if r.topic == f"shop.by-db.{db}"]
    assert {r.value["after"]["id"] for r in data if r.value and r.value.get("op") == "c"} == {1, 2}
    # The record schemas are named after the strategy's topic (recordSchemaPrefix = dataChangeTopic).
    assert {r.value_schema.name for r in data if r.value_schema} == {f"shop.by-db.{db}.Envelope"}


def test_a_plugin_by_entry_point_names_the_data_topics(
    mysql_server: MySQLServerHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(write_naming_dist(tmp_path / "site")))
    db = "naming_plugin_ep"
    memory = run_with(mysql_server, db, tmp_path, {"topic.naming.strategy": "dist-routing"})
    topics = {r.topic for r in memory.records}
    assert {"shop.dist.a", "shop.dist.b", "shop.ddl-x", "shop.tx-x", "shop.beat-x"} == topics, topics


def test_a_broken_entry_point_names_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(write_naming_dist(tmp_path / "site")))
    with names_the_key("topic.naming.strategy", "entry point 'broken'"):
        topic_naming_strategy(config(**{"topic.naming.strategy": "broken"}))
    assert isinstance(topic_naming_strategy(config(**{"topic.naming.strategy": PLUGIN})), RoutingStrategy)
