"""Table-level grammar: the table options of CREATE/ALTER TABLE (ENGINE, CHARSET, COMMENT, ...)."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from ddl.parsing.columns import at_charset, parse_charset_clause
from ddl.parsing.cursor import Cursor
from ddl.parsing.statements import (
    TableOptions,
)

# Options taking one value, with or without '=' (CREATE/ALTER TABLE table_option).
_VALUE_OPTIONS = frozenset(
    {
        "ENGINE",
        "TYPE",
        "AUTO_INCREMENT",
        "AVG_ROW_LENGTH",
        "CHECKSUM",
        "TABLE_CHECKSUM",
        "COMPRESSION",
        "CONNECTION",
        "DELAY_KEY_WRITE",
        "ENCRYPTION",
        "INSERT_METHOD",
        "KEY_BLOCK_SIZE",
        "MAX_ROWS",
        "MIN_ROWS",
        "PACK_KEYS",
        "PASSWORD",
        "ROW_FORMAT",
        "STATS_AUTO_RECALC",
        "STATS_PERSISTENT",
        "STATS_SAMPLE_PAGES",
        "ENGINE_ATTRIBUTE",
        "SECONDARY_ENGINE_ATTRIBUTE",
        "SECONDARY_ENGINE",
        "AUTOEXTEND_SIZE",
        "PAGE_CHECKSUM",
        "PAGE_COMPRESSED",
        "PAGE_COMPRESSION_LEVEL",
        "TRANSACTIONAL",
        "ENCRYPTED",
        "ENCRYPTION_KEY_ID",
        "IETF_QUOTES",
        "SEQUENCE",
        "START",
        "STATS_MODE",
    }
)


def parse_table_option(c: Cursor) -> TableOptions | None:
    """One table option; returns the charset/collation/comment it sets, or None when it is none of
    those. Raises when the next tokens are not a table option."""
    if c.at("DEFAULT") and (_at_charset_after_default(c) or c.word(1) == "COLLATE"):
        c.advance()
    if at_charset(c):
        return TableOptions(charset=parse_charset_clause(c))
    word = c.word()
    if word == "COLLATE":
        c.advance()
        c.accept_equals()
        return TableOptions(collation=c.name_or_string("collation name"))
    if word == "COMMENT":
        c.advance()
        c.accept_equals()
        return TableOptions(comment=c.string("comment text"))
    if word in ("DATA", "INDEX") and c.word(1) == "DIRECTORY":
        c.advance()
        c.advance()
        c.accept_equals()
        c.string("directory")
        return None
    if word == "UNION":
        c.advance()
        c.accept_equals()
        c.skip_parenthesized()
        return None
    if word == "TABLESPACE":
        c.advance()
        c.accept_equals()
        c.identifier("tablespace name")
        if c.accept("STORAGE"):
            c.advance()
        return None
    if c.accept("WITH", "SYSTEM", "VERSIONING"):
        return TableOptions(system_versioning=True)
    if c.accept("START", "TRANSACTION"):
        return None
    if c.at("STORAGE") and c.word(1) in ("DISK", "MEMORY"):
        c.advance()
        c.advance()
        return None
    if word and (word in _VALUE_OPTIONS or c.at_type(TokenType.EQ, 1)):
        c.advance()
        c.accept_equals()
        value = c.peek()
        if value is None or value.token_type in (TokenType.COMMA, TokenType.L_PAREN, TokenType.R_PAREN):
            raise c.error(f"expected a value for table option {word}")
        c.advance()
        return None
    raise c.error("expected a table option")


def _at_charset_after_default(c: Cursor) -> bool:
    return c.word(1) == "CHARSET" or (c.word(1) in ("CHARACTER", "CHAR") and c.word(2) == "SET")


def merge_options(a: TableOptions, b: TableOptions | None) -> TableOptions:
    if b is None:
        return a
    return TableOptions(
        charset=b.charset or a.charset,
        collation=b.collation or a.collation,
        comment=b.comment if b.comment is not None else a.comment,
        system_versioning=a.system_versioning or b.system_versioning,
    )
