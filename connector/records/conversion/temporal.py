"""Dates and times: DATE, DATETIME, TIMESTAMP, TIME, YEAR.

The binlog decoder gives DATE as days since the epoch, DATETIME as microseconds since the epoch of
its wall clock, TIMESTAMP as microseconds since the epoch, TIME as signed microseconds, YEAR as the
year, and None for zero dates. The snapshot's text is parsed into the same forms here (``_..._from_text``),
so each type and mode has one conversion; the two-digit-year adjuster works on day numbers.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import logging
from collections.abc import Callable
from typing import Any

from connector.binlog.calendar import adjust_year as _adjust_year
from connector.binlog.calendar import adjusted_days, adjusted_micros, days_from_civil
from connector.records.conversion.family import (
    UTC,
    Builder,
    Convert,
    ConverterSettings,
    FamilyMapping,
    identity,
)
from ddl.model import Column
from mysql_cdc_base.errors import MysqlCdcError

log = logging.getLogger(__name__)

_EPOCH = dt.datetime(1970, 1, 1)
_ONE_US = dt.timedelta(microseconds=1)


def _year(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    adjust = settings.enable_time_adjuster

    # Both paths give the year (0 for YEAR 0000). Debezium runs it through the two-digit-year
    # adjuster, so 0000 becomes 2000 while enable.time.adjuster is on.
    def from_number(value: int) -> int:
        return _adjust_year(value) if adjust and value < 100 else value

    def from_text(text: Any) -> int:
        return from_number(int(text))

    return FamilyMapping(
        "int32", from_number, from_text, name="io.debezium.time.Year", version=1, default=from_text
    )


def _parse_date_text(text: str) -> tuple[int, int, int] | None:
    """``YYYY-MM-DD`` -> (y, m, d); None for zero dates and zero-in-date values."""
    year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
    if month == 0 or day == 0:
        return None
    return year, month, day


def _parse_datetime_text(text: str) -> tuple[int, int, int, int, int] | None:
    """``YYYY-MM-DD HH:MM:SS[.f*]`` -> (y, m, d, seconds of day, microseconds); None if zero."""
    ymd = _parse_date_text(text)
    if ymd is None:
        return None
    seconds = int(text[11:13]) * 3600 + int(text[14:16]) * 60 + int(text[17:19])
    frac = text[20:26]
    micros = int(frac.ljust(6, "0")) if frac else 0
    return (*ymd, seconds, micros)


# -- the snapshot's text in the decoder's forms (None: a zero date) --
def _days_from_text(text: str) -> int | None:
    """DATE text as days since the epoch of its literal year."""
    ymd = _parse_date_text(text)
    return None if ymd is None else days_from_civil(*ymd)


def _micros_from_text(text: str) -> int | None:
    """DATETIME text as microseconds since the epoch of its literal wall clock."""
    parts = _parse_datetime_text(text)
    if parts is None:
        return None
    year, month, day, seconds, micros = parts
    return (days_from_civil(year, month, day) * 86400 + seconds) * 1_000_000 + micros


def _zone_micros_from_text(zone: dt.tzinfo) -> Callable[[str], int | None]:
    """TIMESTAMP text, a wall clock in the snapshot session's ``zone``, as microseconds since the epoch."""
    if zone == UTC:
        return _micros_from_text

    def micros(text: str) -> int | None:
        parts = _parse_datetime_text(text)
        if parts is None:
            return None
        year, month, day, seconds, us = parts
        local = dt.datetime(year, month, day, seconds // 3600, seconds // 60 % 60, seconds % 60, us)
        utc = local.replace(tzinfo=zone).astimezone(UTC).replace(tzinfo=None)
        return (utc - _EPOCH) // _ONE_US

    return micros


def _or_none(core: Callable[[int], Any], adapt: Callable[[str], int | None]) -> Convert:
    """``core`` after ``adapt``, None (a zero date: the null rule applies) passed through."""

    def convert(text: str) -> Any:
        value = adapt(text)
        return None if value is None else core(value)

    return convert


def _date(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    name = (
        "org.apache.kafka.connect.data.Date"
        if settings.time_precision_mode == "connect"
        else "io.debezium.time.Date"
    )
    # Days since the epoch (the decoder's form), two-digit years adjusted when the adjuster is on.
    from_days: Convert = adjusted_days if settings.enable_time_adjuster else identity
    from_text = _or_none(from_days, _days_from_text)

    def from_default(text: str) -> Any:
        text = text.strip()
        if text == "0" or len(text) < 10:
            return on_zero
        # DATE defaults may be written with a time part; only the date counts.
        value = from_text(text[:10])
        return on_zero if value is None else value

    return FamilyMapping(
        "int32",
        from_days,
        from_text,
        name=name,
        version=1,
        fallback=0,
        default=from_default,
        may_invalidate=True,
    )


def _datetime_precision(column: Column) -> int:
    return column.length if column.length is not None and column.length > 0 else 0


def _datetime(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    adjust = settings.enable_time_adjuster
    fsp = _datetime_precision(column)
    if settings.time_precision_mode == "connect":
        name, micro = "org.apache.kafka.connect.data.Timestamp", False
    elif fsp <= 3:
        name, micro = "io.debezium.time.Timestamp", False
    else:
        name, micro = "io.debezium.time.MicroTimestamp", True
    divisor = 1 if micro else 1000

    # Microseconds since the epoch (the decoder's form), two-digit years adjusted when the adjuster
    # is on, in the schema's unit.
    def from_micros(micros: int) -> int:
        return (adjusted_micros(micros) if adjust else micros) // divisor

    from_snapshot = _or_none(from_micros, _micros_from_text)

    def from_text(text: str) -> Any:
        value = from_snapshot(text)
        return on_zero if value is None else value

    def from_default(text: str) -> Any:
        text = text.strip()
        if _is_current_timestamp(text):
            # CURRENT_TIMESTAMP/NOW() (the parser writes Debezium's "1970-01-01 00:00:00") is 0, with
            # or without ON UPDATE, nullable or not; only zero dates are "no default" when nullable.
            text = _EPOCH_TEXT
        if text == "0" or len(text) < 10:
            return on_zero
        if len(text) == 10:
            text += " 00:00:00"
        return from_text(text)

    return FamilyMapping(
        "int64",
        from_micros,
        from_snapshot,
        name=name,
        version=1,
        fallback=0,
        default=from_default,
        may_invalidate=True,
    )


def _is_current_timestamp(text: str) -> bool:
    upper = text.upper().replace(" ", "")
    return upper.startswith(("CURRENT_TIMESTAMP", "NOW(", "LOCALTIME", "LOCALTIMESTAMP"))


_EPOCH_TEXT = "1970-01-01 00:00:00"  # the parser's CURRENT_TIMESTAMP (Debezium's EPOCH_TIMESTAMP)
_ZONED_NAME = "io.debezium.time.ZonedTimestamp"
_ZONED_EPOCH = "1970-01-01T00:00:00Z"


def _zoned_formatter(fsp: int) -> Callable[[int], str]:
    """Debezium ZonedTimestamp text of microseconds since the epoch (UTC): exactly ``fsp`` fraction
    digits for TIMESTAMP(1..6) (truncated), ISO_OFFSET_DATE_TIME's minimal fraction for TIMESTAMP(0).
    Values are not cached (they rarely repeat, and a cache that misses costs more than the
    formatting); the text up to the second is, as rows written together share it. Written out
    rather than through a datetime's isoformat or a format spec: a quarter of that cost per value."""

    if fsp == 0:

        def minimal(micros: int) -> str:
            second, fraction = divmod(micros, 1_000_000)
            if fraction:  # as many digits as it takes
                return _second_text(second) + str(1_000_000 + fraction)[1:].rstrip("0") + "Z"
            return _second_text(second)[:-1] + "Z"

        return minimal

    stop = fsp + 1  # the fraction's digits in str(1_000_000 + fraction)

    def fixed(micros: int) -> str:
        second, fraction = divmod(micros, 1_000_000)
        return _second_text(second) + str(1_000_000 + fraction)[1:stop] + "Z"

    return fixed


@functools.lru_cache(maxsize=4096)
def _second_text(second: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.`` of ``second`` seconds since the epoch (UTC)."""
    days, of_day = divmod(second, 86_400)
    hours, rest = divmod(of_day, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{_day_text(days)}T{hours:02d}:{minutes:02d}:{seconds:02d}."


@functools.lru_cache(maxsize=256)
def _day_text(days: int) -> str:
    """ISO text of the day ``days`` after 1970-01-01 (OverflowError outside years 1-9999, as the
    datetime it replaces)."""
    return (_EPOCH_DATE + dt.timedelta(days=days)).isoformat()


_EPOCH_DATE = _EPOCH.date()


def _timestamp(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    fsp = _datetime_precision(column)
    # Microseconds since the epoch (the decoder's form; the snapshot's text is in the session's zone).
    render = _zoned_formatter(fsp)

    def from_default(text: str) -> Any:
        # Debezium's convertToTimestamp: CURRENT_TIMESTAMP (the parser's epoch literal), "0" and zero
        # dates are no default for a nullable column and the epoch for a NOT NULL one; another
        # literal is read as a UTC wall clock (Debezium reads it in the JVM's zone, UTC in Connect
        # deployments and in the recordings), whatever zone the snapshot session runs in. The
        # snapshot reads SHOW CREATE TABLE in the server's zone, so both paths see the literal as
        # written.
        text = text.strip()
        if _is_current_timestamp(text) or text in ("0", _EPOCH_TEXT) or len(text) < 10:
            return on_zero
        micros = _micros_from_text(text)
        return on_zero if micros is None else render(micros)

    return FamilyMapping(
        "string",
        render,
        _or_none(render, _zone_micros_from_text(settings.server_time_zone)),
        name=_ZONED_NAME,
        version=1,
        fallback=_ZONED_EPOCH,
        default=from_default,
        may_invalidate=True,
    )


def _time_text_to_micros(text: str) -> int:
    """``[-]HHH:MM:SS[.ffffff]`` -> signed microseconds."""
    negative = text.startswith("-")
    body = text[1:] if negative else text
    hms, _, frac = body.partition(".")
    hours, minutes, seconds = hms.split(":")
    micros = ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1_000_000
    if frac:
        micros += int(frac[:6].ljust(6, "0"))
    return -micros if negative else micros


def _time(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    mapping = _TIME_MODES[settings.time_precision_mode](column, settings, on_zero)
    convert = mapping.default or mapping.snapshot
    return dataclasses.replace(mapping, default=lambda text: convert(_time_part(text)))


def _time_part(text: str) -> str:
    """A TIME default's time: MySQL accepts a datetime literal (``'0000-00-00 01:00:00.000'``, kept
    verbatim in a streamed DDL), of which Debezium reads the part after the date."""
    text = text.strip()
    return text.rpartition(" ")[2] if " " in text else text


def _time_micro(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    # Signed microseconds: the decoder's form already.
    return FamilyMapping(
        "int64",
        identity,
        _time_text_to_micros,
        name="io.debezium.time.MicroTime",
        version=1,
        fallback=0,
    )


def _millis_toward_floor(micros: int) -> int:
    # Java Duration.toMillis(): seconds * 1000 + nanos / 1e6 with non-negative nanos = floor.
    return micros // 1000


def _time_milli(name: str, large_values: bool) -> Builder:
    """TIME as int32 milliseconds. Kafka Connect's Time (connect mode) only holds a time of day:
    Debezium fails to convert negative or >= 24h values there and, with the default
    event.converting.failure.handling.mode=warn, leaves the field null."""

    def build(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
        if large_values:

            def from_binlog(micros: int) -> Any:
                return _millis_toward_floor(micros)

            def from_text(text: str) -> Any:
                return _millis_toward_floor(_time_text_to_micros(text))
        else:
            # Out of range: null in a nullable column (Debezium warns); a NOT NULL column (a key) has
            # no value to give that another row could not have, so the event fails, as in Debezium.
            outside = (
                _time_outside_day(column.name) if on_zero is None else _time_unrepresentable(column.name)
            )

            def from_binlog(micros: int) -> Any:
                return _time_of_day_millis(micros, outside)

            def from_text(text: str) -> Any:
                return _time_of_day_millis(_time_text_to_micros(text), outside)

        return FamilyMapping(
            "int32", from_binlog, from_text, name=name, version=1, fallback=0, may_invalidate=not large_values
        )

    return build


_DAY_MICROS = 86_400_000_000


class UnrepresentableValueError(MysqlCdcError, ValueError):
    """A value that the configured representation cannot hold, in a column that has no null to give
    instead: the event cannot be emitted without replacing the value by one another row can have."""


def _time_of_day_millis(micros: int, outside: Callable[[int], None]) -> int | None:
    if 0 <= micros <= _DAY_MICROS:
        return micros // 1000
    outside(micros)
    return None


def _time_outside_day(name: str) -> Callable[[int], None]:
    def warn(micros: int) -> None:
        log.warning(
            "column %r: TIME value of %d us is outside 00:00-24:00 and cannot be represented with "
            "time.precision.mode=connect; the field is set to null",
            name,
            micros,
        )

    return warn


def _time_unrepresentable(name: str) -> Callable[[int], None]:
    def fail(micros: int) -> None:
        raise UnrepresentableValueError(
            f"column {name!r} is NOT NULL and its TIME value of {micros} us is outside 00:00-24:00, "
            "which time.precision.mode=connect cannot represent (Debezium stops too); use "
            "time.precision.mode=adaptive_time_microseconds to capture such values"
        )

    return fail


def _time_adaptive(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    if _datetime_precision(column) <= 3:
        return _time_milli("io.debezium.time.Time", True)(column, settings, on_zero)
    return _time_micro(column, settings, on_zero)


_TIME_MODES: dict[str, Builder] = {
    "adaptive_time_microseconds": _time_micro,
    "adaptive": _time_adaptive,
    "connect": _time_milli("org.apache.kafka.connect.data.Time", False),
}


BUILDERS: dict[str, Builder] = {
    "YEAR": _year,
    "DATE": _date,
    "DATETIME": _datetime,
    "TIMESTAMP": _timestamp,
    "TIME": _time,
}
