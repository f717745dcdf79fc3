"""Which databases, tables and columns are captured (Debezium's include/exclude lists)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from connector.records.settings import SIGNAL_COLLECTION_KEY, CaptureSettings
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertyReader
from mysql_cdc_base.table_id import TableId

BUILTIN_DATABASES = frozenset({"mysql", "sys", "information_schema", "performance_schema"})


def _matches(patterns: tuple[re.Pattern[str], ...], text: str) -> bool:
    # Debezium uses Pattern.matches: the regex must match the whole identifier.
    return any(p.fullmatch(text) for p in patterns)


class TableFilter(NamedTuple):
    database_include: tuple[re.Pattern[str], ...] = ()
    database_exclude: tuple[re.Pattern[str], ...] = ()
    table_include: tuple[re.Pattern[str], ...] = ()
    table_exclude: tuple[re.Pattern[str], ...] = ()
    column_include: tuple[re.Pattern[str], ...] = ()
    column_exclude: tuple[re.Pattern[str], ...] = ()
    ignore_builtin: bool = True
    # Captured whatever the lists say: the signal table (Debezium adds it to the captured tables).
    always: frozenset[TableId] = frozenset()

    @classmethod
    def from_config(cls, config: PropertyReader) -> TableFilter:
        return cls.from_settings(CaptureSettings.from_config(config))

    @classmethod
    def from_settings(cls, settings: CaptureSettings) -> TableFilter:
        lists = settings.lists
        return cls(
            database_include=lists["database.include.list"],
            database_exclude=lists["database.exclude.list"],
            table_include=lists["table.include.list"],
            table_exclude=lists["table.exclude.list"],
            column_include=lists["column.include.list"],
            column_exclude=lists["column.exclude.list"],
            ignore_builtin=settings.ignore_builtin,
            always=frozenset(_signal_table(settings.signal_collection)),
        )

    def database_captured(self, database: str) -> bool:
        if self.ignore_builtin and database.lower() in BUILTIN_DATABASES:
            return False
        if self.database_include:
            return _matches(self.database_include, database)
        return not _matches(self.database_exclude, database)

    def table_captured(self, table_id: TableId) -> bool:
        if table_id in self.always:
            return True
        if not self.database_captured(table_id.database):
            return False
        name = str(table_id)
        if self.table_include:
            return _matches(self.table_include, name)
        return not _matches(self.table_exclude, name)

    def column_captured(self, table_id: TableId, column: str) -> bool:
        name = f"{table_id}.{column}"
        if self.column_include:
            return _matches(self.column_include, name)
        return not _matches(self.column_exclude, name)


def _signal_table(name: str | None) -> list[TableId]:
    if not name:
        return []
    try:
        return [TableId.parse(name)]
    except ValueError:
        raise ConfigError(SIGNAL_COLLECTION_KEY, f"{name!r} is not a db.table name") from None


def gtid_source_filter(settings: CaptureSettings) -> Callable[[str], bool] | None:
    """``gtid.source.includes`` / ``gtid.source.excludes`` as a predicate on a GTID source (MySQL
    server UUID, MariaDB ``domain-server``; whole-name match, case-insensitive), or None when
    neither is set."""
    includes, excludes = settings.gtid_includes, settings.gtid_excludes
    if includes:
        return lambda source: _matches(includes, source)
    if excludes:
        return lambda source: not _matches(excludes, source)
    return None
