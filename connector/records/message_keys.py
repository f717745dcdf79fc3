"""``message.key.columns``: which columns make a table's message key (Debezium's ``CustomKeyMapper``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ddl.model import Table
from mysql_cdc_base.errors import ConfigError

_MESSAGE_KEY_PART = re.compile(r"^\s*([^\s:]+):([^:\s]+)\s*$")


def parse_message_key_columns(text: str | None) -> tuple[re.Pattern[str], ...]:
    """``message.key.columns`` (``db.t:c1,c2;(.*).t2:c``) as Debezium's ``CustomKeyMapper`` reads it:
    one regex ``<table regex>.<column>`` per column, matched case-insensitively against the whole of
    ``db.table.column``."""
    patterns: list[re.Pattern[str]] = []
    if not text:
        return ()
    for part in text.split(";"):
        if not part.strip():
            continue
        match = _MESSAGE_KEY_PART.match(part)
        if match is None:
            raise ConfigError(
                "message.key.columns",
                f"{part.strip()!r} is not <table>:<column>[,<column>...] "
                "(e.g. inventory.customers:pk1,pk2;(.*).purchaseorders:pk3)",
            )
        table, columns = match.groups()
        for column in columns.split(","):
            if not column:
                continue
            try:
                patterns.append(re.compile(f"{table}.{column}", re.IGNORECASE))
            except re.error as exc:
                raise ConfigError(
                    "message.key.columns", f"{table}.{column!r} is not a valid regular expression ({exc})"
                ) from None
    return tuple(patterns)


def key_column_indexes(table: Table, custom_keys: Sequence[re.Pattern[str]]) -> list[int]:
    """Debezium's ``Key``: the columns ``message.key.columns`` selects for the table (in rule
    order, then column order), else the primary key; filters and mappers do not apply."""
    indexes: list[int] = []
    if custom_keys:
        prefix = f"{table.id.database}.{table.id.table}."
        for pattern in custom_keys:
            for index, column in enumerate(table.columns):
                if index not in indexes and pattern.fullmatch(prefix + column.name):
                    indexes.append(index)
    if not indexes:
        by_name = {c.name.lower(): i for i, c in enumerate(table.columns)}
        indexes = [by_name[n.lower()] for n in table.primary_key if n.lower() in by_name]
    return indexes
