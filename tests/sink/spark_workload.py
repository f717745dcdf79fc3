"""The mixed workload of the Spark sink's end-to-end tests: tables of several type families
(integer, composite date + unsigned bigint and string keys, no key) and random DML over them —
inserts, updates, deletes, primary-key changes — that keeps track of the keys each table holds.
"""

from __future__ import annotations

import random
from typing import Any

TABLES = [
    """CREATE TABLE accounts (
         id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, balance DECIMAL(12,2), opened DATE,
         updated DATETIME(3), flags SET('vip','new','closed'), status ENUM('open','frozen'), meta JSON,
         photo BLOB)""",
    """CREATE TABLE ledger (
         day DATE, seq BIGINT UNSIGNED, at TIMESTAMP(6) NULL, took TIME(6), ratio FLOAT, amount DOUBLE,
         bits BIT(5), PRIMARY KEY (day, seq))""",
    """CREATE TABLE places (code CHAR(8) PRIMARY KEY, pt POINT, area GEOMETRY, built YEAR, note TEXT)""",
    """CREATE TABLE audit (msg TEXT, n INT)""",
]


class Workload:
    """Random DML that keeps track of the keys each table holds."""

    def __init__(self, server: Any, db: str, seed: int) -> None:
        self.server, self.db, self.rng = server, db, random.Random(seed)
        self.accounts: set[int] = set()
        self.ledger: set[tuple[str, int]] = set()
        self.places: set[str] = set()
        self.next_id = 1
        self.extra_columns = ""  # values for columns added by ALTER TABLE
        self.dropped: set[str] = set()  # columns dropped by ALTER TABLE

    def account_row(self, key: int) -> str:
        r = self.rng
        return (
            f"({key}, 'acct {key} {r.choice(['ü', 'x', ''])}', {r.randint(-(10**8), 10**8) / 100:.2f}, "
            f"'{r.randint(1990, 2030)}-0{r.randint(1, 9)}-1{r.randint(0, 9)}', "
            f"'2024-05-0{r.randint(1, 9)} 10:11:12.{r.randint(0, 999):03d}', "
            f"'{r.choice(['vip', 'new,closed', ''])}', '{r.choice(['open', 'frozen'])}', "
            f'\'{{"n": {r.randint(0, 9)}, "tags": ["a", "b"]}}\'' + self.photo() + self.extra_columns + ")"
        )

    def photo(self) -> str:
        return f", X'{self.rng.randbytes(6).hex()}'" if "photo" not in self.dropped else ""

    def ledger_row(self, key: tuple[str, int]) -> str:
        r = self.rng
        return (
            f"('{key[0]}', {key[1]}, '2023-0{r.randint(1, 9)}-1{r.randint(0, 9)} 0{r.randint(0, 9)}:00:00."
            f"{r.randint(0, 999999):06d}', '{r.choice(['-838:59:59', '12:00:00.5', '00:00:01'])}', "
            f"{r.choice(['1.5', '-0.25', '3.4e38'])}, {r.random() * 1e6}, b'{r.randint(0, 31):05b}')"
        )

    def place_row(self, key: str) -> str:
        r = self.rng
        return (
            f"('{key}', ST_GeomFromText('POINT({r.randint(-90, 90)} {r.randint(-90, 90)})'), "
            f"ST_GeomFromText('LINESTRING(0 0, {r.randint(1, 9)} 1)', 4326), {r.randint(1901, 2155)}, "
            f"'{r.choice(['é', 'plain', ''])}')"
        )

    def statements(self, count: int) -> list[str]:
        r, out = self.rng, []
        for _ in range(count):
            roll = r.random()
            if roll < 0.35 or not self.accounts:
                keys = [self.next_id + i for i in range(r.randint(1, 3))]
                self.next_id += len(keys)
                self.accounts.update(keys)
                out.append("INSERT INTO accounts VALUES " + ", ".join(self.account_row(k) for k in keys))
                ledger_key = (
                    f"2024-01-{r.randint(10, 28)}",
                    r.choice([r.randint(0, 10**6), 2**64 - 1 - r.randint(0, 99)]),
                )
                if ledger_key not in self.ledger:
                    self.ledger.add(ledger_key)
                    out.append("INSERT INTO ledger VALUES " + self.ledger_row(ledger_key))
                code = f"P{r.randint(0, 10**6):07d}"
                if code not in self.places:
                    self.places.add(code)
                    out.append("INSERT INTO places VALUES " + self.place_row(code))
                out.append(f"INSERT INTO audit VALUES ('insert {keys}', {len(keys)})")
            elif roll < 0.6:
                key = r.choice(sorted(self.accounts))
                out.append(
                    f"UPDATE accounts SET balance = balance + 1.25, name = CONCAT(name, '+'), "
                    f"flags = '{r.choice(['vip', 'closed', ''])}' WHERE id = {key}"
                )
            elif roll < 0.7 and self.ledger:
                day, seq = r.choice(sorted(self.ledger))
                out.append(
                    f"UPDATE ledger SET took = '-00:00:01.5', ratio = -ratio WHERE day = '{day}' AND seq = {seq}"
                )
            elif roll < 0.8:
                key = r.choice(sorted(self.accounts))
                self.accounts.discard(key)
                out.append(f"DELETE FROM accounts WHERE id = {key}")
            elif roll < 0.9:
                key = r.choice(sorted(self.accounts))
                new = self.next_id
                self.next_id += 1
                self.accounts.discard(key)
                self.accounts.add(new)
                out.append(f"UPDATE accounts SET id = {new} WHERE id = {key}")  # primary-key change
            elif self.places:
                old = r.choice(sorted(self.places))
                self.places.discard(old)
                new_code = "Q" + old[1:]
                self.places.add(new_code)
                out.append(f"UPDATE places SET code = '{new_code}', note = 'moved' WHERE code = '{old}'")
        return out

    def add_tier_column(self) -> None:
        """ALTER TABLE accounts ADD COLUMN tier INT NOT NULL DEFAULT 1; later inserts give it 3."""
        self.server.execute("ALTER TABLE accounts ADD COLUMN tier INT NOT NULL DEFAULT 1", database=self.db)
        self.extra_columns = ", 3"

    def truncate_ledger(self) -> None:
        self.server.execute("TRUNCATE TABLE ledger", database=self.db)
        self.ledger.clear()

    def run(self, count: int, per_transaction: int = 3) -> None:
        statements = self.statements(count)
        with self.server.connect(self.db) as conn, conn.cursor() as cur:
            for start in range(0, len(statements), per_transaction):
                cur.execute("BEGIN")
                for sql in statements[start : start + per_transaction]:
                    cur.execute(sql)
                cur.execute("COMMIT")
