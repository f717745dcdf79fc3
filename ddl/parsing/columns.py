"""Column-level grammar: data types, column definitions and defaults (keys: ``ddl.parsing.keys``;
table options: ``ddl.parsing.table_options``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot.tokens import TokenType

from ddl.mysql_types import MYSQL_TYPES, Dims, Family, MysqlType
from ddl.parsing.cursor import STRING_TYPES, Cursor
from ddl.parsing.dialect import is_word
from ddl.parsing.quoting import as_single_quoted_body
from ddl.parsing.statements import (
    ColumnDefinition,
    DataTypeSpec,
    DdlSyntaxError,
    DefaultValue,
)

# --- data types ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TypeInfo:
    """Grammar-level facts about a type keyword."""

    key: str
    dims: Dims = Dims.NONE
    text: bool = False  # takes BINARY / CHARACTER SET / COLLATE
    numeric: bool = False  # takes SIGNED / UNSIGNED / ZEROFILL


_TEXT_FAMILIES = frozenset({Family.CHARACTER, Family.ENUM, Family.SET})
_NUMERIC_FAMILIES = frozenset({Family.FLOAT, Family.DECIMAL})


def _type_info(mysql_type: MysqlType, spelling: str) -> TypeInfo:
    numeric = mysql_type.integer is not None or mysql_type.family in _NUMERIC_FAMILIES
    return TypeInfo(spelling, mysql_type.dims, text=mysql_type.family in _TEXT_FAMILIES, numeric=numeric)


# The grammar's facts of every spelling in the type registry (``_type_words`` reads the names of
# two words, and LONG's forms, before a one-word name is looked up).
TYPES = {s: _type_info(t, s) for t in MYSQL_TYPES for s in t.spellings}
_MARIADB_ONLY_TYPES = frozenset({"INET4", "INET6", "UUID", "XMLTYPE"})
# Keys whose Debezium type name gets a " BINARY" suffix when the BINARY attribute follows.
_BINARY_SUFFIX_KEYS = frozenset(t.name for t in MYSQL_TYPES if t.family is Family.CHARACTER)


def parse_data_type(c: Cursor) -> DataTypeSpec:
    start = c.offset
    first = c.word()
    if not first:
        raise c.error("expected a data type")
    name, key, info = _type_words(c, first)
    if key in _MARIADB_ONLY_TYPES and key not in c.dialect.extra_type_names:
        raise DdlSyntaxError(f"unknown data type {first}", start)
    length: int | None = None
    scale: int | None = None
    values: tuple[str, ...] = ()
    if info.dims is Dims.VALUES:
        values = _enum_values(c)
    elif info.dims is not Dims.NONE and c.at_type(TokenType.L_PAREN):
        c.advance()
        length = c.integer("length")
        if c.accept_type(TokenType.COMMA):
            if info.dims is not Dims.TWO:
                raise c.error("expected ')'")
            scale = c.integer("scale")
        c.expect_type(TokenType.R_PAREN, "')'")
    unsigned = zerofill = signed = False
    charset = collation = None
    binary = False
    while True:
        if info.numeric and c.accept_any(frozenset({"SIGNED"})):
            signed = True
            continue
        if info.numeric and c.accept("UNSIGNED"):
            unsigned = True
            continue
        if info.numeric and c.accept("ZEROFILL"):
            zerofill = unsigned = True
            continue
        if info.text and c.accept("BINARY"):
            binary = True
            continue
        if info.text and c.accept_any(frozenset({"ASCII", "UNICODE", "BYTE"})):
            continue
        if info.text and at_charset(c):
            charset = parse_charset_clause(c)
            continue
        if info.text and c.at("COLLATE"):
            c.advance()
            c.accept_equals()
            collation = c.name_or_string("collation name")
            continue
        break
    if binary and key in _BINARY_SUFFIX_KEYS:
        name += " BINARY"
    return DataTypeSpec(
        key=key,
        name=name,
        length=length,
        scale=scale,
        unsigned=unsigned,
        zerofill=zerofill,
        charset=charset,
        collation=collation,
        values=values,
        signed=signed,
    )


def _type_words(c: Cursor, first: str) -> tuple[str, str, TypeInfo]:
    """Consume the keyword(s) naming a type: (Debezium type name, mapping key, grammar info)."""
    start = c.offset
    c.advance()
    if first == "NATIONAL":
        second = c.word()
        if second in ("CHAR", "CHARACTER"):
            c.advance()
            if c.accept("VARYING"):
                return f"NATIONAL {second} VARYING", "NVARCHAR", TYPES["NVARCHAR"]
            return f"NATIONAL {second}", "NCHAR", TYPES["NCHAR"]
        if second == "VARCHAR":
            c.advance()
            return "NATIONAL VARCHAR", "NVARCHAR", TYPES["NVARCHAR"]
        raise DdlSyntaxError("expected CHAR or VARCHAR after NATIONAL", c.offset)
    if first in ("CHAR", "CHARACTER") and c.accept("VARYING"):
        return f"{first} VARYING", "VARCHAR", TYPES["VARCHAR"]
    if first == "NCHAR":
        if c.accept("VARYING"):
            return "NCHAR VARYING", "NVARCHAR", TYPES["NVARCHAR"]
        if c.accept("VARCHAR"):
            return "NCHAR VARCHAR", "NVARCHAR", TYPES["NVARCHAR"]
    if first == "DOUBLE" and c.accept("PRECISION"):
        return "DOUBLE PRECISION", "DOUBLE", TYPES["DOUBLE"]
    if first == "LONG":
        if c.accept("VARBINARY"):
            return "LONG VARBINARY", "LONG VARBINARY", TYPES["LONG VARBINARY"]
        if c.accept("VARCHAR"):
            return "LONG VARCHAR", "LONG VARCHAR", TYPES["LONG VARCHAR"]
        if c.at("CHAR", "VARYING"):
            c.advance()
            c.advance()
            return "LONG VARCHAR", "LONG VARCHAR", TYPES["LONG VARCHAR"]
        return "LONG", "LONG", TYPES["LONG"]
    info = TYPES.get(first)
    if info is None:
        raise DdlSyntaxError(f"unknown data type {first}", start)
    return first, info.key, info


def _enum_values(c: Cursor) -> tuple[str, ...]:
    c.expect_type(TokenType.L_PAREN, "'(' with the ENUM/SET values")
    values: list[str] = []
    while True:
        # Charset introducers (_utf8mb4'a') may precede a value.
        c.accept_type(TokenType.INTRODUCER)
        values.append(c.string("ENUM/SET value"))
        if c.accept_type(TokenType.COMMA):
            continue
        c.expect_type(TokenType.R_PAREN, "')'")
        return tuple(values)


def at_charset(c: Cursor) -> bool:
    return c.at("CHARACTER", "SET") or c.at("CHARSET") or c.at("CHAR", "SET")


def parse_charset_clause(c: Cursor) -> str:
    """``CHARACTER SET [=] name`` / ``CHARSET [=] name``; returns the name (``DEFAULT`` kept)."""
    if not c.accept("CHARSET"):
        c.advance()
        c.expect("SET")
    c.accept_equals()
    return c.name_or_string("character set name")


# --- column definitions ---------------------------------------------------------------------------

_CURRENT_TIMESTAMP_WORDS = frozenset({"CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP"})
_EPOCH_TEXT = "1970-01-01 00:00:00"
_NILADIC_FUNCTIONS = frozenset(
    {
        "CURRENT_DATE",
        "CURRENT_TIME",
        "CURRENT_USER",
        "UTC_DATE",
        "UTC_TIME",
        "UTC_TIMESTAMP",
        "CURRENT_ROLE",
        "USER",
        "SYSDATE",
    }
)
_REFERENCE_ACTIONS = ("RESTRICT", "CASCADE", "SET NULL", "NO ACTION", "SET DEFAULT")


def parse_column_definition(c: Cursor, name: str) -> ColumnDefinition:
    data_type = parse_data_type(c)
    nullable: bool | None = None
    default: DefaultValue | None = None
    serial = data_type.key == "SERIAL"
    auto_increment = unique = serial
    primary_key = False
    comment: str | None = None
    generation: str | None = None
    invisible = False
    charset, collation = data_type.charset, data_type.collation
    storage = c.dialect.generated_storage_words
    while not c.done and not c.at_type(TokenType.COMMA) and not c.at_type(TokenType.R_PAREN):
        word = c.word()
        if word in ("FIRST", "AFTER") or c.at_boundary():
            break  # ALTER TABLE column position (handled by the caller) or the next statement
        if c.accept("NOT", "NULL"):
            nullable = False
        elif c.accept("NULL"):
            nullable = True
        elif word == "DEFAULT":
            c.advance()
            default = parse_default_value(c)
        elif word == "AUTO_INCREMENT":
            c.advance()
            auto_increment = True
        elif c.accept("SERIAL", "DEFAULT", "VALUE"):
            serial = unique = auto_increment = True
        elif c.accept("UNIQUE"):
            c.accept_any(frozenset({"KEY", "INDEX"}))
            unique = True
        elif c.accept("PRIMARY", "KEY") or c.accept("KEY"):
            primary_key = True
        elif word == "COMMENT":
            c.advance()
            comment = c.string("comment text")
        elif word == "COLLATE":
            c.advance()
            c.accept_equals()
            collation = c.name_or_string("collation name")
        elif at_charset(c):
            charset = parse_charset_clause(c)
        elif word in ("GENERATED", "AS"):
            generation = _generated_column(c, storage)
        elif word in ("VISIBLE", "INVISIBLE"):
            c.advance()
            invisible = word == "INVISIBLE"
        elif word == "ON" and c.word(1) == "UPDATE":
            c.advance()
            c.advance()
            _on_update_value(c)
            # Debezium marks ON UPDATE CURRENT_TIMESTAMP columns auto-incremented and generated.
            auto_increment = True
        elif not _skip_ignored_attribute(c, word):
            raise c.error(f"unexpected text in the definition of column {name!r}")
    if serial and nullable is None:
        nullable = False
    return ColumnDefinition(
        name=name,
        type=_with_charset(data_type, charset, collation),
        nullable=nullable,
        default=default,
        auto_increment=auto_increment,
        primary_key=primary_key,
        unique=unique,
        comment=comment,
        generation_expression=generation,
        serial=serial,
        invisible=invisible,
    )


def _skip_ignored_attribute(c: Cursor, word: str) -> bool:
    """Skips a column attribute that changes nothing in the column's structure (storage, engine
    attributes, SRID, references, checks, compression, versioning, charset shorthands); False when
    the text at the cursor is none of them."""
    if word in ("COLUMN_FORMAT", "STORAGE"):
        c.advance()
        c.advance()
        return True
    if word in ("ENGINE_ATTRIBUTE", "SECONDARY_ENGINE_ATTRIBUTE"):
        c.advance()
        c.accept_equals()
        c.string()
        return True
    if word == "SRID" or word == "REF_SYSTEM_ID":
        c.advance()
        c.accept_equals()
        c.integer("SRID")
        return True
    if word == "REFERENCES":
        parse_reference(c)
        return True
    if word == "CONSTRAINT" or word == "CHECK":
        if c.accept("CONSTRAINT") and c.word() != "CHECK":
            c.identifier("constraint name")
        c.expect("CHECK")
        c.skip_parenthesized()
        enforced(c)
        return True
    if c.accept("NOT", "SECONDARY"):
        return True
    if word == "COMPRESSED":
        c.advance()
        if c.accept_type(TokenType.EQ):
            c.identifier("compression method")
        return True
    if c.accept("WITH", "SYSTEM", "VERSIONING") or c.accept("WITHOUT", "SYSTEM", "VERSIONING"):
        return True
    if word in ("BINARY", "ASCII", "UNICODE", "BYTE"):
        c.advance()
        return True
    return False


def _with_charset(data_type: DataTypeSpec, charset: str | None, collation: str | None) -> DataTypeSpec:
    if charset == data_type.charset and collation == data_type.collation:
        return data_type
    return replace(data_type, charset=charset, collation=collation)


def _generated_column(c: Cursor, storage: frozenset[str]) -> str:
    if c.accept("GENERATED"):
        c.expect("ALWAYS")
    c.expect("AS")
    if c.accept("ROW"):
        # MariaDB system-versioning columns: GENERATED ALWAYS AS ROW START|END.
        boundary = c.accept_any(frozenset({"START", "END"}))
        if boundary is None:
            raise c.error("expected START or END")
        return f"ROW {boundary}"
    first, last = c.skip_parenthesized()
    text = c.text_between(first, last) if last >= first else ""
    c.accept_any(storage)
    return text


def _on_update_value(c: Cursor) -> None:
    if not c.accept_any(_CURRENT_TIMESTAMP_WORDS):
        raise c.error("expected CURRENT_TIMESTAMP after ON UPDATE")
    if c.at_type(TokenType.L_PAREN):
        c.skip_parenthesized()


def enforced(c: Cursor) -> None:
    if not c.accept("NOT", "ENFORCED"):
        c.accept("ENFORCED")


def parse_default_value(c: Cursor) -> DefaultValue:
    """The value after DEFAULT, in Debezium's ``defaultValueExpression`` terms."""
    token = c.peek()
    if token is None:
        raise c.error("expected a default value")
    word = c.word()
    if word == "NULL":
        c.advance()
        return DefaultValue(None, is_null=True)
    if word in ("TRUE", "FALSE"):
        c.advance()
        return DefaultValue(c.raw(token))
    if word in _CURRENT_TIMESTAMP_WORDS:
        start = c.i
        c.advance()
        if c.at_type(TokenType.L_PAREN):
            first, last = c.skip_parenthesized()
            if last >= first and c.tokens[first].token_type != TokenType.NUMBER:
                raise DdlSyntaxError("expected a precision", c.tokens[first].start)
        if word in ("CURRENT_TIMESTAMP", "NOW"):
            return DefaultValue(_EPOCH_TEXT)
        return DefaultValue("".join(c.raw(t) for t in c.tokens[start : c.i]))
    if token.token_type in (TokenType.DASH, TokenType.PLUS):
        sign = "-" if token.token_type == TokenType.DASH else "+"
        c.advance()
        number = _number_text(c)
        return DefaultValue(sign + number)
    if token.token_type in (TokenType.NUMBER, TokenType.DOT):
        return DefaultValue(_number_text(c))
    if token.token_type in (TokenType.INTRODUCER, TokenType.STRING, TokenType.NATIONAL_STRING):
        return DefaultValue(_string_default_text(c))
    if token.token_type == TokenType.BIT_STRING:
        c.advance()
        return DefaultValue(token.text)
    if token.token_type == TokenType.HEX_STRING:
        c.advance()
        return DefaultValue(None, ignored=True)
    if token.token_type == TokenType.L_PAREN:
        c.skip_parenthesized()
        return DefaultValue(None)
    if word in _NILADIC_FUNCTIONS:
        c.advance()
        return DefaultValue(None)
    # MariaDB also accepts unparenthesized expressions (``DEFAULT curdate()``, ``NEXT VALUE FOR s``).
    if is_word(token) or token.token_type == TokenType.IDENTIFIER:
        if c.accept("NEXT", "VALUE", "FOR") or c.accept("PREVIOUS", "VALUE", "FOR"):
            c.qualified_name("sequence name")
            return DefaultValue(None)
        c.qualified_name("function name")
        if c.at_type(TokenType.L_PAREN):
            c.skip_parenthesized()
            return DefaultValue(None)
    raise c.error("expected a default value")


def _number_text(c: Cursor) -> str:
    token = c.peek()
    if token is not None and token.token_type == TokenType.DOT:
        # ``.5`` is tokenized as '.', '5'.
        c.advance()
        digits = c.expect_type(TokenType.NUMBER, "a number")
        return "." + digits.text
    number = c.expect_type(TokenType.NUMBER, "a number")
    text = c.raw(number)
    nxt = c.peek()
    if nxt is not None and nxt.token_type == TokenType.DOT and nxt.start == number.end + 1:
        # ``1.`` is tokenized as '1', '.'.
        c.advance()
        text += "."
    return text


def _string_default_text(c: Cursor) -> str:
    """Debezium keeps the literal's text without the outer quotes of the first literal; charset
    introducers (``_utf8mb4'x'``) and national prefixes (``N'x'``) stay in the text."""
    first = c.i
    c.accept_type(TokenType.INTRODUCER)
    token = c.peek()
    if token is None or token.token_type not in STRING_TYPES:
        raise c.error("expected a string literal")
    c.advance()
    while c.at_type(TokenType.STRING):
        c.advance()
    last = c.i - 1
    if c.accept("COLLATE"):
        c.name_or_string("collation name")
        raw = c.raw(
            c.tokens[first] if c.tokens[first].token_type != TokenType.INTRODUCER else c.tokens[first + 1]
        )
    else:
        raw = "".join(c.raw(t) for t in c.tokens[first : last + 1])
    if len(raw) >= 2 and raw[0] == "'" and raw[-1] == "'":
        return raw[1:-1]
    if len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        # Debezium reads the literal as the single-quoted one it rewrites it to (ddl.quoting).
        return as_single_quoted_body(raw[1:-1])
    return raw


def parse_reference(c: Cursor) -> None:
    """``REFERENCES tbl (cols) [MATCH ...] [ON DELETE|UPDATE action]...`` (no effect on the model)."""
    c.expect("REFERENCES")
    c.qualified_name("referenced table")
    if c.at_type(TokenType.L_PAREN):
        c.skip_parenthesized()
    while True:
        if c.accept("MATCH"):
            if not c.accept_any(frozenset({"FULL", "PARTIAL", "SIMPLE"})):
                raise c.error("expected FULL, PARTIAL or SIMPLE")
            continue
        if c.at("ON") and c.word(1) in ("DELETE", "UPDATE"):
            c.advance()
            c.advance()
            for action in _REFERENCE_ACTIONS:
                if c.accept(*action.split()):
                    break
            else:
                raise c.error("expected a referential action")
            continue
        return


# --- keys -------------------------------------------------------------------------------------------


# --- table options ----------------------------------------------------------------------------------
