"""The stores' typed settings, read once from the properties: which offset store
(``offset.storage``) and which schema history (``schema.history.internal``) a run uses, and
whether a recovered history prefers its DDL (``schema.history.internal.prefer.ddl``), and the
files of the file-backed ones."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from mysql_cdc_base.properties import PropertyReader


class StoreSettings(NamedTuple):
    offset_storage: str  # memory | file | kafka
    schema_history: str  # memory | file | kafka
    prefer_ddl: bool
    offset_file: Path  # offset.storage.file.filename, else offsets.json in the data directory
    history_file: Path  # schema.history.internal.file.filename, else schema-history.jsonl there

    @classmethod
    def from_config(cls, config: PropertyReader) -> StoreSettings:
        return cls(
            offset_storage=config.get_choice("offset.storage"),
            schema_history=config.get_choice("schema.history.internal"),
            prefer_ddl=config.get_bool("schema.history.internal.prefer.ddl"),
            offset_file=config.path_or_default("offset.storage.file.filename", "offsets.json"),
            history_file=config.path_or_default(
                "schema.history.internal.file.filename", "schema-history.jsonl"
            ),
        )
