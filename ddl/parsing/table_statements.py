"""The handlers of the statement trees only the grammar gives: CREATE, ALTER, RENAME and TRUNCATE
TABLE, CREATE and DROP INDEX, and the statements that change no table (``Ignored``).

``ddl.parsing.parser`` imports this module with the grammar, on the first statement that needs it:
the database-level statements and DROP TABLE, which the parser reads without the grammar, have
their handlers there (issue 41: these modules' dataclasses cost start-up time; see
``ddl.parsing.plain_trees``).
"""

from __future__ import annotations

from typing import Any

from ddl.model import ChangeType, Table, TableChange
from ddl.parsing import statements as st
from ddl.parsing.alter_specs import ALTER_SPEC_HANDLERS
from ddl.parsing.table_draft import (
    Handler,
    ParsedStatement,
    ParseState,
    SchemaConflict,
    TableDraft,
    table_charset,
)
from mysql_cdc_base.table_id import TableId


def _ignored(tree: Any, text: str, state: ParseState) -> ParsedStatement:
    return ParsedStatement(text, state.default_database, "ignored")


def _create_table(tree: st.CreateTable, text: str, state: ParseState) -> ParsedStatement:
    if tree.temporary:
        return ParsedStatement(text, state.default_database, "ignored")
    table_id = state.table_id(tree.name)
    database = state.database_of(tree.name, *([tree.like] if tree.like is not None else []))
    existing = state.model.tables.get(state.find_table_id(tree.name))
    if existing is not None and tree.if_not_exists:
        return ParsedStatement(text, database, "table")
    if tree.like is not None:
        source = state.model.tables.get(state.find_table_id(tree.like))
        if source is None:
            return ParsedStatement(text, database, "table")
        table = source.with_(id=table_id)
    else:
        table = _new_table(tree, table_id, state)
    remove = [existing.id] if existing is not None else []
    state.model = state.model.with_tables(put=[table], remove=remove)
    return ParsedStatement(text, database, "table", (TableChange(ChangeType.CREATE, table_id, table),))


def _new_table(tree: st.CreateTable, table_id: TableId, state: ParseState) -> Table:
    draft = TableDraft(
        table_id,
        default_charset=table_charset(tree.options, table_id.database, state),
        comment=tree.options.comment if state.include_comments else None,
    )
    names = [c.name.lower() for c in tree.columns]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SchemaConflict(f"duplicate column {duplicates[0]!r} in table {table_id}")
    for definition in tree.columns:
        draft.add_column(definition, None, state.include_comments)
    for key in tree.keys:
        draft.add_key(key)
    if tree.options.system_versioning:
        draft.add_system_versioning()
    return draft.finish()


def _alter_table(tree: st.AlterTable, text: str, state: ParseState) -> ParsedStatement:
    table_id = state.find_table_id(tree.name)
    table = state.model.tables.get(table_id)
    database = state.database_of(tree.name)
    if table is None:
        # Debezium ignores ALTERs of tables it does not know (e.g. not captured).
        return ParsedStatement(text, database, "table")
    draft = TableDraft.of(table)
    for spec in tree.specs:
        ALTER_SPEC_HANDLERS[type(spec)](draft, spec, state)
    new_table = draft.finish()
    previous = table_id if new_table.id != table_id else None
    state.model = state.model.with_tables(put=[new_table], remove=[table_id])
    change = TableChange(ChangeType.ALTER, new_table.id, new_table, previous)
    return ParsedStatement(text, database, "table", (change,))


def _rename_table(tree: st.RenameTable, text: str, state: ParseState) -> ParsedStatement:
    changes: list[TableChange] = []
    for old_name, new_name in tree.pairs:
        old_id = state.find_table_id(old_name)
        new_id = state.table_id(new_name)
        table = state.model.tables.get(old_id)
        if table is None:
            continue
        renamed = table.with_(id=new_id)
        state.model = state.model.with_tables(put=[renamed], remove=[old_id])
        changes.append(TableChange(ChangeType.ALTER, new_id, renamed, old_id))
    database = state.database_of(*(name for pair in tree.pairs for name in pair))
    return ParsedStatement(text, database, "table", tuple(changes))


def _truncate(tree: st.TruncateTable, text: str, state: ParseState) -> ParsedStatement:
    table_id = state.find_table_id(tree.name)
    return ParsedStatement(text, state.database_of(tree.name), "truncate", truncated=(table_id,))


def _create_index(tree: st.CreateIndex, text: str, state: ParseState) -> ParsedStatement:
    table_id = state.find_table_id(tree.table)
    table = state.model.tables.get(table_id)
    if table is None:
        return ParsedStatement(text, state.database_of(tree.table), "table")
    draft = TableDraft.of(table)
    draft.add_key(tree.key)
    return _altered(draft, state.database_of(tree.table), text, state)


def _drop_index(tree: st.DropIndex, text: str, state: ParseState) -> ParsedStatement:
    table_id = state.find_table_id(tree.table)
    table = state.model.tables.get(table_id)
    if table is None:
        return ParsedStatement(text, state.database_of(tree.table), "table")
    draft = TableDraft.of(table)
    draft.drop_key(st.DropKey("index", tree.name))
    return _altered(draft, state.database_of(tree.table), text, state)


def _altered(draft: TableDraft, database: str, text: str, state: ParseState) -> ParsedStatement:
    table = draft.finish()
    state.model = state.model.with_tables(put=[table])
    return ParsedStatement(text, database, "table", (TableChange(ChangeType.ALTER, table.id, table),))


TABLE_HANDLERS: dict[type, Handler] = {
    st.CreateTable: _create_table,
    st.AlterTable: _alter_table,
    st.RenameTable: _rename_table,
    st.TruncateTable: _truncate,
    st.CreateIndex: _create_index,
    st.DropIndex: _drop_index,
    st.Ignored: _ignored,
}
