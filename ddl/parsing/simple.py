"""Plain database-level statements read without the DDL grammar, into the grammar's own trees.

The snapshot writes, besides the tables' ``CREATE TABLE`` texts, ``SET character_set_server=...,
collation_server=...``, ``DROP TABLE IF EXISTS`` of each table, ``DROP DATABASE IF EXISTS``,
``CREATE DATABASE ... CHARSET ... COLLATE ...`` and ``USE``: its first events, and the schema
history records a restart replays (those without ``tableChanges``). Parsing them with the grammar
loads sqlglot (its tokenizer), for statements of a handful of fixed shapes (issue 41: time to the
first event). ``simple_statement`` reads those shapes with one regular expression per statement
kind (a dispatch table keyed by the first word) into the same statement trees the grammar gives,
so that the parser's handlers apply them alike. Anything else, a comment, an option or a quoting
these expressions do not know included, gives None: the caller parses it with the grammar.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ddl.parsing.plain_trees import (
    CreateDatabase,
    DropDatabase,
    DropTable,
    PlainStatement,
    QualifiedName,
    SetVariables,
    UseDatabase,
)

# A backquoted identifier (a doubled backquote inside stands for one) or a plain word.
_NAME = r"(?:`(?P<quoted>(?:[^`]|``)+)`|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))"
_END = r"\s*;?\s*"
_TERMINATOR = re.compile(r"\s*;?\s*\Z")
_FLAGS = re.IGNORECASE | re.ASCII

# One part of a table name: backquoted or plain, as _NAME without its named groups.
_PART = r"(?:`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)"
_TABLE = rf"{_PART}(?:\.{_PART})?"
_DROP_TABLE = re.compile(
    rf"DROP\s+TABLE\s+(?P<if_exists>IF\s+EXISTS\s+)?(?P<tables>{_TABLE}(?:\s*,\s*{_TABLE})*){_END}", _FLAGS
)
_TABLE_NAME = re.compile(rf"(?P<first>{_PART})(?:\.(?P<second>{_PART}))?")
_USE = re.compile(rf"USE\s+{_NAME}{_END}", _FLAGS)
_DROP_DATABASE = re.compile(
    rf"DROP\s+(?:DATABASE|SCHEMA)\s+(?P<if_exists>IF\s+EXISTS\s+)?{_NAME}{_END}", _FLAGS
)
_CREATE_DATABASE = re.compile(
    rf"CREATE\s+(?:DATABASE|SCHEMA)\s+(?P<if_not_exists>IF\s+NOT\s+EXISTS\s+)?{_NAME}(?P<options>(?:\s+[^;]*?)?){_END}",
    _FLAGS,
)
# One database option: [DEFAULT] {CHARACTER SET | CHARSET | CHAR SET} [=] name, [DEFAULT] COLLATE [=] name.
_OPTION_VALUE = r"(?:(?P<word>[A-Za-z0-9_]+)|'(?P<string>[A-Za-z0-9_]+)')"
_DATABASE_OPTION = re.compile(
    rf"\s*(?:DEFAULT\s+)?(?:(?P<charset>CHARACTER\s+SET|CHARSET|CHAR\s+SET)|COLLATE)(?:\s*=\s*|\s+){_OPTION_VALUE}",
    _FLAGS,
)
# SET name = value[, ...] with a plain (or @@[scope.]) variable name and a word or plain string value.
_ASSIGNMENT = re.compile(
    r"\s*(?:@@(?:(?P<scope>GLOBAL|SESSION|LOCAL)\.)?)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*"
    rf"{_OPTION_VALUE}\s*(?P<comma>,)?",
    _FLAGS,
)
# SET forms the grammar treats apart (SET NAMES, SET PASSWORD, SET GLOBAL x = ...): left to it.
_SET_SPECIAL_WORDS = frozenset(
    {
        "NAMES",
        "PASSWORD",
        "ROLE",
        "TRANSACTION",
        "RESOURCE",
        "CHARSET",
        "CHARACTER",
        "CHAR",
        "DEFAULT",
        "STATEMENT",
        "GLOBAL",
        "SESSION",
        "LOCAL",
        "PERSIST",
        "PERSIST_ONLY",
    }
)


def _name(match: re.Match[str]) -> str:
    quoted = match.group("quoted")
    return quoted.replace("``", "`") if quoted is not None else match.group("plain")


def _value(match: re.Match[str]) -> str:
    word = match.group("word")
    return word if word is not None else match.group("string")


def _use(sql: str) -> PlainStatement | None:
    match = _USE.fullmatch(sql)
    return UseDatabase(_name(match)) if match else None


def _part(text: str) -> str:
    return text[1:-1].replace("``", "`") if text.startswith("`") else text


def _drop(sql: str) -> PlainStatement | None:
    match = _DROP_DATABASE.fullmatch(sql)
    if match is not None:
        return DropDatabase(_name(match), match.group("if_exists") is not None)
    match = _DROP_TABLE.fullmatch(sql)
    if match is None:
        return None
    names = []
    for name in _TABLE_NAME.finditer(match.group("tables")):
        first, second = name.group("first"), name.group("second")
        names.append(
            QualifiedName(_part(first), _part(second))
            if second is not None
            else QualifiedName(None, _part(first))
        )
    return DropTable(tuple(names), False, match.group("if_exists") is not None)


def _create(sql: str) -> PlainStatement | None:
    match = _CREATE_DATABASE.fullmatch(sql)
    if match is None:
        return None
    charset = collation = None
    options, at = match.group("options"), 0
    while at < len(options):
        option = _DATABASE_OPTION.match(options, at)
        if option is None or option.end() == at:
            return None
        if option.group("charset") is not None:
            charset = _value(option)
        else:
            collation = _value(option)
        at = option.end()
    return CreateDatabase(_name(match), match.group("if_not_exists") is not None, charset, collation)


def _set(sql: str) -> PlainStatement | None:
    head = re.match(r"SET\s+", sql, _FLAGS)
    if head is None:
        return None
    assignments: list[tuple[str, str, str]] = []
    at, scope = head.end(), "session"  # as in the grammar, a scope holds for the assignments after it
    while True:
        assignment = _ASSIGNMENT.match(sql, at)
        if assignment is None or assignment.group("name").upper() in _SET_SPECIAL_WORDS:
            return None
        scope = (assignment.group("scope") or scope).lower()
        assignments.append((scope, assignment.group("name").lower(), _value(assignment)))
        at = assignment.end()
        if assignment.group("comma") is None:
            break
    if re.fullmatch(_END, sql[at:]) is None:
        return None
    return SetVariables(tuple(assignments))


_READERS: dict[str, Callable[[str], PlainStatement | None]] = {
    "USE": _use,
    "DROP": _drop,
    "CREATE": _create,
    "SET": _set,
}


def simple_statement(sql: str) -> tuple[PlainStatement, str] | None:
    """The statement tree of ``sql`` and its text as the grammar's split gives it (without the
    blanks around it and its ``;``) when it is one USE, DROP DATABASE, CREATE DATABASE, DROP TABLE
    or SET of the plain shapes above; None otherwise (including any other statement)."""
    text = sql.strip()
    reader = _READERS.get(text[:6].split(None, 1)[0].upper() if text else "")
    tree = reader(text) if reader is not None else None
    return (tree, _TERMINATOR.sub("", text)) if tree is not None else None


__all__ = ["simple_statement"]
