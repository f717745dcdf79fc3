"""The ALTER statements' grammar: ALTER TABLE's specifications (one per form) and ALTER DATABASE."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from ddl.parsing.columns import (
    at_charset,
    enforced,
    parse_charset_clause,
    parse_column_definition,
    parse_default_value,
)
from ddl.parsing.create import (
    database_options,
    parse_period,
    skip_partitioning,
)
from ddl.parsing.cursor import Cursor
from ddl.parsing.keys import at_key_definition, parse_key_definition
from ddl.parsing.statements import (
    AddColumns,
    AddKey,
    AlterColumnDefault,
    AlterColumnVisibility,
    AlterDatabase,
    AlterSpec,
    AlterTable,
    ChangeColumn,
    ColumnDefinition,
    ColumnPosition,
    ConvertCharset,
    DropColumn,
    DropKey,
    Ignored,
    KeyDefinition,
    RenameColumn,
    RenameKey,
    RenameTo,
    SetTableOptions,
    Statement,
    SystemVersioning,
)
from ddl.parsing.table_options import parse_table_option
from ddl.parsing.words import (
    DEFINER_PREFIX_WORDS,
    IGNORED_ALTER_OBJECTS,
    SIMPLE_OBJECTS,
)


def parse_alter(c: Cursor) -> Statement:
    c.accept_any(frozenset({"ONLINE", "OFFLINE"}))
    c.accept("IGNORE")
    word = c.word()
    if word == "TABLE":
        c.advance()
        return _alter_table(c)
    if word in ("DATABASE", "SCHEMA"):
        c.advance()
        return _alter_database(c)
    if word in DEFINER_PREFIX_WORDS or word in IGNORED_ALTER_OBJECTS:
        c.skip_rest(split_lines=word in SIMPLE_OBJECTS)
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
    charset, collation = database_options(c)
    return AlterDatabase(name, charset, collation)


def _alter_table(c: Cursor) -> AlterTable:
    c.accept("IF", "EXISTS")
    name = c.qualified_name()
    wait_option(c)
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


def wait_option(c: Cursor) -> None:
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
        if not at_charset(c):
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
        skip_partitioning(c)
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
        return AddKey(parse_period(c))
    if c.accept("SYSTEM", "VERSIONING"):
        return SystemVersioning(True)
    if c.word() in _ADD_KEY_WORDS and at_key_definition(c):
        return AddKey(parse_key_definition(c))
    c.accept("COLUMN")
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    if c.at_type(TokenType.L_PAREN):
        c.advance()
        columns: list[ColumnDefinition] = []
        keys: list[KeyDefinition] = []
        while True:
            if at_key_definition(c):
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
        enforced(c)
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
