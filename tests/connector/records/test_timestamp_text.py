"""TIMESTAMP(0..6) as Debezium's ZonedTimestamp text, from the binlog's microseconds since the epoch:
against Python's own ISO rendering of the same instant, over the whole range MySQL's types allow
(years 1-9999, before and after the epoch), random values and the edges, repeats included (the
converter keeps the text of each second it has seen)."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from connector.records.conversion import ConverterSettings, column_converter
from ddl.model import Column, JdbcType, Table
from mysql_cdc_base.table_id import TableId

_EPOCH = dt.datetime(1970, 1, 1)
_MICRO = dt.timedelta(microseconds=1)
_FIRST = (dt.datetime(1, 1, 1) - _EPOCH) // _MICRO
_LAST = (dt.datetime(9999, 12, 31, 23, 59, 59, 999_999) - _EPOCH) // _MICRO


def zoned_text(fsp: int, micros: int) -> str:
    """ISO_OFFSET_DATE_TIME in UTC: ``fsp`` fraction digits (truncated), or for TIMESTAMP(0) the
    fewest that show the value (none for a whole second)."""
    instant = _EPOCH + micros * _MICRO
    whole = instant.replace(microsecond=0).isoformat()
    digits = f"{instant.microsecond:06d}"
    fraction = digits[:fsp] if fsp else digits.rstrip("0")
    return f"{whole}.{fraction}Z" if fraction else f"{whole}Z"


def binlog_timestamp(fsp: int) -> Column:
    return Column(
        name="ts", position=0, data_type="TIMESTAMP", jdbc_type=JdbcType.TIMESTAMP_WITH_TIMEZONE, length=fsp
    )


@pytest.mark.parametrize("fsp", range(7))
def test_timestamp_text_equals_the_iso_rendering_of_the_instant(fsp: int) -> None:
    column = binlog_timestamp(fsp)
    table = Table(TableId("db", "t"), (column,), default_charset="utf8mb4")
    convert = column_converter(column, table, ConverterSettings()).from_binlog
    draw = random.Random(fsp)
    values = [0, 1, -1, 999_999, 1_000_000, -1_000_000, _FIRST, _LAST, _FIRST + 123_456, _LAST - 999_999]
    values += [draw.randint(_FIRST, _LAST) for _ in range(5_000)]
    values += [draw.randint(-(10**6), 10**6) * 1_000_000 for _ in range(200)]  # whole seconds
    for micros in values + values[:500]:  # repeats hit the per-second text
        assert convert(micros) == zoned_text(fsp, micros), micros
