"""The row decoder's value forms, on row images built byte by byte from MySQL's storage formats.

The generated reader gives the converters integers, not objects to take apart: DECIMAL unscaled,
DATETIME/TIMESTAMP as microseconds since the epoch, DATE as days since it, TIME as signed microseconds,
YEAR as the year, BIT as an integer, SET as its text; zero dates are None and an invalid DATE stops the
event. The expected values come from MySQL's documented examples (``strings/decimal.cc``,
``my_time_packed_to_binary``), from Python's own calendar, and from Debezium's examples in the
reference digest (section 4.5). The differential and snapshot-equality tests on a real server are in
``test_row_decoder.py``.
"""

from __future__ import annotations

import datetime as dt
import random
from types import SimpleNamespace
from typing import Any

import pytest
from pymysqlreplication.constants import FIELD_TYPE

from connector.binlog.calendar import adjusted_days, civil_from_days, days_from_civil
from connector.binlog.image_reader import InvalidDateError, compile_image_reader
from connector.records.conversion import ConverterSettings, column_converter
from ddl.model import Column, JdbcType, Table
from mysql_cdc_base.table_id import TableId

EPOCH = dt.datetime(1970, 1, 1)
US = dt.timedelta(microseconds=1)


def read_one(column: SimpleNamespace, payload: bytes) -> Any:
    """The value of a one-column row image holding ``payload`` (null bitmap 0: not null)."""
    column.name = "c"
    (value,), end = compile_image_reader([column], {})(b"\x00" + payload, 0)
    assert end == 1 + len(payload)
    return value


def datetime2(year: int, month: int, day: int, hour: int, minute: int, second: int) -> bytes:
    """DATETIME2's 5 bytes: 1 sign bit (set), year*13+month (17), day (5), hour (5), minute (6), second (6)."""
    packed = (1 << 39) | (year * 13 + month) << 22 | day << 17 | hour << 12 | minute << 6 | second
    return packed.to_bytes(5, "big")


@pytest.mark.parametrize(
    ("precision", "scale", "hex_bytes", "unscaled"),
    [
        # strings/decimal.cc's example: 1234567890.1234 as DECIMAL(14,4), and its negation.
        (14, 4, "810DFB38D204D2", 12345678901234),
        (14, 4, "7EF204C72DFB2D", -12345678901234),
        (4, 2, "8A0A", 1010),
        (5, 0, "800000", 0),
    ],
)
def test_decimal_is_its_unscaled_integer(precision: int, scale: int, hex_bytes: str, unscaled: int) -> None:
    column = SimpleNamespace(type=FIELD_TYPE.NEWDECIMAL, precision=precision, decimals=scale)
    assert read_one(column, bytes.fromhex(hex_bytes)) == unscaled


def test_decimal_modes_convert_the_unscaled_integer() -> None:
    col = Column("d", 1, "DECIMAL", JdbcType.DECIMAL, length=14, scale=4)
    table = Table(TableId("db", "t"), (col,))
    as_string = column_converter(col, table, ConverterSettings(decimal_handling_mode="string"))
    as_double = column_converter(col, table, ConverterSettings(decimal_handling_mode="double"))
    assert as_string.from_binlog(-12345678901234) == as_string.from_snapshot("-1234567890.1234")
    assert as_string.from_binlog(-12345678901234) == "-1234567890.1234"
    assert as_string.from_binlog(5) == "0.0005" and as_string.from_snapshot("0.0005") == "0.0005"
    assert (
        as_double.from_binlog(12345678901234) == 1234567890.1234 == as_double.from_snapshot("1234567890.1234")
    )


def test_time2_negative_with_a_fraction() -> None:
    """'-01:00:00.50' as TIME(2), stored as my_time_packed_to_binary does: the integer part floored
    (0x800000 - 4097) and the fraction byte (char)(-50) = 0xCE."""
    column = SimpleNamespace(type=FIELD_TYPE.TIME2, fsp=2)
    assert read_one(column, bytes.fromhex("7FEFFFCE")) == -(3600 * 1_000_000 + 500_000)


def test_time2_six_digits() -> None:
    column = SimpleNamespace(type=FIELD_TYPE.TIME2, fsp=6)
    assert read_one(column, (1 << 47).to_bytes(6, "big")) == 0
    assert read_one(column, ((1 << 47) - 1).to_bytes(6, "big")) == -1  # -00:00:00.000001
    positive = (1 << 47) + ((838 << 12 | 59 << 6 | 59) << 24) + 999_999  # 838:59:59.999999
    assert read_one(column, positive.to_bytes(6, "big")) == (838 * 3600 + 59 * 60 + 59) * 1_000_000 + 999_999


def test_datetime2_is_epoch_microseconds_and_zero_or_invalid_is_none() -> None:
    column = SimpleNamespace(type=FIELD_TYPE.DATETIME2, fsp=3)
    millis = (1230).to_bytes(2, "big")  # fsp 3: ten-thousandths of a second
    expected = (dt.datetime(2020, 2, 29, 13, 14, 15, 123_000) - EPOCH) // US
    assert read_one(column, datetime2(2020, 2, 29, 13, 14, 15) + millis) == expected
    assert read_one(column, datetime2(0, 0, 0, 0, 0, 0) + bytes(2)) is None
    assert read_one(column, datetime2(2020, 0, 10, 10, 0, 0) + bytes(2)) is None
    assert read_one(column, datetime2(2021, 2, 29, 0, 0, 0) + bytes(2)) is None  # no 29th in 2021
    assert read_one(column, datetime2(1, 1, 1, 0, 0, 0) + bytes(2)) == (dt.datetime(1, 1, 1) - EPOCH) // US


def date3(year: int, month: int, day: int) -> bytes:
    return (year << 9 | month << 5 | day).to_bytes(3, "little")


def test_date_is_epoch_days_zero_is_none_invalid_stops() -> None:
    column = SimpleNamespace(type=FIELD_TYPE.DATE)
    assert read_one(column, date3(2020, 2, 29)) == (dt.date(2020, 2, 29) - EPOCH.date()).days
    assert read_one(column, date3(1000, 1, 1)) == (dt.date(1000, 1, 1) - EPOCH.date()).days
    for zero in ((0, 0, 0), (2020, 0, 15), (2020, 4, 0), (0, 1, 1)):
        assert read_one(column, date3(*zero)) is None, zero
    with pytest.raises(InvalidDateError, match="DATE column c holds 2020-02-30"):
        read_one(column, date3(2020, 2, 30))


def test_two_digit_years_as_the_digest_gives_them() -> None:
    """Reference 4.5: DATE 0018-04-01 -> 17622 with the adjuster (-712863 without); DATETIME
    0078-04-01 12:34:56 -> 260282096000."""
    date_column = Column("d", 1, "DATE", JdbcType.DATE)
    table = Table(TableId("db", "t"), (date_column,))
    days = read_one(SimpleNamespace(type=FIELD_TYPE.DATE), date3(18, 4, 1))
    assert column_converter(date_column, table, ConverterSettings()).from_binlog(days) == 17622
    off = ConverterSettings(enable_time_adjuster=False)
    assert column_converter(date_column, table, off).from_binlog(days) == -712863
    datetime_column = Column("t", 1, "DATETIME", JdbcType.TIMESTAMP)
    micros = read_one(SimpleNamespace(type=FIELD_TYPE.DATETIME2, fsp=0), datetime2(78, 4, 1, 12, 34, 56))
    converter = column_converter(
        datetime_column, Table(TableId("db", "t"), (datetime_column,)), ConverterSettings()
    )
    assert converter.from_binlog(micros) == 260282096000 == converter.from_snapshot("0078-04-01 12:34:56")


def test_timestamp2_zero_is_none() -> None:
    column = SimpleNamespace(type=FIELD_TYPE.TIMESTAMP2, fsp=6)
    assert read_one(column, bytes(4) + bytes(3)) is None
    assert read_one(column, (86400).to_bytes(4, "big") + (5).to_bytes(3, "big")) == 86_400_000_005


def test_year_bit_and_set() -> None:
    assert read_one(SimpleNamespace(type=FIELD_TYPE.YEAR), b"\x00") == 0
    assert read_one(SimpleNamespace(type=FIELD_TYPE.YEAR), bytes([121])) == 2021
    assert read_one(SimpleNamespace(type=FIELD_TYPE.BIT, bits=10, bytes=2), b"\x02\x01") == 513
    members = SimpleNamespace(type=FIELD_TYPE.SET, size=1, set_values=["a", "b", "c"])
    assert read_one(members, bytes([0b101])) == "a,c"
    assert read_one(members, b"\x00") == ""


def test_calendar_agrees_with_python_dates() -> None:
    rng = random.Random(31)
    for _ in range(20_000):
        days = rng.randint(-719_162, 2_932_896)  # 0001-01-01 .. 9999-12-31
        date = EPOCH.date() + dt.timedelta(days=days)
        assert civil_from_days(days) == (date.year, date.month, date.day)
        assert days_from_civil(date.year, date.month, date.day) == days
    assert adjusted_days(days_from_civil(0, 2, 29)) == days_from_civil(2000, 2, 29)
    assert days_from_civil(2020, 2, 31) == days_from_civil(2020, 3, 2)  # runs on, as the snapshot reads it
