"""The shared benchmark workload: one table, N inserts, N/2 updates and N/4 deletes, so every
benchmark measures the same kind of row changes.

The table has the column mix of a typical captured table (issue 14): INT, BIGINT, VARCHAR, TEXT,
DECIMAL, DATETIME(3), DATE, TIMESTAMP, ENUM and JSON.
"""

from __future__ import annotations

from connector.testing.local_server import MySQLServerHandle

TABLE = (
    "CREATE TABLE bench.items (id INT PRIMARY KEY, account BIGINT NOT NULL, name VARCHAR(64) NOT NULL, "
    "qty INT NOT NULL, price DECIMAL(10,2) NOT NULL, updated DATETIME(3) NOT NULL, due DATE, "
    "seen TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, state ENUM('new','paid','sent') NOT NULL, "
    "attrs JSON, note TEXT)"
)
_INSERT = "INSERT INTO items VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
_STATES = ("new", "paid", "sent")


def replication_settings(server: MySQLServerHandle) -> dict[str, object]:
    """``connection_settings`` of a bare mysql-replication reader as the connector user (defined
    here, not on the server handle, so that a baseline checkout of an older connector runs it too)."""
    return {
        "host": server.host,
        "port": server.port,
        "user": server.connector.user,
        "passwd": server.connector.password,
    }


def write_workload(server: MySQLServerHandle, rows: int, first: int = 0) -> int:
    """Insert ``rows`` rows with ids from ``first``, update half, delete a quarter; returns the number
    of row changes written."""
    with server.connect("bench") as conn, conn.cursor() as cur:
        batch = 500
        end = first + rows
        for start in range(first, end, batch):
            values = [
                (
                    i,
                    3_000_000_000 + i,
                    f"item-{i}",
                    i % 100,
                    f"{i % 1000}.{i % 100:02d}",
                    "2024-05-01 12:00:00.123",
                    "2024-06-01" if i % 4 else None,
                    "2024-05-02 08:30:00",
                    _STATES[i % 3],
                    f'{{"tags": ["a", "b"], "n": {i % 7}}}' if i % 2 else None,
                    "lorem ipsum" if i % 3 else None,
                )
                for i in range(start, min(end, start + batch))
            ]
            cur.executemany(_INSERT, values)
        for start in range(first, first + rows // 2, batch):
            cur.execute(
                "UPDATE items SET qty = qty + 1, state = 'paid' WHERE id >= %s AND id < %s",
                (start, min(start + batch, first + rows // 2)),
            )
        cur.execute("DELETE FROM items WHERE id >= %s AND id < %s", (first, first + rows // 4))
    return rows + rows // 2 + rows // 4


# Issue 31's streaming table and load: eleven column types, and inserts, updates and deletes in the
# proportions 60 : 25 : 15, every statement changing 1,000 rows.
CHANGES_TABLE = (
    "CREATE TABLE bench.changes (id INT PRIMARY KEY, account BIGINT NOT NULL, name VARCHAR(64) NOT NULL, "
    "note TEXT, price DECIMAL(12,2) NOT NULL, updated DATETIME(3) NOT NULL, due DATE, "
    "seen TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), state ENUM('new','paid','sent') NOT NULL, "
    "attrs JSON, flag TINYINT NOT NULL)"
)
STATEMENT_ROWS = 1_000
_CHANGES_INSERT = "INSERT INTO changes VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
_NOTE = "a short free-text note about this row, as an operator would write it"


def changes_load(inserts: int) -> tuple[int, int, int]:
    """The (inserts, updates, deletes) of issue 31's load scaled to ``inserts`` inserts:
    60,000 / 25,000 / 15,000 at the default."""
    return inserts, inserts * 25 // 60, inserts * 15 // 60


def _changes_row(i: int) -> tuple[object, ...]:
    return (
        i,
        5_000_000_000 + i,
        f"customer-{i:08d}",
        _NOTE if i % 5 else None,
        f"{i % 100_000}.{i % 100:02d}",
        f"2024-05-01 12:{i % 60:02d}:00.{i % 1000:03d}",
        "2024-06-01" if i % 4 else None,
        f"2024-05-02 08:30:{i % 60:02d}.{i % 1_000_000:06d}",
        _STATES[i % 3],
        f'{{"tags": ["a", "b"], "n": {i % 7}, "ok": true}}' if i % 2 else None,
        i % 2,
    )


def write_changes_workload(server: MySQLServerHandle, inserts: int) -> tuple[int, int, int]:
    """Issue 31's load on ``bench.changes`` (``CHANGES_TABLE``, created empty beforehand): the
    inserts, then updates of the first rows, then deletes of the rows after them, each statement
    changing ``STATEMENT_ROWS`` rows (the last one of each kind fewer). Returns (inserts, updates,
    deletes), the row changes written."""
    inserted, updates, deletes = changes_load(inserts)
    with server.connect("bench") as conn, conn.cursor() as cur:
        for start in range(0, inserted, STATEMENT_ROWS):
            # One multi-row INSERT per call: pymysql rewrites executemany of an INSERT ... VALUES.
            cur.executemany(
                _CHANGES_INSERT,
                [_changes_row(i) for i in range(start, min(inserted, start + STATEMENT_ROWS))],
            )
        for start in range(0, updates, STATEMENT_ROWS):
            cur.execute(
                "UPDATE changes SET account = account + 1, price = price + 1, state = 'paid', "
                "flag = 1 - flag, updated = updated + INTERVAL 1 SECOND WHERE id >= %s AND id < %s",
                (start, min(updates, start + STATEMENT_ROWS)),
            )
        for start in range(updates, updates + deletes, STATEMENT_ROWS):
            cur.execute(
                "DELETE FROM changes WHERE id >= %s AND id < %s",
                (start, min(updates + deletes, start + STATEMENT_ROWS)),
            )
    return inserted, updates, deletes
