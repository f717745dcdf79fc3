"""Helpers of the incremental.snapshot.max.threads tests: the snapshot's rows grouped by window, and
the parts of a record that do not depend on where in the binlog its window closed."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import pymysql

from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.records import ChangeRecord
from tests.connector.incremental_support import payload


def snapshot_windows(records: list[ChangeRecord]) -> list[list[ChangeRecord]]:
    """The ``op: r`` records in runs of one window each: a window's rows all carry the position of
    the event that closed it, and every window closes at a different event."""
    windows: list[list[ChangeRecord]] = []
    closed_at: tuple[Any, ...] | None = None
    for record in records:
        if payload(record)["op"] != "r":
            closed_at = None
            continue
        where = (record.offset.get("file"), record.offset.get("pos"), record.offset.get("event"))
        if where != closed_at:
            windows.append([])
            closed_at = where
        windows[-1].append(record)
    return windows


def position_free(record: ChangeRecord) -> tuple[Any, ...]:
    """A snapshot record without what depends on the binlog position its window closed at."""
    body = payload(record)
    source = {
        k: v for k, v in body["source"].items() if k in ("db", "table", "snapshot", "name", "connector")
    }
    offset = {k: v for k, v in record.offset.items() if k.startswith("incremental_snapshot_")}
    offset.pop("incremental_snapshot_correlation_id", None)  # the signal's id
    return (
        json.dumps(record.key, sort_keys=True),
        json.dumps(body["after"], sort_keys=True),
        body["op"],
        json.dumps(source, sort_keys=True),
        json.dumps(offset, sort_keys=True),
        json.dumps(record.value.get("schema") if isinstance(record.value, dict) else None, sort_keys=True),
    )


def reader_connect(server: MySQLServerHandle, db: str) -> Callable[[], pymysql.connections.Connection]:
    """A connect callable that pickles (the reader processes are spawned), as the admin user."""
    return functools.partial(
        pymysql.connect,
        host=server.host,
        port=server.port,
        user=server.admin.user,
        password=server.admin.password,
        database=db,
        charset="utf8mb4",
    )
