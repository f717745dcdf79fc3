"""Small helpers shared by the DDL tests."""

from __future__ import annotations

from pathlib import Path

from ddl.model import Column, SchemaModel, Table
from ddl.parsing.parser import DdlResult, parser_for
from mysql_cdc_base.table_id import TableId

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "mysql-ddl"


def parse(
    sql: str,
    model: SchemaModel | None = None,
    database: str | None = "db",
    flavor: str = "mysql",
    include_comments: bool = False,
) -> DdlResult:
    return parser_for(flavor, include_comments=include_comments).parse(sql, model or SchemaModel(), database)


def table(result: DdlResult | SchemaModel, name: str) -> Table:
    model = result.model if isinstance(result, DdlResult) else result
    found = model.table(TableId.parse(name))
    assert found is not None, f"{name} not in {sorted(map(str, model.tables))}"
    return found


def column(result: DdlResult | SchemaModel, name: str) -> Column:
    table_name, _, column_name = name.rpartition(".")
    found = table(result, table_name).column(column_name)
    assert found is not None, f"no column {name}"
    return found


def shape(t: Table) -> list[tuple[str, str, bool]]:
    """(name, typeName, optional) per column: the structure events are built from."""
    return [(c.name, c.type_name, c.optional) for c in t.columns]
