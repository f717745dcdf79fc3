"""The OLTP benchmark workload: many small tables and small transactions (issues 40 and 41).

``TABLES`` tables (INT key, INT, VARCHAR(32), DECIMAL(10,2), DATETIME(3)) of ``ROWS`` rows each,
then changes in transactions of 1-4 single-row statements spread over every table: about 40%
inserts, 45% updates and 15% deletes. This is the binlog a busy OLTP server writes: per change a
GTID or BEGIN, a TABLE_MAP, a rows event and an XID, and a commit for every table touched.
"""

from __future__ import annotations

import random
from collections import Counter

from connector.testing.local_server import MySQLServerHandle

TABLES = 40
ROWS = 100


def table_names(tables: int = TABLES) -> list[str]:
    return [f"t{i:02d}" for i in range(tables)]


def create_tables(server: MySQLServerHandle, database: str, tables: int = TABLES, rows: int = ROWS) -> None:
    statements = [f"CREATE DATABASE IF NOT EXISTS {database}"]
    for name in table_names(tables):
        statements.append(
            f"CREATE TABLE {database}.{name} (id INT PRIMARY KEY, n INT NOT NULL, s VARCHAR(32), "
            "amount DECIMAL(10,2) NOT NULL, at DATETIME(3) NOT NULL)"
        )
        values = ", ".join(
            f"({i}, {i % 97}, 'row-{i}', {i % 1000}.{i % 100:02d}, '2024-05-01 12:00:00.{i % 1000:03d}')"
            for i in range(1, rows + 1)
        )
        statements.append(f"INSERT INTO {database}.{name} VALUES {values}")
    server.execute(*statements)


class OltpWriter:
    """Writes the changes; keeps each table's keys so updates and deletes hit rows that exist."""

    def __init__(self, database: str, tables: int = TABLES, rows: int = ROWS, seed: int = 40) -> None:
        self.database = database
        self.rng = random.Random(seed)
        self.keys = {name: list(range(1, rows + 1)) for name in table_names(tables)}
        self.next_key = rows + 1
        # Row changes written so far by kind ("inserts", "updates", "deletes").
        self.counts: Counter[str] = Counter()

    def write(self, server: MySQLServerHandle, changes: int) -> int:
        """``changes`` row changes in transactions of 1-4 statements; returns the changes written."""
        rng, done = self.rng, 0
        names = list(self.keys)
        with server.connect(self.database) as conn, conn.cursor() as cur:
            while done < changes:
                cur.execute("BEGIN")
                for _ in range(min(rng.randint(1, 4), changes - done)):
                    self._change(cur, rng.choice(names))
                    done += 1
                cur.execute("COMMIT")
        return done

    def _change(self, cur: object, table: str) -> None:
        rng, keys = self.rng, self.keys[table]
        roll = rng.random()
        execute = cur.execute  # type: ignore[attr-defined]
        if roll < 0.40 or len(keys) < 10:
            key, self.next_key = self.next_key, self.next_key + 1
            execute(
                f"INSERT INTO {table} VALUES (%s, %s, %s, %s, NOW(3))",
                (key, rng.randint(0, 10**6), f"new-{key}", f"{rng.randint(0, 99999) / 100:.2f}"),
            )
            keys.append(key)
            self.counts["inserts"] += 1
        elif roll < 0.85:
            key = rng.choice(keys)
            execute(f"UPDATE {table} SET n = n + 1, s = %s, at = NOW(3) WHERE id = %s", (f"u-{key}", key))
            self.counts["updates"] += 1
        else:
            key = keys.pop(rng.randrange(len(keys)))
            execute(f"DELETE FROM {table} WHERE id = %s", (key,))
            self.counts["deletes"] += 1
