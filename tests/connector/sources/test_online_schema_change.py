"""Online schema change tools on a captured table under write load: the statements gh-ost and
pt-online-schema-change issue, scripted here, run while another session keeps inserting, updating
and deleting. Afterwards the table's change events, replayed in order, equal the table, and the
schema history (and the last events' schema) has the new structure.

* gh-ost (triggerless): ``CREATE TABLE _t_gho LIKE t``, ``ALTER TABLE _t_gho ...``, the changelog
  table ``_t_ghc``, chunked ``INSERT IGNORE INTO _t_gho ... SELECT ... LOCK IN SHARE MODE`` while the
  writes to ``t`` are applied to ``_t_gho`` too (gh-ost's binlog applier: ``replace``/``update``/
  ``delete`` by primary key), then gh-ost's atomic cut-over with the writes going on: session A creates
  the sentry table ``_t_del`` and runs ``lock tables t write, _t_del write`` (the writes block), session
  B's ``rename table t to _t_del, _t_gho to t`` blocks behind it, A runs ``drop table _t_del`` and
  ``unlock tables``, the rename goes through and the blocked writes proceed on the new ``t``; then
  ``DROP TABLE _t_del``, ``_t_ghc``. The statements are gh-ost's own (``/* gh-ost */`` comments,
  quoted names).
* pt-online-schema-change: ``CREATE TABLE _t_new LIKE t``, ``ALTER TABLE _t_new ...``, AFTER
  INSERT/UPDATE/DELETE triggers on ``t`` writing to ``_t_new``, chunked ``INSERT LOW_PRIORITY IGNORE
  ... LOCK IN SHARE MODE``, the atomic ``RENAME TABLE t TO _t_old, _t_new TO t`` with writes going on,
  ``DROP TABLE _t_old`` and the triggers.

Helper tables are either not captured (``table.include.list`` = the table only: the connector still
learns their structure from the DDL, which the history keeps for every table), or captured as
Debezium's documentation suggests for gh-ost and filtered out with a ``Filter`` transform.
"""

from __future__ import annotations

import random
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from mysql_cdc_base.records import RecordKind
from mysql_cdc_base.table_id import TableId
from sink.memory import MemorySink

KAFKA = "org.apache.kafka.connect.transforms."


class Writer(threading.Thread):
    """Random inserts, updates and deletes on ``t`` until stopped. While ``mirror`` names the ghost
    table, each change is repeated there from its row image, the way gh-ost's binlog applier does
    (``replace``/``update``/``delete`` by primary key, never reading ``t``)."""

    def __init__(self, server: Any, db: str) -> None:
        super().__init__(daemon=True)
        self.conn = server.connect(db)
        with self.conn.cursor() as cur:
            cur.execute("SELECT CONNECTION_ID()")
            self.connection_id: int = cur.fetchone()[0]
        self.db = db
        self.stop = threading.Event()
        self.mirror: str | None = None
        self.changes = 0
        self.error: BaseException | None = None
        self.random = random.Random(18)

    def run(self) -> None:
        try:
            with self.conn.cursor() as cur:
                while not self.stop.is_set():
                    self.change(cur)
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.conn.close()

    def change(self, cur: Any) -> None:
        key = self.random.randint(1, 400)
        what = self.random.random()
        value = f"{'i' if what < 0.5 else 'u'}{self.changes}"
        if what < 0.5:
            changed = cur.execute("INSERT IGNORE INTO t (id, v) VALUES (%s, %s)", (key, value))
        elif what < 0.8:
            changed = cur.execute("UPDATE t SET v = %s WHERE id = %s", (value, key))
        else:
            changed = cur.execute("DELETE FROM t WHERE id = %s", (key,))
        mirror = self.mirror  # read after the change: a change blocked by the cut-over lock is not mirrored
        if mirror is not None and changed:
            ghost = f"`{self.db}`.`{mirror}`"
            hint = f"/* gh-ost `{self.db}`.`t` */"
            if what < 0.5:
                cur.execute(f"replace {hint} into {ghost} (`id`, `v`) values (%s, %s)", (key, value))
            elif what < 0.8:
                cur.execute(
                    f"update {hint} {ghost} set `id`=%s, `v`=%s where ((`id` = %s))", (key, value, key)
                )
            else:
                cur.execute(f"delete {hint} from {ghost} where ((`id` = %s))", (key,))
        self.changes += 1


def copy_in_chunks(server: Any, db: str, target: str, insert: str) -> None:
    for low in range(0, 500, 50):
        server.execute(
            f"{insert} INTO {target} (id, v) SELECT id, v FROM t FORCE INDEX (PRIMARY) "
            f"WHERE id > {low} AND id <= {low + 50} LOCK IN SHARE MODE",
            database=db,
        )
        time.sleep(0.02)


CUT_OVER_LOCK_TIMEOUT = 10  # gh-ost's --cut-over-lock-timeout-seconds (its maximum; the default is 3)


def wait_for_session(server: Any, session: int, state: str, info: str = "%") -> None:
    """Until ``session`` waits in ``state`` on a statement like ``info`` (gh-ost's processlist check)."""
    deadline = time.monotonic() + 30
    while not server.query(
        "SELECT id FROM information_schema.processlist "
        f"WHERE id = {session} AND state LIKE '{state}%' AND info LIKE '{info}'"
    ):
        assert time.monotonic() < deadline, f"session {session} never waited on {state}"
        time.sleep(0.01)


def gh_ost(server: Any, db: str, writer: Writer) -> None:
    table, ghost, sentry, changelog = (f"`{db}`.`{name}`" for name in ("t", "_t_gho", "_t_del", "_t_ghc"))
    server.execute(
        f"create /* gh-ost */ table {ghost} like {table}",
        f"alter /* gh-ost */ table {ghost} ADD COLUMN extra INT NOT NULL DEFAULT 7, MODIFY v VARCHAR(40)",
        f"create /* gh-ost */ table {changelog} (id bigint unsigned auto_increment, last_update timestamp not "
        "null DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, hint varchar(64) charset ascii not null, "
        "value varchar(4096) charset ascii not null, primary key(id), unique key hint_uidx(hint)) "
        "auto_increment=256 comment='gh-ost changelog'",
        f"insert /* gh-ost */ into {changelog} (id, hint, value) values (NULLIF(1, 0), 'heartbeat', 'start') "
        "on duplicate key update last_update=NOW(), value=VALUES(value)",
        database=db,
    )
    writer.mirror = "_t_gho"
    copy_in_chunks(server, db, "_t_gho", "INSERT IGNORE")
    # The atomic cut-over (gh-ost's Applier.AtomicCutOverMagicLock / AtomicCutoverRename):
    # session A creates the sentry table and locks t with it, session B's RENAME blocks behind the
    # lock, then A drops the sentry and unlocks; the RENAME goes first, the blocked writes follow
    # on the new t.
    lock = server.connect(db)
    rename = server.connect(db)
    renamed: list[BaseException | None] = []
    try:
        with lock.cursor() as a:
            a.execute("begin")
            a.execute("select /* gh-ost */ connection_id()")
            lock_session = a.fetchone()[0]
            a.execute("select /* gh-ost */ get_lock(%s, 0)", (f"gh-ost.{lock_session}.lock",))
            assert a.fetchone()[0] == 1
            a.execute(f"set /* gh-ost */ session lock_wait_timeout:={CUT_OVER_LOCK_TIMEOUT * 2}")
            server.execute(
                f"drop /* gh-ost */ table if exists {sentry}",
                f"create /* gh-ost */ table {sentry} (id int auto_increment primary key) "
                "engine=InnoDB comment='ghost-cut-over-sentry'",
                database=db,
            )
            a.execute(f"set /* gh-ost */ session wait_timeout:={CUT_OVER_LOCK_TIMEOUT * 3}")
            a.execute(f"lock /* gh-ost */ tables {table} write, {sentry} write")
            # waitForEventsUpToLock: the state hint, then every change made before the lock is on
            # the ghost table (the writer, which applies its own changes, is blocked on t)
            server.execute(
                f"insert /* gh-ost */ into {changelog} (id, hint, value) values (NULLIF(2, 0), 'state', "
                f"'AllEventsUpToLockProcessed:{time.time_ns()}') "
                "on duplicate key update last_update=NOW(), value=VALUES(value)",
                database=db,
            )
            wait_for_session(server, writer.connection_id, "Waiting for table metadata lock")
            writer.mirror = None

            def atomic_rename() -> None:
                try:
                    with rename.cursor() as b:
                        b.execute("begin")
                        b.execute(f"set /* gh-ost */ session lock_wait_timeout:={CUT_OVER_LOCK_TIMEOUT}")
                        b.execute(f"rename /* gh-ost */ table {table} to {sentry}, {ghost} to {table}")
                    renamed.append(None)
                except BaseException as exc:  # reported below
                    renamed.append(exc)

            renamer = threading.Thread(target=atomic_rename, daemon=True)
            renamer.start()
            wait_for_session(server, rename.thread_id(), "Waiting for table metadata lock", "%rename%")
            assert not renamed  # the RENAME blocks
            a.execute(f"drop /* gh-ost */ table if exists {sentry}")
            a.execute("unlock /* gh-ost */ tables")
            renamer.join(30)
            assert renamed == [None], renamed
    finally:
        lock.close()
        rename.close()
    server.execute(
        f"drop /* gh-ost */ table if exists {sentry}",
        f"drop /* gh-ost */ table if exists {changelog}",
        database=db,
    )


def pt_online_schema_change(server: Any, db: str, writer: Writer) -> None:
    server.execute(
        "CREATE TABLE _t_new LIKE t",
        "ALTER TABLE _t_new ADD COLUMN extra INT NOT NULL DEFAULT 7, MODIFY v VARCHAR(40)",
        "CREATE TRIGGER pt_osc_t_del AFTER DELETE ON t FOR EACH ROW "
        "DELETE IGNORE FROM _t_new WHERE _t_new.id <=> OLD.id",
        "CREATE TRIGGER pt_osc_t_upd AFTER UPDATE ON t FOR EACH ROW BEGIN "
        "DELETE IGNORE FROM _t_new WHERE !(OLD.id <=> NEW.id) AND _t_new.id <=> OLD.id; "
        "REPLACE INTO _t_new (id, v) VALUES (NEW.id, NEW.v); END",
        "CREATE TRIGGER pt_osc_t_ins AFTER INSERT ON t FOR EACH ROW REPLACE INTO _t_new (id, v) VALUES (NEW.id, NEW.v)",
        database=db,
    )
    copy_in_chunks(server, db, "_t_new", "INSERT LOW_PRIORITY IGNORE")
    server.execute("ANALYZE TABLE _t_new", database=db)
    server.execute("RENAME TABLE t TO _t_old, _t_new TO t", database=db)  # writes go on
    server.execute(
        "DROP TABLE IF EXISTS _t_old",
        "DROP TRIGGER IF EXISTS pt_osc_t_del",
        "DROP TRIGGER IF EXISTS pt_osc_t_upd",
        "DROP TRIGGER IF EXISTS pt_osc_t_ins",
        database=db,
    )


TOOLS = {"gh-ost": gh_ost, "pt-osc": pt_online_schema_change}


@pytest.mark.parametrize(
    ("tool", "helpers"),
    [("gh-ost", "not captured"), ("gh-ost", "captured and filtered"), ("pt-osc", "not captured")],
)
def test_online_schema_change_under_write_load(
    mysql_server: Any, unique_db: str, tmp_path: Path, tool: str, helpers: str
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))",
        "INSERT INTO t VALUES " + ", ".join(f"({i}, 's{i}')" for i in range(1, 301, 2)),
        database=db,
    )
    props: dict[str, str] = {
        "topic.prefix": "osc",
        "database.include.list": db,
        "table.include.list": f"{db}\\.t",
        "offset.storage": "memory",
        "schema.history.internal": "memory",
        "data.dir": str(tmp_path),
        "poll.interval.ms": "50",
    }
    if helpers == "captured and filtered":
        props.update(
            {
                "table.include.list": f"{db}\\.t,{db}\\._t_(gho|ghc|del)",
                "transforms": "dropHelpers",
                "transforms.dropHelpers.type": KAFKA + "Filter",
                "transforms.dropHelpers.predicate": "helper",
                "predicates": "helper",
                "predicates.helper.type": KAFKA + "predicates.TopicNameMatches",
                "predicates.helper.pattern": f"osc\\.{db}\\._t_(gho|ghc|del)",
            }
        )
    memory = MemorySink()
    engine = Engine(ConnectorConfig.from_mapping(mysql_server.connector_properties(**props)), sinks=[memory])
    writer = Writer(mysql_server, db)
    try:
        engine.catch_up()
        writer.start()
        time.sleep(0.3)
        TOOLS[tool](mysql_server, db, writer)
        time.sleep(0.3)
        writer.stop.set()
        writer.join(30)
        assert writer.error is None, writer.error
        engine.catch_up()
        engine.delivery.flush()
        table = {
            row[0]: {"id": row[0], "v": row[1], "extra": row[2]}
            for row in mysql_server.query("SELECT id, v, extra FROM t", database=db)
        }
        model = engine.schema.model.table(TableId(db, "t")) if engine.schema is not None else None
    finally:
        engine.close()
    assert writer.changes > 50
    topic = f"osc.{db}.t"
    assert {r.topic for r in memory.records if r.kind is RecordKind.DATA} == {topic}  # no helper-table events
    replayed: dict[int, dict[str, Any]] = {}
    for record in memory.records:
        if record.kind is not RecordKind.DATA or record.topic != topic:
            continue
        if record.op == "d":
            replayed.pop(record.before["id"], None)  # type: ignore[index]
        else:
            replayed[record.after["id"]] = {"extra": 7, **record.after}  # type: ignore[index]
    assert replayed == table
    # rows written after the cut-over carry the new column
    last = [r for r in memory.records if r.kind is RecordKind.DATA and r.topic == topic][-1]
    after_schema = last.value_schema.field("after").schema  # type: ignore[union-attr]
    assert [f.name for f in after_schema.fields or ()] == ["id", "v", "extra"]
    assert after_schema.field("extra").schema.default == 7  # type: ignore[union-attr]
    # the schema history's structure of t is the new one
    assert model is not None
    assert [c.name for c in model.columns] == ["id", "v", "extra"]
    assert model.column("v").length == 40  # type: ignore[union-attr]
    ddl = [r.value.get("ddl") for r in memory.records if r.kind is RecordKind.SCHEMA_CHANGE]
    rename = next(d for d in ddl if d and re.match(r"rename\s+(/\*.*?\*/\s*)?table", d, re.IGNORECASE))
    assert "_t_" in rename
    # the write load overlapped the migration: changes of t before and after the cut-over
    cut = next(
        i
        for i, r in enumerate(memory.records)
        if r.kind is RecordKind.SCHEMA_CHANGE and r.value.get("ddl") == rename
    )
    data = [(i, r) for i, r in enumerate(memory.records) if r.kind is RecordKind.DATA and r.topic == topic]
    streamed_before = [r for i, r in data if i < cut and r.op != "r"]
    after_cut = [r for i, r in data if i > cut]
    assert len(streamed_before) > 10 and len(after_cut) > 10
    assert all("extra" not in (r.after or r.before or {}) for r in streamed_before)
    assert all("extra" in (r.after or r.before or {}) for r in after_cut)
