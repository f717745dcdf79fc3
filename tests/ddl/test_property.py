"""Property: for random valid CREATE/ALTER sequences, the model the parser builds from the DDL equals
the model parsed from the server's own ``SHOW CREATE TABLE`` after every step.

Each example runs a fresh table through 1-8 random schema changes on the real server (fixture) and
through the parser; after each change the streamed model is compared with the snapshot model
(columns in order with type, length/scale, signedness, nullability, charset, default, ENUM values;
the primary key; the table charset).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pymysql
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connector.testing.local_server import LocalMySQLServer
from ddl.model import SchemaModel, Table
from ddl.parsing.parser import parser_for
from mysql_cdc_base.table_id import TableId


@dataclass(frozen=True)
class ColumnType:
    sql: str
    keyable: bool  # may be part of a key without a prefix length
    default: str | None  # a default literal in the form SHOW CREATE TABLE prints back


def _decimal(precision: int, scale: int) -> ColumnType:
    value = "0" if precision == scale else "1"
    return ColumnType(f"DECIMAL({precision},{scale})", True, f"{value}.{'0' * scale}" if scale else value)


COLUMN_TYPES = st.one_of(
    st.sampled_from(
        [
            ColumnType("INT(11)", True, "7"),
            ColumnType("INT(10) UNSIGNED", True, "5"),
            ColumnType("BIGINT(20)", True, "-3"),
            ColumnType("SMALLINT(6)", True, None),
            ColumnType("TINYINT(1)", True, "1"),
            ColumnType("TINYINT(3) UNSIGNED ZEROFILL", True, None),
            ColumnType("DOUBLE", True, "2.5"),
            ColumnType("DATE", True, "'2020-01-02'"),
            ColumnType("DATETIME", True, "'2020-01-02 03:04:05'"),
            ColumnType("DATETIME(3)", True, "'2020-01-02 03:04:05.250'"),
            ColumnType("TIME(2)", True, None),
            ColumnType("TEXT", False, None),
            ColumnType("MEDIUMTEXT CHARACTER SET latin1", False, None),
            ColumnType("ENUM('a','b,c','d''e')", True, "'a'"),
            ColumnType("SET('x','y')", True, "'x,y'"),
            ColumnType("BIT(3)", True, "b'101'"),
            ColumnType("BLOB", False, None),
            ColumnType("VARBINARY(16)", True, None),
            ColumnType("YEAR(4)", True, "2024"),
        ]
    ),
    st.builds(lambda n: ColumnType(f"VARCHAR({n})", True, "'ab'" if n > 1 else "'a'"), st.integers(1, 60)),
    st.builds(lambda n: ColumnType(f"VARCHAR({n}) CHARACTER SET latin1", True, "'x'"), st.integers(1, 60)),
    st.builds(lambda n: ColumnType(f"CHAR({n}) COLLATE utf8mb4_bin", True, None), st.integers(1, 20)),
    st.integers(1, 18).flatmap(lambda p: st.integers(0, min(p, 4)).map(lambda s: _decimal(p, s))),
)
NAMES = ["id", "amount", "Name", "status", "order", "key", "sel ect", "Ünï", "created_at", "x"]


@dataclass
class TableState:
    """What the generator knows about the table, to produce only statements the server accepts."""

    name: str
    columns: dict[str, ColumnType] = field(default_factory=dict)  # in order
    not_null: set[str] = field(default_factory=set)
    primary_key: list[str] = field(default_factory=list)
    unique: dict[str, list[str]] = field(default_factory=dict)
    counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def fresh_name(self) -> str:
        base = NAMES[next(self.counter) % len(NAMES)]
        name = f"{base}{next(self.counter)}"
        return name

    def in_key(self, name: str) -> bool:
        return name in self.primary_key or any(name in cols for cols in self.unique.values())


def q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def column_sql(draw: st.DrawFn, state: TableState, name: str, keyed: bool, in_primary: bool) -> str:
    kind = draw(COLUMN_TYPES.filter(lambda t: t.keyable) if keyed else COLUMN_TYPES)
    not_null = in_primary or draw(st.booleans())
    parts = [q(name), kind.sql, "NOT NULL" if not_null else "NULL"]
    if kind.default is not None and draw(st.booleans()):
        parts.append(f"DEFAULT {kind.default}")
    state.columns[name] = kind
    (state.not_null.add if not_null else state.not_null.discard)(name)
    return " ".join(parts)


def position_sql(draw: st.DrawFn, state: TableState, exclude: str) -> str:
    others = [c for c in state.columns if c != exclude]
    choice = draw(st.sampled_from(["", "FIRST", "AFTER"]))
    if choice == "AFTER" and others:
        return f" AFTER {q(draw(st.sampled_from(others)))}"
    return " FIRST" if choice == "FIRST" else ""


def rename_column_in_state(state: TableState, old: str, new: str) -> None:
    state.columns = {new if k == old else k: v for k, v in state.columns.items()}
    state.primary_key = [new if c == old else c for c in state.primary_key]
    state.unique = {k: [new if c == old else c for c in v] for k, v in state.unique.items()}
    if old in state.not_null:
        state.not_null.discard(old)
        state.not_null.add(new)


def reorder(state: TableState, name: str, position: str) -> None:
    if not position:
        return
    kind = state.columns.pop(name)
    items = list(state.columns.items())
    if position.strip() == "FIRST":
        items.insert(0, (name, kind))
    else:
        after = position.strip()[len("AFTER ") :].strip("`").replace("``", "`")
        index = [n for n, _ in items].index(after)
        items.insert(index + 1, (name, kind))
    state.columns = dict(items)


@st.composite
def create_statement(draw: st.DrawFn, state: TableState) -> str:
    definitions = [
        column_sql(draw, state, state.fresh_name(), False, False) for _ in range(draw(st.integers(1, 4)))
    ]
    keyable = [n for n, t in state.columns.items() if t.keyable]
    if draw(st.booleans()) and keyable:
        state.primary_key = draw(st.lists(st.sampled_from(keyable), min_size=1, max_size=2, unique=True))
        state.not_null.update(state.primary_key)
        definitions.append(f"PRIMARY KEY ({', '.join(map(q, state.primary_key))})")
    charset = draw(st.sampled_from(["", " DEFAULT CHARSET=latin1", " CHARACTER SET utf8mb4"]))
    return f"CREATE TABLE {q(state.name)} ({', '.join(definitions)}) ENGINE=InnoDB{charset}"


@st.composite
def alter_statement(draw: st.DrawFn, state: TableState) -> str:  # noqa: C901 - one branch per form
    columns = list(state.columns)
    forms = ["add", "modify", "change", "rename", "default", "unique", "rename_table"]
    # MariaDB refuses to drop a column of a multi-column key ("Key column ... doesn't exist").
    droppable = [
        c
        for c in columns
        if not any(c in cols and len(cols) > 1 for cols in [state.primary_key, *state.unique.values()])
    ]
    if len(columns) > 1 and droppable:
        forms.append("drop")
    if state.primary_key:
        forms.append("drop_pk")
    elif any(t.keyable for t in state.columns.values()):
        forms.append("add_pk")
    if state.unique:
        forms.append("drop_unique")
    form = draw(st.sampled_from(forms))
    table = q(state.name)
    if form == "add":
        name = state.fresh_name()
        definition = column_sql(draw, state, name, False, False)
        position = position_sql(draw, state, name)
        reorder(state, name, position)
        return f"ALTER TABLE {table} ADD COLUMN {definition}{position}"
    if form == "drop":
        name = draw(st.sampled_from(droppable))
        state.columns.pop(name)
        state.primary_key = [c for c in state.primary_key if c != name]
        state.unique = {k: [c for c in v if c != name] for k, v in state.unique.items()}
        state.unique = {k: v for k, v in state.unique.items() if v}
        return f"ALTER TABLE {table} DROP COLUMN {q(name)}"
    if form in ("modify", "change"):
        old = draw(st.sampled_from(columns))
        new = old if form == "modify" else state.fresh_name()
        keyed, in_primary = state.in_key(old), old in state.primary_key
        rename_column_in_state(state, old, new)
        definition = column_sql(draw, state, new, keyed, in_primary)
        position = position_sql(draw, state, new)
        reorder(state, new, position)
        head = f"MODIFY COLUMN {definition}" if form == "modify" else f"CHANGE COLUMN {q(old)} {definition}"
        return f"ALTER TABLE {table} {head}{position}"
    if form == "rename":
        old = draw(st.sampled_from(columns))
        new = state.fresh_name()
        rename_column_in_state(state, old, new)
        return f"ALTER TABLE {table} RENAME COLUMN {q(old)} TO {q(new)}"
    if form == "default":
        name = draw(st.sampled_from(columns))
        literal = state.columns[name].default
        if literal is None or draw(st.booleans()):
            return f"ALTER TABLE {table} ALTER COLUMN {q(name)} DROP DEFAULT"
        return f"ALTER TABLE {table} ALTER COLUMN {q(name)} SET DEFAULT {literal}"
    if form == "add_pk":
        keyable = [n for n, t in state.columns.items() if t.keyable]
        state.primary_key = draw(st.lists(st.sampled_from(keyable), min_size=1, max_size=2, unique=True))
        state.not_null.update(state.primary_key)
        return f"ALTER TABLE {table} ADD PRIMARY KEY ({', '.join(map(q, state.primary_key))})"
    if form == "drop_pk":
        state.primary_key = []
        return f"ALTER TABLE {table} DROP PRIMARY KEY"
    if form == "unique":
        keyable = [n for n, t in state.columns.items() if t.keyable]
        if not keyable:
            return f"ALTER TABLE {table} ENGINE=InnoDB"
        name = f"uk{next(state.counter)}"
        state.unique[name] = [draw(st.sampled_from(keyable))]
        return f"ALTER TABLE {table} ADD UNIQUE KEY {q(name)} ({q(state.unique[name][0])})"
    if form == "drop_unique":
        name = draw(st.sampled_from(sorted(state.unique)))
        state.unique.pop(name)
        return f"ALTER TABLE {table} DROP INDEX {q(name)}"
    new_name = f"t_{next(state.counter)}"
    old_name, state.name = state.name, new_name
    return f"RENAME TABLE {q(old_name)} TO {q(new_name)}"


def comparable(table: Table) -> tuple[object, ...]:
    return (
        [
            (
                c.name,
                c.data_type,
                c.unsigned,
                c.zerofill,
                c.length,
                c.scale,
                c.optional,
                c.charset,
                c.has_default,
                c.default_expression,
                c.enum_values,
            )
            for c in table.columns
        ],
        table.primary_key,
        table.default_charset,
    )


@settings(
    max_examples=100,
    deadline=None,
    derandomize=False,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(data=st.data())
def test_parsed_ddl_matches_show_create_table_after_every_step(
    mysql_server: LocalMySQLServer, data: st.DataObject
) -> None:
    database = "prop_ddl"
    mysql_server.execute(
        f"DROP DATABASE IF EXISTS {database}", f"CREATE DATABASE {database} CHARACTER SET utf8mb4"
    )
    parser = parser_for(mysql_server.flavor)
    model = parser.parse(f"CREATE DATABASE {database} CHARACTER SET utf8mb4", SchemaModel()).model
    state = TableState("t_0")
    steps = data.draw(st.integers(0, 7), label="steps")
    applied: list[str] = []
    connection = mysql_server.connect(database)
    try:
        with connection.cursor() as cursor:
            for step in range(steps + 1):
                statement = data.draw(
                    create_statement(state) if step == 0 else alter_statement(state),
                    label=f"statement {step}",
                )
                try:
                    cursor.execute(statement)
                except pymysql.err.MySQLError as exc:  # the generator must only produce valid DDL
                    raise AssertionError(f"server refused generated DDL {statement!r}: {exc}") from exc
                applied.append(statement)
                model = parser.parse(statement, model, database).model
                cursor.execute(f"SHOW CREATE TABLE {q(state.name)}")
                show_create = cursor.fetchone()[1]
                snapshot = parser.parse(show_create, SchemaModel(), database).model
                streamed_table = model.table(TableId(database, state.name))
                snapshot_table = snapshot.table(TableId(database, state.name))
                assert streamed_table is not None and snapshot_table is not None, applied
                assert comparable(streamed_table) == comparable(snapshot_table), (applied, show_create)
    finally:
        connection.close()
        # Left behind, the database would be in other tests' snapshots (the golden mode cases expect
        # their own database's schema change to be the snapshot's last record).
        mysql_server.execute(f"DROP DATABASE IF EXISTS {database}")
