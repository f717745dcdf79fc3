"""A column's converter: its family's builder (by MySQL type), the null and default rules, schema
parameters, custom converters on top; and the conversions the snapshot connection reads with.

``column_converter`` is called once per column whenever a table's structure changes; it picks, through
the families' dispatch tables keyed by the column's type and the connector's modes, two small closures:

* ``from_binlog`` takes the value as the row decoder (``connector.binlog.row_decoder``) yields it;
* ``from_snapshot`` takes the value pymysql returns for ``SELECT *`` on a connection opened with
  ``conv=SNAPSHOT_CONVERSIONS`` (temporal types and decimals arrive as the server's text, so zero
  dates, negative times and every fractional digit survive), brought to the decoder's form at the
  edge, then converted by the same function.

Contract for callers: call the converters for null values too (a NOT NULL column's null -- a zero
date -- becomes the column default or the epoch fallback); ``identity`` converters may be skipped.
Snapshot connections must use ``SNAPSHOT_CONVERSIONS`` and a session time zone equal to
``ConverterSettings.server_time_zone`` (UTC by default).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pymysql import converters as pymysql_converters
from pymysql.constants import FIELD_TYPE

from connector.records.conversion import numeric, structured, temporal, text
from connector.records.conversion.family import (
    Builder,
    ColumnConverter,
    Convert,
    ConverterSettings,
    FamilyMapping,
    NullRule,
    identity,
    with_null_rule,
)
from ddl.model import Column, JdbcType, Table
from ddl.mysql_types import canonical_type
from mysql_cdc_base.connect import NO_DEFAULT, ConnectSchema
from mysql_cdc_base.errors import MysqlCdcError

log = logging.getLogger(__name__)

# MySQL type (canonical name) -> the builder of its family.
_BUILDERS: dict[str, Builder] = {
    **numeric.BUILDERS,
    **temporal.BUILDERS,
    **text.BUILDERS,
    **structured.BUILDERS,
}


def _builder_for(column: Column) -> Builder:
    key = canonical_type(column.data_type)
    try:
        return _BUILDERS[key]
    except KeyError:
        raise ValueError(
            f"column {column.name!r}: no converter for MySQL type {column.data_type!r}"
        ) from None


def _guard(convert: Convert, when_null: Any, may_invalidate: bool) -> Convert:
    """Wrap a non-null converter with the null rule: null in -> ``when_null`` out."""
    if convert is identity and when_null is None:
        return identity
    if may_invalidate and when_null is not None:

        def guarded_invalid(value: Any) -> Any:
            if value is None:
                return when_null
            result = convert(value)
            return when_null if result is None else result

        return with_null_rule(guarded_invalid, NullRule(convert, when_null, True))

    def guarded(value: Any) -> Any:
        return when_null if value is None else convert(value)

    return with_null_rule(guarded, NullRule(convert, when_null, False))


def _strip_default_literal(text: str) -> str:
    # Charset introducers (_utf8mb4'x') are stripped by Debezium's default-value listener.
    if text.startswith("_") and "'" in text:
        head, _, rest = text.partition("'")
        if head[1:].isidentifier() and rest.endswith("'"):
            return rest[:-1].replace("''", "'")
    return text


def column_converter(column: Column, table: Table, settings: ConverterSettings) -> ColumnConverter:
    """The schema and converters for one column of ``table`` (called once per structure change)."""
    build = _builder_for(column)
    if column.charset is None and table.default_charset and column.jdbc_type in _TEXT_JDBC_TYPES:
        column = column.with_(charset=table.default_charset)
    optional = column.optional
    # Pass 1: find the default, converting zero-like literals with the type's fallback rule.
    probe = build(column, settings, None if optional else _NEEDS_FALLBACK)
    default: Any = NO_DEFAULT
    # Generated columns have no default; ON UPDATE CURRENT_TIMESTAMP columns, which Debezium's model
    # also marks generated, keep theirs.
    if column.has_default and column.default_expression is not None and column.generation_expression is None:
        literal = column.default_expression
        if not (literal.startswith("(") and literal.endswith(")")):  # expression defaults: none
            parse = probe.default or probe.snapshot
            try:
                value = parse(_strip_default_literal(literal))
            except (ValueError, ArithmeticError, IndexError):
                value = None
            if value is _NEEDS_FALLBACK:
                value = probe.fallback
            if value is not None:
                default = value
    when_null = None if optional else (default if default is not NO_DEFAULT else probe.fallback)
    mapping = build(column, settings, when_null)
    for custom in settings.custom:
        conversion = custom.converter_for(column, table)
        if conversion is not None:
            guarded = _failure_handled(conversion.convert, settings.converting_failure_mode, column, table)
            return _custom_converter(conversion, guarded, optional, default, when_null, mapping)
    schema = ConnectSchema(
        mapping.type,
        optional=optional,
        name=mapping.name,
        version=mapping.version,
        doc=_doc(column, settings, mapping),
        parameters=_parameters(column, table, settings, mapping),
        default=default,
        fields=mapping.fields,
        items=mapping.items,
    )
    return ColumnConverter(
        schema=schema,
        from_binlog=_guard(mapping.binlog, when_null, mapping.may_invalidate),
        from_snapshot=_guard(mapping.snapshot, when_null, mapping.may_invalidate),
        binlog_encoding=mapping.binlog_encoding,
    )


class ValueConversionError(MysqlCdcError):
    """A custom converter failed on a value (event.converting.failure.handling.mode=fail)."""


def _failure_handled(convert: Convert, mode: str, column: Column, table: Table) -> Convert:
    """``event.converting.failure.handling.mode`` around a custom converter (Debezium's
    ``TableSchemaBuilder``): fail raises naming the column; warn and skip give null and log it (at
    warning, at debug). The value itself is never logged."""
    name = f"{table.id.database}.{table.id.table}.{column.name}"

    def handled(value: Any) -> Any:
        try:
            return convert(value)
        except Exception as exc:  # noqa: BLE001 - any failure of the user's converter
            text = f"failed to convert a value of column {name} ({column.data_type}): {type(exc).__name__}: {exc}"
            if mode == "fail":
                raise ValueConversionError(
                    f"{text}. Set event.converting.failure.handling.mode=warn to write null instead"
                ) from exc
            if mode == "warn":
                log.warning("%s; wrote null (event.converting.failure.handling.mode=warn)", text)
            else:
                log.debug("%s; wrote null (event.converting.failure.handling.mode=skip)", text)
            return None

    return handled


def _custom_converter(
    conversion: Any, convert: Convert, optional: bool, default: Any, when_null: Any, mapping: FamilyMapping
) -> ColumnConverter:
    """A custom converter (connector.records.custom_converters) on top of the built-in payload value;
    ``convert`` is its conversion with the failure handling around it."""
    base = conversion.schema
    schema = ConnectSchema(
        base.type,
        optional=optional,
        name=base.name,
        version=base.version,
        doc=base.doc,
        parameters=base.parameters,
        default=convert(default) if default is not NO_DEFAULT and default is not None else NO_DEFAULT,
        fields=base.fields,
        items=base.items,
        keys=base.keys,
        values=base.values,
    )

    def chain(builtin: Convert) -> Convert:
        def converted(value: Any) -> Any:
            payload = builtin(value)
            return None if payload is None else convert(payload)

        return converted

    return ColumnConverter(
        schema=schema,
        from_binlog=chain(_guard(mapping.binlog, when_null, mapping.may_invalidate)),
        from_snapshot=chain(_guard(mapping.snapshot, when_null, mapping.may_invalidate)),
        binlog_encoding=mapping.binlog_encoding,
    )


_NEEDS_FALLBACK: Any = object()
_TEXT_JDBC_TYPES = frozenset(
    (JdbcType.CHAR, JdbcType.VARCHAR, JdbcType.LONGVARCHAR, JdbcType.CLOB, JdbcType.NCHAR, JdbcType.NVARCHAR)
)


def _doc(column: Column, settings: ConverterSettings, mapping: FamilyMapping) -> str | None:
    if settings.include_schema_comments and column.comment:
        return column.comment
    return mapping.doc


def _parameters(
    column: Column, table: Table, settings: ConverterSettings, mapping: FamilyMapping
) -> tuple[tuple[str, str], ...] | None:
    params = dict(mapping.parameters or {})
    if _propagates_source_type(column, table, settings):
        # PropagateSourceTypeToSchemaParameter, appended after the type's own parameters.
        params["__debezium.source.column.type"] = column.type_name.upper()
        if column.length is not None:
            params["__debezium.source.column.length"] = str(column.length)
        if column.scale is not None:
            params["__debezium.source.column.scale"] = str(column.scale)
        if column.comment:
            params["__debezium.source.column.comment"] = column.comment
        params["__debezium.source.column.name"] = column.name
    return tuple(params.items()) if params else None


def _propagates_source_type(column: Column, table: Table, settings: ConverterSettings) -> bool:
    # Debezium matches each regex case-insensitively against the whole of "db.table.column"
    # (column.propagate.source.type) or "db.table.TYPE NAME" (datatype.propagate.source.type).
    if settings.propagate_source_type:
        qualified = f"{table.id.database}.{table.id.table}.{column.name}"
        if any(_full_match(p, qualified) for p in settings.propagate_source_type):
            return True
    if settings.datatype_propagate_source_type:
        qualified = f"{table.id.database}.{table.id.table}.{column.type_name}"
        if any(_full_match(p, qualified) for p in settings.datatype_propagate_source_type):
            return True
    return False


def _full_match(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern.strip(), text, re.IGNORECASE) is not None


# ------------------------------------------------------------------------------------------------
# Snapshot connection conversions
# ------------------------------------------------------------------------------------------------
def _build_snapshot_conversions() -> dict[Any, Any]:
    conv: dict[Any, Any] = dict(pymysql_converters.encoders)  # parameter escaping stays standard
    for type_code in (
        FIELD_TYPE.TINY,
        FIELD_TYPE.SHORT,
        FIELD_TYPE.LONG,
        FIELD_TYPE.INT24,
        FIELD_TYPE.LONGLONG,
        FIELD_TYPE.YEAR,
    ):
        conv[type_code] = int
    for type_code in (FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE):
        conv[type_code] = float
    # Everything else (DECIMAL, DATE, TIME, DATETIME, TIMESTAMP, BIT, strings, JSON, GEOMETRY)
    # stays as the server sent it: text for character data, bytes for binary data.
    return conv


SNAPSHOT_CONVERSIONS: dict[Any, Any] = _build_snapshot_conversions()
