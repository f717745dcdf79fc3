"""DDL text -> new versions of the immutable schema model.

``DdlParser.parse(sql, model, default_database)`` splits one binlog query event (or one snapshot
step) into statements, parses each with the MySQL grammar of ``ddl.parsing.grammar`` (over sqlglot's MySQL
tokenizer, see ``ddl.parsing.dialect``) and applies it to the model, following Debezium's relational model:
column ``typeName``/``jdbcType``/``length``/``scale``, charset inheritance column -> table ->
database -> server, ``hasDefaultValue``/``defaultValueExpression`` literals, SERIAL, and renames as
ALTER changes with the previous id.

Where Debezium is ambiguous or its behaviour contradicts what the server does, the server wins:
MODIFY/CHANGE replace the whole column definition (so an omitted NOT NULL makes the column
nullable, as in MySQL), and without an explicit primary key the first UNIQUE key whose columns are
all NOT NULL is the key - the rule MySQL itself uses for an implicit primary key - so a table
parsed from its streamed DDL and from its ``SHOW CREATE TABLE`` text gets the same key.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from ddl.model import ChangeType, Database, SchemaModel, TableChange
from ddl.parsing import plain_trees
from ddl.parsing.simple import simple_statement
from ddl.parsing.table_draft import (
    Handler,
    ParsedStatement,
    ParseState,
    SchemaConflict,
    charset_of_collation,
)
from mysql_cdc_base.errors import DdlError
from mysql_cdc_base.table_id import TableId

if TYPE_CHECKING:
    from ddl.parsing.dialect import DdlDialect
    from ddl.parsing.statements import Statement

# --- public API -------------------------------------------------------------------------------------

_STATEMENT_PREVIEW = 200


class DdlParseError(DdlError):
    """A statement the parser cannot understand (or that contradicts the known schema)."""

    def __init__(self, statement: str, position: str, reason: str) -> None:
        self.statement = statement
        self.position = position
        self.reason = reason
        preview = (
            statement if len(statement) <= _STATEMENT_PREVIEW else statement[:_STATEMENT_PREVIEW] + "..."
        )
        super().__init__(f"cannot parse DDL statement at {position}: {reason}; statement: {preview}")


class DdlResult(NamedTuple):
    model: SchemaModel  # the model after all statements
    statements: tuple[ParsedStatement, ...]
    default_database: str | None  # after any USE


class DdlParser:
    """Parses MySQL-family DDL into model changes. Use ``parser_for(flavor)``."""

    _flavor = "mysql"

    def __init__(self, include_comments: bool = False) -> None:
        # Debezium's include.schema.comments (default false): table/column comments are dropped.
        self.include_comments = include_comments

    @property
    def flavor(self) -> str:
        return self._flavor

    @property
    def dialect(self) -> DdlDialect:
        # sqlglot (the tokenizer under the grammar) is imported on the first DDL, not at start-up:
        # a run that streams only rows never pays for it (issue 41, time to the first event).
        from ddl.parsing import dialect  # noqa: PLC0415 - sqlglot only when a DDL is parsed

        found: DdlDialect = getattr(dialect, self._flavor.upper())
        return found

    def parse(self, sql: str, model: SchemaModel, default_database: str | None = None) -> DdlResult:
        """The model after ``sql`` and its statements. A plain USE, SET or CREATE/DROP DATABASE
        (what a schema history holds besides table DDL, and the snapshot's first statements) is
        read without the grammar (``ddl.parsing.simple``), so that it does not load sqlglot; the
        parser's handlers apply it as any other statement."""
        plain = simple_statement(sql)
        if plain is None:
            return self.parse_with_grammar(sql, model, default_database)
        tree, text = plain
        state = ParseState(model, default_database, self.include_comments)
        try:
            parsed = _apply(tree, text, state, _HANDLERS)
        except SchemaConflict as exc:
            raise DdlParseError(text, line_col(sql, 0), str(exc)) from None
        return DdlResult(state.model, tuple(parsed), state.default_database)

    def parse_with_grammar(
        self, sql: str, model: SchemaModel, default_database: str | None = None
    ) -> DdlResult:
        """``parse`` with every statement through the grammar, the plain ones included."""
        # Deferred with the dialect above: these modules import sqlglot; and the trees only the
        # grammar gives, with their handlers (ddl.parsing.plain_trees).
        from ddl.parsing.dialect import SqlTokenError, split_statements  # noqa: PLC0415 - see dialect
        from ddl.parsing.grammar import parse_statement  # noqa: PLC0415 - see dialect
        from ddl.parsing.statements import DdlSyntaxError  # noqa: PLC0415 - see above
        from ddl.parsing.table_statements import TABLE_HANDLERS  # noqa: PLC0415 - see above

        handlers = _HANDLERS | TABLE_HANDLERS

        try:
            tokens = self.dialect.tokenize(sql)
        except SqlTokenError as exc:
            raise DdlParseError(sql, line_col(sql, exc.offset), str(exc)) from None
        state = ParseState(model, default_database, self.include_comments)
        parsed: list[ParsedStatement] = []
        for chunk in split_statements(tokens):
            # A chunk normally is one statement; scripts may run statements together without ';'.
            while chunk:
                try:
                    tree, used = parse_statement(chunk, sql, self.dialect)
                except DdlSyntaxError as exc:
                    text = sql[chunk[0].start : chunk[-1].end + 1]
                    raise DdlParseError(text, line_col(sql, exc.offset), exc.reason) from None
                text = sql[chunk[0].start : chunk[used - 1].end + 1]
                try:
                    parsed.extend(_apply(tree, text, state, handlers))
                except SchemaConflict as exc:
                    raise DdlParseError(text, line_col(sql, chunk[0].start), str(exc)) from None
                chunk = chunk[used:]
        return DdlResult(state.model, tuple(parsed), state.default_database)


class MySqlDdlParser(DdlParser):
    _flavor = "mysql"


class MariaDbDdlParser(DdlParser):
    _flavor = "mariadb"


_PARSERS: dict[str, type[DdlParser]] = {"mysql": MySqlDdlParser, "mariadb": MariaDbDdlParser}


def parser_for(flavor: str, include_comments: bool = False) -> DdlParser:
    """The parser for a server flavour: ``mysql`` or ``mariadb``."""
    try:
        return _PARSERS[flavor.lower()](include_comments=include_comments)
    except KeyError:
        raise ValueError(f"unknown server flavor {flavor!r}: use 'mysql' or 'mariadb'") from None


def line_col(text: str, offset: int) -> str:
    """``line L, column C`` (1-based) of a character offset."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


# System variables whose SET changes how later DDL resolves charsets.
_CHARSET_VARIABLES = frozenset(
    {"character_set_server", "collation_server", "character_set_database", "collation_database"}
)


def _apply(
    tree: Statement, text: str, state: ParseState, handlers: dict[type, Handler]
) -> list[ParsedStatement]:
    handler = handlers.get(type(tree))
    if handler is None:  # pragma: no cover - every statement type has a handler
        raise SchemaConflict(f"no handler for {type(tree).__name__}")
    result = handler(tree, text, state)
    return result if isinstance(result, list) else [result]


# What precedes the table list of a DROP TABLE statement, and the RESTRICT/CASCADE after it.
_DROP_TABLE_PREFIX = re.compile(
    r"\s*(DROP\s+(?:TEMPORARY\s+)?(?:ONLINE\s+|OFFLINE\s+)?TABLES?\s+(?:IF\s+EXISTS\s+)?)", re.IGNORECASE
)
_DROP_TYPE_SUFFIX = re.compile(r"\s(RESTRICT|CASCADE)\s*;?\s*$", re.IGNORECASE)


def _drop_tables(tree: plain_trees.DropTable, text: str, state: ParseState) -> list[ParsedStatement]:
    """Debezium's ``DropTableParserListener``: one statement per dropped table, its text the
    statement's own prefix plus the table's qualified name (``DROP TABLE `db`.`t` ``) plus any
    RESTRICT/CASCADE."""
    dropped = _drop_table(tree, text, state)
    if dropped.kind != "table":
        return [dropped]
    prefix = _DROP_TABLE_PREFIX.match(text)
    suffix = _DROP_TYPE_SUFFIX.search(text)
    head = prefix.group(1) if prefix else "DROP TABLE "
    tail = f" {suffix.group(1)}" if suffix else ""
    tables = tuple(change.id for change in dropped.table_changes)
    return [
        ParsedStatement(
            f"{head}{_backquoted(change.id)}{tail}", change.id.database, "table", (change,), (), tables
        )
        for change in dropped.table_changes
    ]


def _backquoted(table_id: TableId) -> str:
    return "`" + table_id.database.replace("`", "``") + "`.`" + table_id.table.replace("`", "``") + "`"


def _drop_table(tree: plain_trees.DropTable, text: str, state: ParseState) -> ParsedStatement:
    if tree.temporary:
        return ParsedStatement(text, state.default_database, "ignored")
    ids = [state.find_table_id(name) for name in tree.names]
    state.model = state.model.with_tables(remove=ids)
    changes = tuple(TableChange(ChangeType.DROP, table_id, None) for table_id in ids)
    return ParsedStatement(text, state.database_of(*tree.names), "table", changes)


def _create_database(tree: plain_trees.CreateDatabase, text: str, state: ParseState) -> ParsedStatement:
    if tree.name in state.model.databases and tree.if_not_exists:
        return ParsedStatement(text, tree.name, "database")
    charset, collation = _database_charset(tree.charset, tree.collation, state)
    state.model = state.model.with_database(Database(tree.name, charset, collation))
    return ParsedStatement(text, tree.name, "database")


def _alter_database(tree: plain_trees.AlterDatabase, text: str, state: ParseState) -> ParsedStatement:
    name = tree.name if tree.name is not None else state.default_database
    if name is None:
        return ParsedStatement(text, None, "database", alters_database=True)
    current = state.model.databases.get(name, Database(name))
    charset, collation = _database_charset(tree.charset, tree.collation, state)
    if tree.charset is None and tree.collation is None:
        charset, collation = current.default_charset, current.default_collation
    state.model = state.model.with_database(Database(name, charset, collation))
    return ParsedStatement(text, name, "database", alters_database=True)


def _database_charset(
    charset: str | None, collation: str | None, state: ParseState
) -> tuple[str | None, str | None]:
    if charset is not None and charset.upper() == "DEFAULT":
        charset = state.model.server_charset
    if charset is None and collation is not None:
        charset = charset_of_collation(collation)
    return charset, collation


def _drop_database(tree: plain_trees.DropDatabase, text: str, state: ParseState) -> ParsedStatement:
    # Debezium records DROP DATABASE without tableChanges; replaying the DDL drops the tables.
    state.model = state.model.with_database(None, drop=tree.name)
    return ParsedStatement(text, tree.name, "database")


def _use(tree: plain_trees.UseDatabase, text: str, state: ParseState) -> ParsedStatement:
    state.default_database = tree.name
    return ParsedStatement(text, tree.name, "use")


def _set(tree: plain_trees.SetVariables, text: str, state: ParseState) -> ParsedStatement:
    relevant = [(scope, name, value) for scope, name, value in tree.assignments if name in _CHARSET_VARIABLES]
    if not relevant:
        return ParsedStatement(text, state.default_database, "ignored")
    for _scope, name, value in relevant:
        if value.upper() == "DEFAULT":
            continue
        state.model = _SET_VARIABLE[name](state, value)
    return ParsedStatement(text, "", "set")


def _set_server_charset(state: ParseState, value: str) -> SchemaModel:
    return _replace_model(state.model, server_charset=value)


def _set_server_collation(state: ParseState, value: str) -> SchemaModel:
    # Setting the collation also sets the matching character set, as in MySQL.
    return _replace_model(state.model, server_collation=value, server_charset=charset_of_collation(value))


def _set_database_charset(state: ParseState, value: str) -> SchemaModel:
    if state.default_database is None:
        return state.model
    current = state.model.databases.get(state.default_database, Database(state.default_database))
    return state.model.with_database(Database(current.name, value, current.default_collation))


def _set_database_collation(state: ParseState, value: str) -> SchemaModel:
    if state.default_database is None:
        return state.model
    return state.model.with_database(Database(state.default_database, charset_of_collation(value), value))


def _replace_model(model: SchemaModel, **changes: Any) -> SchemaModel:
    return replace(model, **changes)


_SET_VARIABLE: dict[str, Callable[[ParseState, str], SchemaModel]] = {
    "character_set_server": _set_server_charset,
    "collation_server": _set_server_collation,
    "character_set_database": _set_database_charset,
    "collation_database": _set_database_collation,
}

# A handler gives one statement, or several where Debezium splits one (DROP TABLE a, b).
# The statements of ddl.parsing.plain_trees; the grammar's others: ddl.parsing.table_statements.
_HANDLERS: dict[type, Handler] = {
    plain_trees.DropTable: _drop_tables,
    plain_trees.CreateDatabase: _create_database,
    plain_trees.AlterDatabase: _alter_database,
    plain_trees.DropDatabase: _drop_database,
    plain_trees.UseDatabase: _use,
    plain_trees.SetVariables: _set,
}

__all__ = [
    "DdlParseError",
    "DdlParser",
    "DdlResult",
    "MariaDbDdlParser",
    "MySqlDdlParser",
    "ParsedStatement",
    "parser_for",
]
