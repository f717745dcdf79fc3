"""Debezium's serialized forms of table changes and history records.

* History documents (``JsonTableChangeSerializer``): the ``tableChanges`` elements the schema
  history stores and what recovery reads back (``table_from_history``); the record around them is
  ``ddl.history.record`` (its conversions are re-exported here).
* Schema change event payloads (``ConnectTableChangeSerializer``): the ``tableChanges`` elements
  of ``SchemaChangeValue`` as plain dicts in Connect struct field order; the connector builds the
  Connect schemas around them.

Key order matters: both documents are compared byte for byte with Debezium's output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ddl.model import ChangeType, Column, Table, TableChange
from mysql_cdc_base.errors import SchemaHistoryError
from mysql_cdc_base.table_id import TableId

_TYPE_SUFFIXES = ((" UNSIGNED ZEROFILL", True, True), (" ZEROFILL", True, True), (" UNSIGNED", True, False))


# --- enum literals ----------------------------------------------------------------------------------


def quote_enum_value(value: str) -> str:
    """An ENUM/SET member as the quoted literal Debezium keeps in ``enumValues`` (``'a'``), in the
    escaping ``SHOW CREATE TABLE`` uses (``''`` for a quote, ``\\\\`` for a backslash)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def unquote_enum_value(literal: str) -> str:
    """The member of a quoted ``enumValues`` literal (inverse of ``quote_enum_value``; also reads
    backslash-escaped quotes as written in DDL)."""
    if len(literal) < 2 or literal[0] not in "'\"" or literal[-1] != literal[0]:
        return literal
    quote = literal[0]
    body = literal[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out.append(body[i + 1])
            i += 2
        elif ch == quote and i + 1 < len(body) and body[i + 1] == quote:
            out.append(quote)
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# --- history form -----------------------------------------------------------------------------------


def column_to_history(column: Column) -> dict[str, Any]:
    document: dict[str, Any] = {
        "name": column.name,
        "jdbcType": column.jdbc_type,
        "typeName": column.type_name,
        "typeExpression": column.type_name,
        "charsetName": column.charset,
    }
    if column.length is not None:
        document["length"] = column.length
    if column.scale is not None:
        document["scale"] = column.scale
    document.update(
        position=column.position,
        optional=column.optional,
        autoIncremented=column.auto_increment,
        generated=column.generated,
        comment=column.comment,
        hasDefaultValue=column.has_default,
    )
    if column.default_expression is not None:
        document["defaultValueExpression"] = column.default_expression
    document["enumValues"] = [quote_enum_value(v) for v in column.enum_values]
    return document


def table_to_history(table: Table) -> dict[str, Any]:
    return {
        "defaultCharsetName": table.default_charset,
        "primaryKeyColumnNames": list(table.primary_key),
        "columns": [column_to_history(c) for c in table.columns],
        "attributes": [{"name": name, "value": value} for name, value in table.attributes],
    }


def table_change_to_history(change: TableChange) -> dict[str, Any]:
    """One ``tableChanges`` element of a history record (section 3c key order)."""
    document: dict[str, Any] = {"type": change.type.value, "id": change.id.quoted}
    if change.previous_id is not None:
        document["previousId"] = change.previous_id.quoted
    if change.type is not ChangeType.DROP and change.table is not None:
        document["table"] = table_to_history(change.table)
        document["comment"] = change.table.comment
    return document


# --- reading history back ---------------------------------------------------------------------------


def parse_quoted_table_id(text: str) -> TableId:
    """``"db"."table"`` (Debezium's double-quoted id; quotes inside names are doubled) -> TableId."""
    parts: list[str] = []
    current: list[str] = []
    i = 0
    quoted = False
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == '"':
                if i + 1 < len(text) and text[i + 1] == '"':
                    current.append('"')
                    i += 2
                    continue
                quoted = False
            else:
                current.append(ch)
        elif ch == '"':
            quoted = True
        elif ch == ".":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    if len(parts) == 2:
        return TableId(parts[0], parts[1])
    if len(parts) == 3:  # catalog.schema.table with an empty schema
        return TableId(parts[0] or parts[1], parts[2])
    raise SchemaHistoryError(f"invalid table id {text!r} in schema history")


def _split_type_name(type_name: str) -> tuple[str, bool, bool, bool]:
    """(data type, unsigned, zerofill, signed) of a ``typeName``."""
    upper = type_name.upper()
    for suffix, unsigned, zerofill in _TYPE_SUFFIXES:
        if upper.endswith(suffix):
            return type_name[: -len(suffix)], unsigned, zerofill, False
    if upper.endswith(" SIGNED"):
        return type_name[: -len(" SIGNED")], False, False, True
    return type_name, False, False, False


def column_from_history(document: Mapping[str, Any]) -> Column:
    data_type, unsigned, zerofill, signed = _split_type_name(str(document["typeName"]))
    return Column(
        name=str(document["name"]),
        position=int(document["position"]),
        data_type=data_type,
        jdbc_type=int(document["jdbcType"]),
        length=document.get("length"),
        scale=document.get("scale"),
        unsigned=unsigned,
        zerofill=zerofill,
        charset=document.get("charsetName"),
        optional=bool(document.get("optional", True)),
        auto_increment=bool(document.get("autoIncremented", False)),
        generated=bool(document.get("generated", False)),
        comment=document.get("comment"),
        has_default=bool(document.get("hasDefaultValue", "defaultValueExpression" in document)),
        default_expression=document.get("defaultValueExpression"),
        enum_values=tuple(unquote_enum_value(str(v)) for v in document.get("enumValues") or ()),
        signed=signed,
    )


def table_from_history(change: Mapping[str, Any]) -> Table:
    """The table of a CREATE/ALTER ``tableChanges`` element (history form)."""
    try:
        table_id = parse_quoted_table_id(str(change["id"]))
        document = change["table"]
        columns = tuple(column_from_history(c) for c in document.get("columns") or ())
        attributes = tuple((str(a["name"]), str(a["value"])) for a in document.get("attributes") or ())
        return Table(
            id=table_id,
            columns=columns,
            primary_key=tuple(str(c) for c in document.get("primaryKeyColumnNames") or ()),
            default_charset=document.get("defaultCharsetName"),
            comment=change.get("comment"),
            attributes=attributes,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SchemaHistoryError(f"invalid tableChanges element in schema history: {exc}") from exc


# --- schema change event payload --------------------------------------------------------------------


def column_to_schema_change_payload(column: Column) -> dict[str, Any]:
    return {
        "name": column.name,
        "jdbcType": column.jdbc_type,
        "nativeType": None,
        "typeName": column.type_name,
        "typeExpression": column.type_name,
        "charsetName": column.charset,
        "length": column.length,
        "scale": column.scale,
        "position": column.position,
        "optional": column.optional,
        "autoIncremented": column.auto_increment,
        "generated": column.generated,
        "comment": column.comment,
        "defaultValueExpression": column.default_expression,
        "enumValues": [quote_enum_value(v) for v in column.enum_values] or None,
    }


def table_change_to_schema_change_payload(change: TableChange) -> dict[str, Any]:
    """One ``io.debezium.connector.schema.Change`` struct of a SchemaChangeValue (section 3d)."""
    table: dict[str, Any] | None = None
    if change.type is not ChangeType.DROP and change.table is not None:
        table = {
            "defaultCharsetName": change.table.default_charset,
            "primaryKeyColumnNames": list(change.table.primary_key),
            "columns": [column_to_schema_change_payload(c) for c in change.table.columns],
            "comment": change.table.comment,
        }
    return {"type": change.type.value, "id": change.id.quoted, "table": table}
