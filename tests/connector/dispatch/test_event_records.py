"""``EventBuilder.event_change_records`` (all rows of one rows event at once) builds exactly the
records of one ``change_records`` call per row: same keys, envelopes, source blocks, offsets, headers
and clock readings, for every operation, key changes, transactions, skipped operations, restarts
inside an event (``first_row``) and unnumbered rows."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from connector.config import ConnectorConfig
from connector.records.builder import EventBuilder, SourcePosition
from connector.records.transactions import TransactionMetadata
from connector.testing.fake import FakeConnector
from mysql_cdc_base.position import SourceOffset

DDL = "CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(20), qty INT NOT NULL DEFAULT 3)"
OFFSET = SourceOffset("mysql-bin.000003", 400, server_id=1, ts_sec=1_700_000_000, event=2)
IMAGES: dict[str, list[tuple[Any, Any]]] = {
    "c": [(None, {"id": i, "name": f"n{i}", "qty": i}) for i in range(4)],
    # The third row changes its key: a delete, its tombstone and a create for that row alone.
    "u": [
        ({"id": 1, "name": "a", "qty": 1}, {"id": 1, "name": "b", "qty": 1}),
        ({"id": 2, "name": "a", "qty": 1}, {"id": 2, "name": None, "qty": 2}),
        ({"id": 3, "name": "a", "qty": 1}, {"id": 30, "name": "a", "qty": 1}),
        ({"id": 4, "name": "a", "qty": 1}, {"id": 4, "name": "c", "qty": 1}),
    ],
    "d": [({"id": i, "name": "x", "qty": 0}, None) for i in range(3)],
}


def builder(**properties: str) -> EventBuilder:
    config = ConnectorConfig.from_mapping(
        {
            "database.hostname": "h",
            "database.user": "u",
            "database.server.id": "1",
            "topic.prefix": "shop",
            **properties,
        }
    )
    ticks = itertools.count(1_700_000_000_000_000_000, 1_000_003)  # a clock that moves per reading
    clock: Callable[[], int] = lambda: next(ticks)  # noqa: E731
    return EventBuilder(config, run_id="run", clock=clock)


def in_transaction() -> TransactionMetadata:
    transactions = TransactionMetadata("shop.transaction")
    transactions.begin("uuid:7", 1_700_000_000_000, OFFSET)
    return transactions


@pytest.mark.parametrize("op", ["c", "u", "d"])
@pytest.mark.parametrize(
    ("first_row", "number_rows", "event_ts_ms", "transaction", "properties"),
    [
        (0, True, 1_700_000_000_123, False, {}),
        (2, True, 1_700_000_000_123, False, {}),  # restarted inside the event: rows 0-1 done before
        (0, False, 1_700_000_000_123, False, {}),  # one row per event, as snapshots hand them
        (0, True, 0, False, {}),  # no event time: each source block reads the clock
        (0, True, 1_700_000_000_123, True, {}),  # transaction blocks and counters
        (0, True, 1_700_000_000_123, False, {"skipped.operations": "c"}),
        (0, True, 1_700_000_000_123, False, {"tombstones.on.delete": "false"}),
    ],
)
def test_one_event_builds_what_one_call_per_row_builds(
    op: str,
    first_row: int,
    number_rows: bool,
    event_ts_ms: int,
    transaction: bool,
    properties: dict[str, str],
) -> None:
    table = FakeConnector(DDL, topic_prefix="shop").table("shop.items")
    at_once, per_row = builder(**properties), builder(**properties)
    ts_once, ts_row = at_once.table_schema(table), per_row.table_schema(table)
    where = SourcePosition("mysql-bin.000003", 450, server_id=1, ts_ms=event_ts_ms, row=0)
    images = IMAGES[op][first_row:]
    txn_once = in_transaction() if transaction else None
    txn_row = in_transaction() if transaction else None

    got = at_once.event_change_records(
        ts_once, op, images, where, OFFSET, txn_once, first_row=first_row, number_rows=number_rows
    )

    expected = []
    for index, (before, after) in enumerate(images, first_row):
        offset = OFFSET.at_row(index + 1) if number_rows else OFFSET
        expected += per_row.change_records(
            ts_row, op, before, after, where, offset, txn_row, row=index if number_rows else None
        )
    assert got == expected
    assert [dict(r.offset or {}) for r in got] == [dict(r.offset or {}) for r in expected]
    if op == "c" and properties.get("skipped.operations") == "c":
        assert got == []
    else:
        assert got  # the comparison was about records
    if op == "u" and first_row == 0 and not properties:
        assert len(got) == len(images) + 2  # the key change's delete, tombstone and create
