"""Helpers shared by test modules (moved out of test_streaming.py)."""

from __future__ import annotations

from mysql_cdc_base.records import ChangeRecord, RecordKind


def data(records: list[ChangeRecord], table: str | None = None) -> list[ChangeRecord]:
    return [r for r in records if r.kind == RecordKind.DATA and (table is None or r.table_id.table == table)]
