"""Where sqlglot's MySQL dialect is extended for the DDL parser.

sqlglot's MySQL tokenizer already knows MySQL's lexical rules (backquoted identifiers with doubled
backquotes, ``'...'``/``"..."`` strings with backslash escapes, ``#``/``--``/``/* */`` comments,
charset introducers, ``b'..'``/``x'..'``/``0x..`` literals, ``@``/``@@`` variables). What it lacks
for reading binlog DDL lives here, and only here:

* MySQL/MariaDB *executable* comments ``/*!50100 ... */`` (and MariaDB's ``/*M!100100 ... */``):
  the server runs their content, sqlglot drops them as comments. ``expose_versioned_comments``
  blanks out the comment markers so the content is tokenized like ordinary SQL.
* Identifiers that start with a digit (``1c``, ``123abc``), which MySQL allows unquoted.
* sqlglot turns the rest of a ``RENAME``/``REPLACE``/``EXECUTE`` statement into one opaque string;
  the DDL grammar needs ``RENAME TABLE`` tokenized.
* Multi-word keywords (``CHARACTER VARYING``, ``PRIMARY KEY`` ...) come out of sqlglot as one token
  with a canonical text; the DDL grammar wants one token per word, so ``tokenize`` splits them.
* Statement boundaries: one binlog query event may hold several ``;``-separated statements, and a
  ``CREATE PROCEDURE/FUNCTION/TRIGGER/EVENT`` body holds ``;`` inside ``BEGIN ... END`` blocks.
  ``split_statements`` cuts at the ``;`` that really end a statement.

Flavour differences (MySQL vs MariaDB) are isolated in ``DdlDialect`` instances.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from mysql_cdc_base.errors import DdlError


class SqlTokenError(DdlError, ValueError):
    """The text cannot be tokenized (unterminated string, comment or quoted identifier)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


class MySqlDdlSqlglotDialect(MySQL):
    """sqlglot's MySQL dialect with MySQL's rule that unquoted identifiers may start with a digit."""

    IDENTIFIERS_CAN_START_WITH_DIGIT = True

    class Tokenizer(MySQL.Tokenizer):
        # sqlglot swallows everything after RENAME/REPLACE/EXECUTE/... into one string token;
        # the DDL grammar needs those statements tokenized like any other.
        COMMANDS: ClassVar[set[TokenType]] = set()


# Token types whose text is a word of the statement (keyword or unquoted identifier).
_NON_WORD_TYPES = frozenset(
    {
        TokenType.STRING,
        TokenType.IDENTIFIER,
        TokenType.NUMBER,
        TokenType.BIT_STRING,
        TokenType.HEX_STRING,
        TokenType.NATIONAL_STRING,
        TokenType.BYTE_STRING,
        TokenType.RAW_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.UNICODE_STRING,
    }
)
_WORD = re.compile(r"[^\W]|\$", re.UNICODE)
_WORDS_IN_TEXT = re.compile(r"\S+")


def is_word(token: Token) -> bool:
    """True for keyword/unquoted-identifier tokens (``SELECT``, ``t1``, ``varchar``)."""
    return token.token_type not in _NON_WORD_TYPES and bool(token.text) and bool(_WORD.match(token.text))


@dataclass(frozen=True)
class DdlDialect:
    """The flavour-specific lexical knobs of MySQL and MariaDB."""

    name: str
    # MariaDB runs ``/*M!NNNNNN ... */``; MySQL treats it as an ordinary comment.
    runs_mariadb_comments: bool
    # Data type keywords only this flavour knows (mapped in ddl.parsing.parser).
    extra_type_names: frozenset[str] = field(default_factory=frozenset)
    # Generated-column storage keywords (``STORED``/``VIRTUAL``, MariaDB adds ``PERSISTENT``).
    generated_storage_words: frozenset[str] = frozenset({"STORED", "VIRTUAL"})

    def tokenize(self, sql: str) -> list[Token]:
        """Tokens of ``sql`` (executable comments exposed), one token per keyword word.

        Offsets (``start``/``end``) index the original ``sql`` because the comment pre-pass keeps
        every character in place.
        """
        text = expose_versioned_comments(sql, self.runs_mariadb_comments)
        try:
            raw = MySqlDdlSqlglotDialect().tokenize(text)
        except TokenError as exc:
            raise SqlTokenError(_token_error_reason(exc), _token_error_offset(exc, text)) from None
        return list(_split_multiword(raw, text))


MYSQL = DdlDialect(name="mysql", runs_mariadb_comments=False)
MARIADB = DdlDialect(
    name="mariadb",
    runs_mariadb_comments=True,
    extra_type_names=frozenset({"INET4", "INET6", "UUID", "XMLTYPE"}),
    generated_storage_words=frozenset({"STORED", "VIRTUAL", "PERSISTENT"}),
)


def expose_versioned_comments(sql: str, mariadb: bool) -> str:
    """Blank out the markers of executable comments so their content is read as SQL.

    ``/*!50100 PARTITION BY ... */`` becomes ``         PARTITION BY ...   `` (same length, so
    token offsets still point into the original text). The server executes such content when its
    version is at least the given one; every server we read from is newer than the versions found
    in practice, so the content is always kept. Markers inside strings, quoted identifiers and
    ordinary comments are left alone.
    """
    if "/*" not in sql:
        return sql
    out = list(sql)
    i, n = 0, len(sql)
    in_executable = False
    while i < n:
        c = sql[i]
        if c in "'\"`":
            i = _skip_quoted(sql, i, c)
            continue
        if c == "#" or (c == "-" and sql.startswith("--", i)):
            end = sql.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if c == "*" and in_executable and sql.startswith("*/", i):
            out[i] = out[i + 1] = " "
            in_executable = False
            i += 2
            continue
        if c == "/" and sql.startswith("/*", i):
            marker = _executable_marker_length(sql, i, mariadb)
            if marker and not in_executable:
                for k in range(i, i + marker):
                    out[k] = " "
                in_executable = True
                i += marker
                continue
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        i += 1
    return "".join(out)


def _executable_marker_length(sql: str, i: int, mariadb: bool) -> int:
    """Length of ``/*!NNNNN`` / ``/*M!NNNNNN`` at ``i`` (0 when it is an ordinary comment)."""
    if sql.startswith("/*!", i):
        j = i + 3
    elif mariadb and sql.startswith("/*M!", i):
        j = i + 4
    else:
        return 0
    k = j
    while k < len(sql) and k - j < 6 and sql[k].isdigit():
        k += 1
    return k - i


def _skip_quoted(sql: str, i: int, quote: str) -> int:
    """Index just after the quoted literal/identifier starting at ``i`` (end of text if open)."""
    j = i + 1
    n = len(sql)
    while j < n:
        c = sql[j]
        if c == "\\" and quote != "`":
            j += 2
            continue
        if c == quote:
            if j + 1 < n and sql[j + 1] == quote:
                j += 2
                continue
            return j + 1
        j += 1
    return n


def _split_multiword(tokens: Sequence[Token], text: str) -> Iterator[Token]:
    """One token per word: sqlglot folds ``CHARACTER VARYING`` etc. into one canonical token."""
    for token in tokens:
        if " " not in token.text or not is_word(token):
            yield token
            continue
        raw = text[token.start : token.end + 1]
        for match in _WORDS_IN_TEXT.finditer(raw):
            start = token.start + match.start()
            yield Token(
                TokenType.VAR, match.group(), token.line, token.col, start, start + len(match.group()) - 1, []
            )


def _token_error_reason(exc: TokenError) -> str:
    message = str(exc).splitlines()[0] if str(exc) else "cannot tokenize"
    return message.strip()


_LINE_COL = re.compile(r"[Ll]ine\s+(\d+).*?[Cc]ol(?:umn)?:?\s*(\d+)")


def _token_error_offset(exc: TokenError, text: str) -> int:
    match = _LINE_COL.search(str(exc))
    if not match:
        return 0
    line, col = int(match.group(1)), int(match.group(2))
    offset = 0
    for _ in range(line - 1):
        nl = text.find("\n", offset)
        if nl < 0:
            break
        offset = nl + 1
    return min(len(text), offset + max(col - 1, 0))


# --- statement boundaries -------------------------------------------------------------------------

# Words that open a block ended by ``END`` inside stored-program bodies.
_BLOCK_OPENERS = frozenset({"BEGIN", "CASE", "IF", "LOOP", "WHILE", "REPEAT"})
# ``END IF`` / ``END LOOP`` ...: the word after END belongs to the END.
_BLOCK_END_SUFFIXES = frozenset({"IF", "CASE", "LOOP", "WHILE", "REPEAT"})
_ROUTINE_OBJECTS = frozenset({"PROCEDURE", "FUNCTION", "TRIGGER", "EVENT"})


def split_statements(tokens: Sequence[Token]) -> list[list[Token]]:
    """Token lists of the statements in ``tokens`` (empty statements dropped).

    Plain statements end at ``;``. Stored programs (``CREATE ... PROCEDURE|FUNCTION|TRIGGER|EVENT``
    and MariaDB's top-level compound statements ``BEGIN NOT ATOMIC``/``IF``/``LOOP``...) end at the
    first ``;`` outside their ``BEGIN ... END`` / ``IF ... END IF`` ... blocks.
    """
    statements: list[list[Token]] = []
    current: list[Token] = []
    compound: bool | None = None
    depth = 0
    i = 0
    n = len(tokens)
    while i < n:
        token = tokens[i]
        if token.token_type == TokenType.SEMICOLON and depth <= 0:
            if current:
                statements.append(current)
            current, compound, depth = [], None, 0
            i += 1
            continue
        current.append(token)
        if compound is None and is_word(token):
            compound = _starts_compound(tokens, i)
        if compound and is_word(token):
            word = token.text.upper()
            if word == "END":
                depth -= 1
                nxt = tokens[i + 1] if i + 1 < n else None
                if nxt is not None and is_word(nxt) and nxt.text.upper() in _BLOCK_END_SUFFIXES:
                    current.append(nxt)
                    i += 1
            elif word in _BLOCK_OPENERS and _opens_block(tokens, i, len(current) == 1):
                depth += 1
        i += 1
    if current:
        statements.append(current)
    return statements


def _starts_compound(tokens: Sequence[Token], i: int) -> bool:
    """Whether the statement whose first word is ``tokens[i]`` may contain ``;`` in blocks."""
    first = tokens[i].text.upper()
    if first in ("BEGIN",):
        # ``BEGIN`` alone / ``BEGIN WORK`` starts a transaction; ``BEGIN NOT ATOMIC`` a block.
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        return nxt is not None and is_word(nxt) and nxt.text.upper() == "NOT"
    if first in ("IF", "LOOP", "WHILE", "REPEAT", "CASE"):
        return True
    if first != "CREATE":
        return False
    # CREATE [OR REPLACE] [DEFINER = ...] [AGGREGATE] PROCEDURE|FUNCTION|TRIGGER|EVENT: look ahead a
    # bounded number of words, stopping at the first parenthesis (a table definition).
    for token in tokens[i + 1 : i + 16]:
        if token.token_type in (TokenType.L_PAREN, TokenType.SEMICOLON):
            return False
        if is_word(token):
            word = token.text.upper()
            if word in _ROUTINE_OBJECTS:
                return True
            if word in ("TABLE", "INDEX", "DATABASE", "SCHEMA", "VIEW", "USER", "ROLE"):
                return False
    return False


# Words after which a stored-program statement starts (so IF/LOOP/WHILE/REPEAT there are statements).
_STATEMENT_LEAD_WORDS = frozenset({"BEGIN", "THEN", "ELSE", "DO", "LOOP", "REPEAT"})


def _opens_block(tokens: Sequence[Token], i: int, first_in_statement: bool) -> bool:
    word = tokens[i].text.upper()
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if word == "CASE":
        return True  # CASE ... END (expression) and CASE ... END CASE (statement)
    if word == "BEGIN":
        # Inside a body BEGIN always opens a block; a statement of its own only with NOT ATOMIC.
        return not first_in_statement or (nxt is not None and is_word(nxt) and nxt.text.upper() == "NOT")
    # IF/LOOP/WHILE/REPEAT open a block when used as statements, i.e. where a statement starts;
    # elsewhere they are functions (IF(...), REPEAT(...)) or clauses (IF NOT EXISTS).
    if first_in_statement:
        return True
    prev = tokens[i - 1]
    if prev.token_type in (TokenType.SEMICOLON, TokenType.COLON):
        return True
    return is_word(prev) and prev.text.upper() in _STATEMENT_LEAD_WORDS
