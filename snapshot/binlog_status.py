"""Reading the server's binlog coordinates, MySQL 8.x and MariaDB 10.11 alike.

The statements differ by server kind; they are data of its ``mysql_cdc_base.flavor.FlavorDialect``:

* MySQL ≥ 8.4: ``SHOW BINARY LOG STATUS`` (8.4 removed ``SHOW MASTER STATUS``); older MySQL:
  ``SHOW MASTER STATUS``. Columns: 1 file, 2 position, 5 ``Executed_Gtid_Set`` (newlines removed).
* MariaDB: ``SHOW MASTER STATUS`` (file, position) and ``SELECT @@global.gtid_binlog_pos`` (the
  GTID of the last transaction written to the binlog, per replication domain).

Functions take the flavour as a ``ServerFlavor`` or its text (``mysql``/``mariadb``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import Any

import pymysql

from mysql_cdc_base.flavor import MARIADB, MYSQL, ServerFlavor, dialect_of, version_tuple
from mysql_cdc_base.position import BinlogPosition, GtidSet
from snapshot.errors import BinlogStatusError

Connect = Callable[[], pymysql.connections.Connection]
"""Opens a new connection to the source server as the connector user."""


def executed_gtids_text(cursor: Any, flavor: str) -> str:
    """The server's executed GTIDs as it prints them: MariaDB's ``gtid_binlog_pos`` (the last GTID
    written to the binlog per domain), MySQL's ``gtid_executed`` (newlines removed)."""
    cursor.execute(dialect_of(flavor).executed_gtids_sql())
    row = cursor.fetchone()
    return _text(row[0]).replace("\n", "") if row and row[0] is not None else ""


def executed_gtids(cursor: Any, flavor: str) -> GtidSet:
    return GtidSet.parse(executed_gtids_text(cursor, flavor))


def binlog_status_sql(flavor: str, version_text: str) -> str:
    return dialect_of(flavor).binlog_status_sql(version_tuple(version_text))


def read_binlog_position(cursor: Any, flavor: str, version_text: str) -> BinlogPosition:
    """The current binlog position (and executed GTID set) as seen by ``cursor``'s session."""
    cursor.execute(binlog_status_sql(flavor, version_text))
    row = cursor.fetchone()
    if not row:
        raise BinlogStatusError(
            "the server reports no binary log status (is log_bin enabled, and does the connector user "
            "have REPLICATION CLIENT / BINLOG MONITOR?); the snapshot needs a binlog position to stream from"
        )
    file, pos = _text(row[0]), int(row[1])
    column = dialect_of(flavor).status_gtids_column
    gtids: str | None
    if column is None:
        gtids = executed_gtids_text(cursor, flavor)
    else:
        gtids = _text(row[column]).replace("\n", "") if len(row) > column and row[column] is not None else ""
    return BinlogPosition(file, pos, gtids or None)


def binlog_files(cursor: Any) -> list[str]:
    cursor.execute("SHOW BINARY LOGS")  # both server kinds list their binlogs alike
    return [_text(row[0]) for row in cursor.fetchall()]


def position_problem(cursor: Any, position: BinlogPosition, flavor: str) -> str | None:
    """None when the server can serve the binlog from ``position``; else why not, in words: the
    server lacks GTIDs the offset already covers (it is behind, or not a replica of the same
    primary), or it purged what the offset still needs, or the stored binlog file is gone.

    MySQL with GTIDs: the stored set must be contained in ``gtid_executed`` and nothing it lacks may
    have been purged (Debezium's check). MariaDB with a GTID position: every domain's sequence must
    be in ``gtid_binlog_state`` and not before the GTID list the oldest binlog file starts with.
    Without GTIDs the stored file must still be listed.
    """
    if position.gtids:
        return _GTID_POSITION_PROBLEM[ServerFlavor(flavor)](cursor, position.gtids)
    if position.file in binlog_files(cursor):
        return None
    return f"the binlog file {position.file} is no longer on the server (the binlog was purged)"


def _mysql_gtid_problem(cursor: Any, gtids: str) -> str | None:
    cursor.execute(
        "SELECT GTID_SUBTRACT(%s, @@global.gtid_executed), GTID_SUBTRACT(@@global.gtid_purged, %s)",
        (gtids, gtids),
    )
    ahead, missing = (_text(v).replace("\n", "").strip() for v in cursor.fetchone())
    if ahead:
        return _lacks(ahead)
    return _purged(missing) if missing else None


def _mariadb_gtid_problem(cursor: Any, gtids: str) -> str | None:
    ours = GtidSet.parse(gtids)
    cursor.execute("SELECT @@global.gtid_binlog_state")
    row = cursor.fetchone()
    state = GtidSet.parse(_text(row[0]) if row else "").mariadb
    lacking = [f"{d}-{s}-{q}" for d, (s, q) in ours.mariadb_positions.items() if state.get(d, -1) < q]
    if lacking:
        return _lacks(",".join(lacking))
    files = binlog_files(cursor)
    if not files:
        return "the server lists no binary logs"
    start = _mariadb_start_state(cursor, files[0])
    purged = [f"{d}-{q}" for d, q in ours.mariadb.items() if start.get(d, -1) > q]
    return _purged(",".join(purged) + " (domain-sequence)") if purged else None


_GTID_POSITION_PROBLEM: dict[ServerFlavor, Callable[[Any, str], str | None]] = {
    MYSQL: _mysql_gtid_problem,
    MARIADB: _mariadb_gtid_problem,
}


def stream_start_problem(cursor: Any, file: str, pos: int) -> str | None:
    """None when the binlog can be read from ``file``:``pos`` (an event starts there, or the file
    ends there); else the server's reason (no such file, past its end, inside an event)."""
    try:
        cursor.execute("SHOW BINLOG EVENTS IN %s FROM %s LIMIT 1", (file, pos))
        cursor.fetchall()
    except pymysql.err.MySQLError as exc:
        return str(exc.args[-1])
    return None


_GTID_NEXT = re.compile(r"GTID_NEXT\s*=\s*'([^']+)'", re.IGNORECASE)
_EVENTS_PAGE = 1000


def gtids_at(cursor: Any, flavor: str, file: str, pos: int) -> GtidSet:
    """The GTIDs of the transactions before ``file``:``pos`` (a position ``stream_start_problem``
    accepts), so that a stream that follows GTIDs can start there. A transaction whose GTID event
    is before ``pos`` counts as before it, as MariaDB's ``BINLOG_GTID_POS`` counts it.

    MariaDB: ``BINLOG_GTID_POS``. MySQL: the file's ``Previous_gtids`` plus its GTID events before
    ``pos`` (``SHOW BINLOG EVENTS``, a page at a time)."""
    return _GTIDS_AT[ServerFlavor(flavor)](cursor, file, pos)


def _mariadb_gtids_at(cursor: Any, file: str, pos: int) -> GtidSet:
    cursor.execute("SELECT BINLOG_GTID_POS(%s, %s)", (file, pos))
    row = cursor.fetchone()
    if not row or row[0] is None:
        raise BinlogStatusError(f"the server has no GTID position for {file}:{pos}")
    return GtidSet.parse(_text(row[0]))


def _mysql_gtids_at(cursor: Any, file: str, pos: int) -> GtidSet:
    gtids, start = GtidSet(), 4
    while start < pos:
        cursor.execute(f"SHOW BINLOG EVENTS IN %s FROM %s LIMIT {_EVENTS_PAGE}", (file, start))
        rows = cursor.fetchall()
        for row in rows:
            event_pos, kind, info = int(row[1]), _text(row[2]).lower(), _text(row[5])
            if event_pos >= pos:
                return gtids
            if kind == "previous_gtids":
                gtids = GtidSet.parse(info.replace("\n", ""))
            elif kind.startswith("gtid"):
                match = _GTID_NEXT.search(info)
                if match and match.group(1).upper() != "ANONYMOUS":
                    gtids = gtids.add(match.group(1))
        if len(rows) < _EVENTS_PAGE:
            break
        start = int(rows[-1][4])  # End_log_pos of the page's last event: the next event's start
    return gtids


_GTIDS_AT: dict[ServerFlavor, Callable[[Any, str, int], GtidSet]] = {
    MYSQL: _mysql_gtids_at,
    MARIADB: _mariadb_gtids_at,
}


def _lacks(gtids: str) -> str:
    return (
        f"the server has not got the transactions {gtids} that the connector has already delivered: it "
        "is behind (wait until it has caught up, then restart) or it is not a replica of the same "
        "primary"
    )


def _purged(gtids: str) -> str:
    return f"the server has purged transactions after {gtids} that the connector has not delivered yet"


def _mariadb_start_state(cursor: Any, first_file: str) -> dict[int, int]:
    """MariaDB: domain → sequence of the GTID list event the oldest binlog file starts with (the
    transactions up to it are no longer in any binlog file)."""
    cursor.execute(f"SHOW BINLOG EVENTS IN '{first_file}' LIMIT 5")
    for row in cursor.fetchall():
        if _text(row[2]).lower() == "gtid_list":
            return GtidSet.parse(_text(row[5]).strip().strip("[]")).mariadb
    return {}


def position_available(cursor: Any, position: BinlogPosition, flavor: str) -> bool:
    """False when the server can no longer serve the binlog from ``position`` (``position_problem``)."""
    return position_problem(cursor, position, flavor) is None


def position_unavailable(connect: Connect, position: BinlogPosition, flavor: str) -> str | None:
    """``position_problem`` on a connection of its own."""
    with contextlib.closing(connect()) as conn, conn.cursor() as cur:
        return position_problem(cur, position, flavor)


def position_purged(connect: Connect, position: BinlogPosition, flavor: str) -> bool:
    """True when the server can no longer serve the binlog from ``position`` (``position_available``
    on a connection of its own)."""
    return position_unavailable(connect, position, flavor) is not None


def earliest_position(connect: Connect) -> BinlogPosition:
    """Start of the oldest binlog on the server (``snapshot.mode=never`` without offsets)."""
    with contextlib.closing(connect()) as conn, conn.cursor() as cur:
        files = binlog_files(cur)
    if not files:
        raise BinlogStatusError("the server lists no binary logs (SHOW BINARY LOGS); is log_bin enabled?")
    return BinlogPosition(files[0], 4)


def _text(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode()
    return "" if value is None else str(value)
