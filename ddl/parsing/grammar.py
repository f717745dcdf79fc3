"""MySQL/MariaDB DDL syntax: one statement's tokens -> a small statement tree.

Recursive descent over the tokens of ``ddl.parsing.dialect`` (sqlglot's MySQL tokenizer). Only the parts
of a statement that change table structure are modelled in detail (column definitions, keys,
charsets, renames); everything else the server accepts there (index options, foreign key actions,
table options, partitioning, generated-column and CHECK expressions) is checked for balanced
structure and skipped. Semantics (what a statement does to the schema model) live in
``ddl.parsing.parser``; this module only says what the statement *says*. The statement forms are
spread by family: ``create``, ``alter``, ``columns``; this module holds the entry point and the
small statements (DROP, RENAME, TRUNCATE, USE, SET).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot.tokens import Token, TokenType

from ddl.parsing.alter import (
    parse_alter,
    wait_option,
)
from ddl.parsing.create import (
    algorithm_lock_options,
    parse_create,
)
from ddl.parsing.cursor import Cursor
from ddl.parsing.dialect import DdlDialect, is_word
from ddl.parsing.statements import (
    DropDatabase,
    DropIndex,
    DropTable,
    Ignored,
    RenameTable,
    SetVariables,
    Statement,
    TruncateTable,
    UseDatabase,
)
from ddl.parsing.words import (
    COMPOUND_FIRST_WORDS,
    DEFINER_PREFIX_WORDS,
    IGNORED_DROP_OBJECTS,
    IGNORED_FIRST_WORDS,
)


def parse_statement(tokens: Sequence[Token], sql: str, dialect: DdlDialect) -> tuple[Statement, int]:
    """The tree of the statement at the start of ``tokens`` and the number of tokens it spans
    (fewer than all when a script runs into the next statement without a ``;``)."""
    c = Cursor(tokens, sql, dialect)
    statement = _statement(c)
    return statement, max(c.i, 1)


def _statement(c: Cursor) -> Statement:
    if c.done:
        return Ignored("empty")
    if c.at_type(TokenType.L_PAREN):
        c.skip_rest(split_lines=True)
        return Ignored("query")  # (SELECT ...) UNION ...
    tokens = c.tokens
    first = c.word()
    handler = _STATEMENTS.get(first)
    if handler is not None:
        c.advance()
        return handler(c)
    if first in IGNORED_FIRST_WORDS:
        c.advance()
        c.skip_rest(split_lines=first not in COMPOUND_FIRST_WORDS)
        return Ignored(first.lower())
    token = tokens[0]
    if c.at_type(TokenType.COLON, 1) and is_word(token):
        c.skip_rest()
        return Ignored("labelled compound statement")
    raise c.error("unrecognised statement")


def _drop(c: Cursor) -> Statement:
    temporary = c.accept("TEMPORARY")
    c.accept_any(frozenset({"ONLINE", "OFFLINE"}))
    word = c.word()
    if word in ("TABLE", "TABLES"):
        c.advance()
        if_exists = c.accept("IF", "EXISTS")
        names = [c.qualified_name()]
        while c.accept_type(TokenType.COMMA):
            names.append(c.qualified_name())
        wait_option(c)
        c.accept_any(frozenset({"RESTRICT", "CASCADE"}))
        c.end_statement()
        return DropTable(tuple(names), temporary, if_exists)
    if word in ("DATABASE", "SCHEMA"):
        c.advance()
        if_exists = c.accept("IF", "EXISTS")
        name = c.identifier("database name")
        c.end_statement()
        return DropDatabase(name, if_exists)
    if word == "INDEX":
        c.advance()
        c.accept("IF", "EXISTS")
        index = c.identifier("index name")
        c.expect("ON")
        table = c.qualified_name()
        algorithm_lock_options(c)
        c.end_statement()
        return DropIndex(table, index)
    if word in IGNORED_DROP_OBJECTS or word in DEFINER_PREFIX_WORDS:
        c.skip_rest(split_lines=True)
        return Ignored(f"drop {word.lower()}")
    raise c.error("unrecognised DROP statement")


def _rename(c: Cursor) -> Statement:
    if c.word() == "USER":
        c.skip_rest(split_lines=True)
        return Ignored("rename user")
    if not c.accept_any(frozenset({"TABLE", "TABLES"})):
        raise c.error("expected TABLE")
    c.accept("IF", "EXISTS")
    pairs = []
    while True:
        old = c.qualified_name()
        wait_option(c)
        c.expect("TO")
        pairs.append((old, c.qualified_name("new table name")))
        if not c.accept_type(TokenType.COMMA):
            break
    c.end_statement()
    return RenameTable(tuple(pairs))


def _truncate(c: Cursor) -> Statement:
    c.accept("TABLE")
    name = c.qualified_name()
    wait_option(c)
    c.end_statement()
    return TruncateTable(name)


def _use(c: Cursor) -> Statement:
    name = c.identifier("database name")
    c.end_statement()
    return UseDatabase(name)


_SCOPES = frozenset({"GLOBAL", "SESSION", "LOCAL", "PERSIST", "PERSIST_ONLY"})


def _set(c: Cursor) -> Statement:
    if c.at("STATEMENT"):
        # MariaDB: SET STATEMENT var=value[, ...] FOR <statement>; the inner statement is what counts
        # (a loop, not recursion, so nested prefixes cannot exhaust the stack).
        while c.accept("STATEMENT"):
            while not c.done and not c.at("FOR"):
                if c.at_type(TokenType.L_PAREN):
                    c.skip_parenthesized()
                else:
                    c.advance()
            c.expect("FOR")
            if not c.accept("SET"):
                return _statement(c)
            if not c.at("STATEMENT"):
                break

    word = c.word()
    if (
        word in ("NAMES", "PASSWORD", "ROLE", "TRANSACTION", "RESOURCE", "CHARSET")
        or c.at("DEFAULT", "ROLE")
        or (word in ("CHARACTER", "CHAR") and c.word(1) == "SET")
    ):
        c.skip_rest(split_lines=True)
        return SetVariables(())
    assignments: list[tuple[str, str, str]] = []
    scope = "session"
    while True:
        scope_word = c.accept_any(_SCOPES)
        if scope_word:
            scope = scope_word.lower()
        token = c.peek()
        if token is not None and token.token_type == TokenType.SESSION_PARAMETER:
            c.advance()
            name = c.identifier("variable name")
            if c.at_type(TokenType.DOT) and name.upper() in _SCOPES:
                c.advance()
                scope = name.lower()
                name = c.identifier("variable name")
        elif token is not None and token.token_type == TokenType.PARAMETER:
            c.advance()
            name = "@" + c.name_or_string("user variable name")
        else:
            name = c.identifier("variable name")
            if c.at_type(TokenType.DOT):
                c.advance()
                name = c.identifier("variable name")
        if not (c.accept_type(TokenType.EQ) or c.accept_type(TokenType.COLON_EQ)):
            raise c.error("expected '=' in SET")
        first, last = c.skip_expression()
        value = c.text_between(first, last).strip()
        if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
            value = value[1:-1]
        assignments.append((scope, name.lower(), value))
        if not c.accept_type(TokenType.COMMA):
            break
    c.end_statement()
    return SetVariables(tuple(assignments))


_STATEMENTS: dict[str, Callable[[Cursor], Statement]] = {
    "CREATE": parse_create,
    "ALTER": parse_alter,
    "DROP": _drop,
    "RENAME": _rename,
    "TRUNCATE": _truncate,
    "USE": _use,
    "SET": _set,
}
