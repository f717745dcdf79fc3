"""The fake connector's row values: Python values as pymysql returns them, brought to the form the
snapshot converters take (``SNAPSHOT_CONVERSIONS``), and a row's ``before``/``after`` payload with
the columns a test leaves out filled in as the server would (``connector.testing.fake``)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from connector.records.builder import TableSchema
from ddl.model import CHARACTER_TYPES, Column, Table
from ddl.mysql_types import Family, canonical_type, spellings_of
from mysql_cdc_base.connect import ConnectSchema

Row = Mapping[str, Any] | Sequence[Any]


# -- Python values -> the form the snapshot converters take (SNAPSHOT_CONVERSIONS) ---------------------
Normalize = Callable[[Any], Any]


def _as_int(value: Any) -> Any:
    return int(value) if isinstance(value, bool | str) else value


def _as_float(value: Any) -> Any:
    return float(value)


_HALF_UP = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP)


def _as_decimal_text(column: Column) -> Normalize:
    # The server prints exactly `scale` fraction digits; the snapshot converter relies on that.
    exponent = decimal.Decimal(1).scaleb(-(column.scale or 0))

    def normalize(value: Any) -> str:
        number = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
        return format(_HALF_UP.quantize(number, exponent), "f")

    return normalize


def _as_text(value: Any) -> Any:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _as_set_text(column: Column) -> Normalize:
    options = column.enum_values

    def normalize(value: Any) -> str:
        if isinstance(value, str):
            return value
        members = set(value)
        return ",".join(option for option in options if option in members)

    return normalize


def _as_json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)


def _as_bit(column: Column) -> Normalize:
    width = ((column.length or 1) + 7) // 8

    def normalize(value: Any) -> bytes:
        if isinstance(value, bool | int):
            return int(value).to_bytes(width, "big")
        return bytes(value)

    return normalize


def _datetime_text(value: dt.datetime) -> str:
    text = (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} {value.hour:02d}:{value.minute:02d}:"
        f"{value.second:02d}"
    )
    return f"{text}.{value.microsecond:06d}" if value.microsecond else text


def _as_date_text(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, dt.date):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    return value


def _as_datetime_text(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return _datetime_text(value)
    if isinstance(value, dt.date):
        return _datetime_text(dt.datetime(value.year, value.month, value.day))
    return value


def _as_timestamp_text(value: Any) -> Any:
    # The snapshot session runs in UTC, so TIMESTAMP text is UTC wall-clock time.
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return _as_datetime_text(value)


def _as_time_text(value: Any) -> Any:
    if isinstance(value, dt.timedelta):
        micros = value // dt.timedelta(microseconds=1)
        sign, micros = ("-", -micros) if micros < 0 else ("", micros)
        seconds, fraction = divmod(micros, 1_000_000)
        text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        return f"{text}.{fraction:06d}" if fraction else text
    if isinstance(value, dt.time):
        text = f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
        return f"{text}.{value.microsecond:06d}" if value.microsecond else text
    return value


def _same(value: Any) -> Any:
    return value


_SIMPLE_NORMALIZERS: dict[str, Normalize] = {
    **dict.fromkeys((*spellings_of(Family.INTEGER, Family.BOOLEAN), "YEAR"), _as_int),
    **dict.fromkeys(spellings_of(Family.FLOAT), _as_float),
    **dict.fromkeys(CHARACTER_TYPES, _as_text),
    **dict.fromkeys(spellings_of(Family.BINARY, Family.SPATIAL, Family.POINT), _as_bytes),
    "JSON": _as_json_text,
    "DATE": _as_date_text,
    "DATETIME": _as_datetime_text,
    "TIMESTAMP": _as_timestamp_text,
    "TIME": _as_time_text,
}
_COLUMN_NORMALIZERS: dict[str, Callable[[Column], Normalize]] = {
    "DECIMAL": _as_decimal_text,
    "SET": _as_set_text,
    "BIT": _as_bit,
}


def value_normalizer(column: Column) -> Normalize:
    """How a Python value for ``column`` becomes what its snapshot converter reads."""
    key = canonical_type(column.data_type)
    per_column = _COLUMN_NORMALIZERS.get(key)
    if per_column is not None:
        return per_column(column)
    return _SIMPLE_NORMALIZERS.get(key, _same)


class Normalizers:
    """Each table's value normalizers, built once per table structure."""

    def __init__(self) -> None:
        self._by_table: dict[int, tuple[Table, tuple[Normalize, ...]]] = {}

    def of(self, table: Table) -> tuple[Normalize, ...]:
        cached = self._by_table.get(id(table))
        if cached is not None and cached[0] is table:
            return cached[1]
        normalizers = tuple(value_normalizer(c) for c in table.columns)
        self._by_table[id(table)] = (table, normalizers)
        return normalizers


def row_image(
    t: Table,
    ts: TableSchema,
    normalizers: tuple[Normalize, ...],
    row: Row,
    base: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``before``/``after`` payload of ``row`` (a full row, or with ``base`` a partial one
    over ``base``'s payload)."""
    if isinstance(row, Mapping):
        given = {k.lower(): v for k, v in row.items()}
        unknown = [k for k in row if t.column(k) is None]
        if unknown:
            raise KeyError(
                f"{t.id} has no column(s) {', '.join(map(repr, unknown))}; columns: "
                f"{', '.join(t.column_names)}"
            )
    else:
        values_in_order = list(row)
        if len(values_in_order) != len(t.columns):
            raise ValueError(
                f"{t.id} has {len(t.columns)} columns ({', '.join(t.column_names)}); "
                f"got {len(values_in_order)} values"
            )
        given = {c.name.lower(): v for c, v in zip(t.columns, values_in_order, strict=True)}
    values = [
        None if given.get(c.name.lower()) is None else normalizers[i](given[c.name.lower()])
        for i, c in enumerate(t.columns)
    ]
    image = ts.value_from_snapshot(values)
    for index, name, converter in ts.value_columns:
        if name.lower() in given:
            continue
        if base is not None and name in base:
            image[name] = base[name]
        else:
            image[name] = _omitted_value(t, t.columns[index], converter.schema)
    return image


def _omitted_value(table: Table, column: Column, schema: ConnectSchema) -> Any:
    expression_default = column.has_default and (
        column.default_expression is None
        or (
            column.data_type.upper() in ("DATETIME", "TIMESTAMP")
            and column.default_expression.startswith("1970-01-01 00:00:00")
        )
    )
    if column.auto_increment or column.generated or expression_default:
        raise ValueError(
            f"{table.id}.{column.name}: give its value explicitly (the server computes it "
            "from an expression, AUTO_INCREMENT or CURRENT_TIMESTAMP)"
        )
    if schema.has_default:
        return schema.default
    if column.optional:
        return None
    raise ValueError(f"{table.id}.{column.name} is NOT NULL without a default: give its value")
