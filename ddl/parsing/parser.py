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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ddl.errors import DdlError
from ddl.model import ChangeType, Column, Database, JdbcType, SchemaModel, Table, TableChange, TableId
from ddl.parsing.dialect import MARIADB, MYSQL, DdlDialect, SqlTokenError, split_statements
from ddl.parsing.grammar import parse_statement
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
    CreateDatabase,
    CreateIndex,
    CreateTable,
    DdlSyntaxError,
    DefaultValue,
    DropColumn,
    DropDatabase,
    DropIndex,
    DropKey,
    DropTable,
    Ignored,
    KeyDefinition,
    QualifiedName,
    RenameColumn,
    RenameKey,
    RenameTable,
    RenameTo,
    SetTableOptions,
    SetVariables,
    Statement,
    SystemVersioning,
    TableOptions,
    TruncateTable,
    UseDatabase,
)

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


@dataclass(frozen=True)
class ParsedStatement:
    ddl: str  # the statement text as it appeared
    database: str | None  # the database it applies to; "" for SET
    kind: str  # "table" | "database" | "set" | "use" | "truncate" | "ignored"
    table_changes: tuple[TableChange, ...] = ()
    truncated: tuple[TableId, ...] = ()
    # The tables of the whole statement when it was split into several (``DROP TABLE t1, t2``):
    # Debezium names them all in each part's ``source.table``.
    statement_tables: tuple[TableId, ...] = ()
    # ALTER DATABASE: Debezium's streamed record has ``source.table`` "" (other database statements: null).
    alters_database: bool = False


@dataclass(frozen=True)
class DdlResult:
    model: SchemaModel  # the model after all statements
    statements: tuple[ParsedStatement, ...]
    default_database: str | None  # after any USE


class DdlParser:
    """Parses MySQL-family DDL into model changes. Use ``parser_for(flavor)``."""

    dialect: DdlDialect = MYSQL

    def __init__(self, include_comments: bool = False) -> None:
        # Debezium's include.schema.comments (default false): table/column comments are dropped.
        self.include_comments = include_comments

    @property
    def flavor(self) -> str:
        return self.dialect.name

    def parse(self, sql: str, model: SchemaModel, default_database: str | None = None) -> DdlResult:
        try:
            tokens = self.dialect.tokenize(sql)
        except SqlTokenError as exc:
            raise DdlParseError(sql, line_col(sql, exc.offset), str(exc)) from None
        state = _State(model, default_database, self.include_comments)
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
                    parsed.extend(_apply(tree, text, state))
                except _SemanticError as exc:
                    raise DdlParseError(text, line_col(sql, chunk[0].start), str(exc)) from None
                chunk = chunk[used:]
        return DdlResult(state.model, tuple(parsed), state.default_database)


class MySqlDdlParser(DdlParser):
    dialect = MYSQL


class MariaDbDdlParser(DdlParser):
    dialect = MARIADB


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


def charset_of_collation(collation: str) -> str:
    """A collation's character set: MySQL collation names start with the charset name."""
    name = collation.lower()
    return name.split("_", 1)[0] if name != "binary" else "binary"


# --- type mapping -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TypeMapping:
    """Debezium's parser facts for a type keyword (``MySqlAntlrDdlParser`` data type resolver)."""

    jdbc: int
    default_length: int | None = None
    default_scale: int | None = None
    forced_charset: str | None = None  # NCHAR/NVARCHAR are always utf8


def _type_mappings() -> dict[str, TypeMapping]:
    j = JdbcType
    table: dict[str, TypeMapping] = {}

    def add(names: str, mapping: TypeMapping) -> None:
        for name in names.split(","):
            table[name] = mapping

    add("CHAR,CHARACTER", TypeMapping(j.CHAR))
    add("VARCHAR,TINYTEXT,TEXT,MEDIUMTEXT,LONGTEXT,LONG,LONG VARCHAR", TypeMapping(j.VARCHAR))
    add("NCHAR", TypeMapping(j.NCHAR, default_length=1, forced_charset="utf8"))
    add("NVARCHAR", TypeMapping(j.NVARCHAR, forced_charset="utf8"))
    # Debezium <= 3.6.1 registers TINYINT as SMALLINT (Connect INT16).
    add("TINYINT,INT1,SMALLINT,INT2", TypeMapping(j.SMALLINT))
    add("MEDIUMINT,INT3,MIDDLEINT,INT,INTEGER,INT4,YEAR", TypeMapping(j.INTEGER))
    add("BIGINT,INT8,SERIAL", TypeMapping(j.BIGINT))
    add("REAL", TypeMapping(j.REAL))
    add("DOUBLE,FLOAT8", TypeMapping(j.DOUBLE))
    add("FLOAT,FLOAT4", TypeMapping(j.FLOAT))
    add("DECIMAL,DEC,FIXED", TypeMapping(j.DECIMAL, default_length=10, default_scale=0))
    add("NUMERIC", TypeMapping(j.NUMERIC, default_length=10, default_scale=0))
    add("BIT", TypeMapping(j.BIT, default_length=1))
    add("BOOL,BOOLEAN", TypeMapping(j.BOOLEAN))
    add("DATE", TypeMapping(j.DATE))
    add("TIME", TypeMapping(j.TIME))
    add("TIMESTAMP", TypeMapping(j.TIMESTAMP_WITH_TIMEZONE))
    add("DATETIME", TypeMapping(j.TIMESTAMP))
    add("BINARY", TypeMapping(j.BINARY))
    add("VARBINARY", TypeMapping(j.VARBINARY))
    add("TINYBLOB,BLOB,MEDIUMBLOB,LONGBLOB,LONG VARBINARY", TypeMapping(j.BLOB))
    add("ENUM,SET", TypeMapping(j.CHAR))
    add(
        "GEOMETRY,POINT,LINESTRING,POLYGON,MULTIPOINT,MULTILINESTRING,MULTIPOLYGON,GEOMETRYCOLLECTION,"
        "GEOMCOLLECTION,JSON,INET4,INET6,UUID,XMLTYPE",
        TypeMapping(j.OTHER),
    )
    add("VECTOR", TypeMapping(j.OTHER, default_length=2048))
    return table


TYPE_MAPPINGS: dict[str, TypeMapping] = _type_mappings()

# ``Column.typeUsesCharset`` in Debezium: these columns inherit the table's default charset.
CHARSET_JDBC_TYPES = frozenset(
    {JdbcType.CHAR, JdbcType.VARCHAR, JdbcType.LONGVARCHAR, JdbcType.CLOB, JdbcType.NCHAR, JdbcType.NVARCHAR}
)

# System variables whose SET changes how later DDL resolves charsets.
_CHARSET_VARIABLES = frozenset(
    {"character_set_server", "collation_server", "character_set_database", "collation_database"}
)


# --- applying statements ----------------------------------------------------------------------------


class _SemanticError(ValueError):
    """The statement is well-formed but contradicts the known schema (e.g. unknown column)."""


@dataclass
class _State:
    model: SchemaModel
    default_database: str | None
    include_comments: bool

    def table_id(self, name: QualifiedName) -> TableId:
        # MySQL rejects unqualified names without a current database, so such DDL never reaches the
        # binlog; the empty database keeps parsing of stand-alone scripts possible.
        return TableId(
            name.database if name.database is not None else (self.default_database or ""), name.name
        )

    def database_of(self, *names: QualifiedName) -> str:
        """The database a statement about ``names`` is recorded under: the current database when a
        name depends on it (so replaying the statement there resolves the same tables), else the
        first name's database."""
        if any(name.database is None for name in names):
            return self.default_database or ""
        return names[0].database or ""

    def find_table_id(self, name: QualifiedName) -> TableId:
        """The id of a known table, matching the name case-insensitively when needed."""
        table_id = self.table_id(name)
        if table_id in self.model.tables:
            return table_id
        lowered = (table_id.database.lower(), table_id.table.lower())
        for known in self.model.tables:
            if (known.database.lower(), known.table.lower()) == lowered:
                return known
        return table_id


def _apply(tree: Statement, text: str, state: _State) -> list[ParsedStatement]:
    handler = _HANDLERS.get(type(tree))
    if handler is None:  # pragma: no cover - every statement type has a handler
        raise _SemanticError(f"no handler for {type(tree).__name__}")
    result = handler(tree, text, state)
    return result if isinstance(result, list) else [result]


def _ignored(tree: Any, text: str, state: _State) -> ParsedStatement:
    return ParsedStatement(text, state.default_database, "ignored")


def _create_table(tree: CreateTable, text: str, state: _State) -> ParsedStatement:
    if tree.temporary:
        return ParsedStatement(text, state.default_database, "ignored")
    table_id = state.table_id(tree.name)
    database = state.database_of(tree.name, *([tree.like] if tree.like is not None else []))
    existing = state.model.tables.get(state.find_table_id(tree.name))
    if existing is not None and tree.if_not_exists:
        return ParsedStatement(text, database, "table")
    if tree.like is not None:
        source = state.model.tables.get(state.find_table_id(tree.like))
        if source is None:
            return ParsedStatement(text, database, "table")
        table = source.with_(id=table_id)
    else:
        table = _new_table(tree, table_id, state)
    remove = [existing.id] if existing is not None else []
    state.model = state.model.with_tables(put=[table], remove=remove)
    return ParsedStatement(text, database, "table", (TableChange(ChangeType.CREATE, table_id, table),))


def _new_table(tree: CreateTable, table_id: TableId, state: _State) -> Table:
    draft = _Draft(
        table_id,
        default_charset=_table_charset(tree.options, table_id.database, state),
        comment=tree.options.comment if state.include_comments else None,
    )
    names = [c.name.lower() for c in tree.columns]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise _SemanticError(f"duplicate column {duplicates[0]!r} in table {table_id}")
    for definition in tree.columns:
        draft.add_column(definition, None, state.include_comments)
    for key in tree.keys:
        draft.add_key(key)
    if tree.options.system_versioning:
        draft.add_system_versioning()
    return draft.finish()


def _table_charset(options: TableOptions, database: str, state: _State) -> str | None:
    charset = options.charset
    if charset is None and options.collation is not None:
        charset = charset_of_collation(options.collation)
    if charset is None or charset.upper() == "DEFAULT":
        return state.model.charset_for(database)
    return charset


def _alter_table(tree: AlterTable, text: str, state: _State) -> ParsedStatement:
    table_id = state.find_table_id(tree.name)
    table = state.model.tables.get(table_id)
    database = state.database_of(tree.name)
    if table is None:
        # Debezium ignores ALTERs of tables it does not know (e.g. not captured).
        return ParsedStatement(text, database, "table")
    draft = _Draft.of(table)
    for spec in tree.specs:
        _ALTER_HANDLERS[type(spec)](draft, spec, state)
    new_table = draft.finish()
    previous = table_id if new_table.id != table_id else None
    state.model = state.model.with_tables(put=[new_table], remove=[table_id])
    change = TableChange(ChangeType.ALTER, new_table.id, new_table, previous)
    return ParsedStatement(text, database, "table", (change,))


# What precedes the table list of a DROP TABLE statement, and the RESTRICT/CASCADE after it.
_DROP_TABLE_PREFIX = re.compile(
    r"\s*(DROP\s+(?:TEMPORARY\s+)?(?:ONLINE\s+|OFFLINE\s+)?TABLES?\s+(?:IF\s+EXISTS\s+)?)", re.IGNORECASE
)
_DROP_TYPE_SUFFIX = re.compile(r"\s(RESTRICT|CASCADE)\s*;?\s*$", re.IGNORECASE)


def _drop_tables(tree: DropTable, text: str, state: _State) -> list[ParsedStatement]:
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


def _drop_table(tree: DropTable, text: str, state: _State) -> ParsedStatement:
    if tree.temporary:
        return ParsedStatement(text, state.default_database, "ignored")
    ids = [state.find_table_id(name) for name in tree.names]
    state.model = state.model.with_tables(remove=ids)
    changes = tuple(TableChange(ChangeType.DROP, table_id, None) for table_id in ids)
    return ParsedStatement(text, state.database_of(*tree.names), "table", changes)


def _rename_table(tree: RenameTable, text: str, state: _State) -> ParsedStatement:
    changes: list[TableChange] = []
    for old_name, new_name in tree.pairs:
        old_id = state.find_table_id(old_name)
        new_id = state.table_id(new_name)
        table = state.model.tables.get(old_id)
        if table is None:
            continue
        renamed = table.with_(id=new_id)
        state.model = state.model.with_tables(put=[renamed], remove=[old_id])
        changes.append(TableChange(ChangeType.ALTER, new_id, renamed, old_id))
    database = state.database_of(*(name for pair in tree.pairs for name in pair))
    return ParsedStatement(text, database, "table", tuple(changes))


def _truncate(tree: TruncateTable, text: str, state: _State) -> ParsedStatement:
    table_id = state.find_table_id(tree.name)
    return ParsedStatement(text, state.database_of(tree.name), "truncate", truncated=(table_id,))


def _create_index(tree: CreateIndex, text: str, state: _State) -> ParsedStatement:
    table_id = state.find_table_id(tree.table)
    table = state.model.tables.get(table_id)
    if table is None:
        return ParsedStatement(text, state.database_of(tree.table), "table")
    draft = _Draft.of(table)
    draft.add_key(tree.key)
    return _altered(draft, state.database_of(tree.table), text, state)


def _drop_index(tree: DropIndex, text: str, state: _State) -> ParsedStatement:
    table_id = state.find_table_id(tree.table)
    table = state.model.tables.get(table_id)
    if table is None:
        return ParsedStatement(text, state.database_of(tree.table), "table")
    draft = _Draft.of(table)
    draft.drop_key(DropKey("index", tree.name))
    return _altered(draft, state.database_of(tree.table), text, state)


def _altered(draft: _Draft, database: str, text: str, state: _State) -> ParsedStatement:
    table = draft.finish()
    state.model = state.model.with_tables(put=[table])
    return ParsedStatement(text, database, "table", (TableChange(ChangeType.ALTER, table.id, table),))


def _create_database(tree: CreateDatabase, text: str, state: _State) -> ParsedStatement:
    if tree.name in state.model.databases and tree.if_not_exists:
        return ParsedStatement(text, tree.name, "database")
    charset, collation = _database_charset(tree.charset, tree.collation, state)
    state.model = state.model.with_database(Database(tree.name, charset, collation))
    return ParsedStatement(text, tree.name, "database")


def _alter_database(tree: AlterDatabase, text: str, state: _State) -> ParsedStatement:
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
    charset: str | None, collation: str | None, state: _State
) -> tuple[str | None, str | None]:
    if charset is not None and charset.upper() == "DEFAULT":
        charset = state.model.server_charset
    if charset is None and collation is not None:
        charset = charset_of_collation(collation)
    return charset, collation


def _drop_database(tree: DropDatabase, text: str, state: _State) -> ParsedStatement:
    # Debezium records DROP DATABASE without tableChanges; replaying the DDL drops the tables.
    state.model = state.model.with_database(None, drop=tree.name)
    return ParsedStatement(text, tree.name, "database")


def _use(tree: UseDatabase, text: str, state: _State) -> ParsedStatement:
    state.default_database = tree.name
    return ParsedStatement(text, tree.name, "use")


def _set(tree: SetVariables, text: str, state: _State) -> ParsedStatement:
    relevant = [(scope, name, value) for scope, name, value in tree.assignments if name in _CHARSET_VARIABLES]
    if not relevant:
        return ParsedStatement(text, state.default_database, "ignored")
    for _scope, name, value in relevant:
        if value.upper() == "DEFAULT":
            continue
        state.model = _SET_VARIABLE[name](state, value)
    return ParsedStatement(text, "", "set")


def _set_server_charset(state: _State, value: str) -> SchemaModel:
    return _replace_model(state.model, server_charset=value)


def _set_server_collation(state: _State, value: str) -> SchemaModel:
    # Setting the collation also sets the matching character set, as in MySQL.
    return _replace_model(state.model, server_collation=value, server_charset=charset_of_collation(value))


def _set_database_charset(state: _State, value: str) -> SchemaModel:
    if state.default_database is None:
        return state.model
    current = state.model.databases.get(state.default_database, Database(state.default_database))
    return state.model.with_database(Database(current.name, value, current.default_collation))


def _set_database_collation(state: _State, value: str) -> SchemaModel:
    if state.default_database is None:
        return state.model
    return state.model.with_database(Database(state.default_database, charset_of_collation(value), value))


def _replace_model(model: SchemaModel, **changes: Any) -> SchemaModel:
    return replace(model, **changes)


_SET_VARIABLE: dict[str, Callable[[_State, str], SchemaModel]] = {
    "character_set_server": _set_server_charset,
    "collation_server": _set_server_collation,
    "character_set_database": _set_database_charset,
    "collation_database": _set_database_collation,
}

# A handler gives one statement, or several where Debezium splits one (DROP TABLE a, b).
_HANDLERS: dict[type, Callable[[Any, str, _State], ParsedStatement | list[ParsedStatement]]] = {
    CreateTable: _create_table,
    AlterTable: _alter_table,
    DropTable: _drop_tables,
    RenameTable: _rename_table,
    TruncateTable: _truncate,
    CreateIndex: _create_index,
    DropIndex: _drop_index,
    CreateDatabase: _create_database,
    AlterDatabase: _alter_database,
    DropDatabase: _drop_database,
    UseDatabase: _use,
    SetVariables: _set,
    Ignored: _ignored,
}


# --- table drafts -----------------------------------------------------------------------------------


PRIMARY = "PRIMARY"

KeyPart = int | str  # a column slot of the draft, or the name of a column the table does not have


@dataclass
class _Draft:
    """A mutable working copy of a table while one statement is applied to it.

    Every column sits in a numbered *slot* that follows it through renames and moves, so that
    keys and the specifications of one ALTER TABLE refer to the right column. As in MySQL,
    DROP/CHANGE/MODIFY/RENAME COLUMN name the columns the table had before the statement (which is
    what makes ``CHANGE a b ..., CHANGE b a ...`` a swap), while AFTER, ALTER COLUMN and new keys see
    the columns as the statement has shaped them so far. Duplicate names are checked at the end.

    ``keys`` holds the table's unique indexes in creation order, the explicit primary key under the
    name ``PRIMARY``. The primary key of the finished table is the explicit one, else - as MySQL
    picks an implicit primary key - the first unique key whose columns are all NOT NULL. Keeping this
    one rule for streamed DDL and ``SHOW CREATE TABLE`` text gives a table the same key whichever
    way its structure was learnt.
    """

    id: TableId
    default_charset: str | None = None
    comment: str | None = None
    attributes: tuple[tuple[str, str], ...] = ()
    columns: list[Column] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)
    keys: list[tuple[str, tuple[KeyPart, ...]]] = field(default_factory=list)
    # Slots of the columns whose charset comes from the table default (resolved by finish()).
    inherit_charset: set[int] = field(default_factory=set)
    # Lower-cased name before the statement -> slot, for DROP/CHANGE/MODIFY/RENAME COLUMN.
    original: dict[str, int] = field(default_factory=dict)
    next_slot: int = 0

    @classmethod
    def of(cls, table: Table) -> _Draft:
        draft = cls(
            id=table.id,
            default_charset=table.default_charset,
            comment=table.comment,
            attributes=table.attributes,
        )
        for column in table.columns:
            draft.original[column.name.lower()] = draft._append(column)
        names = table.unique_key_names or tuple(cols[0] if cols else "" for cols in table.unique_keys)
        keys = list(zip(names, table.unique_keys, strict=False))
        if table.primary_key and not table.unique_key_names:
            # Tables rebuilt from history carry no index names: take their key as the explicit one.
            keys.insert(0, (PRIMARY, table.primary_key))
        draft.keys = [(name, draft._parts(cols)) for name, cols in keys]
        return draft

    # slots and names
    def _append(self, column: Column) -> int:
        slot = self.next_slot
        self.next_slot += 1
        self.columns.append(column)
        self.slots.append(slot)
        return slot

    def index_of(self, name: str) -> int | None:
        """Index of the column currently named ``name``."""
        lowered = name.lower()
        for i, column in enumerate(self.columns):
            if column.name.lower() == lowered:
                return i
        return None

    def index_of_original(self, name: str) -> int | None:
        """Index of the column the table had under ``name`` before this statement."""
        slot = self.original.get(name.lower())
        if slot is not None and slot in self.slots:
            return self.slots.index(slot)
        return self.index_of(name)

    def require_original(self, name: str) -> int:
        index = self.index_of_original(name)
        if index is None:
            raise _SemanticError(f"column {name!r} does not exist in table {self.id}")
        return index

    def require(self, name: str) -> int:
        index = self.index_of(name)
        if index is None:
            raise _SemanticError(f"column {name!r} does not exist in table {self.id}")
        return index

    def _parts(self, names: Iterable[str]) -> tuple[KeyPart, ...]:
        parts: list[KeyPart] = []
        for name in names:
            index = self.index_of(name)
            parts.append(self.slots[index] if index is not None else name)
        return tuple(parts)

    def _part_name(self, part: KeyPart) -> str:
        return self.columns[self.slots.index(part)].name if isinstance(part, int) else part

    def in_primary_key(self, slot: int) -> bool:
        return any(key == PRIMARY and slot in parts for key, parts in self.keys)

    # columns
    def add_column(
        self, definition: ColumnDefinition, position: ColumnPosition | None, include_comments: bool
    ) -> None:
        column, inherits = column_from_definition(definition, include_comments)
        slot = self._append(column)
        self._column_defined(slot, definition, inherits)
        if position is not None:
            self.move(slot, position)

    def _column_defined(self, slot: int, definition: ColumnDefinition, inherits: bool) -> None:
        (self.inherit_charset.add if inherits else self.inherit_charset.discard)(slot)
        if definition.primary_key:
            self._set_primary_key((slot,), unset_expression_defaults=False)
        if definition.unique:
            self.add_unique(definition.name, (slot,))

    def replace_column(
        self,
        old_name: str,
        definition: ColumnDefinition,
        position: ColumnPosition | None,
        include_comments: bool,
    ) -> None:
        index = self.require_original(old_name)
        slot = self.slots[index]
        column, inherits = column_from_definition(definition, include_comments)
        if self.in_primary_key(slot):
            column = column.with_(optional=False)  # MySQL keeps primary key columns NOT NULL
        self.columns[index] = column
        self._column_defined(slot, definition, inherits)
        if position is not None:
            self.move(slot, position)

    def move(self, slot: int, position: ColumnPosition) -> None:
        index = self.slots.index(slot)
        column = self.columns.pop(index)
        self.slots.pop(index)
        if position.first:
            target = 0
        else:
            assert position.after is not None
            after = self.index_of(position.after)
            if after is None:
                raise _SemanticError(f"column {position.after!r} (AFTER) does not exist in table {self.id}")
            target = after + 1
        self.columns.insert(target, column)
        self.slots.insert(target, slot)

    def drop_column(self, name: str, if_exists: bool) -> None:
        index = self.index_of_original(name)
        if index is None:
            if if_exists:
                return
            raise _SemanticError(f"column {name!r} does not exist in table {self.id}")
        self.columns.pop(index)
        slot = self.slots.pop(index)
        self.inherit_charset.discard(slot)
        # MySQL removes a dropped column from its indexes and drops indexes left empty.
        shrunk = [(key, tuple(p for p in parts if p != slot)) for key, parts in self.keys]
        self.keys = [(key, parts) for key, parts in shrunk if parts]

    def rename_column(self, old_name: str, new_name: str) -> None:
        index = self.require_original(old_name)
        self.columns[index] = self.columns[index].with_(name=new_name)

    def set_default(self, name: str, default: DefaultValue | None) -> None:
        index = self.require(name)
        has_default, expression = default_fields(default)
        self.columns[index] = self.columns[index].with_(
            has_default=has_default, default_expression=expression
        )

    def add_system_versioning(self) -> None:
        """MariaDB keeps invisible ``row_start``/``row_end`` columns (written to the binlog) in a
        system-versioned table that does not declare its own ``AS ROW START/END`` columns."""
        if any(c.generation_expression in ("ROW START", "ROW END") for c in self.columns):
            return
        for name, boundary in (("row_start", "ROW START"), ("row_end", "ROW END")):
            self._append(
                Column(
                    name=name,
                    position=0,
                    data_type="TIMESTAMP",
                    jdbc_type=JdbcType.TIMESTAMP_WITH_TIMEZONE,
                    length=6,
                    optional=False,
                    generation_expression=boundary,
                )
            )

    def drop_system_versioning(self) -> None:
        for index in reversed(range(len(self.columns))):
            column = self.columns[index]
            if column.generation_expression in ("ROW START", "ROW END") and column.name in (
                "row_start",
                "row_end",
            ):
                self.columns.pop(index)
                self.slots.pop(index)

    def convert_charset(self, charset: str | None, collation: str | None) -> None:
        for i, column in enumerate(self.columns):
            # NCHAR/NVARCHAR keep Debezium's fixed utf8.
            if column.jdbc_type in _CONVERTIBLE_JDBC_TYPES:
                self.columns[i] = column.with_(charset=charset, collation=collation)
                self.inherit_charset.discard(self.slots[i])

    # keys
    def add_key(self, key: KeyDefinition) -> None:
        if key.kind == "period":
            # MariaDB application-time periods make their columns NOT NULL.
            for part in self._parts(key.columns):
                if isinstance(part, int):
                    index = self.slots.index(part)
                    self.columns[index] = self.columns[index].with_(optional=False)
        elif key.kind == "primary":
            self._set_primary_key(self._parts(key.columns), unset_expression_defaults=True)
        elif key.kind == "unique":
            self.add_unique(key.name or (key.columns[0] if key.columns else ""), self._parts(key.columns))

    def add_unique(self, name: str, parts: tuple[KeyPart, ...]) -> None:
        if not parts:
            return
        used = {n.lower() for n, _ in self.keys}
        unique_name, suffix = name, 2
        while unique_name.lower() in used or unique_name.upper() == PRIMARY:
            unique_name, suffix = f"{name}_{suffix}", suffix + 1
        self.keys.append((unique_name, parts))

    def _set_primary_key(self, parts: tuple[KeyPart, ...], unset_expression_defaults: bool) -> None:
        for part in parts:
            if not isinstance(part, int):
                continue
            index = self.slots.index(part)
            column = self.columns[index]
            # MySQL makes primary key columns NOT NULL.
            changes: dict[str, Any] = {"optional": False}
            if unset_expression_defaults and column.has_default and column.default_expression is None:
                changes.update(has_default=False)
            self.columns[index] = column.with_(**changes)
        self.keys = [(PRIMARY, parts)] + [(k, p) for k, p in self.keys if k != PRIMARY]

    def drop_key(self, spec: DropKey) -> None:
        if spec.kind == "primary":
            self.keys = [(k, p) for k, p in self.keys if k != PRIMARY]
        elif spec.kind == "index" and spec.name is not None:
            lowered = spec.name.lower()
            self.keys = [(k, p) for k, p in self.keys if k.lower() != lowered]

    def rename_key(self, old: str, new: str) -> None:
        lowered = old.lower()
        self.keys = [(new if k.lower() == lowered else k, p) for k, p in self.keys]

    def primary_key(self) -> tuple[str, ...]:
        for key, parts in self.keys:
            if key == PRIMARY:
                return tuple(self._part_name(p) for p in parts)
        for _, parts in self.keys:
            if all(isinstance(p, int) and not self.columns[self.slots.index(p)].optional for p in parts):
                return tuple(self._part_name(p) for p in parts)
        return ()

    def finish(self) -> Table:
        seen: set[str] = set()
        columns = []
        for position, (slot, column) in enumerate(zip(self.slots, self.columns, strict=True), start=1):
            if column.name.lower() in seen:
                raise _SemanticError(f"duplicate column {column.name!r} in table {self.id}")
            seen.add(column.name.lower())
            changes: dict[str, Any] = {}
            if column.position != position:
                changes["position"] = position
            if slot in self.inherit_charset and column.charset != self.default_charset:
                changes["charset"] = self.default_charset
            columns.append(column.with_(**changes) if changes else column)
        return Table(
            id=self.id,
            columns=tuple(columns),
            primary_key=self.primary_key(),
            unique_keys=tuple(tuple(self._part_name(p) for p in parts) for _, parts in self.keys),
            unique_key_names=tuple(n for n, _ in self.keys),
            default_charset=self.default_charset,
            comment=self.comment,
            attributes=self.attributes,
        )


def column_from_definition(
    definition: ColumnDefinition, include_comments: bool = False
) -> tuple[Column, bool]:
    """The model column of a definition, and whether its charset is inherited from the table."""
    spec = definition.type
    mapping = TYPE_MAPPINGS[spec.key]
    data_type, unsigned = spec.name, spec.unsigned
    if spec.key == "SERIAL":
        # SERIAL = BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE.
        data_type, unsigned = "BIGINT", True
    length = spec.length if spec.length is not None else mapping.default_length
    scale = spec.scale if spec.scale is not None else mapping.default_scale
    if spec.key == "ENUM":
        length = 1
    elif spec.key == "SET":
        length = max(0, 2 * len(spec.values) - 1)
    charset: str | None = None
    inherits = False
    if mapping.jdbc in CHARSET_JDBC_TYPES:
        if mapping.forced_charset is not None:
            charset = mapping.forced_charset
        elif spec.charset is not None and spec.charset.upper() != "DEFAULT":
            charset = spec.charset
        elif spec.collation is not None:
            charset = charset_of_collation(spec.collation)
        else:
            inherits = True
    has_default, expression = default_fields(definition.default)
    optional = definition.nullable if definition.nullable is not None else True
    if definition.primary_key:
        optional = False
    column = Column(
        name=definition.name,
        position=0,
        data_type=data_type,
        jdbc_type=mapping.jdbc,
        length=length,
        scale=scale,
        unsigned=unsigned,
        zerofill=spec.zerofill,
        charset=charset,
        collation=spec.collation,
        optional=optional,
        auto_increment=definition.auto_increment,
        generated=definition.auto_increment,
        comment=definition.comment if include_comments else None,
        has_default=has_default,
        default_expression=expression,
        enum_values=spec.values,
        generation_expression=definition.generation_expression,
        signed=spec.signed and not unsigned,
        invisible=definition.invisible,
    )
    return column, inherits


def default_fields(default: DefaultValue | None) -> tuple[bool, str | None]:
    """(hasDefaultValue, defaultValueExpression) of a DEFAULT clause, as Debezium sets them."""
    if default is None or default.is_null or default.ignored:
        return False, None
    return True, default.expression


# --- ALTER TABLE specifications ----------------------------------------------------------------------


def _alter_add_columns(draft: _Draft, spec: AddColumns, state: _State) -> None:
    for definition in spec.columns:
        if spec.if_not_exists and draft.index_of(definition.name) is not None:
            continue
        draft.add_column(definition, spec.position, state.include_comments)


def _alter_drop_column(draft: _Draft, spec: DropColumn, state: _State) -> None:
    draft.drop_column(spec.name, spec.if_exists)


def _alter_change_column(draft: _Draft, spec: ChangeColumn, state: _State) -> None:
    if spec.if_exists and draft.index_of_original(spec.old_name) is None:
        return
    draft.replace_column(spec.old_name, spec.column, spec.position, state.include_comments)


def _alter_rename_column(draft: _Draft, spec: RenameColumn, state: _State) -> None:
    draft.rename_column(spec.old_name, spec.new_name)


def _alter_column_default(draft: _Draft, spec: AlterColumnDefault, state: _State) -> None:
    draft.set_default(spec.name, spec.default)


def _alter_column_visibility(draft: _Draft, spec: AlterColumnVisibility, state: _State) -> None:
    index = draft.require(spec.name)
    draft.columns[index] = draft.columns[index].with_(invisible=spec.invisible)


def _alter_add_key(draft: _Draft, spec: AddKey, state: _State) -> None:
    draft.add_key(spec.key)


def _alter_drop_key(draft: _Draft, spec: DropKey, state: _State) -> None:
    draft.drop_key(spec)


def _alter_rename_key(draft: _Draft, spec: RenameKey, state: _State) -> None:
    draft.rename_key(spec.old_name, spec.new_name)


def _alter_rename_to(draft: _Draft, spec: RenameTo, state: _State) -> None:
    draft.id = TableId(
        spec.name.database if spec.name.database is not None else draft.id.database, spec.name.name
    )


def _alter_convert_charset(draft: _Draft, spec: ConvertCharset, state: _State) -> None:
    charset = spec.charset
    if charset is None and spec.collation is not None:
        charset = charset_of_collation(spec.collation)
    if charset is None:
        charset = state.model.charset_for(draft.id.database)
    draft.default_charset = charset
    draft.convert_charset(charset, spec.collation)


_CONVERTIBLE_JDBC_TYPES = CHARSET_JDBC_TYPES - {JdbcType.NCHAR, JdbcType.NVARCHAR}


def _alter_system_versioning(draft: _Draft, spec: SystemVersioning, state: _State) -> None:
    if spec.enable:
        draft.add_system_versioning()
    else:
        draft.drop_system_versioning()


def _alter_table_options(draft: _Draft, spec: SetTableOptions, state: _State) -> None:
    options = spec.options
    if options.system_versioning:
        draft.add_system_versioning()
    if options.charset is not None or options.collation is not None:
        draft.default_charset = _table_charset(options, draft.id.database, state)
    if options.comment is not None and state.include_comments:
        draft.comment = options.comment


_ALTER_HANDLERS: dict[type, Callable[[_Draft, Any, _State], None]] = {
    AddColumns: _alter_add_columns,
    DropColumn: _alter_drop_column,
    ChangeColumn: _alter_change_column,
    RenameColumn: _alter_rename_column,
    AlterColumnDefault: _alter_column_default,
    AlterColumnVisibility: _alter_column_visibility,
    AddKey: _alter_add_key,
    DropKey: _alter_drop_key,
    RenameKey: _alter_rename_key,
    RenameTo: _alter_rename_to,
    ConvertCharset: _alter_convert_charset,
    SetTableOptions: _alter_table_options,
    SystemVersioning: _alter_system_versioning,
}

__all__ = [
    "AlterSpec",
    "DdlParseError",
    "DdlParser",
    "DdlResult",
    "MariaDbDdlParser",
    "MySqlDdlParser",
    "ParsedStatement",
    "TypeMapping",
    "charset_of_collation",
    "column_from_definition",
    "parser_for",
]
