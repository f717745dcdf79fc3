"""The snapshot's statements on the server: each one logged as it runs, SET and CREATE DATABASE text
as Debezium writes it, the table structures read in the server's time zone (``SHOW CREATE TABLE``),
the grants check, and how a server error or a lost connection is told apart
(``snapshot.snapshotter``)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping
from typing import Any

import pymysql

from mysql_cdc_base.table_id import TableId
from snapshot.policy.queries import quote_identifier, quote_table

# pymysql error codes that mean the connection itself is gone (not a refused statement).
_CONNECTION_LOST = frozenset({2006, 2013, 2055})
_NO_SUCH_TABLE = 1146

# The statements log under the snapshotter's name, as they did when they lived there.
log = logging.getLogger("snapshot.snapshotter")


# -- SQL text helpers (pure) ------------------------------------------------------------------------
def sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def set_statement_for(variables: Mapping[str, str | None]) -> str:
    """Debezium's ``setStatementFor``: names sorted, a value quoted only if it holds ``,`` or ``;``."""
    parts = []
    for name in sorted(variables):
        value = variables[name] or ""
        if "," in value or ";" in value:
            value = f"'{value}'"
        parts.append(f"{name}={value}")
    return "SET " + ", ".join(parts) + ";"


def create_database_statement(database: str, charset: str | None, collation: str | None) -> str:
    ddl = f"CREATE DATABASE {quote_identifier(database)}"
    if charset:
        ddl += f" CHARSET {charset}"
    if collation:
        ddl += f" COLLATE {collation}"
    return ddl


# -- small I/O helpers -------------------------------------------------------------------------------
def execute(cur: Any, sql: str) -> None:
    log.debug("snapshot SQL: %s", sql)
    cur.execute(sql)


def execute_commit(conn: pymysql.connections.Connection) -> None:
    log.debug("snapshot SQL: COMMIT")
    conn.commit()


# SHOW CREATE TABLE prints TIMESTAMP defaults in the session's zone: table structures are read in the
# server's own zone, the zone the DDL was written in and that the binlog's DDL text shows (the
# session itself may run in UTC or in database.connectionTimeZone).
_SERVER_ZONE = "SET @mysql_cdc_session_zone = @@session.time_zone, @@session.time_zone = @@global.time_zone"
_SESSION_ZONE = "SET @@session.time_zone = @mysql_cdc_session_zone"


@contextlib.contextmanager
def server_time_zone(cur: Any) -> Iterator[None]:
    """Runs the block's statements (``show_create_table``) in the server's zone, then restores the
    session's zone."""
    execute(cur, _SERVER_ZONE)
    try:
        yield
    finally:
        execute(cur, _SESSION_ZONE)


def show_create_table(cur: Any, table_id: TableId) -> str | None:
    """The table's ``SHOW CREATE TABLE`` text, or None when the table is gone. Call it inside
    ``server_time_zone`` so that TIMESTAMP defaults show as written."""
    try:
        execute(cur, f"SHOW CREATE TABLE {quote_table(table_id)}")
    except pymysql.MySQLError as exc:
        if exc.args and exc.args[0] == _NO_SUCH_TABLE:
            log.warning("table %s was dropped while the snapshot started; skipping it", table_id)
            return None
        raise
    row = cur.fetchone()
    return text_of(row[1]) if row else None


def has_privilege(cur: Any, privilege: str) -> bool:
    # Debezium's userHasPrivileges: any grant line mentioning ALL or the privilege.
    execute(cur, "SHOW GRANTS FOR CURRENT_USER")
    for row in cur.fetchall():
        grant = text_of(row[0]).upper()
        if "ALL" in grant or privilege.upper() in grant:
            return True
    return False


def reraise_if_disconnected(exc: pymysql.MySQLError) -> None:
    if exc.args and exc.args[0] in _CONNECTION_LOST:
        raise exc


def abandon(conn: pymysql.connections.Connection) -> None:
    if conn.open:
        with contextlib.suppress(Exception):
            conn.close()


def text_of(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode()
    return "" if value is None else str(value)


def optional_text(value: Any) -> str | None:
    return None if value is None else text_of(value)
