"""Helpers shared by test modules (moved out of test_kafka_sink.py)."""

from __future__ import annotations

from typing import Any

import orjson

from connector.config import ConnectorConfig
from mysql_cdc_base.connect import ConnectSchema, primitive, struct
from mysql_cdc_base.records import ChangeRecord, Header, RecordKind

BASE_PROPS = {
    "database.hostname": "127.0.0.1",
    "database.user": "cdc",
    "database.server.id": "5400",
    "topic.prefix": "srv",
}


def sink_config(bootstrap: str, **extra: str) -> ConnectorConfig:
    return ConnectorConfig.from_mapping(
        {**BASE_PROPS, "sink.type": "kafka", "sink.kafka.bootstrap.servers": bootstrap, **extra}
    )


def _envelope(topic: str, value_schema: ConnectSchema) -> ConnectSchema:
    source = struct(
        "io.debezium.connector.mysql.Source",
        {
            "version": primitive("string"),
            "connector": primitive("string"),
            "name": primitive("string"),
            "db": primitive("string"),
            "table": primitive("string", optional=True),
            "snapshot": primitive(
                "string",
                optional=True,
                name="io.debezium.data.Enum",
                version=1,
                parameters={"allowed": "true,last,false"},
                default="false",
            ),
            "pos": primitive("int64"),
        },
    )
    return struct(
        f"{topic}.Envelope",
        {
            "before": value_schema,
            "after": value_schema,
            "source": source,
            "op": primitive("string"),
            "ts_ms": primitive("int64", optional=True),
        },
        version=2,
    )


class Table:
    """A table's schemas and a factory for its change records."""

    def __init__(self, prefix: str, name: str, keyed: bool = True) -> None:
        self.topic = f"{prefix}.inventory.{name}"
        self.key_schema = struct(f"{self.topic}.Key", {"id": primitive("int32")}) if keyed else None
        self.value_schema = struct(
            f"{self.topic}.Value",
            {
                "id": primitive("int32"),
                "name": primitive("string", optional=True),
                "price": primitive("float64", optional=True),
                "qty": primitive("int32", optional=True, default=7),
            },
            optional=True,
        )
        self.envelope = _envelope(self.topic, self.value_schema)
        self.pos = 0

    def row(self, row_id: int, version: int) -> dict[str, Any]:
        # qty None → the schema default 7 is written; price exercises Java float rendering.
        return {
            "id": row_id,
            "name": f"n{row_id}-v{version} ü",
            "price": 1e7 * version + 0.5,
            "qty": None if version % 3 == 0 else version,
        }

    def change(self, op: str, row_id: int, version: int, headers: tuple[Header, ...] = ()) -> ChangeRecord:
        self.pos += 1
        before = self.row(row_id, version - 1) if op in ("u", "d") else None
        after = self.row(row_id, version) if op != "d" else None
        value = {
            "before": before,
            "after": after,
            "source": {
                "version": "0.1.0",
                "connector": "mysql",
                "name": "srv",
                "db": "inventory",
                "table": self.topic.rsplit(".", 1)[1],
                "snapshot": None,
                "pos": self.pos,
            },
            "op": op,
            "ts_ms": 1_700_000_000_000 + self.pos,
        }
        key = {"id": row_id} if self.key_schema is not None else None
        context = (
            Header("__debezium.context.connectorLogicalName", "srv"),
            Header("__debezium.context.taskId", "0"),
        )
        return ChangeRecord(
            self.topic,
            self.key_schema,
            key,
            self.envelope,
            value,
            headers=context + headers,
            offset={"file": "b.000001", "pos": self.pos},
        )

    def tombstone(self, row_id: int) -> ChangeRecord:
        key = {"id": row_id} if self.key_schema is not None else None
        return ChangeRecord(self.topic, self.key_schema, key, None, None, kind=RecordKind.TOMBSTONE)


def heartbeat(prefix: str, ts: int) -> ChangeRecord:
    key_schema = struct(
        "io.debezium.connector.common.ServerNameKey", {"serverName": primitive("string")}, version=1
    )
    value_schema = struct("io.debezium.connector.common.Heartbeat", {"ts_ms": primitive("int64")}, version=1)
    return ChangeRecord(
        f"__debezium-heartbeat.{prefix}",
        key_schema,
        {"serverName": prefix},
        value_schema,
        {"ts_ms": ts},
        kind=RecordKind.HEARTBEAT,
        partition=0,
    )


def schema_change(prefix: str, ddl: str) -> ChangeRecord:
    key_schema = struct(
        "io.debezium.connector.mysql.SchemaChangeKey", {"databaseName": primitive("string")}, version=1
    )
    value_schema = struct(
        "io.debezium.connector.mysql.SchemaChangeValue",
        {"databaseName": primitive("string", optional=True), "ddl": primitive("string", optional=True)},
        version=1,
    )
    return ChangeRecord(
        prefix,
        key_schema,
        {"databaseName": "inventory"},
        value_schema,
        {"databaseName": "inventory", "ddl": ddl},
        kind=RecordKind.SCHEMA_CHANGE,
        partition=0,
    )


def mixed_stream(prefix: str) -> list[ChangeRecord]:
    """Schema change, inserts/updates/deletes with tombstones on two keyed tables, a keyless table,
    a primary-key change with its struct headers, and heartbeats."""
    customers, orders, log_table = (
        Table(prefix, "customers"),
        Table(prefix, "orders"),
        Table(prefix, "audit_log", keyed=False),
    )
    out = [schema_change(prefix, "CREATE TABLE customers (id INT PRIMARY KEY)")]
    for i in range(1, 41):
        out.append(customers.change("c", i, 1))
        out.append(orders.change("c", i, 1))
        out.append(log_table.change("c", i, 1))
    for version in range(2, 6):
        for i in range(1, 41, 3):
            out.append(customers.change("u", i, version))
    for i in range(1, 41, 5):
        out.append(orders.change("d", i, 2))
        out.append(orders.tombstone(i))
    # A keyless table's tombstone has neither key nor value (Debezium emits it all the same).
    out.append(log_table.change("d", 3, 2))
    out.append(log_table.tombstone(3))
    assert customers.key_schema is not None
    new_key = Header("__debezium.newkey", {"id": 1000}, customers.key_schema)
    old_key = Header("__debezium.oldkey", {"id": 2}, customers.key_schema)
    out.append(customers.change("d", 2, 9, headers=(new_key,)))
    out.append(customers.tombstone(2))
    out.append(customers.change("c", 1000, 9, headers=(old_key,)))
    out.append(heartbeat(prefix, 1_700_000_000_000))
    out.append(heartbeat(prefix, 1_700_000_001_000))
    return out


def jsonl_form(topic: str, key: bytes | None, value: bytes | None, headers: list[tuple[str, bytes]]) -> bytes:
    """What the jsonl sink writes, rebuilt from a consumed Kafka record."""
    return b"".join(
        (
            b'{"topic":',
            orjson.dumps(topic),
            b',"key":',
            key if key is not None else b"null",
            b',"value":',
            value if value is not None else b"null",
            b',"headers":',
            orjson.dumps({k: v.decode() for k, v in headers}),
            b"}",
        )
    )
