"""Custom converters (Debezium's ``converters`` property): replace the schema and value of selected
columns, configured with Debezium's syntax::

    converters=boolean
    boolean.type=io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter
    boolean.selector=inventory\\.orders\\..*

Built in (outputs recorded from real Debezium 3.6.3 in ``tests/golden/debezium/transforms/converter_*``):

* ``io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter`` (also under its
  ``io.debezium.connector.mysql.converters`` name): TINYINT(1) columns (any TINYINT with
  ``length.checker=false``) matching ``selector`` (comma-separated regexes of ``db.table.column``;
  none = every column) become ``boolean``: a value > 0 is true.
* ``io.debezium.connector.binlog.converters.JdbcSinkDataTypesConverter``: ``selector.boolean`` columns
  (BOOLEAN / TINYINT(1)) become ``int16`` 0/1; ``selector.real`` columns (FLOAT, REAL, DOUBLE, in
  any spelling) become ``float64`` (``float32`` with ``treat.real.as.double=false``);
  ``selector.string`` text columns get the schema parameter
  ``__debezium.source.column.character_set``.

Your own, in Python (``register_converter``)::

    from connector.records.custom_converters import CustomConversion, register_converter
    from mysql_cdc_base.connect import ConnectSchema

    class CentsToEuros:
        def __init__(self, options):            # options: connector.transforms.base.Options
            self.selector = options.get_regex("selector")

        def converter_for(self, column, table):  # ddl.model.Column / Table, once per structure
            name = f"{table.id.database}.{table.id.table}.{column.name}"
            if column.data_type.upper() != "INT" or not self.selector.fullmatch(name):
                return None                       # not ours: the built-in conversion applies
            return CustomConversion(ConnectSchema("float64"), lambda cents: cents / 100)

    register_converter("com.example.CentsToEuros", CentsToEuros)
    # converters=euros, euros.type=com.example.CentsToEuros, euros.selector=shop\\.orders\\.price

``convert`` receives the column's non-null value as the built-in conversion gives it (the Debezium
payload without converters: ``int`` for integer types, ``float``, ``str``, ...) on both the snapshot
and the binlog path, and the column default goes through it too. The schema's optionality is the
column's; the first converter that returns a conversion for a column wins (``converters`` order).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from connector.records.custom_converters.settings import JdbcSinkTypesSettings, TinyIntOneSettings
from connector.transforms.base import Options, options_under
from connector.transforms.plugins import build_plugin
from ddl.model import Column, JdbcType, Table
from ddl.mysql_types import Family, family_of
from mysql_cdc_base.connect import ConnectSchema
from mysql_cdc_base.properties import split_list


class CustomConversion(NamedTuple):
    """A column's new schema (type, name, version, parameters; optional and default are the column's)
    and the function from the built-in payload value (never None) to the new payload value."""

    schema: ConnectSchema
    convert: Callable[[Any], Any]


class CustomConverter(Protocol):
    def converter_for(self, column: Column, table: Table) -> CustomConversion | None: ...


ConverterFactory = Callable[[Options], CustomConverter]


def _qualified(column: Column, table: Table) -> str:
    return f"{table.id.database}.{table.id.table}.{column.name}"


def _selected(
    patterns: tuple[re.Pattern[str], ...] | None, column: Column, table: Table, default: bool
) -> bool:
    if patterns is None:
        return default
    name = _qualified(column, table)
    return any(p.fullmatch(name) for p in patterns)


# Debezium's converters compare the type name as written (upper case): TINYINT, not its synonym INT1.
def _is_boolean_or_tinyint(column: Column) -> bool:
    kind = column.data_type.upper()
    return kind == "TINYINT" or family_of(kind) is Family.BOOLEAN


def _is_tinyint_one(column: Column) -> bool:
    kind = column.data_type.upper()
    return family_of(kind) is Family.BOOLEAN or (kind == "TINYINT" and column.length == 1)


class TinyIntOneToBooleanConverter:
    def __init__(self, options: Options) -> None:
        settings = TinyIntOneSettings.from_options(options)
        self.selector = settings.selector
        self.length_checker = settings.length_checker

    def converter_for(self, column: Column, table: Table) -> CustomConversion | None:
        eligible = _is_tinyint_one(column) if self.length_checker else _is_boolean_or_tinyint(column)
        if not eligible or not _selected(self.selector, column, table, True):
            return None
        return CustomConversion(ConnectSchema("boolean"), _positive)


def _positive(value: Any) -> bool:
    return int(value) > 0


_TEXT_TYPES = frozenset(
    (JdbcType.CHAR, JdbcType.VARCHAR, JdbcType.LONGVARCHAR, JdbcType.CLOB, JdbcType.NCHAR, JdbcType.NVARCHAR)
)


class JdbcSinkDataTypesConverter:
    def __init__(self, options: Options) -> None:
        settings = JdbcSinkTypesSettings.from_options(options)
        self.boolean = settings.boolean
        self.real = settings.real
        self.string = settings.string
        self.real_type = "float64" if settings.real_as_double else "float32"

    def converter_for(self, column: Column, table: Table) -> CustomConversion | None:
        family = family_of(column.data_type)
        if _is_tinyint_one(column) and _selected(self.boolean, column, table, False):
            return CustomConversion(ConnectSchema("int16"), _small_int)
        if family is Family.FLOAT and _selected(self.real, column, table, False):
            return CustomConversion(ConnectSchema(self.real_type), float)
        if (
            column.jdbc_type in _TEXT_TYPES
            and family not in (Family.ENUM, Family.SET)
            and _selected(self.string, column, table, False)
        ):
            charset = column.charset or table.default_charset
            parameters = (("__debezium.source.column.character_set", charset),) if charset else None
            return CustomConversion(ConnectSchema("string", parameters=parameters), str)
        return None


def _small_int(value: Any) -> int:
    return int(value)


_BINLOG = "io.debezium.connector.binlog.converters."
CONVERTERS: dict[str, ConverterFactory] = {
    _BINLOG + "TinyIntOneToBooleanConverter": TinyIntOneToBooleanConverter,
    "io.debezium.connector.mysql.converters.TinyIntOneToBooleanConverter": TinyIntOneToBooleanConverter,
    _BINLOG + "JdbcSinkDataTypesConverter": JdbcSinkDataTypesConverter,
    "io.debezium.connector.mysql.converters.JdbcSinkDataTypesConverter": JdbcSinkDataTypesConverter,
}


def register_converter(class_name: str, factory: ConverterFactory) -> None:
    """Make ``<alias>.type=<class_name>`` build ``factory(options)`` (see the module docstring)."""
    CONVERTERS[class_name] = factory


def converter_aliases(props: Mapping[str, str]) -> list[str]:
    return split_list(props.get("converters"))


def build_converters(props: Mapping[str, str]) -> tuple[CustomConverter, ...]:
    """The custom converters of ``converters=...``, in order; an unknown class is a ConfigError."""
    out = []
    for alias in converter_aliases(props):
        out.append(build_plugin(options_under(props, f"{alias}."), "converter", alias, CONVERTERS))
    return tuple(out)
