"""Proleptic Gregorian day arithmetic on plain integers, for any year (0 included).

The row decoder turns a binlog date into days since 1970-01-01 with these, and the temporal converters
apply Debezium's two-digit-year adjuster to such day numbers, so no date object is built per value.
"""

from __future__ import annotations

EPOCH_DAY_MICROS = 86_400_000_000


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of ``year-month-day``; a day past the month's end runs on into the next
    month (the server keeps such dates under ALLOW_INVALID_DATES, and the snapshot reads them so)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """``(year, month, day)`` of a day number since 1970-01-01 (the inverse of ``days_from_civil``)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def month_length(year: int, month: int) -> int:
    """Days in ``month`` of ``year``; 0 for a month that does not exist (0, or above 12)."""
    if not 1 <= month <= 12:
        return 0
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def adjust_year(year: int) -> int:
    """Debezium's two-digit-year adjuster (``enable.time.adjuster``): 0-69 -> 20xx, 70-99 -> 19xx."""
    if year < 70:
        return year + 2000
    if year < 100:
        return year + 1900
    return year


# Day number of 0100-01-01: day numbers below it have a two-digit year.
YEAR_100_DAYS = days_from_civil(100, 1, 1)


def adjusted_days(days: int) -> int:
    """``days`` with the two-digit-year adjuster applied to its year (the month and day stay)."""
    if days >= YEAR_100_DAYS:
        return days
    year, month, day = civil_from_days(days)
    return days_from_civil(adjust_year(year), month, day)


def adjusted_micros(micros: int) -> int:
    """Microseconds since the epoch with the two-digit-year adjuster applied to their date."""
    if micros >= YEAR_100_DAYS * EPOCH_DAY_MICROS:
        return micros
    days, rest = divmod(micros, EPOCH_DAY_MICROS)
    return adjusted_days(days) * EPOCH_DAY_MICROS + rest
