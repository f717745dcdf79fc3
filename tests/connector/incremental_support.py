"""Incremental snapshot test helpers: the signal table, engines with a memory sink, racing writers, replaying records into table state."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink

SIGNAL_DDL = (
    "CREATE TABLE dbz_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048))"
)


def grant_signal_table(server: MySQLServerHandle, db: str) -> None:
    """The documented grant: the connector writes its watermarks into the signal table."""
    server.execute(SIGNAL_DDL, database=db)
    server.execute(f"GRANT INSERT, DELETE ON `{db}`.`dbz_signal` TO '{server.connector.user}'@'%'")


def make_engine(
    server: MySQLServerHandle, db: str, data_dir: Path, **extra: Any
) -> tuple[Engine, MemorySink]:
    memory = MemorySink()
    props = {
        "topic.prefix": "inc",
        "database.include.list": db,
        "data.dir": str(data_dir),
        "snapshot.mode": "no_data",
        "signal.data.collection": f"{db}.dbz_signal",
        "incremental.snapshot.chunk.size": "100",
        **{k: str(v) for k, v in extra.items()},
    }
    return Engine(ConnectorConfig.from_mapping(server.connector_properties(**props)), sinks=[memory]), memory


def send_signal(server: MySQLServerHandle, db: str, signal_id: str, kind: str, data: dict[str, Any]) -> None:
    server.execute(
        f"INSERT INTO dbz_signal VALUES ('{signal_id}', '{kind}', '{json.dumps(data)}')", database=db
    )


def data_records(records: list[ChangeRecord], table: str) -> list[ChangeRecord]:
    return [r for r in records if r.kind == RecordKind.DATA and r.table_id.table == table]


def payload(record: ChangeRecord) -> dict[str, Any]:
    value = record.value
    assert isinstance(value, dict)
    return value.get("payload", value) if "payload" in value else value


def replay(records: list[ChangeRecord], key: str | tuple[str, ...] = "id") -> dict[Any, dict[str, Any]]:
    """Applies r/c/u/d by key in order: the table a consumer would hold."""
    names = (key,) if isinstance(key, str) else key
    state: dict[Any, dict[str, Any]] = {}
    for record in records:
        value = record.value
        if value is None:
            continue
        payload = value.get("payload", value)
        op = payload["op"]
        if op == "d":
            state.pop(tuple(payload["before"][k] for k in names), None)
        else:
            state[tuple(payload["after"][k] for k in names)] = payload["after"]
    return state


def snapshot_finished(engine: Engine) -> Any:
    """True once an incremental snapshot has read at least one chunk and is no longer running."""
    return lambda: (
        engine.streaming is not None
        and engine.streaming.signals.incremental.progress.chunks > 0
        and not engine.streaming.signals.incremental.running
    )


def race_writer(
    server: MySQLServerHandle, db: str, total: int, seed: int, stop: threading.Event, pause_s: float = 0.0
) -> None:
    """Updates, deletes, re-inserts (REPLACE) and inserts rows of ``orders`` until ``stop``."""
    rnd = random.Random(seed)
    next_id = total + 1 + seed * 1_000_000
    with server.connect(db) as conn, conn.cursor() as cur:
        while not stop.is_set():
            key = rnd.randint(1, total)
            action = rnd.random()
            if action < 0.4:
                cur.execute(f"UPDATE orders SET qty = qty + 1, name = 'w{seed}' WHERE id = {key}")
            elif action < 0.7:
                cur.execute(f"DELETE FROM orders WHERE id = {key}")
            elif action < 0.85:
                cur.execute(f"REPLACE INTO orders VALUES ({key}, 'back{seed}', 1)")
            else:
                cur.execute(f"INSERT INTO orders VALUES ({next_id}, 'new{seed}', 2)")
                next_id += 1
            if pause_s:
                stop.wait(pause_s)


def run_until(engine: Engine, done: Any, timeout: float = 120.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError("the incremental snapshot did not finish")
        engine.catch_up()


def fill(server: MySQLServerHandle, db: str, rows: int, batch: int = 5000) -> None:
    for start in range(1, rows + 1, batch):
        values = ",".join(
            f"({i}, 'order-{i}', {i % 97})" for i in range(start, min(rows, start + batch - 1) + 1)
        )
        server.execute(f"INSERT INTO orders VALUES {values}", database=db)


def snapshot_racing_writers(
    server: MySQLServerHandle, db: str, tmp_path: Path, total: int, **props: str
) -> list[ChangeRecord]:
    """An incremental snapshot of ``db.orders`` (``total`` rows) while two ``race_writer`` threads
    change it; returns the ``orders`` data records once the stream has caught up."""
    engine, memory = make_engine(server, db, tmp_path, **props)
    engine.catch_up()
    stop = threading.Event()
    writers = [threading.Thread(target=race_writer, args=(server, db, total, n, stop)) for n in range(2)]
    for thread in writers:
        thread.start()
    try:
        send_signal(server, db, "sig-race", "execute-snapshot", {"data-collections": [f"{db}.orders"]})
        run_until(engine, snapshot_finished(engine), timeout=600)
    finally:
        stop.set()
        for thread in writers:
            thread.join()
    engine.catch_up()
    engine.close()
    return data_records(memory.records, "orders")


def orders_in_mysql(server: MySQLServerHandle, db: str) -> dict[Any, dict[str, Any]]:
    """``db.orders`` as ``replay`` reconstructs it from change records."""
    return {
        (row[0],): {"id": row[0], "name": row[1], "qty": row[2]}
        for row in server.query("SELECT id, name, qty FROM orders", database=db)
    }
