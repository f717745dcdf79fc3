"""ALTER TABLE's specifications applied to a ``TableDraft``: one handler per specification type
(``ALTER_SPEC_HANDLERS``), dispatched by the parser in statement order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ddl.parsing.statements import (
    AddColumns,
    AddKey,
    AlterColumnDefault,
    AlterColumnVisibility,
    ChangeColumn,
    ConvertCharset,
    DropColumn,
    DropKey,
    RenameColumn,
    RenameKey,
    RenameTo,
    SetTableOptions,
    SystemVersioning,
)
from ddl.parsing.table_draft import (
    ParseState,
    TableDraft,
    charset_of_collation,
    table_charset,
)
from mysql_cdc_base.table_id import TableId


def _alter_add_columns(draft: TableDraft, spec: AddColumns, state: ParseState) -> None:
    for definition in spec.columns:
        if spec.if_not_exists and draft.index_of(definition.name) is not None:
            continue
        draft.add_column(definition, spec.position, state.include_comments)


def _alter_drop_column(draft: TableDraft, spec: DropColumn, state: ParseState) -> None:
    draft.drop_column(spec.name, spec.if_exists)


def _alter_change_column(draft: TableDraft, spec: ChangeColumn, state: ParseState) -> None:
    if spec.if_exists and draft.index_of_original(spec.old_name) is None:
        return
    draft.replace_column(spec.old_name, spec.column, spec.position, state.include_comments)


def _alter_rename_column(draft: TableDraft, spec: RenameColumn, state: ParseState) -> None:
    draft.rename_column(spec.old_name, spec.new_name)


def _alter_column_default(draft: TableDraft, spec: AlterColumnDefault, state: ParseState) -> None:
    draft.set_default(spec.name, spec.default)


def _alter_column_visibility(draft: TableDraft, spec: AlterColumnVisibility, state: ParseState) -> None:
    index = draft.require(spec.name)
    draft.columns[index] = draft.columns[index].with_(invisible=spec.invisible)


def _alter_add_key(draft: TableDraft, spec: AddKey, state: ParseState) -> None:
    draft.add_key(spec.key)


def _alter_drop_key(draft: TableDraft, spec: DropKey, state: ParseState) -> None:
    draft.drop_key(spec)


def _alter_rename_key(draft: TableDraft, spec: RenameKey, state: ParseState) -> None:
    draft.rename_key(spec.old_name, spec.new_name)


def _alter_rename_to(draft: TableDraft, spec: RenameTo, state: ParseState) -> None:
    draft.id = TableId(
        spec.name.database if spec.name.database is not None else draft.id.database, spec.name.name
    )


def _alter_convert_charset(draft: TableDraft, spec: ConvertCharset, state: ParseState) -> None:
    charset = spec.charset
    if charset is None and spec.collation is not None:
        charset = charset_of_collation(spec.collation)
    if charset is None:
        charset = state.model.charset_for(draft.id.database)
    draft.default_charset = charset
    draft.convert_charset(charset, spec.collation)


def _alter_system_versioning(draft: TableDraft, spec: SystemVersioning, state: ParseState) -> None:
    if spec.enable:
        draft.add_system_versioning()
    else:
        draft.drop_system_versioning()


def _alter_table_options(draft: TableDraft, spec: SetTableOptions, state: ParseState) -> None:
    options = spec.options
    if options.system_versioning:
        draft.add_system_versioning()
    if options.charset is not None or options.collation is not None:
        draft.default_charset = table_charset(options, draft.id.database, state)
    if options.comment is not None and state.include_comments:
        draft.comment = options.comment


ALTER_SPEC_HANDLERS: dict[type, Callable[[TableDraft, Any, ParseState], None]] = {
    AddColumns: _alter_add_columns,
    DropColumn: _alter_drop_column,
    ChangeColumn: _alter_change_column,
    RenameColumn: _alter_rename_column,
    AlterColumnDefault: _alter_column_default,
    AlterColumnVisibility: _alter_column_visibility,
    AddKey: _alter_add_key,
    DropKey: _alter_drop_key,
    RenameKey: _alter_rename_key,
    RenameTo: _alter_rename_to,
    ConvertCharset: _alter_convert_charset,
    SetTableOptions: _alter_table_options,
    SystemVersioning: _alter_system_versioning,
}
