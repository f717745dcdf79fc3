"""The CREATE statements' grammar: tables (columns, keys, periods, options), databases and indexes."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from ddl.parsing.columns import at_charset, parse_charset_clause, parse_column_definition
from ddl.parsing.cursor import Cursor
from ddl.parsing.keys import at_key_definition, index_options, parse_key_columns, parse_key_definition
from ddl.parsing.statements import (
    ColumnDefinition,
    CreateDatabase,
    CreateIndex,
    CreateTable,
    Ignored,
    KeyDefinition,
    Statement,
    TableOptions,
)
from ddl.parsing.table_options import merge_options, parse_table_option
from ddl.parsing.words import (
    DEFINER_PREFIX_WORDS,
    IGNORED_CREATE_OBJECTS,
    SIMPLE_OBJECTS,
)


def parse_create(c: Cursor) -> Statement:
    or_replace = c.accept("OR", "REPLACE")
    temporary = c.accept("TEMPORARY")
    c.accept_any(frozenset({"ONLINE", "OFFLINE"}))
    word = c.word()
    if word == "TABLE":
        c.advance()
        return _create_table(c, temporary, or_replace)
    if word in ("DATABASE", "SCHEMA"):
        c.advance()
        return _create_database(c)
    if word in ("UNIQUE", "FULLTEXT", "SPATIAL") and c.word(1) in ("INDEX", "KEY"):
        c.advance()
        c.advance()
        return _create_index(c, word.lower())
    if word == "INDEX":
        c.advance()
        return _create_index(c, "index")
    if word in DEFINER_PREFIX_WORDS or word in IGNORED_CREATE_OBJECTS:
        c.skip_rest(split_lines=word in SIMPLE_OBJECTS)
        return Ignored(f"create {word.lower()}")
    raise c.error("unrecognised CREATE statement")


def _create_table(c: Cursor, temporary: bool, or_replace: bool) -> CreateTable:
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.qualified_name()
    if c.accept("LIKE"):
        like = c.qualified_name("source table name")
        c.end_statement()
        return CreateTable(name, temporary, if_not_exists, or_replace, like=like)
    if c.at_type(TokenType.L_PAREN) and c.word(1) == "LIKE":
        c.advance()
        c.advance()
        like = c.qualified_name("source table name")
        c.expect_type(TokenType.R_PAREN, "')'")
        c.end_statement()
        return CreateTable(name, temporary, if_not_exists, or_replace, like=like)
    columns: list[ColumnDefinition] = []
    keys: list[KeyDefinition] = []
    if c.at_type(TokenType.L_PAREN) and c.word(1) not in ("SELECT", "WITH", "VALUES", "TABLE"):
        c.advance()
        while True:
            if at_key_definition(c):
                keys.append(parse_key_definition(c))
            elif c.at("PERIOD", "FOR"):
                keys.append(parse_period(c))
            else:
                columns.append(parse_column_definition(c, _column_name(c)))
            if c.accept_type(TokenType.COMMA):
                continue
            c.expect_type(TokenType.R_PAREN, "',' or ')'")
            break
    options = _table_options_until_query(c)
    return CreateTable(name, temporary, if_not_exists, or_replace, tuple(columns), tuple(keys), options)


def parse_period(c: Cursor) -> KeyDefinition:
    """MariaDB ``PERIOD FOR name (start, end)``: its columns become NOT NULL."""
    c.expect("PERIOD", "FOR")
    name = c.identifier("period name")
    c.expect_type(TokenType.L_PAREN, "'('")
    start = c.identifier("period start column")
    c.expect_type(TokenType.COMMA, "','")
    end = c.identifier("period end column")
    c.expect_type(TokenType.R_PAREN, "')'")
    return KeyDefinition("period", name, (start, end))


def _column_name(c: Cursor) -> str:
    """A column name in a definition; MySQL accepts (and ignores) ``[db.]tbl.`` qualifiers."""
    name = "" if c.at_type(TokenType.DOT) else c.identifier("column name")
    while c.accept_type(TokenType.DOT):
        name = c.identifier("column name")
    return name


_QUERY_WORDS = frozenset({"AS", "SELECT", "IGNORE", "REPLACE", "WITH", "VALUES", "TABLE"})


def _table_options_until_query(c: Cursor) -> TableOptions:
    options = TableOptions()
    while not c.done:
        c.accept_type(TokenType.COMMA)
        if c.at("PARTITION", "BY"):
            skip_partitioning(c)
            continue
        if c.at("WITH", "SYSTEM") or c.at("START", "TRANSACTION"):
            options = merge_options(options, parse_table_option(c))
            continue
        if c.at_boundary():
            break
        if c.word() in _QUERY_WORDS or c.at_type(TokenType.L_PAREN):
            c.skip_rest(split_lines=True)  # CREATE TABLE ... [AS] SELECT: columns come from the query
            break
        options = merge_options(options, parse_table_option(c))
    return options


def skip_partitioning(c: Cursor) -> None:
    """``PARTITION BY ... [(PARTITION ..., ...)]`` up to the end or a following query."""
    while not c.at_end() and c.word() not in ("AS", "SELECT"):
        if c.at_type(TokenType.L_PAREN):
            c.skip_parenthesized()
        else:
            c.advance()


def _create_database(c: Cursor) -> CreateDatabase:
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.identifier("database name")
    charset, collation = database_options(c)
    return CreateDatabase(name, if_not_exists, charset, collation)


def database_options(c: Cursor) -> tuple[str | None, str | None]:
    charset = collation = None
    while not c.at_end():
        c.accept("DEFAULT")
        if at_charset(c):
            charset = parse_charset_clause(c)
        elif c.accept("COLLATE"):
            c.accept_equals()
            collation = c.name_or_string("collation name")
        elif c.word() in ("ENCRYPTION", "COMMENT"):
            c.advance()
            c.accept_equals()
            c.string()
        elif c.accept("READ", "ONLY"):
            c.accept_equals()
            c.advance()
        else:
            raise c.error("expected a database option")
    return charset, collation


def _create_index(c: Cursor, kind: str) -> CreateIndex:
    c.accept("IF", "NOT", "EXISTS")
    name = c.identifier("index name")
    index_options(c)
    c.expect("ON")
    table = c.qualified_name()
    columns = parse_key_columns(c)
    index_options(c)
    algorithm_lock_options(c)
    c.end_statement()
    return CreateIndex(table, KeyDefinition(kind, name, columns))


def algorithm_lock_options(c: Cursor) -> None:
    while c.word() in ("ALGORITHM", "LOCK", "WAIT", "NOWAIT"):
        word = c.word()
        c.advance()
        if word == "NOWAIT":
            continue
        c.accept_equals()
        c.advance()
