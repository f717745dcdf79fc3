"""The exact SQL each locking mode and privilege set sends, read back from the server's general log."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.table_id import TableId
from snapshot.snapshotter import SnapshotError, SnapshotSettings
from tests.snapshot.conftest import GeneralLog, RecordingListener, SnapshotterFactory

A, B, C = TableId("seq", "a"), TableId("seq", "b"), TableId("seq", "c")


@pytest.fixture(scope="module")
def server() -> Iterator[LocalMySQLServer]:
    # A server of this module's own: its general log and its databases are exactly what the tests see.
    with LocalMySQLServer() as s:
        s.execute(
            "CREATE DATABASE seq",
            "CREATE TABLE seq.a (id INT PRIMARY KEY, v VARCHAR(10))",
            "INSERT INTO seq.a VALUES (1, 'one'), (2, 'two')",
            "CREATE TABLE seq.b (id INT PRIMARY KEY)",
            "INSERT INTO seq.b VALUES (1)",
            "CREATE TABLE seq.c (id INT PRIMARY KEY)",
        )
        yield s


@pytest.fixture(scope="module")
def general_log(server: LocalMySQLServer) -> GeneralLog:
    return GeneralLog(server)


@pytest.fixture
def factory(server: LocalMySQLServer) -> SnapshotterFactory:
    return SnapshotterFactory(server)


def listing(server: LocalMySQLServer) -> list[str]:
    databases = [r[0] for r in server.query("SHOW DATABASES")]
    return ["SHOW DATABASES"] + [
        f"SHOW FULL TABLES IN `{db}` where Table_Type = 'BASE TABLE'" for db in databases
    ]


SESSION = [
    "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    "SET SESSION lock_wait_timeout=10",
    "SET SESSION innodb_lock_wait_timeout=10",
]
POSITION = ["SHOW MASTER STATUS", "SELECT @@global.gtid_binlog_pos"]
STRUCTURE = [
    "SHOW VARIABLES WHERE Variable_name IN ('character_set_server','collation_server')",
    "SHOW VARIABLES WHERE Variable_name = 'sql_mode'",
    "SELECT schema_name, default_character_set_name, default_collation_name FROM information_schema.schemata",
]
# Table structures are read in the server's zone (TIMESTAMP defaults as written), then the session's.
SERVER_ZONE = "SET @mysql_cdc_session_zone = @@session.time_zone, @@session.time_zone = @@global.time_zone"
SESSION_ZONE = "SET @@session.time_zone = @mysql_cdc_session_zone"
ESTIMATES_AB = ["USE `seq`", "SHOW TABLE STATUS LIKE 'a'", "USE `seq`", "SHOW TABLE STATUS LIKE 'b'"]
ROWS_AB = [
    "SELECT UNIX_TIMESTAMP()",
    "SELECT * FROM `seq`.`a`",
    "SELECT UNIX_TIMESTAMP()",
    "SELECT * FROM `seq`.`b`",
]
ROWS_ABC = ROWS_AB + ["SELECT UNIX_TIMESTAMP()", "SELECT * FROM `seq`.`c`"]
ESTIMATES_ABC = ESTIMATES_AB + ["USE `seq`", "SHOW TABLE STATUS LIKE 'c'"]


def snapshot_statements(general_log: GeneralLog, factory: SnapshotterFactory) -> list[str]:
    statements = general_log.statements(factory.connection_ids)
    start = statements.index("SHOW DATABASES")
    # Before the snapshot's first statement only pymysql's connection set-up may appear.
    assert all(s.upper().startswith("SET ") for s in statements[:start]), statements[:start]
    return statements[start:]


def test_minimal_global_read_lock_sequence(server, general_log, factory):
    listener = RecordingListener()
    factory(SnapshotSettings()).run(listener)
    assert snapshot_statements(general_log, factory) == [
        *listing(server),
        *SESSION,
        "FLUSH TABLES WITH READ LOCK",
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        "START TRANSACTION WITH CONSISTENT SNAPSHOT",
        *POSITION,
        *STRUCTURE,
        SERVER_ZONE,
        "SHOW CREATE TABLE `seq`.`a`",
        "SHOW CREATE TABLE `seq`.`b`",
        "SHOW CREATE TABLE `seq`.`c`",
        SESSION_ZONE,
        "UNLOCK TABLES",
        *ESTIMATES_ABC,
        *ROWS_ABC,
        "ROLLBACK",
    ]
    assert factory.connection_ids and len(factory.connection_ids) == 1


def test_table_lock_workflow_when_reload_is_not_granted(server, general_log, factory):
    user = server.create_user("no_reload", "pw1", "SELECT, SHOW DATABASES, REPLICATION CLIENT, LOCK TABLES")
    listener = RecordingListener()
    snapshotter = factory(SnapshotSettings(), user=user, captured=lambda t: t != C)
    snapshotter.run(listener)
    assert snapshot_statements(general_log, factory) == [
        *listing(server),
        *SESSION,
        "FLUSH TABLES WITH READ LOCK",  # refused: no RELOAD
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        "START TRANSACTION WITH CONSISTENT SNAPSHOT",
        "SHOW GRANTS FOR CURRENT_USER",
        "LOCK TABLES `seq`.`a` READ, `seq`.`b` READ",
        *POSITION,
        *STRUCTURE,
        SERVER_ZONE,
        "SHOW CREATE TABLE `seq`.`a`",
        "SHOW CREATE TABLE `seq`.`b`",
        SESSION_ZONE,
        *ESTIMATES_AB,
        *ROWS_AB,
        "COMMIT",  # the transaction ends first ...
        "UNLOCK TABLES",  # ... then the table locks are released
        SERVER_ZONE,
        "SHOW CREATE TABLE `seq`.`c`",  # structure of the table that was not locked
        SESSION_ZONE,
        "ROLLBACK",
    ]
    assert snapshotter.last_summary is not None and snapshotter.last_summary.locking == "table"
    # The not-locked table's structure is reported after the rows, like Debezium's delayed schema tables.
    ddl = [e for e in listener.events if e[0] == "ddl"]
    assert ddl[-1][2].startswith("CREATE TABLE `c`")
    assert listener.events.index(ddl[-1]) > max(i for i, e in enumerate(listener.events) if e[0] == "end")
    assert listener.events[-1] == ("complete",)


def test_no_reload_and_no_lock_tables_fails_with_the_grant_to_add(server, general_log, factory):
    user = server.create_user("no_locks", "pw2", "SELECT, SHOW DATABASES, REPLICATION CLIENT")
    with pytest.raises(SnapshotError) as exc:
        factory(SnapshotSettings(), user=user).run(RecordingListener())
    message = str(exc.value)
    assert "'LOCK TABLES' privilege" in message and "GRANT LOCK TABLES" in message
    assert "snapshot.locking.mode=none" in message
    assert snapshot_statements(general_log, factory)[-3:] == [
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        "START TRANSACTION WITH CONSISTENT SNAPSHOT",
        "SHOW GRANTS FOR CURRENT_USER",
    ]


def test_extended_holds_the_global_lock_until_all_rows_were_read(server, general_log, factory):
    factory(SnapshotSettings(locking_mode="extended")).run(RecordingListener())
    assert snapshot_statements(general_log, factory) == [
        *listing(server),
        *SESSION,
        "FLUSH TABLES WITH READ LOCK",
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        *POSITION,
        *STRUCTURE,
        SERVER_ZONE,
        "SHOW CREATE TABLE `seq`.`a`",
        "SHOW CREATE TABLE `seq`.`b`",
        "SHOW CREATE TABLE `seq`.`c`",
        SESSION_ZONE,
        *ESTIMATES_ABC,
        *ROWS_ABC,
        "UNLOCK TABLES",
        "ROLLBACK",
    ]


def test_none_takes_no_lock(server, general_log, factory):
    user = server.create_user("select_only", "pw3", "SELECT, SHOW DATABASES, REPLICATION CLIENT")
    factory(SnapshotSettings(locking_mode="none"), user=user).run(RecordingListener())
    assert snapshot_statements(general_log, factory) == [
        *listing(server),
        *SESSION,
        *POSITION,
        *STRUCTURE,
        SERVER_ZONE,
        "SHOW CREATE TABLE `seq`.`a`",
        "SHOW CREATE TABLE `seq`.`b`",
        "SHOW CREATE TABLE `seq`.`c`",
        SESSION_ZONE,
        *ESTIMATES_ABC,
        *ROWS_ABC,
        "ROLLBACK",
    ]


def test_minimal_percona_backup_lock_falls_back_to_table_locks_on_mariadb(server, general_log, factory):
    if not server.is_mariadb:
        pytest.skip("LOCK TABLES FOR BACKUP exists on Percona Server; MariaDB refuses it")
    factory(SnapshotSettings(locking_mode="minimal_percona"), captured=lambda t: t == A).run(
        RecordingListener()
    )
    statements = snapshot_statements(general_log, factory)
    lock_at = statements.index("LOCK TABLES FOR BACKUP")
    # No isolation reset after a backup lock; the table-lock fallback follows.
    assert statements[lock_at + 1 : lock_at + 4] == [
        "START TRANSACTION WITH CONSISTENT SNAPSHOT",
        "SHOW GRANTS FOR CURRENT_USER",
        "LOCK TABLES `seq`.`a` READ",
    ]


def test_minimal_percona_no_table_locks_refuses_to_fall_back(server, factory):
    with pytest.raises(SnapshotError, match="forbids table locks"):
        factory(SnapshotSettings(locking_mode="minimal_percona_no_table_locks")).run(RecordingListener())


def test_parallel_readers_pin_their_snapshot_while_the_lock_is_held(server, general_log, factory):
    listener = RecordingListener()
    factory(SnapshotSettings(max_threads=2), captured=lambda t: t != C).run(listener)
    main_id, reader_id = factory.connection_ids
    log = [
        (t, s)
        for t, s in general_log.statements_with_threads([main_id, reader_id])
        if s != "SET AUTOCOMMIT = 0" and not s.startswith("SET NAMES")
    ]
    reader = [s for t, s in log if t == reader_id]
    assert reader[:2] == [
        "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        "START TRANSACTION WITH CONSISTENT SNAPSHOT",
    ]
    order = [(t, s) for t, s in log]
    pinned = order.index((reader_id, "START TRANSACTION WITH CONSISTENT SNAPSHOT"))
    assert order.index((main_id, "SHOW MASTER STATUS")) < pinned < order.index((main_id, "UNLOCK TABLES"))
    # The reader connection was opened before the lock, so the lock is not held while connecting.
    assert order.index((reader_id, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")) < order.index(
        (main_id, "FLUSH TABLES WITH READ LOCK")
    )
    selects = sorted(s for _, s in log if s.startswith("SELECT * FROM"))
    assert selects == ["SELECT * FROM `seq`.`a`", "SELECT * FROM `seq`.`b`"]
    assert sorted(listener.rows(A)) == [(1, "one"), (2, "two")] and listener.rows(B) == [(1,)]
