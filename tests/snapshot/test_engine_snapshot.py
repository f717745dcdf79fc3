"""The snapshot inside the engine: every snapshot.mode's first start and restart, the one-off
``mysql-cdc snapshot`` command, and a snapshot with writers racing it across the snapshot/stream
boundary (global-lock and table-lock workflows)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.stores.offsets import FileOffsetStore
from connector.testing.local_server import Credentials, LocalMySQLServer
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.base import Sink
from sink.memory import MemorySink
from tests.snapshot.conftest import fill_rows, purge_binlogs


def props_for(server: LocalMySQLServer, db: str, data_dir: Path, **extra: str) -> dict[str, str]:
    return server.connector_properties(
        **{
            "topic.prefix": "snap",
            "database.include.list": db,
            "data.dir": str(data_dir),
            "poll.interval.ms": "50",
            **extra,
        }
    )


def as_user(props: dict[str, str], user: Credentials | None) -> dict[str, str]:
    if user is None:
        return props
    return {**props, "database.user": user.user, "database.password": user.password}


def engine_for(props: dict[str, str], *sinks: Sink) -> tuple[Engine, MemorySink]:
    memory = MemorySink()
    return Engine(ConnectorConfig.from_mapping(props), sinks=[memory, *sinks]), memory


def data(records: Sequence[ChangeRecord]) -> list[ChangeRecord]:
    return [r for r in records if r.kind == RecordKind.DATA]


def ops(records: Sequence[ChangeRecord]) -> list[tuple[str | None, Any]]:
    return [(r.op, (r.after or r.before or {}).get("id")) for r in data(records)]


def run_once(props: dict[str, str], timeout: float = 60.0) -> list[ChangeRecord]:
    engine, memory = engine_for(props)
    try:
        engine.catch_up(timeout)
    finally:
        engine.close()
    return memory.records


def stored_offset(data_dir: Path) -> dict[str, Any] | None:
    return FileOffsetStore(data_dir / "offsets.json", "mysql-cdc", "snap").load()


@pytest.fixture
def table(mysql_server: LocalMySQLServer, unique_db: str) -> str:
    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.t (id INT PRIMARY KEY, v VARCHAR(20))",
        f"INSERT INTO `{unique_db}`.t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    )
    return f"`{unique_db}`.t"


def test_initial_snapshots_once_then_restarts_stream_from_the_offset(
    mysql_server, unique_db, table, tmp_path
):
    props = props_for(mysql_server, unique_db, tmp_path)
    engine, memory = engine_for(props)
    try:
        engine.catch_up(60)
        mysql_server.execute(f"INSERT INTO {table} VALUES (4, 'd')")
        engine.catch_up(60)
    finally:
        engine.close()
    assert ops(memory.records) == [("r", 1), ("r", 2), ("r", 3), ("c", 4)]
    snapshot_records = data(memory.records)[:3]
    assert [r.source["snapshot"] for r in snapshot_records] == ["first", "true", "last"]  # type: ignore[index]
    assert "snapshot" not in (stored_offset(tmp_path) or {"snapshot": "?"})
    mysql_server.execute(f"INSERT INTO {table} VALUES (5, 'e')")  # while stopped
    assert ops(run_once(props)) == [("c", 5)]


class FailingSink(MemorySink):
    """Fails on its n-th batch, like a broker going away mid-snapshot."""

    def __init__(self, fail_on: int) -> None:
        super().__init__()
        self.batches = 0
        self.fail_on = fail_on

    def send(self, records: Sequence[ChangeRecord]) -> None:
        self.batches += 1
        if self.batches == self.fail_on:
            raise RuntimeError("sink went away")
        super().send(records)


def test_interrupted_snapshot_starts_over(mysql_server, unique_db, table, tmp_path):
    mysql_server.execute(f"DELETE FROM {table}")
    fill_rows(mysql_server, f"`{unique_db}`.t (id)", 50)
    props = props_for(
        mysql_server, unique_db, tmp_path, **{"max.batch.size": "10", "offset.flush.interval.ms": "0"}
    )
    engine, _ = engine_for(props, FailingSink(fail_on=4))
    with pytest.raises(RuntimeError, match="sink went away"):
        try:
            engine.catch_up(60)
        finally:
            engine.close()
    interrupted = stored_offset(tmp_path)
    assert interrupted is not None and interrupted.get("snapshot") == "INITIAL"
    records = run_once(props)
    assert sorted(i for op, i in ops(records) if op == "r") == list(range(1, 51))
    assert {op for op, _ in ops(records)} == {"r"}
    assert "snapshot" not in (stored_offset(tmp_path) or {"snapshot": "?"})


def run_in_thread(engine: Engine, timeout: float) -> bool:
    """engine.run() in a thread; True if it returned by itself within ``timeout``."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            engine.run()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    returned = not thread.is_alive()
    if not returned:
        engine.stop()
        thread.join(30)
    assert not errors, errors
    return returned


def test_initial_only_snapshots_and_stops(mysql_server, unique_db, table, tmp_path):
    props = props_for(mysql_server, unique_db, tmp_path, **{"snapshot.mode": "initial_only"})
    engine, memory = engine_for(props)
    assert run_in_thread(engine, 60), "initial_only must stop after the snapshot instead of streaming"
    assert ops(memory.records) == [("r", 1), ("r", 2), ("r", 3)]
    mysql_server.execute(f"INSERT INTO {table} VALUES (4, 'd')")
    engine, memory = engine_for(props)
    assert run_in_thread(engine, 60)
    assert ops(memory.records) == []  # completed: no new snapshot, and no streaming


@pytest.mark.parametrize("mode", ["no_data", "schema_only"])
def test_no_data_captures_schema_then_streams(mysql_server, unique_db, table, tmp_path, mode):
    props = props_for(mysql_server, unique_db, tmp_path, **{"snapshot.mode": mode})
    engine, memory = engine_for(props)
    try:
        engine.catch_up(60)
        mysql_server.execute(f"UPDATE {table} SET v = 'z' WHERE id = 2")
        engine.catch_up(60)
    finally:
        engine.close()
    assert ops(memory.records) == [("u", 2)]
    assert any(r.kind == RecordKind.SCHEMA_CHANGE for r in memory.records)
    mysql_server.execute(f"DELETE FROM {table} WHERE id = 3")
    assert [o for o in ops(run_once(props)) if o[0] != "r"] == [("d", 3)]


def test_always_snapshots_on_every_start(mysql_server, unique_db, table, tmp_path):
    props = props_for(mysql_server, unique_db, tmp_path, **{"snapshot.mode": "always"})
    assert ops(run_once(props)) == [("r", 1), ("r", 2), ("r", 3)]
    mysql_server.execute(f"INSERT INTO {table} VALUES (4, 'd')")
    assert ops(run_once(props)) == [("r", 1), ("r", 2), ("r", 3), ("r", 4)]


def test_recovery_rebuilds_a_lost_schema_history(mysql_server, unique_db, table, tmp_path):
    props = props_for(mysql_server, unique_db, tmp_path)
    assert len(ops(run_once(props))) == 3
    mysql_server.execute(f"INSERT INTO {table} VALUES (4, 'd')")  # while stopped
    history = tmp_path / "schema-history.jsonl"
    assert history.exists()
    history.unlink()
    engine, _ = engine_for(props)
    with pytest.raises(Exception, match="snapshot.mode=recovery"):
        try:
            engine.prepare()
        finally:
            engine.close()
    records = run_once({**props, "snapshot.mode": "recovery"})
    assert ops(records) == [("c", 4)]  # no snapshot rows; streaming resumed at the stored offset
    lines = [orjson.loads(line) for line in history.read_bytes().splitlines()]
    assert any(line["ddl"].startswith("CREATE TABLE `t`") for line in lines)
    mysql_server.execute(f"INSERT INTO {table} VALUES (5, 'e')")
    assert ops(run_once(props)) == [("c", 5)]  # the rebuilt history serves the next normal start


@pytest.fixture
def own_server() -> Iterator[LocalMySQLServer]:
    with LocalMySQLServer() as server:
        server.execute(
            "CREATE DATABASE own",
            "CREATE TABLE own.t (id INT PRIMARY KEY, v VARCHAR(20))",
            "INSERT INTO own.t VALUES (1, 'a'), (2, 'b')",
        )
        yield server


def test_purged_position_initial_fails_when_needed_resnapshots(own_server, tmp_path):
    props = props_for(own_server, "own", tmp_path)
    assert ops(run_once(props)) == [("r", 1), ("r", 2)]
    own_server.execute("INSERT INTO own.t VALUES (3, 'c')")
    purge_binlogs(own_server)
    engine, _ = engine_for(props)
    with pytest.raises(Exception) as exc:
        try:
            engine.prepare()
        finally:
            engine.close()
    assert "no longer available" in str(exc.value) and "snapshot.mode=when_needed" in str(exc.value)
    records = run_once({**props, "snapshot.mode": "when_needed"})
    assert ops(records) == [("r", 1), ("r", 2), ("r", 3)]
    own_server.execute("INSERT INTO own.t VALUES (4, 'd')")
    assert ops(run_once({**props, "snapshot.mode": "when_needed"})) == [("c", 4)]


def test_never_streams_the_whole_binlog_without_snapshot(own_server, tmp_path):
    props = props_for(own_server, "own", tmp_path, **{"snapshot.mode": "never"})
    records = run_once(props)
    # No snapshot: the table's creation and first rows come from the binlog itself.
    assert ops(records) == [("c", 1), ("c", 2)]
    # Streaming: source.snapshot is absent from the payload (the JSON converter writes the default "false").
    assert all((r.source or {}).get("snapshot") in (None, "false") for r in data(records))
    own_server.execute("INSERT INTO own.t VALUES (3, 'c')")
    assert ops(run_once(props)) == [("c", 3)]


# -- the one-off CLI snapshot -------------------------------------------------------------------------
def write_properties(path: Path, props: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def jsonl_ops(path: Path) -> list[tuple[str, int]]:
    out = []
    for line in path.read_bytes().splitlines():
        value = orjson.loads(line)["value"]
        if value and value.get("payload", {}).get("op"):
            payload = value["payload"]
            out.append((payload["op"], (payload["after"] or payload["before"])["id"]))
    return out


def test_cli_snapshot_then_run_continues(mysql_server, unique_db, table, tmp_path, capsys):
    from connector.cli import main

    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.u (id INT PRIMARY KEY)", f"INSERT INTO `{unique_db}`.u VALUES (7)"
    )
    events = tmp_path / "events.jsonl"
    props = props_for(
        mysql_server, unique_db, tmp_path, **{"sink.type": "jsonl", "sink.jsonl.path": str(events)}
    )
    config = write_properties(tmp_path / "c.properties", props)
    assert main(["snapshot", "--config", str(config)]) == 0
    summary = capsys.readouterr().out
    assert "snapshot complete: 2 table(s), 4 row(s)" in summary
    assert f"{unique_db}.t: 3 row(s)" in summary and f"{unique_db}.u: 1 row(s)" in summary
    assert sorted(jsonl_ops(events)) == [("r", 1), ("r", 2), ("r", 3), ("r", 7)]
    offset = stored_offset(tmp_path)
    assert offset is not None and "snapshot" not in offset
    # A second one-off snapshot would double the rows: refused, with what to do instead.
    assert main(["snapshot", "--config", str(config)]) == 1
    assert "already completed" in capsys.readouterr().err
    # `run` continues from the snapshot's offsets: only the new change.
    mysql_server.execute(f"INSERT INTO {table} VALUES (4, 'd')")
    before = len(jsonl_ops(events))
    engine = Engine(ConnectorConfig.from_mapping(props))
    try:
        engine.catch_up(60)
    finally:
        engine.close()
    assert jsonl_ops(events)[before:] == [("c", 4)]


def test_cli_snapshot_of_one_table(mysql_server, unique_db, table, tmp_path, capsys):
    from connector.cli import main

    mysql_server.execute(
        f"CREATE TABLE `{unique_db}`.u (id INT PRIMARY KEY)", f"INSERT INTO `{unique_db}`.u VALUES (7)"
    )
    events = tmp_path / "events.jsonl"
    props = props_for(
        mysql_server, unique_db, tmp_path, **{"sink.type": "jsonl", "sink.jsonl.path": str(events)}
    )
    config = write_properties(tmp_path / "c.properties", props)
    assert main(["snapshot", "--config", str(config), "--table", f"{unique_db}.u"]) == 0
    assert "1 table(s), 1 row(s)" in capsys.readouterr().out
    assert jsonl_ops(events) == [("r", 7)]
    assert main(["snapshot", "--config", str(tmp_path / "c.properties"), "--table", "other_db.x"]) == 2
    assert "--table: other_db.x is not captured" in capsys.readouterr().err


# -- writers racing the snapshot -----------------------------------------------------------------------
TABLES = ("w1", "w2", "w3")
ROWS_PER_TABLE = 35_000  # 105,000 rows in all


class RacingWriter(threading.Thread):
    """Random single-row inserts, updates and deletes (committed one by one) across the tables."""

    def __init__(self, server: LocalMySQLServer, db: str, seed: int) -> None:
        super().__init__(daemon=True)
        self.server, self.db = server, db
        self.random = random.Random(seed)
        self.stop_event = threading.Event()
        self.commits: list[float] = []
        self.error: BaseException | None = None
        self.next_id = ROWS_PER_TABLE + 1

    def run(self) -> None:
        try:
            with self.server.connect(self.db) as conn, conn.cursor() as cur:
                while not self.stop_event.is_set():
                    table = self.random.choice(TABLES)
                    kind = self.random.random()
                    key = self.random.randint(1, self.next_id)
                    if kind < 0.4:
                        cur.execute(
                            f"INSERT INTO {table} VALUES (%s, %s, 0)", (self.next_id, f"new{self.next_id}")
                        )
                        self.next_id += 1
                    elif kind < 0.8:
                        cur.execute(f"UPDATE {table} SET n = n + 1, v = CONCAT('u', n) WHERE id = %s", (key,))
                    else:
                        cur.execute(f"DELETE FROM {table} WHERE id = %s", (key,))
                    self.commits.append(time.monotonic())
        except BaseException as exc:
            self.error = exc


class StateFold:
    """Rebuilds each table's rows from the change events, refusing any duplicate or missing row."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[int, dict[str, Any]]] = {t: {} for t in TABLES}
        self.problems: list[str] = []
        self.ops: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, records: Sequence[ChangeRecord]) -> None:
        with self.lock:
            for r in records:
                if r.kind != RecordKind.DATA or r.table_id is None or r.table_id.table not in TABLES:
                    continue
                table = self.rows[r.table_id.table]
                op = r.op or "?"
                self.ops[op] = self.ops.get(op, 0) + 1
                key = (r.after or r.before or {})["id"]
                if op in ("r", "c"):
                    if key in table:
                        self.problems.append(f"duplicate {op} {r.table_id.table}#{key}")
                    table[key] = dict(r.after or {})
                elif op == "u":
                    if key not in table:
                        self.problems.append(f"update of missing {r.table_id.table}#{key}")
                    table[key] = dict(r.after or {})
                elif op == "d" and table.pop(key, None) is None:
                    self.problems.append(f"delete of missing {r.table_id.table}#{key}")


@pytest.mark.slow
@pytest.mark.parametrize("workflow", ["global lock", "table locks"])
def test_concurrent_writers_across_the_snapshot_stream_boundary(mysql_server, unique_db, tmp_path, workflow):
    db = unique_db
    for name in TABLES:
        mysql_server.execute(
            f"CREATE TABLE `{db}`.{name} (id INT PRIMARY KEY, v VARCHAR(32), n INT NOT NULL DEFAULT 0)"
        )
        fill_rows(mysql_server, f"`{db}`.{name} (id)", ROWS_PER_TABLE)
        mysql_server.execute(f"UPDATE `{db}`.{name} SET v = CONCAT('v', id)")
    user = None
    if workflow == "table locks":
        user = mysql_server.create_user(
            f"tl_{db[-24:]}",
            "pw-tl",
            "SELECT, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES",
        )
    fold = StateFold()
    props = as_user(props_for(mysql_server, db, tmp_path, **{"max.batch.size": "4096"}), user)
    engine = Engine(ConnectorConfig.from_mapping(props), sinks=[], on_delivered=fold)
    writers = [RacingWriter(mysql_server, db, seed) for seed in (1, 2)]
    writers[1].next_id = 10 * ROWS_PER_TABLE  # disjoint insert keys
    for w in writers:
        w.start()
    time.sleep(0.3)
    try:
        started = time.monotonic()
        engine.prepare()  # the snapshot
        snapshot_done = time.monotonic()
        time.sleep(1.0)  # keep writing into the streaming phase
        for w in writers:
            w.stop_event.set()
            w.join(60)
            assert w.error is None, w.error
        engine.catch_up(180)
    finally:
        for w in writers:
            w.stop_event.set()
        engine.close()
    assert fold.problems == []
    assert fold.ops.get("r", 0) >= 3 * ROWS_PER_TABLE * 0.9
    commits = sorted(t for w in writers for t in w.commits)
    assert sum(1 for t in commits if t < started) > 0 and sum(1 for t in commits if t > snapshot_done) > 0
    if workflow == "global lock":
        # Writes went on while the rows were being read (only the short lock window blocks them).
        assert sum(1 for t in commits if started < t < snapshot_done) > 0
    for name in TABLES:
        actual = {
            row[0]: {"id": row[0], "v": row[1], "n": row[2]}
            for row in mysql_server.query(f"SELECT id, v, n FROM `{db}`.{name}")
        }
        assert fold.rows[name] == actual, name
