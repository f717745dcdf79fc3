"""Golden events for the event kinds and modes beyond the type families: transaction metadata
(BEGIN/END records and ``transaction`` blocks), the truncate event, a heartbeat record, and the
column mappers (mask, hash v1/v2, truncate) next to a custom message key.

Each case runs a fresh engine against a real server, writes every record it produced (the
JSON-lines form: topic, key and value with schemas, headers) and compares them byte for byte with
``tests/golden/expected/modes/<case>.jsonl`` after the same normalisation as the type families, plus
the GTID transaction ids. ``README.md`` cites the Debezium rules behind each expected line.
Regenerate after an intended change with ``MYSQL_CDC_GOLDEN_UPDATE=1`` and review the diff.

Rules behind the expected lines (Debezium 3.6.1.Final; sections of shared/docs/debezium-reference.md,
Debezium classes in brackets):

* ``transaction_metadata`` (1.11, 3e [``TransactionMonitor``, ``TransactionContext``,
  ``BinlogOffsetContext``]): BEGIN on ``<prefix>.transaction`` when the transaction starts (MariaDB: its
  non-standalone GTID event), key ``TransactionMetadataKey {id}``, value ``TransactionMetadataValue``
  with ``event_count``/``data_collections`` null; every data event gets ``transaction {id,
  total_order, data_collection_order}`` counted over emitted events (the tombstone after the delete does not
  count); END with ``event_count`` = 5 and ``data_collections`` in Java HashMap order; id = the GTID
  (``domain-server-seq``). Transaction records carry no headers (bare ``SourceRecord``s).
  ``TRUNCATE TABLE`` with ``skipped.operations=none`` is ``op: t`` with null key/key schema, null
  before/after, and ``transaction: null`` (a DDL statement has no BEGIN, so no transaction id).
* ``heartbeat`` (1.10, 3f [``HeartbeatImpl``]): topic ``__debezium-heartbeat.<prefix>``, key
  ``io.debezium.connector.common.ServerNameKey {serverName}``, value
  ``io.debezium.connector.common.Heartbeat {ts_ms}``, no headers. One heartbeat right after the
  snapshot completes (1.10: "one heartbeat is also emitted right after the snapshot"), then one per
  interval (here triggered directly).
* ``column_mappers`` (2.2 [``ColumnMappers``, ``MaskStrings``, ``TruncateColumn``, ``TableSchemaBuilder``]):
  ``column.mask.with.4.chars`` → ``****`` also for NULL (the mask converter ignores its input) and an
  unchanged INT with parameter ``masked=true``; ``column.mask.hash.SHA-256.with.salt.<s>`` → hex of
  SHA-256(salt, ObjectOutputStream bytes of the string), 64 chars fit VARCHAR(100); ``v2.MD5`` → hex of
  MD5(salt, UTF-8 bytes) cut to CHAR(8); ``column.truncate.to.5.chars`` → TEXT cut to 5 chars and
  VARBINARY(16) bytes cut to 5 bytes, parameter ``truncateLength=5``; ``column.propagate.source.type``
  parameters on an unmapped column. ``message.key.columns`` makes the hashed column the key, and the
  key keeps the real value and a plain schema (key fields are built without mappers), so changing it
  is a key change: delete (header ``__debezium.newkey``) + tombstone + create (``__debezium.oldkey``).
  The hash values were checked against Java's own ``MessageDigest``/``ObjectOutputStream``
  (tests/connector/test_column_mappers.py runs that oracle).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer
from sink.memory import MemorySink
from sink.records import ChangeRecord, RecordKind, jsonl_line
from tests.golden.test_golden_types import EXPECTED, UPDATE, normalise, snapshot_data_unless_engine_did

_TRANSACTION_ID = re.compile(rb'"id":"\d+-\d+-\d+"')


def normalise_mode(line: bytes) -> bytes:
    return _TRANSACTION_ID.sub(b'"id":"*"', normalise(line))


def transaction_case(server: LocalMySQLServer, db: str, engine: Engine, memory: MemorySink) -> None:
    server.execute(
        "CREATE TABLE orders (id INT PRIMARY KEY, item VARCHAR(20), qty INT NOT NULL)",
        "CREATE TABLE order_lines (order_id INT, n INT, sku VARCHAR(8), PRIMARY KEY (order_id, n))",
        database=db,
    )
    engine.catch_up()
    with server.connect(db) as conn, conn.cursor() as cur:
        for sql in (
            "BEGIN",
            "INSERT INTO orders VALUES (1, 'pen', 2)",
            "INSERT INTO order_lines VALUES (1, 1, 'P-1'), (1, 2, 'P-2')",
            "UPDATE orders SET qty = 3 WHERE id = 1",
            "DELETE FROM order_lines WHERE n = 2",
            "COMMIT",
            "TRUNCATE TABLE order_lines",
        ):
            cur.execute(sql)
    engine.catch_up()


def heartbeat_case(server: LocalMySQLServer, db: str, engine: Engine, memory: MemorySink) -> None:
    server.execute("CREATE TABLE t (id INT PRIMARY KEY)", database=db)
    engine.catch_up()
    assert engine.streaming is not None
    engine.streaming.emit_heartbeat()


def mappers_case(server: LocalMySQLServer, db: str, engine: Engine, memory: MemorySink) -> None:
    server.execute(
        "CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(40), email VARCHAR(100) NOT NULL, "
        "code CHAR(8), bio TEXT, photo VARBINARY(16), age INT, note VARCHAR(30))",
        "INSERT INTO people VALUES (1, 'Ann Lee', 'ann@example.com', 'AB-12', 'Likes 😀 and long walks', "
        "X'00010203040506', 41, 'first')",
        "INSERT INTO people VALUES (2, NULL, 'bo@example.com', NULL, NULL, NULL, NULL, NULL)",
        database=db,
    )
    engine.catch_up()
    snapshot_data_unless_engine_did(engine, memory)
    server.execute("UPDATE people SET email = 'ann@example.org', bio = 'Short' WHERE id = 1", database=db)
    engine.catch_up()


Case = Callable[[LocalMySQLServer, str, Engine, MemorySink], None]
CASES: dict[str, tuple[dict[str, str], Case]] = {
    "transaction_metadata": (
        {"provide.transaction.metadata": "true", "skipped.operations": "none"},
        transaction_case,
    ),
    "heartbeat": ({"heartbeat.interval.ms": "600000"}, heartbeat_case),
    "column_mappers": (
        {
            "column.mask.with.4.chars": "{db}.people.name,{db}.people.age",
            "column.mask.hash.SHA-256.with.salt.CzQMA0cB5K": "{db}.people.email",
            "column.mask.hash.v2.MD5.with.salt.pepper": "{db}.people.code",
            "column.truncate.to.5.chars": "{db}.people.bio,{db}.people.photo",
            "column.propagate.source.type": "{db}.people.note",
            "message.key.columns": "{db}.people:email",
        },
        mappers_case,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_golden_modes(mysql_server: LocalMySQLServer, tmp_path: Path, case: str) -> None:
    overrides, run = CASES[case]
    db = f"golden_modes_{case}"
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{db}`", f"CREATE DATABASE `{db}` CHARSET utf8mb4")
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "golden",
            "database.include.list": db,
            "data.dir": str(tmp_path),
            "offset.storage": "memory",
            "schema.history.internal": "memory",
            "poll.interval.ms": "50",
            **{k: v.format(db=db) for k, v in overrides.items()},
        }
    )
    memory = MemorySink()
    engine = Engine(ConnectorConfig.from_mapping(props), sinks=[memory])
    try:
        run(mysql_server, db, engine, memory)
        engine.delivery.flush()
    finally:
        engine.close()
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{db}`")
    records: list[ChangeRecord] = [r for r in memory.records if r.kind != RecordKind.SCHEMA_CHANGE]
    got = b"".join(normalise_mode(jsonl_line(r)).replace(db.encode(), b"db") + b"\n" for r in records)
    path = EXPECTED / "modes" / f"{case}.jsonl"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(got)
    expected = path.read_bytes()
    for number, (want, have) in enumerate(zip(expected.splitlines(), got.splitlines(), strict=False), 1):
        assert want == have, (
            f"{path.name} line {number} differs:\n  expected {want[:800]!r}\n  got      {have[:800]!r}"
        )
    assert len(got.splitlines()) == len(expected.splitlines()), f"{path.name}: line count differs"
