"""Debezium's MySQL transform ``io.debezium.connector.mysql.transforms.ReadToInsertEvent``: snapshot
reads (``op: "r"``) become inserts (``op: "c"``); nothing else changes (recorded in
``tests/golden/debezium/transforms/read_to_insert.jsonl``)."""

from __future__ import annotations

from dataclasses import replace

from connector.transforms.base import Options
from mysql_cdc_base.records import ChangeRecord, RecordKind


class ReadToInsertEvent:
    def __init__(self, options: Options) -> None:
        options.check_options(frozenset())

    def apply(self, record: ChangeRecord) -> ChangeRecord | None:
        if record.kind is not RecordKind.DATA or not isinstance(record.value, dict):
            return record
        if record.value.get("op") != "r":
            return record
        return replace(record, value={**record.value, "op": "c"})
