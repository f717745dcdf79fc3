"""Sample consumer application: an order book kept up to date from Debezium change events.

This is the code a team consuming the shop database's change events would write. It reads messages
the way a Kafka consumer receives them - topic, key bytes, value bytes in Kafka Connect's JSON
converter format with schemas - and knows nothing about mysql-cdc, which is what lets its tests run
against the live connector, the database-free fake, or a captured JSON-lines file alike.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

REVENUE_STATUSES = ("paid", "shipped")


@dataclass
class Order:
    id: int
    customer: str
    status: str
    placed_at: dt.datetime
    lines: dict[int, Decimal] = field(default_factory=dict)  # line_no -> qty * unit_price

    @property
    def total(self) -> Decimal:
        return sum(self.lines.values(), Decimal("0.00"))


def _field_schema(schema: dict[str, Any], image: str, name: str) -> dict[str, Any]:
    row_schema = next(f for f in schema["fields"] if f["field"] == image)
    return next(f for f in row_schema["fields"] if f["field"] == name)


def _decimal(schema: dict[str, Any], image: str, name: str, encoded: str) -> Decimal:
    # org.apache.kafka.connect.data.Decimal: base64 of the unscaled two's-complement integer.
    scale = int(_field_schema(schema, image, name)["parameters"]["scale"])
    unscaled = int.from_bytes(base64.b64decode(encoded), "big", signed=True)
    return Decimal(unscaled).scaleb(-scale)


def _timestamp(millis: int) -> dt.datetime:
    # io.debezium.time.Timestamp: milliseconds since the epoch of a DATETIME (no time zone).
    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=millis)


class OrderBook:
    def __init__(self, topic_prefix: str, database: str) -> None:
        self.orders_topic = f"{topic_prefix}.{database}.orders"
        self.lines_topic = f"{topic_prefix}.{database}.order_lines"
        self.orders: dict[int, Order] = {}
        self._lines: dict[int, dict[int, Decimal]] = {}
        self.handled = 0

    def handle(self, topic: str, key: bytes | None, value: bytes | None) -> None:
        if value is None:
            return  # a tombstone only tells log compaction to drop the key
        if topic not in (self.orders_topic, self.lines_topic):
            return  # schema changes and other tables
        message = json.loads(value)
        payload, schema = message["payload"], message["schema"]
        if topic == self.orders_topic:
            self._on_order(payload, schema)
        else:
            self._on_line(payload, schema)
        self.handled += 1

    def _on_order(self, payload: dict[str, Any], schema: dict[str, Any]) -> None:
        if payload["op"] == "d":
            self.orders.pop(payload["before"]["id"], None)
            return
        row = payload["after"]
        self.orders[row["id"]] = Order(
            row["id"],
            row["customer"],
            row["status"],
            _timestamp(row["placed_at"]),
            self._lines.setdefault(row["id"], {}),
        )

    def _on_line(self, payload: dict[str, Any], schema: dict[str, Any]) -> None:
        if payload["before"] is not None and payload["op"] in ("u", "d"):
            old = payload["before"]
            self._lines.setdefault(old["order_id"], {}).pop(old["line_no"], None)
        row = payload["after"]
        if row is not None:
            price = _decimal(schema, "after", "unit_price", row["unit_price"])
            self._lines.setdefault(row["order_id"], {})[row["line_no"]] = row["qty"] * price

    def revenue(self) -> Decimal:
        return sum((o.total for o in self.orders.values() if o.status in REVENUE_STATUSES), Decimal("0.00"))

    def summary(self) -> dict[int, tuple[str, str, Decimal]]:
        return {
            o.id: (o.customer, o.status, o.total) for o in sorted(self.orders.values(), key=lambda o: o.id)
        }
