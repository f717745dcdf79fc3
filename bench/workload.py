"""The shared benchmark workload: one table, N inserts, N/2 updates and N/4 deletes, so every
benchmark measures the same kind of row changes."""

from __future__ import annotations

from connector.testing.local_server import MySQLServerHandle

TABLE = (
    "CREATE TABLE bench.items (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, qty INT NOT NULL, "
    "price DECIMAL(10,2) NOT NULL, updated DATETIME(3) NOT NULL, note TEXT)"
)


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
                    f"item-{i}",
                    i % 100,
                    f"{i % 1000}.{i % 100:02d}",
                    "2024-05-01 12:00:00.123",
                    "lorem ipsum" if i % 3 else None,
                )
                for i in range(start, min(end, start + batch))
            ]
            cur.executemany("INSERT INTO items VALUES (%s, %s, %s, %s, %s, %s)", values)
        for start in range(first, first + rows // 2, batch):
            cur.execute(
                "UPDATE items SET qty = qty + 1 WHERE id >= %s AND id < %s",
                (start, min(start + batch, first + rows // 2)),
            )
        cur.execute("DELETE FROM items WHERE id >= %s AND id < %s", (first, first + rows // 4))
    return rows + rows // 2 + rows // 4
