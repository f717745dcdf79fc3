"""One shop scenario, played against a real server (SQL) or against the fake (its calls).

``play(shop)`` is written once; ``SqlShop`` turns each step into the statement a shop application
would run, ``FakeShop`` into the ``FakeConnector`` call that stands for it (tracking rows so it can
give the fake full before-images, as the binlog carries them).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any, Protocol

from connector.testing.fake import FakeConnector
from connector.testing.local_server import MySQLServerHandle

SHOP_DDL = [
    "CREATE TABLE orders (id INT NOT NULL PRIMARY KEY, customer VARCHAR(40) NOT NULL, "
    "status ENUM('new','paid','shipped','cancelled') NOT NULL DEFAULT 'new', placed_at DATETIME(3) NOT NULL)",
    "CREATE TABLE order_lines (order_id INT NOT NULL, line_no INT NOT NULL, sku VARCHAR(20) NOT NULL, "
    "qty INT NOT NULL, unit_price DECIMAL(10,2) NOT NULL, PRIMARY KEY (order_id, line_no))",
]
Row = Mapping[str, Any]


class Shop(Protocol):
    def insert(self, table: str, *rows: Row) -> None: ...

    def update(self, table: str, key: Row, changes: Row) -> None: ...

    def delete(self, table: str, key: Row) -> None: ...

    def transaction(self) -> contextlib.AbstractContextManager[Any]: ...


def play(shop: Shop) -> None:
    monday = dt.datetime(2024, 3, 4, 9, 30, 0, 250000)
    shop.insert(
        "orders",
        {"id": 1, "customer": "ada", "status": "new", "placed_at": monday},
        {"id": 2, "customer": "bob", "status": "new", "placed_at": monday + dt.timedelta(minutes=5)},
    )
    shop.insert(
        "order_lines",
        {"order_id": 1, "line_no": 1, "sku": "tea", "qty": 2, "unit_price": Decimal("9.99")},
        {"order_id": 1, "line_no": 2, "sku": "cup", "qty": 1, "unit_price": Decimal("0.50")},
    )
    shop.insert(
        "order_lines", {"order_id": 2, "line_no": 1, "sku": "pot", "qty": 1, "unit_price": Decimal("25.00")}
    )
    shop.update("orders", {"id": 1}, {"status": "paid"})
    shop.update("order_lines", {"order_id": 1, "line_no": 2}, {"qty": 3})
    with shop.transaction():  # order 3 and its lines commit together
        shop.insert(
            "orders",
            {"id": 3, "customer": "cy", "status": "paid", "placed_at": monday + dt.timedelta(days=1)},
        )
        shop.insert(
            "order_lines",
            {"order_id": 3, "line_no": 1, "sku": "tea", "qty": 10, "unit_price": Decimal("9.99")},
            {"order_id": 3, "line_no": 2, "sku": "bag", "qty": 1, "unit_price": Decimal("1.25")},
        )
    shop.delete("order_lines", {"order_id": 2, "line_no": 1})
    shop.delete("orders", {"id": 2})
    shop.update("order_lines", {"order_id": 3, "line_no": 2}, {"line_no": 7})  # a key change
    shop.update("order_lines", {"order_id": 3, "line_no": 1}, {"unit_price": Decimal("8.50")})
    shop.update("orders", {"id": 3}, {"status": "shipped"})


# What the order book must show after play(): id -> (customer, status, total).
EXPECTED_SUMMARY = {
    1: ("ada", "paid", Decimal("21.48")),  # 2 x 9.99 + 3 x 0.50
    3: ("cy", "shipped", Decimal("86.25")),  # 10 x 8.50 + 1 x 1.25
}
EXPECTED_REVENUE = Decimal("107.73")


def _where(key: Row) -> tuple[str, list[Any]]:
    return " AND ".join(f"`{c}` = %s" for c in key), list(key.values())


class SqlShop:
    """Runs each step as SQL on one connection (autocommit, except inside ``transaction()``)."""

    def __init__(self, server: MySQLServerHandle, database: str) -> None:
        self.conn = server.connect(database)

    def _run(self, sql: str, params: list[Any]) -> None:
        with self.conn.cursor() as cur:
            cur.execute(sql, params)

    def insert(self, table: str, *rows: Row) -> None:
        columns = list(rows[0])
        one = "(" + ", ".join(["%s"] * len(columns)) + ")"
        self._run(
            f"INSERT INTO `{table}` ({', '.join(f'`{c}`' for c in columns)}) VALUES "
            + ", ".join([one] * len(rows)),
            [r[c] for r in rows for c in columns],
        )

    def update(self, table: str, key: Row, changes: Row) -> None:
        where, params = _where(key)
        sets = ", ".join(f"`{c}` = %s" for c in changes)
        self._run(f"UPDATE `{table}` SET {sets} WHERE {where}", [*changes.values(), *params])

    def delete(self, table: str, key: Row) -> None:
        where, params = _where(key)
        self._run(f"DELETE FROM `{table}` WHERE {where}", params)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.begin()
        yield
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()


class FakeShop:
    """Plays the steps on a ``FakeConnector``, keeping the table contents for before-images."""

    def __init__(self, fake: FakeConnector) -> None:
        self.fake = fake
        self.rows: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {}

    def _key(self, table: str, row: Row) -> tuple[Any, ...]:
        return tuple(row[c] for c in self.fake.table(table).primary_key)

    def insert(self, table: str, *rows: Row) -> None:
        self.fake.insert(table, *rows)
        for row in rows:
            self.rows.setdefault(table, {})[self._key(table, row)] = dict(row)

    def update(self, table: str, key: Row, changes: Row) -> None:
        before = self.rows[table].pop(self._key(table, key))
        self.fake.update(table, before, changes)
        after = {**before, **changes}
        self.rows[table][self._key(table, after)] = after

    def delete(self, table: str, key: Row) -> None:
        self.fake.delete(table, self.rows[table].pop(self._key(table, key)))

    def transaction(self) -> contextlib.AbstractContextManager[Any]:
        return self.fake.transaction()
