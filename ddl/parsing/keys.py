"""Key grammar: table-level keys and constraints (PRIMARY KEY, UNIQUE, FOREIGN KEY, CHECK, INDEX) and
their index options."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from ddl.parsing.columns import enforced, parse_reference
from ddl.parsing.cursor import Cursor
from ddl.parsing.statements import (
    KeyDefinition,
)


def parse_key_columns(c: Cursor) -> tuple[str, ...]:
    """``(col [(len)] [ASC|DESC], ... )``; functional key parts ``((expr))`` are not columns."""
    c.expect_type(TokenType.L_PAREN, "'(' with the key columns")
    columns: list[str] = []
    while True:
        if c.at_type(TokenType.L_PAREN):
            c.skip_parenthesized()
        else:
            columns.append(c.name_or_string("column name"))
            if c.at_type(TokenType.L_PAREN):
                c.skip_parenthesized()
        c.accept_any(frozenset({"ASC", "DESC"}))
        if c.accept_type(TokenType.COMMA):
            continue
        c.expect_type(TokenType.R_PAREN, "')'")
        return tuple(columns)


def index_options(c: Cursor) -> None:
    while True:
        word = c.word()
        if word == "USING" or word == "TYPE":
            c.advance()
            c.identifier("index type")
        elif word == "KEY_BLOCK_SIZE":
            c.advance()
            c.accept_equals()
            c.advance()
        elif word == "COMMENT":
            c.advance()
            c.string("comment text")
        elif word == "WITH" and c.word(1) == "PARSER":
            c.advance()
            c.advance()
            c.identifier("parser name")
        elif word in ("VISIBLE", "INVISIBLE", "IGNORED", "CLUSTERING"):
            c.advance()
            if c.accept_type(TokenType.EQ):
                c.advance()
        elif c.accept("NOT", "IGNORED"):
            pass
        elif word in ("ENGINE_ATTRIBUTE", "SECONDARY_ENGINE_ATTRIBUTE"):
            c.advance()
            c.accept_equals()
            c.string()
        else:
            return


def _optional_index_name(c: Cursor) -> str | None:
    if c.at_type(TokenType.L_PAREN) or c.word() in ("USING", "TYPE"):
        return None
    return c.identifier("index name")


def parse_key_definition(c: Cursor) -> KeyDefinition:
    """A table-level key or constraint inside CREATE TABLE (...) or after ALTER TABLE ... ADD."""
    constraint_name: str | None = None
    if c.accept("CONSTRAINT") and c.word() not in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
        constraint_name = c.identifier("constraint name")
    word = c.word()
    if c.accept("PRIMARY", "KEY"):
        if not c.at_type(TokenType.L_PAREN) and c.word() not in ("USING", "TYPE"):
            c.identifier("index name")  # accepted and ignored by MySQL
        index_options(c)
        columns = parse_key_columns(c)
        index_options(c)
        return KeyDefinition("primary", constraint_name, columns)
    if word == "UNIQUE":
        c.advance()
        c.accept_any(frozenset({"KEY", "INDEX"}))
        c.accept("IF", "NOT", "EXISTS")
        name = _optional_index_name(c) or constraint_name
        index_options(c)
        columns = parse_key_columns(c)
        index_options(c)
        return KeyDefinition("unique", name, columns)
    if word == "FOREIGN":
        c.advance()
        c.expect("KEY")
        c.accept("IF", "NOT", "EXISTS")
        name = constraint_name
        if not c.at_type(TokenType.L_PAREN):
            name = c.identifier("foreign key name")
        columns = parse_key_columns(c)
        parse_reference(c)
        return KeyDefinition("foreign", name, columns)
    if word == "CHECK":
        c.advance()
        c.skip_parenthesized()
        enforced(c)
        return KeyDefinition("check", constraint_name)
    if constraint_name is not None:
        raise c.error("expected PRIMARY KEY, UNIQUE, FOREIGN KEY or CHECK after CONSTRAINT")
    if word in ("FULLTEXT", "SPATIAL"):
        c.advance()
        c.accept_any(frozenset({"KEY", "INDEX"}))
        kind = word.lower()
    elif word in ("KEY", "INDEX"):
        c.advance()
        kind = "index"
    else:
        raise c.error("expected a key definition")
    c.accept("IF", "NOT", "EXISTS")
    name = _optional_index_name(c)
    index_options(c)
    columns = parse_key_columns(c)
    index_options(c)
    return KeyDefinition(kind, name, columns)


_KEY_START_WORDS = frozenset(
    {"CONSTRAINT", "PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "FULLTEXT", "SPATIAL", "KEY", "INDEX"}
)


def at_key_definition(c: Cursor) -> bool:
    # These words are reserved: unquoted, they never name a column.
    return c.word() in _KEY_START_WORDS
