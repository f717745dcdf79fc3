"""mysql-replication's row values turned into the forms the generated row decoder produces.

The decoder (``connector.binlog.row_decoder``) hands the converters plain integers and strings: an
unscaled integer for DECIMAL, microseconds or days since the epoch for temporal types (None for zero
dates), the true year for YEAR, the bits of BIT as an integer, a SET as its members' text. What it
cannot compile is read by the library's own decoder, whose values carry the library's quirks
(YEAR 0000 as 1900, negative TIME(n) with a fraction as ``-(H+1) + f``, an empty SET as None beside
a ``none_sources`` note, a zero TIMESTAMP as the epoch). They are undone here, at the library's edge,
once per value, so that the converters see one form whichever decoder read the row.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pymysqlreplication.constants import FIELD_TYPE

Adapt = Callable[[Any], Any]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_ORDINAL = _EPOCH.toordinal()
_ONE_US = dt.timedelta(microseconds=1)
# Precision wide enough for DECIMAL(65,30) without rounding.
_WIDE = decimal.Context(prec=200)
_EMPTY_SET_SOURCE = "empty set"
_LEFT_OUT_SOURCE = "cols bitmap"  # a column the image leaves out (binlog_row_image=NOBLOB)


def _decimal(column: Any) -> Adapt:
    scale = column.decimals

    def unscaled(value: decimal.Decimal) -> int:
        return int(_WIDE.scaleb(value, scale))

    return unscaled


def _micros(value: dt.datetime) -> int:
    return (value - _EPOCH) // _ONE_US


def _datetime(column: Any) -> Adapt:
    return _micros


def _timestamp(column: Any) -> Adapt:
    def micros(value: dt.datetime) -> int | None:
        # The library gives the epoch for the zero TIMESTAMP (no valid TIMESTAMP is the epoch).
        return _micros(value) or None

    return micros


def _date(column: Any) -> Adapt:
    def days(value: dt.date) -> int:
        return value.toordinal() - _EPOCH_ORDINAL

    return days


def _time2(column: Any) -> Adapt:
    def micros(value: dt.timedelta) -> int:
        total: int = value // _ONE_US
        fraction = total % 1_000_000
        if total < 0 and fraction:
            # The library returns -(H+1)+f for the stored -(H+f).
            return total + 1_000_000 - 2 * fraction
        return total

    return micros


def _time(column: Any) -> Adapt:
    def micros(value: dt.timedelta) -> int:
        total: int = value // _ONE_US
        return total

    return micros


def _year(column: Any) -> Adapt:
    def year(value: int) -> int:
        # The library adds 1900 to the stored byte, so YEAR 0000 arrives as 1900 (outside YEAR's range).
        return 0 if value == 1900 else value

    return year


def _set(column: Any) -> Adapt:
    options = tuple(column.set_values or ())

    def members(value: Any) -> str:
        return ",".join([option for option in options if option in value])

    return members


def _bit(column: Any) -> Adapt:
    def bits(value: str) -> int:
        return int(value, 2)

    return bits


_ADAPTERS: dict[int, Callable[[Any], Adapt]] = {
    FIELD_TYPE.NEWDECIMAL: _decimal,
    FIELD_TYPE.DATETIME2: _datetime,
    FIELD_TYPE.DATETIME: _datetime,
    FIELD_TYPE.TIMESTAMP2: _timestamp,
    FIELD_TYPE.TIMESTAMP: _timestamp,
    FIELD_TYPE.DATE: _date,
    FIELD_TYPE.TIME2: _time2,
    FIELD_TYPE.TIME: _time,
    FIELD_TYPE.YEAR: _year,
    FIELD_TYPE.SET: _set,
    FIELD_TYPE.BIT: _bit,
}


def value_adapters(columns: Sequence[Any]) -> tuple[Adapt | None, ...]:
    """Per table-map column, the function taking the library's non-null value to the decoder's form
    (None: the value is already in it)."""
    return tuple(
        factory(column) if (factory := _ADAPTERS.get(column.type)) is not None else None for column in columns
    )


def library_image(
    values: Mapping[str, Any],
    none_sources: Mapping[str, str],
    adapters: Sequence[Adapt | None],
    left_out: Sequence[Any] | None = None,
) -> list[Any]:
    """One row image from the library (``values`` by column name, in column order) in the decoder's
    forms: an empty SET, which the library gives as None with a ``none_sources`` note, is ''; a
    column the image leaves out (NOBLOB: a BLOB/TEXT column) is its ``left_out`` entry (the
    ``unavailable.value.placeholder``, text or bytes, which the column's converter turns into its form)."""
    image: list[Any] = []
    for index, ((name, value), adapt) in enumerate(zip(values.items(), adapters, strict=True)):
        if value is None:
            source = none_sources.get(name)
            if source == _LEFT_OUT_SOURCE and left_out is not None:
                image.append(left_out[index])
            else:
                image.append("" if source == _EMPTY_SET_SOURCE else None)
        else:
            image.append(value if adapt is None else adapt(value))
    return image
