"""A table under change: the parse state, Debezium's type facts and the mutable draft that ALTER and
CREATE TABLE build before it is frozen into an immutable ``Table``.

The draft follows the server where Debezium is ambiguous: MODIFY/CHANGE replace the whole column
definition, and without an explicit primary key the first UNIQUE key whose columns are all NOT NULL
is the key (MySQL's own rule for an implicit primary key).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ddl.model import Column, JdbcType, SchemaModel, Table, TableChange
from ddl.mysql_types import MYSQL_TYPES
from mysql_cdc_base.errors import DdlError
from mysql_cdc_base.table_id import TableId

if TYPE_CHECKING:
    # Annotations only: the table statements' trees are loaded with the grammar (ddl.parsing.plain_trees).
    from ddl.parsing.statements import (
        ColumnDefinition,
        ColumnPosition,
        DefaultValue,
        DropKey,
        KeyDefinition,
        QualifiedName,
        TableOptions,
    )


def charset_of_collation(collation: str) -> str:
    """A collation's character set: MySQL collation names start with the charset name."""
    name = collation.lower()
    return name.split("_", 1)[0] if name != "binary" else "binary"


# --- type mapping -----------------------------------------------------------------------------------


class TypeMapping(NamedTuple):
    """Debezium's parser facts for a type keyword (``MySqlAntlrDdlParser`` data type resolver)."""

    jdbc: int
    default_length: int | None = None
    default_scale: int | None = None
    forced_charset: str | None = None  # NCHAR/NVARCHAR are always utf8


def _type_mappings() -> dict[str, TypeMapping]:
    return {
        spelling: TypeMapping(
            t.spelling_jdbc.get(spelling, t.jdbc), t.default_length, t.default_scale, t.forced_charset
        )
        for t in MYSQL_TYPES
        if t.jdbc is not None
        for spelling in t.spellings
    }


TYPE_MAPPINGS: dict[str, TypeMapping] = _type_mappings()

# ``Column.typeUsesCharset`` in Debezium: these columns inherit the table's default charset.
CHARSET_JDBC_TYPES = frozenset(
    {JdbcType.CHAR, JdbcType.VARCHAR, JdbcType.LONGVARCHAR, JdbcType.CLOB, JdbcType.NCHAR, JdbcType.NVARCHAR}
)
_CONVERTIBLE_JDBC_TYPES = CHARSET_JDBC_TYPES - {JdbcType.NCHAR, JdbcType.NVARCHAR}

# --- applying statements ----------------------------------------------------------------------------


class SchemaConflict(DdlError, ValueError):
    """The statement is well-formed but contradicts the known schema (e.g. unknown column)."""


class ParsedStatement(NamedTuple):
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


@dataclass
class ParseState:
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


# A statement tree's handler (ddl.parsing.parser, ddl.parsing.table_statements): it applies the
# tree to the state and gives one statement, or several where Debezium splits one (DROP TABLE a, b).
Handler = Callable[[Any, str, ParseState], ParsedStatement | list[ParsedStatement]]


def table_charset(options: TableOptions, database: str, state: ParseState) -> str | None:
    charset = options.charset
    if charset is None and options.collation is not None:
        charset = charset_of_collation(options.collation)
    if charset is None or charset.upper() == "DEFAULT":
        return state.model.charset_for(database)
    return charset


# --- table drafts -----------------------------------------------------------------------------------


PRIMARY = "PRIMARY"

KeyPart = int | str  # a column slot of the draft, or the name of a column the table does not have


@dataclass
class TableDraft:
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
    def of(cls, table: Table) -> TableDraft:
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
            raise SchemaConflict(f"column {name!r} does not exist in table {self.id}")
        return index

    def require(self, name: str) -> int:
        index = self.index_of(name)
        if index is None:
            raise SchemaConflict(f"column {name!r} does not exist in table {self.id}")
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
                raise SchemaConflict(f"column {position.after!r} (AFTER) does not exist in table {self.id}")
            target = after + 1
        self.columns.insert(target, column)
        self.slots.insert(target, slot)

    def drop_column(self, name: str, if_exists: bool) -> None:
        index = self.index_of_original(name)
        if index is None:
            if if_exists:
                return
            raise SchemaConflict(f"column {name!r} does not exist in table {self.id}")
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
                raise SchemaConflict(f"duplicate column {column.name!r} in table {self.id}")
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
