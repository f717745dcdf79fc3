"""MySQL/MariaDB DDL syntax: one statement's tokens -> a small statement tree.

Recursive descent over the tokens of ``ddl.dialect`` (sqlglot's MySQL tokenizer). Only the parts
of a statement that change table structure are modelled in detail (column definitions, keys,
charsets, renames); everything else the server accepts there (index options, foreign key actions,
table options, partitioning, generated-column and CHECK expressions) is checked for balanced
structure and skipped. Semantics (what a statement does to the schema model) live in
``ddl.parser``; this module only says what the statement *says*.

Words are compared by their upper-cased text rather than sqlglot token types, because MySQL lets
most keywords double as identifiers and sqlglot's token types for keywords differ across releases.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlglot.tokens import Token, TokenType

from ddl.dialect import DdlDialect, is_word
from ddl.errors import DdlError
from ddl.quoting import as_single_quoted_body


class DdlSyntaxError(DdlError, ValueError):
    """The statement does not follow the grammar; ``offset`` is the character offset of the problem."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


# --- statement tree ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QualifiedName:
    database: str | None
    name: str


@dataclass(frozen=True, slots=True)
class DataTypeSpec:
    """A column's declared type. ``name`` is the upper-case type as Debezium names it
    (``VARCHAR``, ``DOUBLE PRECISION``, ``CHAR BINARY``), without UNSIGNED/ZEROFILL."""

    key: str  # canonical type key used for the jdbc mapping (``CHAR VARYING`` -> ``VARCHAR`` ...)
    name: str
    length: int | None = None
    scale: int | None = None
    unsigned: bool = False
    zerofill: bool = False
    charset: str | None = None
    collation: str | None = None
    values: tuple[str, ...] = ()  # ENUM/SET members, unquoted
    signed: bool = False  # the DDL said SIGNED (Debezium keeps it in the type name)


@dataclass(frozen=True, slots=True)
class DefaultValue:
    """A column's DEFAULT clause as Debezium keeps it: ``expression`` is the literal text (string
    literals without their outer quotes, CURRENT_TIMESTAMP/NOW() as ``1970-01-01 00:00:00``), or
    None for computed defaults; ``is_null`` for ``DEFAULT NULL`` (which means "no default")."""

    expression: str | None
    is_null: bool = False
    # Hexadecimal literals are not kept by Debezium's default value listener: no default at all.
    ignored: bool = False


@dataclass(frozen=True, slots=True)
class ColumnDefinition:
    name: str
    type: DataTypeSpec
    nullable: bool | None = None  # None: not said
    default: DefaultValue | None = None
    auto_increment: bool = False
    primary_key: bool = False
    unique: bool = False
    comment: str | None = None
    generation_expression: str | None = None
    serial: bool = False  # SERIAL type or SERIAL DEFAULT VALUE: NOT NULL AUTO_INCREMENT UNIQUE
    invisible: bool = False  # MySQL 8.0.23+ INVISIBLE: left out of SELECT *, still in row images


@dataclass(frozen=True, slots=True)
class KeyDefinition:
    """A table-level key/constraint: ``kind`` is primary|unique|index|fulltext|spatial|foreign|check|period."""

    kind: str
    name: str | None
    columns: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TableOptions:
    charset: str | None = None
    collation: str | None = None
    comment: str | None = None
    system_versioning: bool = False  # MariaDB WITH SYSTEM VERSIONING


@dataclass(frozen=True, slots=True)
class CreateTable:
    name: QualifiedName
    temporary: bool = False
    if_not_exists: bool = False
    or_replace: bool = False
    columns: tuple[ColumnDefinition, ...] = ()
    keys: tuple[KeyDefinition, ...] = ()
    options: TableOptions = TableOptions()
    like: QualifiedName | None = None


# ALTER TABLE specifications ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ColumnPosition:
    first: bool = False
    after: str | None = None


@dataclass(frozen=True, slots=True)
class AddColumns:
    columns: tuple[ColumnDefinition, ...]
    position: ColumnPosition | None = None
    if_not_exists: bool = False


@dataclass(frozen=True, slots=True)
class DropColumn:
    name: str
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class ChangeColumn:
    """CHANGE old new def / MODIFY col def (``old_name == column.name`` for MODIFY)."""

    old_name: str
    column: ColumnDefinition
    position: ColumnPosition | None = None
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class RenameColumn:
    old_name: str
    new_name: str


@dataclass(frozen=True, slots=True)
class AlterColumnDefault:
    name: str
    default: DefaultValue | None  # None: DROP DEFAULT


@dataclass(frozen=True, slots=True)
class AlterColumnVisibility:
    """ALTER COLUMN c SET VISIBLE|INVISIBLE (MySQL 8.0.23+)."""

    name: str
    invisible: bool


@dataclass(frozen=True, slots=True)
class AddKey:
    key: KeyDefinition


@dataclass(frozen=True, slots=True)
class DropKey:
    """DROP PRIMARY KEY (``name`` None, ``kind`` primary) / DROP INDEX|KEY name / DROP FOREIGN KEY ..."""

    kind: str
    name: str | None


@dataclass(frozen=True, slots=True)
class RenameKey:
    old_name: str
    new_name: str


@dataclass(frozen=True, slots=True)
class RenameTo:
    name: QualifiedName


@dataclass(frozen=True, slots=True)
class ConvertCharset:
    charset: str | None  # None: DEFAULT
    collation: str | None


@dataclass(frozen=True, slots=True)
class SetTableOptions:
    options: TableOptions


@dataclass(frozen=True, slots=True)
class SystemVersioning:
    """MariaDB ADD SYSTEM VERSIONING (``enable``) / DROP SYSTEM VERSIONING."""

    enable: bool


AlterSpec = (
    AddColumns
    | DropColumn
    | ChangeColumn
    | RenameColumn
    | AlterColumnDefault
    | AlterColumnVisibility
    | AddKey
    | DropKey
    | RenameKey
    | RenameTo
    | ConvertCharset
    | SetTableOptions
    | SystemVersioning
)


@dataclass(frozen=True, slots=True)
class AlterTable:
    name: QualifiedName
    specs: tuple[AlterSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class DropTable:
    names: tuple[QualifiedName, ...]
    temporary: bool = False
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class RenameTable:
    pairs: tuple[tuple[QualifiedName, QualifiedName], ...]


@dataclass(frozen=True, slots=True)
class TruncateTable:
    name: QualifiedName


@dataclass(frozen=True, slots=True)
class CreateIndex:
    table: QualifiedName
    key: KeyDefinition


@dataclass(frozen=True, slots=True)
class DropIndex:
    table: QualifiedName
    name: str


@dataclass(frozen=True, slots=True)
class CreateDatabase:
    name: str
    if_not_exists: bool = False
    charset: str | None = None
    collation: str | None = None


@dataclass(frozen=True, slots=True)
class AlterDatabase:
    name: str | None  # None: the current database
    charset: str | None = None
    collation: str | None = None


@dataclass(frozen=True, slots=True)
class DropDatabase:
    name: str
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class UseDatabase:
    name: str


@dataclass(frozen=True, slots=True)
class SetVariables:
    """Assignments of a SET statement: (scope, lower-case variable name, value text)."""

    assignments: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Ignored:
    """A statement that never changes table structure (GRANT, DML, CREATE VIEW, ...)."""

    what: str


Statement = (
    CreateTable
    | AlterTable
    | DropTable
    | RenameTable
    | TruncateTable
    | CreateIndex
    | DropIndex
    | CreateDatabase
    | AlterDatabase
    | DropDatabase
    | UseDatabase
    | SetVariables
    | Ignored
)


# --- token cursor -----------------------------------------------------------------------------------

_STRING_TYPES = frozenset({TokenType.STRING, TokenType.NATIONAL_STRING})


@dataclass
class Cursor:
    """Position in one statement's tokens with the small matching vocabulary the grammar needs."""

    tokens: Sequence[Token]
    sql: str
    dialect: DdlDialect
    i: int = 0
    end_offset: int = field(default=0)

    def __post_init__(self) -> None:
        self.end_offset = self.tokens[-1].end + 1 if self.tokens else 0

    # inspection
    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.tokens[j] if 0 <= j < len(self.tokens) else None

    def word(self, k: int = 0) -> str:
        """Upper-case text of the k-th token if it is a word, else ``""``."""
        token = self.peek(k)
        return token.text.upper() if token is not None and is_word(token) else ""

    def at(self, *words: str) -> bool:
        return all(self.word(k) == w for k, w in enumerate(words))

    def at_type(self, token_type: TokenType, k: int = 0) -> bool:
        token = self.peek(k)
        return token is not None and token.token_type == token_type

    @property
    def done(self) -> bool:
        return self.i >= len(self.tokens)

    @property
    def offset(self) -> int:
        token = self.peek()
        return token.start if token is not None else self.end_offset

    # consumption
    def advance(self) -> Token:
        token = self.peek()
        if token is None:
            raise DdlSyntaxError("unexpected end of statement", self.end_offset)
        self.i += 1
        return token

    def accept(self, *words: str) -> bool:
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def accept_any(self, words: frozenset[str] | set[str]) -> str | None:
        word = self.word()
        if word and word in words:
            self.i += 1
            return word
        return None

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error(f"expected {' '.join(words)}")

    def accept_type(self, token_type: TokenType) -> bool:
        if self.at_type(token_type):
            self.i += 1
            return True
        return False

    def expect_type(self, token_type: TokenType, what: str) -> Token:
        if not self.at_type(token_type):
            raise self.error(f"expected {what}")
        return self.advance()

    def accept_equals(self) -> None:
        self.accept_type(TokenType.EQ)

    def error(self, reason: str) -> DdlSyntaxError:
        token = self.peek()
        if token is None:
            return DdlSyntaxError(f"{reason}, found end of statement", self.end_offset)
        return DdlSyntaxError(f"{reason}, found {self.raw(token)!r}", token.start)

    def raw(self, token: Token) -> str:
        return self.sql[token.start : token.end + 1]

    def text_between(self, first: int, last: int) -> str:
        """Original text of tokens[first..last] (inclusive)."""
        return self.sql[self.tokens[first].start : self.tokens[last].end + 1]

    # compound elements
    def identifier(self, what: str = "identifier") -> str:
        token = self.peek()
        if token is None:
            raise self.error(f"expected {what}")
        if token.token_type == TokenType.IDENTIFIER or is_word(token):
            self.i += 1
            return token.text
        if token.token_type == TokenType.STRING and self.raw(token).startswith('"'):
            # Under sql_mode=ANSI_QUOTES "x" is an identifier; accept it where only a name fits.
            self.i += 1
            return token.text
        raise self.error(f"expected {what}")

    def name_or_string(self, what: str) -> str:
        token = self.peek()
        if token is not None and token.token_type in _STRING_TYPES:
            self.i += 1
            return token.text
        return self.identifier(what)

    def qualified_name(self, what: str = "table name") -> QualifiedName:
        first = self.identifier(what)
        if self.at_type(TokenType.DOT):
            self.i += 1
            return QualifiedName(first, self.identifier(what))
        return QualifiedName(None, first)

    def string(self, what: str = "string literal") -> str:
        token = self.peek()
        if token is None or token.token_type not in _STRING_TYPES:
            raise self.error(f"expected {what}")
        self.i += 1
        # Adjacent literals concatenate ('a' 'b' is 'ab').
        text = token.text
        while self.at_type(TokenType.STRING):
            text += self.advance().text
        return text

    def integer(self, what: str = "number") -> int:
        token = self.peek()
        if token is None or token.token_type != TokenType.NUMBER:
            raise self.error(f"expected {what}")
        self.i += 1
        text = token.text
        try:
            return int(text)
        except ValueError:
            try:
                # FLOAT(7.4)-style or 1e3 lengths: MySQL truncates.
                return int(float(text))
            except (ValueError, OverflowError):
                raise DdlSyntaxError(f"expected {what}, found {text!r}", token.start) from None

    def skip_parenthesized(self) -> tuple[int, int]:
        """Consume ``( ... )`` with nesting; returns the token index range of the inside."""
        open_token = self.expect_type(TokenType.L_PAREN, "'('")
        start = self.i
        depth = 1
        while depth:
            token = self.peek()
            if token is None:
                raise DdlSyntaxError("unbalanced parenthesis", open_token.start)
            if token.token_type == TokenType.L_PAREN:
                depth += 1
            elif token.token_type == TokenType.R_PAREN:
                depth -= 1
            self.i += 1
        return start, self.i - 2

    def skip_expression(self, stop_words: frozenset[str] = frozenset()) -> tuple[int, int]:
        """Consume tokens up to a top-level ``,``/``)``/end or one of ``stop_words``."""
        start = self.i
        while not self.done:
            token = self.peek()
            assert token is not None
            if token.token_type in (TokenType.COMMA, TokenType.R_PAREN):
                break
            if stop_words and self.word() in stop_words:
                break
            if token.token_type == TokenType.L_PAREN:
                self.skip_parenthesized()
            else:
                self.i += 1
        if self.i == start:
            raise self.error("expected an expression")
        return start, self.i - 1

    def skip_rest(self, split_lines: bool = False) -> None:
        """Consume the rest of the statement, checking only that parentheses balance.

        With ``split_lines`` (statements without stored-program bodies) a statement keyword at the
        start of a line ends the statement, for scripts that omit the ``;`` between statements.
        """
        depth = 0
        previous: Token | None = None
        while not self.done:
            token = self.tokens[self.i]
            if (
                split_lines
                and depth == 0
                and previous is not None
                and self.at_boundary()
                and "\n" in self.sql[previous.end + 1 : token.start]
            ):
                break
            if token.token_type == TokenType.L_PAREN:
                depth += 1
            elif token.token_type == TokenType.R_PAREN:
                depth -= 1
                if depth < 0:
                    raise DdlSyntaxError("unbalanced parenthesis", token.start)
            previous = token
            self.i += 1
        if depth:
            raise DdlSyntaxError("unbalanced parenthesis", self.end_offset)

    def at_boundary(self) -> bool:
        """Whether the next tokens start another statement (scripts may omit the ``;``)."""
        word = self.word()
        if word not in _BOUNDARY_WORDS:
            return False
        nxt = self.peek(1)
        if nxt is not None and nxt.token_type in (TokenType.L_PAREN, TokenType.DOT, TokenType.EQ):
            return False
        # CREATE TABLE ... REPLACE SELECT is part of the statement, REPLACE INTO starts one.
        return not (word == "REPLACE" and self.word(1) in ("SELECT", "AS", "WITH", ""))

    def at_end(self) -> bool:
        return self.done or self.at_boundary()

    def end_statement(self) -> None:
        if not self.at_end():
            raise self.error("unexpected text after the statement")


# --- data types ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TypeInfo:
    """Grammar-level facts about a type keyword."""

    key: str
    dims: str = "none"  # none | one | two (M[,D]) | values (ENUM/SET)
    text: bool = False  # takes BINARY / CHARACTER SET / COLLATE
    numeric: bool = False  # takes SIGNED / UNSIGNED / ZEROFILL


def _types() -> dict[str, TypeInfo]:
    table: dict[str, TypeInfo] = {}

    def add(names: str, info: Callable[[str], TypeInfo]) -> None:
        for name in names.split(","):
            table[name] = info(name)

    add("BIT", lambda n: TypeInfo(n, "one"))
    add(
        "TINYINT,INT1,SMALLINT,INT2,MEDIUMINT,INT3,MIDDLEINT,INT,INTEGER,INT4,BIGINT,INT8",
        lambda n: TypeInfo(n, "one", numeric=True),
    )
    add(
        "REAL,DOUBLE,FLOAT8,FLOAT,FLOAT4,DECIMAL,DEC,FIXED,NUMERIC",
        lambda n: TypeInfo(n, "two", numeric=True),
    )
    add(
        "BOOL,BOOLEAN,SERIAL,DATE,TINYBLOB,MEDIUMBLOB,LONGBLOB,JSON,GEOMETRY,POINT,LINESTRING,POLYGON,"
        "MULTIPOINT,MULTILINESTRING,MULTIPOLYGON,GEOMETRYCOLLECTION,GEOMCOLLECTION,INET4,INET6,UUID,XMLTYPE",
        lambda n: TypeInfo(n),
    )
    add("TIME,TIMESTAMP,DATETIME,YEAR,BINARY,VARBINARY,BLOB,VECTOR", lambda n: TypeInfo(n, "one"))
    add(
        "CHAR,CHARACTER,VARCHAR,NCHAR,NVARCHAR,TINYTEXT,TEXT,MEDIUMTEXT,LONGTEXT",
        lambda n: TypeInfo(n, "one", text=True),
    )
    add("ENUM,SET", lambda n: TypeInfo(n, "values", text=True))
    return table


TYPES = _types()
_MARIADB_ONLY_TYPES = frozenset({"INET4", "INET6", "UUID", "XMLTYPE"})
# Keys whose Debezium type name gets a " BINARY" suffix when the BINARY attribute follows.
_BINARY_SUFFIX_KEYS = frozenset(
    {
        "CHAR",
        "VARCHAR",
        "TINYTEXT",
        "TEXT",
        "MEDIUMTEXT",
        "LONGTEXT",
        "NCHAR",
        "NVARCHAR",
        "LONG",
        "LONG VARCHAR",
    }
)


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
    if info.dims == "values":
        values = _enum_values(c)
    elif info.dims != "none" and c.at_type(TokenType.L_PAREN):
        c.advance()
        length = c.integer("length")
        if c.accept_type(TokenType.COMMA):
            if info.dims != "two":
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
        if info.text and _at_charset(c):
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
            return "LONG VARBINARY", "LONG VARBINARY", TypeInfo("LONG VARBINARY")
        if c.accept("VARCHAR"):
            return "LONG VARCHAR", "LONG VARCHAR", TypeInfo("LONG VARCHAR", text=True)
        if c.at("CHAR", "VARYING"):
            c.advance()
            c.advance()
            return "LONG VARCHAR", "LONG VARCHAR", TypeInfo("LONG VARCHAR", text=True)
        return "LONG", "LONG", TypeInfo("LONG", text=True)
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


def _at_charset(c: Cursor) -> bool:
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
        elif _at_charset(c):
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
        elif word in ("COLUMN_FORMAT", "STORAGE"):
            c.advance()
            c.advance()
        elif word in ("ENGINE_ATTRIBUTE", "SECONDARY_ENGINE_ATTRIBUTE"):
            c.advance()
            c.accept_equals()
            c.string()
        elif word == "SRID" or word == "REF_SYSTEM_ID":
            c.advance()
            c.accept_equals()
            c.integer("SRID")
        elif word == "REFERENCES":
            parse_reference(c)
        elif word == "CONSTRAINT" or word == "CHECK":
            if c.accept("CONSTRAINT") and c.word() != "CHECK":
                c.identifier("constraint name")
            c.expect("CHECK")
            c.skip_parenthesized()
            _enforced(c)
        elif c.accept("NOT", "SECONDARY"):
            pass
        elif word == "COMPRESSED":
            c.advance()
            if c.accept_type(TokenType.EQ):
                c.identifier("compression method")
        elif c.accept("WITH", "SYSTEM", "VERSIONING") or c.accept("WITHOUT", "SYSTEM", "VERSIONING"):
            pass
        elif word in ("BINARY", "ASCII", "UNICODE", "BYTE"):
            c.advance()
        else:
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


def _with_charset(data_type: DataTypeSpec, charset: str | None, collation: str | None) -> DataTypeSpec:
    if charset == data_type.charset and collation == data_type.collation:
        return data_type
    return DataTypeSpec(
        key=data_type.key,
        name=data_type.name,
        length=data_type.length,
        scale=data_type.scale,
        unsigned=data_type.unsigned,
        zerofill=data_type.zerofill,
        charset=charset,
        collation=collation,
        values=data_type.values,
    )


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


def _enforced(c: Cursor) -> None:
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
    if token is None or token.token_type not in _STRING_TYPES:
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


def _index_options(c: Cursor) -> None:
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
        _index_options(c)
        columns = parse_key_columns(c)
        _index_options(c)
        return KeyDefinition("primary", constraint_name, columns)
    if word == "UNIQUE":
        c.advance()
        c.accept_any(frozenset({"KEY", "INDEX"}))
        c.accept("IF", "NOT", "EXISTS")
        name = _optional_index_name(c) or constraint_name
        _index_options(c)
        columns = parse_key_columns(c)
        _index_options(c)
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
        _enforced(c)
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
    _index_options(c)
    columns = parse_key_columns(c)
    _index_options(c)
    return KeyDefinition(kind, name, columns)


_KEY_START_WORDS = frozenset(
    {"CONSTRAINT", "PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "FULLTEXT", "SPATIAL", "KEY", "INDEX"}
)


def _at_key_definition(c: Cursor) -> bool:
    # These words are reserved: unquoted, they never name a column.
    return c.word() in _KEY_START_WORDS


# --- table options ----------------------------------------------------------------------------------

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
    if _at_charset(c):
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


def _merge_options(a: TableOptions, b: TableOptions | None) -> TableOptions:
    if b is None:
        return a
    return TableOptions(
        charset=b.charset or a.charset,
        collation=b.collation or a.collation,
        comment=b.comment if b.comment is not None else a.comment,
        system_versioning=a.system_versioning or b.system_versioning,
    )


# --- statements -------------------------------------------------------------------------------------

# First words of statements that never change table structure.
_IGNORED_FIRST_WORDS = frozenset(
    {
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "REPLACE",
        "CALL",
        "DO",
        "HANDLER",
        "LOAD",
        "TABLE",
        "VALUES",
        "WITH",
        "IMPORT",
        "START",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT",
        "RELEASE",
        "LOCK",
        "UNLOCK",
        "XA",
        "PURGE",
        "RESET",
        "CHANGE",
        "STOP",
        "GRANT",
        "REVOKE",
        "ANALYZE",
        "CHECK",
        "CHECKSUM",
        "OPTIMIZE",
        "REPAIR",
        "INSTALL",
        "UNINSTALL",
        "BINLOG",
        "CACHE",
        "FLUSH",
        "KILL",
        "SHUTDOWN",
        "RESTART",
        "CLONE",
        "SHOW",
        "DESCRIBE",
        "DESC",
        "EXPLAIN",
        "HELP",
        "PREPARE",
        "EXECUTE",
        "DEALLOCATE",
        "GET",
        "SIGNAL",
        "RESIGNAL",
        "DECLARE",
        "CLOSE",
        "OPEN",
        "FETCH",
        "LEAVE",
        "ITERATE",
        "RETURN",
        "IF",
        "CASE",
        "LOOP",
        "WHILE",
        "REPEAT",
        "END",
        "BACKUP",
        "SOURCE",
    }
)
_IGNORED_CREATE_OBJECTS = frozenset(
    {
        "VIEW",
        "PROCEDURE",
        "FUNCTION",
        "TRIGGER",
        "EVENT",
        "USER",
        "ROLE",
        "SERVER",
        "TABLESPACE",
        "LOGFILE",
        "SPATIAL",
        "RESOURCE",
        "SEQUENCE",
        "PACKAGE",
        "UNDO",
        "AGGREGATE",
        "SYNONYM",
    }
)
_IGNORED_ALTER_OBJECTS = frozenset(
    {
        "VIEW",
        "PROCEDURE",
        "FUNCTION",
        "EVENT",
        "USER",
        "SERVER",
        "TABLESPACE",
        "LOGFILE",
        "INSTANCE",
        "RESOURCE",
        "SEQUENCE",
        "UNDO",
        "ROLE",
        "PACKAGE",
    }
)
_IGNORED_DROP_OBJECTS = _IGNORED_CREATE_OBJECTS | frozenset({"PREPARE"})
_DEFINER_PREFIX_WORDS = frozenset({"DEFINER", "ALGORITHM", "SQL"})
# Ignored statements that may hold stored-program bodies (never split inside them).
_COMPOUND_FIRST_WORDS = frozenset({"BEGIN", "IF", "CASE", "LOOP", "WHILE", "REPEAT", "DECLARE"})
# Objects whose definitions hold no stored-program body.
_SIMPLE_OBJECTS = frozenset(
    {
        "VIEW",
        "USER",
        "ROLE",
        "SERVER",
        "TABLESPACE",
        "LOGFILE",
        "SPATIAL",
        "RESOURCE",
        "SEQUENCE",
        "UNDO",
        "SYNONYM",
        "INSTANCE",
    }
)
# First words of statements: where a script without ';' starts its next statement.
_BOUNDARY_WORDS = frozenset(
    {
        "CREATE",
        "ALTER",
        "DROP",
        "RENAME",
        "TRUNCATE",
        "USE",
        "SET",
        "INSERT",
        "UPDATE",
        "DELETE",
        "REPLACE",
        "SELECT",
        "GRANT",
        "REVOKE",
        "FLUSH",
        "CALL",
        "LOCK",
        "UNLOCK",
        "COMMIT",
        "ROLLBACK",
        "ANALYZE",
        "OPTIMIZE",
        "REPAIR",
        "SHOW",
    }
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
    if first in _IGNORED_FIRST_WORDS:
        c.advance()
        c.skip_rest(split_lines=first not in _COMPOUND_FIRST_WORDS)
        return Ignored(first.lower())
    token = tokens[0]
    if c.at_type(TokenType.COLON, 1) and is_word(token):
        c.skip_rest()
        return Ignored("labelled compound statement")
    raise c.error("unrecognised statement")


def _create(c: Cursor) -> Statement:
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
    if word in _DEFINER_PREFIX_WORDS or word in _IGNORED_CREATE_OBJECTS:
        c.skip_rest(split_lines=word in _SIMPLE_OBJECTS)
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
            if _at_key_definition(c):
                keys.append(parse_key_definition(c))
            elif c.at("PERIOD", "FOR"):
                keys.append(_period(c))
            else:
                columns.append(parse_column_definition(c, _column_name(c)))
            if c.accept_type(TokenType.COMMA):
                continue
            c.expect_type(TokenType.R_PAREN, "',' or ')'")
            break
    options = _table_options_until_query(c)
    return CreateTable(name, temporary, if_not_exists, or_replace, tuple(columns), tuple(keys), options)


def _period(c: Cursor) -> KeyDefinition:
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
            _skip_partitioning(c)
            continue
        if c.at("WITH", "SYSTEM") or c.at("START", "TRANSACTION"):
            options = _merge_options(options, parse_table_option(c))
            continue
        if c.at_boundary():
            break
        if c.word() in _QUERY_WORDS or c.at_type(TokenType.L_PAREN):
            c.skip_rest(split_lines=True)  # CREATE TABLE ... [AS] SELECT: columns come from the query
            break
        options = _merge_options(options, parse_table_option(c))
    return options


def _skip_partitioning(c: Cursor) -> None:
    """``PARTITION BY ... [(PARTITION ..., ...)]`` up to the end or a following query."""
    while not c.at_end() and c.word() not in ("AS", "SELECT"):
        if c.at_type(TokenType.L_PAREN):
            c.skip_parenthesized()
        else:
            c.advance()


def _create_database(c: Cursor) -> CreateDatabase:
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.identifier("database name")
    charset, collation = _database_options(c)
    return CreateDatabase(name, if_not_exists, charset, collation)


def _database_options(c: Cursor) -> tuple[str | None, str | None]:
    charset = collation = None
    while not c.at_end():
        c.accept("DEFAULT")
        if _at_charset(c):
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
    _index_options(c)
    c.expect("ON")
    table = c.qualified_name()
    columns = parse_key_columns(c)
    _index_options(c)
    _algorithm_lock_options(c)
    c.end_statement()
    return CreateIndex(table, KeyDefinition(kind, name, columns))


def _algorithm_lock_options(c: Cursor) -> None:
    while c.word() in ("ALGORITHM", "LOCK", "WAIT", "NOWAIT"):
        word = c.word()
        c.advance()
        if word == "NOWAIT":
            continue
        c.accept_equals()
        c.advance()


def _alter(c: Cursor) -> Statement:
    c.accept_any(frozenset({"ONLINE", "OFFLINE"}))
    c.accept("IGNORE")
    word = c.word()
    if word == "TABLE":
        c.advance()
        return _alter_table(c)
    if word in ("DATABASE", "SCHEMA"):
        c.advance()
        return _alter_database(c)
    if word in _DEFINER_PREFIX_WORDS or word in _IGNORED_ALTER_OBJECTS:
        c.skip_rest(split_lines=word in _SIMPLE_OBJECTS)
        return Ignored(f"alter {word.lower()}")
    raise c.error("unrecognised ALTER statement")


_DATABASE_OPTION_WORDS = frozenset(
    {"DEFAULT", "CHARACTER", "CHARSET", "CHAR", "COLLATE", "ENCRYPTION", "READ", "COMMENT"}
)


def _alter_database(c: Cursor) -> Statement:
    # The name is optional (then the current database is altered); option words are reserved.
    name = None if c.done or c.word() in _DATABASE_OPTION_WORDS else c.identifier("database name")
    if c.accept("UPGRADE", "DATA", "DIRECTORY", "NAME"):
        return Ignored("alter database upgrade")
    charset, collation = _database_options(c)
    return AlterDatabase(name, charset, collation)


def _alter_table(c: Cursor) -> AlterTable:
    c.accept("IF", "EXISTS")
    name = c.qualified_name()
    _wait_option(c)
    specs: list[AlterSpec] = []
    while not c.done:
        spec = _alter_spec(c)
        if spec is not None:
            specs.append(spec)
        if c.accept_type(TokenType.COMMA):
            if c.done:
                raise c.error("expected an ALTER TABLE specification")
            continue
        # Table options and partition clauses may follow without a comma; anything else that
        # starts a statement begins the next statement.
        if c.at_end():
            break
    return AlterTable(name, tuple(specs))


def _wait_option(c: Cursor) -> None:
    if c.accept("WAIT"):
        c.integer("wait timeout")
    else:
        c.accept("NOWAIT")


_PARTITION_OPS = frozenset(
    {
        "DISCARD",
        "IMPORT",
        "TRUNCATE",
        "COALESCE",
        "REORGANIZE",
        "EXCHANGE",
        "ANALYZE",
        "CHECK",
        "OPTIMIZE",
        "REBUILD",
        "REPAIR",
        "REMOVE",
        "UPGRADE",
        "CONVERT",
    }
)
_ADD_KEY_WORDS = frozenset(
    {"CONSTRAINT", "PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "FULLTEXT", "SPATIAL", "KEY", "INDEX"}
)


def _alter_spec(c: Cursor) -> AlterSpec | None:  # noqa: C901 - one branch per ALTER TABLE form
    word = c.word()
    if word == "ADD":
        c.advance()
        return _alter_add(c)
    if word == "DROP":
        c.advance()
        return _alter_drop(c)
    if word == "MODIFY":
        c.advance()
        c.accept("COLUMN")
        if_exists = c.accept("IF", "EXISTS")
        column_name = c.identifier("column name")
        column = parse_column_definition(c, column_name)
        return ChangeColumn(column_name, column, _column_position(c), if_exists)
    if word == "CHANGE":
        c.advance()
        c.accept("COLUMN")
        if_exists = c.accept("IF", "EXISTS")
        old_name = c.identifier("column name")
        new_name = c.identifier("new column name")
        column = parse_column_definition(c, new_name)
        return ChangeColumn(old_name, column, _column_position(c), if_exists)
    if word == "ALTER":
        c.advance()
        return _alter_alter(c)
    if word == "RENAME":
        c.advance()
        return _alter_rename(c)
    if c.at("CONVERT", "TO"):
        c.advance()
        c.advance()
        if not _at_charset(c):
            raise c.error("expected CHARACTER SET")
        charset: str | None = parse_charset_clause(c)
        collation = None
        if c.accept("COLLATE"):
            c.accept_equals()
            collation = c.name_or_string("collation name")
        return ConvertCharset(None if charset and charset.upper() == "DEFAULT" else charset, collation)
    if word in ("ALGORITHM", "LOCK"):
        c.advance()
        c.accept_equals()
        c.advance()
        return None
    if c.accept_any(_FLAG_SPECS) or c.accept("WITH", "VALIDATION") or c.accept("WITHOUT", "VALIDATION"):
        return None
    if word in ("ENABLE", "DISABLE") and c.word(1) == "KEYS":
        c.advance()
        c.advance()
        return None
    if word in ("DISCARD", "IMPORT") and c.word(1) == "TABLESPACE":
        c.advance()
        c.advance()
        return None
    if c.at("ORDER", "BY"):
        c.advance()
        c.advance()
        while True:
            c.identifier("column name")
            c.accept_any(frozenset({"ASC", "DESC"}))
            if not (c.at_type(TokenType.COMMA) and c.word(1) and c.word(1) not in _ALTER_START_WORDS):
                break
            c.advance()
        return None
    if c.at("PARTITION", "BY"):
        _skip_partitioning(c)
        return None
    if word in _PARTITION_OPS and (c.word(1) in ("PARTITION", "PARTITIONING")):
        c.skip_rest(split_lines=True)
        return None
    if word in ("REMOVE", "UPGRADE") and c.word(1) == "PARTITIONING":
        c.advance()
        c.advance()
        return None
    options = parse_table_option(c)
    return SetTableOptions(options) if options is not None else None


_FLAG_SPECS = frozenset({"FORCE", "SECONDARY_LOAD", "SECONDARY_UNLOAD"})
_ALTER_START_WORDS = frozenset(
    {
        "ADD",
        "DROP",
        "MODIFY",
        "CHANGE",
        "ALTER",
        "RENAME",
        "CONVERT",
        "ALGORITHM",
        "LOCK",
        "FORCE",
        "ENABLE",
        "DISABLE",
        "ORDER",
        "PARTITION",
    }
)


def _column_position(c: Cursor) -> ColumnPosition | None:
    if c.accept("FIRST"):
        return ColumnPosition(first=True)
    if c.accept("AFTER"):
        return ColumnPosition(after=c.identifier("column name"))
    return None


def _alter_add(c: Cursor) -> AlterSpec | None:
    if c.word() == "PARTITION":
        c.advance()
        if c.at_type(TokenType.L_PAREN):
            c.skip_parenthesized()
        return None
    if c.at("PERIOD", "FOR"):
        return AddKey(_period(c))
    if c.accept("SYSTEM", "VERSIONING"):
        return SystemVersioning(True)
    if c.word() in _ADD_KEY_WORDS and _at_key_definition(c):
        return AddKey(parse_key_definition(c))
    c.accept("COLUMN")
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    if c.at_type(TokenType.L_PAREN):
        c.advance()
        columns: list[ColumnDefinition] = []
        keys: list[KeyDefinition] = []
        while True:
            if _at_key_definition(c):
                keys.append(parse_key_definition(c))
            else:
                column_name = c.identifier("column name")
                columns.append(parse_column_definition(c, column_name))
            if c.accept_type(TokenType.COMMA):
                continue
            c.expect_type(TokenType.R_PAREN, "',' or ')'")
            break
        return AddColumns(tuple(columns), None, if_not_exists)
    column_name = c.identifier("column name")
    column = parse_column_definition(c, column_name)
    return AddColumns((column,), _column_position(c), if_not_exists)


def _alter_drop(c: Cursor) -> AlterSpec | None:
    if c.accept("PRIMARY", "KEY"):
        return DropKey("primary", None)
    word = c.word()
    if word in ("INDEX", "KEY"):
        c.advance()
        c.accept("IF", "EXISTS")
        return DropKey("index", c.identifier("index name"))
    if c.accept("FOREIGN", "KEY"):
        c.accept("IF", "EXISTS")
        return DropKey("foreign", c.identifier("foreign key name"))
    if word in ("CHECK", "CONSTRAINT"):
        c.advance()
        c.accept("IF", "EXISTS")
        return DropKey("constraint", c.identifier("constraint name"))
    if word == "PARTITION":
        c.advance()
        c.accept("IF", "EXISTS")
        c.identifier("partition name")
        while c.at_type(TokenType.COMMA) and c.word(1) and c.word(1) not in _ALTER_START_WORDS:
            c.advance()
            c.identifier("partition name")
        return None
    if c.accept("SYSTEM", "VERSIONING"):
        return SystemVersioning(False)
    if c.at("PERIOD", "FOR"):
        c.advance()
        c.advance()
        c.identifier("period name")
        return None
    c.accept("COLUMN")
    if_exists = c.accept("IF", "EXISTS")
    name = c.identifier("column name")
    c.accept_any(frozenset({"RESTRICT", "CASCADE"}))
    return DropColumn(name, if_exists)


def _alter_alter(c: Cursor) -> AlterSpec | None:
    if c.word() in ("INDEX", "KEY"):
        c.advance()
        c.identifier("index name")
        if not c.accept_any(frozenset({"VISIBLE", "INVISIBLE", "IGNORED"})) and not c.accept(
            "NOT", "IGNORED"
        ):
            raise c.error("expected VISIBLE or INVISIBLE")
        return None
    if c.word() in ("CHECK", "CONSTRAINT"):
        c.advance()
        c.identifier("constraint name")
        _enforced(c)
        return None
    c.accept("COLUMN")
    name = c.identifier("column name")
    if c.accept("SET", "DEFAULT"):
        return AlterColumnDefault(name, parse_default_value(c))
    if c.accept("DROP", "DEFAULT"):
        return AlterColumnDefault(name, None)
    if c.accept("SET"):
        visibility = c.accept_any(frozenset({"VISIBLE", "INVISIBLE"}))
        if visibility is not None:
            return AlterColumnVisibility(name, visibility.upper() == "INVISIBLE")
    raise c.error("expected SET DEFAULT, DROP DEFAULT or SET VISIBLE/INVISIBLE")


def _alter_rename(c: Cursor) -> AlterSpec:
    if c.accept("COLUMN"):
        c.accept("IF", "EXISTS")
        old_name = c.identifier("column name")
        c.expect("TO")
        return RenameColumn(old_name, c.identifier("new column name"))
    if c.word() in ("INDEX", "KEY"):
        c.advance()
        old_name = c.identifier("index name")
        c.expect("TO")
        return RenameKey(old_name, c.identifier("new index name"))
    c.accept_any(frozenset({"TO", "AS"}))
    return RenameTo(c.qualified_name("new table name"))


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
        _wait_option(c)
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
        _algorithm_lock_options(c)
        c.end_statement()
        return DropIndex(table, index)
    if word in _IGNORED_DROP_OBJECTS or word in _DEFINER_PREFIX_WORDS:
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
        _wait_option(c)
        c.expect("TO")
        pairs.append((old, c.qualified_name("new table name")))
        if not c.accept_type(TokenType.COMMA):
            break
    c.end_statement()
    return RenameTable(tuple(pairs))


def _truncate(c: Cursor) -> Statement:
    c.accept("TABLE")
    name = c.qualified_name()
    _wait_option(c)
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
    "CREATE": _create,
    "ALTER": _alter,
    "DROP": _drop,
    "RENAME": _rename,
    "TRUNCATE": _truncate,
    "USE": _use,
    "SET": _set,
}
