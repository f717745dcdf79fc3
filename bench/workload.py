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
