"""``sourceinfo.struct.maker`` and ``transaction.metadata.factory`` as Python plugins that add fields
(``connector/records/struct_makers.py``): loaded by ``package.module:Class`` and by entry point, their
fields reach the records and schemas of a real run (data, schema change, BEGIN/END); Debezium's
default names change nothing; a plugin that cannot be used stops start-up naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.records.builder import EventBuilder
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.records import ChangeRecord, RecordKind
from tests.connector.naming_plugins import BASE, names_the_key, plugin_engine, write_naming_dist

SOURCE = "sourceinfo.struct.maker"
TRANSACTION = "transaction.metadata.factory"


def run(server: MySQLServerHandle, db: str, tmp_path: Path, props: dict[str, str]) -> list[ChangeRecord]:
    with plugin_engine(server, db, tmp_path, props) as (engine, memory):
        server.execute(f"CREATE TABLE `{db}`.a (id INT PRIMARY KEY)")
        engine.catch_up()
        with server.connect(db) as conn, conn.cursor() as cur:
            for sql in ("BEGIN", "INSERT INTO a VALUES (1)", "INSERT INTO a VALUES (2)", "COMMIT"):
                cur.execute(sql)
        engine.catch_up()
        engine.delivery.flush()
    return memory.records


def field_names(schema: object, name: str) -> list[str]:
    fields = getattr(schema, "fields", None) or ()
    inner = next(f.schema for f in fields if f.name == name)
    return [f.name for f in inner.fields or ()]


def check_added_fields(records: list[ChangeRecord]) -> None:
    data = [r for r in records if r.kind is not RecordKind.TRANSACTION and r.topic != "shop"]
    changes = [r for r in records if r.topic == "shop"]
    txn = [r for r in records if r.kind is RecordKind.TRANSACTION]
    assert data and changes and [r.value["status"] for r in txn] == ["BEGIN", "END"]
    for r in (*data, *changes):
        assert r.value["source"]["cluster"] == "eu-1"
        assert field_names(r.value_schema, "source")[-1] == "cluster"
    inserts = [r for r in data if r.value["op"] == "c"]
    assert [r.value["transaction"]["label"] for r in inserts] == ["n1", "n2"]
    assert [r.value["transaction"]["total_order"] for r in inserts] == [1, 2]  # the default fields stay
    assert field_names(inserts[0].value_schema, "transaction")[-1] == "label"
    assert [r.value["size_class"] for r in txn] == [None, "small"]
    assert txn[1].value["event_count"] == 2
    assert [f.name for f in txn[1].value_schema.fields or ()][-1] == "size_class"


def test_plugins_by_module_path_add_fields_to_a_real_run(
    mysql_server: MySQLServerHandle, tmp_path: Path
) -> None:
    props = {
        "sourceinfo.struct.maker": "tests.connector.naming_plugins:ClusterSource",
        "transaction.metadata.factory": "tests.connector.naming_plugins:LabelledTransactions",
        "cluster.name": "eu-1",
    }
    check_added_fields(run(mysql_server, "struct_makers_path", tmp_path, props))


def test_plugins_by_entry_point_add_fields_to_a_real_run(
    mysql_server: MySQLServerHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(write_naming_dist(tmp_path / "site")))
    props = {SOURCE: "dist-cluster", TRANSACTION: "dist-labels", "cluster.name": "eu-1"}
    check_added_fields(run(mysql_server, "struct_makers_ep", tmp_path, props))


def test_debeziums_default_names_are_the_default() -> None:
    plain = EventBuilder(ConnectorConfig.from_mapping(BASE))
    named = EventBuilder(
        ConnectorConfig.from_mapping(
            {
                **BASE,
                SOURCE: "io.debezium.connector.mysql.MySqlSourceInfoStructMaker",
                TRANSACTION: "io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory",
            }
        )
    )
    assert named.source_maker is None and named.transaction_maker is None
    assert (named.source_schema, named.transaction_schema) == (plain.source_schema, plain.transaction_schema)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (SOURCE, "io.debezium.connector.mariadb.MariaDbSourceInfoStructMaker", "is a Java class"),
        (SOURCE, "tests.connector.naming_plugins:NotASchema", "where a struct ConnectSchema is needed"),
        (SOURCE, "tests.connector.naming_plugins:RoutingStrategy", "missing schema, struct"),
        (TRANSACTION, "no_such_module_xyz:T", "cannot import 'no_such_module_xyz'"),
        (TRANSACTION, "broken", "entry point 'broken'"),
    ],
)
def test_a_plugin_that_cannot_be_used_names_the_key(
    key: str, value: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(write_naming_dist(tmp_path / "site")))
    engine_config = ConnectorConfig.from_mapping({**BASE, key: value, "data.dir": str(tmp_path)})
    with names_the_key(key, message):
        Engine(engine_config)  # port 1: nothing is connected before the error
