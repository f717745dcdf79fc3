"""The public MySQL DDL corpus (../shared/corpus/mysql-ddl, see its ORIGIN.md).

Every statement of every file is parsed in file order against the model built so far. Statements
that change structure must parse and apply; everything else must be recognised and skipped. In
``legacy/`` (an older grammar's corpus, partly rejected by MySQL itself) a statement may be refused
with ``DdlParseError``, but only if the server refuses it as well, and never with anything else.
The figures are printed (``pytest -s``) and reported on the site's page docs/fidelity.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pymysql
import pytest

from connector.testing.local_server import LocalMySQLServer
from ddl.model import SchemaModel
from ddl.parsing.dialect import split_statements
from ddl.parsing.parser import DdlParseError, DdlParser, parser_for
from mysql_cdc_base.table_id import TableId
from tests.ddl.helpers import CORPUS

GROUPS = {
    "examples": sorted(CORPUS.glob("*.sql")),
    "legacy": sorted((CORPUS / "legacy").glob("*.sql")),
    "connector-parser-tests": sorted((CORPUS / "connector-parser-tests").glob("*.ddl")),
}


@dataclass
class CorpusRun:
    counts: Counter[str] = field(default_factory=Counter)
    rejected: list[tuple[str, str, str]] = field(default_factory=list)  # file, statement, reason
    models: dict[str, SchemaModel] = field(default_factory=dict)


def run_file(path: Path, parser: DdlParser, run: CorpusRun, group: str) -> None:
    sql = path.read_text(encoding="utf-8")
    tokens = parser.dialect.tokenize(sql)
    model, database = SchemaModel(), None
    for chunk in split_statements(tokens):
        text = sql[chunk[0].start : chunk[-1].end + 1]
        try:
            result = parser.parse(text, model, database)
        except DdlParseError as exc:
            run.counts[f"{group}:rejected"] += 1
            run.rejected.append((path.name, text, exc.reason))
            continue
        model, database = result.model, result.default_database
        for statement in result.statements:
            run.counts[f"{group}:{'skipped' if statement.kind == 'ignored' else 'applied'}"] += 1
            run.counts[f"{group}:table changes"] += len(statement.table_changes)
    run.models[path.name] = model


@pytest.fixture(scope="module")
def corpus_run() -> CorpusRun:
    assert all(GROUPS.values()), f"corpus not found under {CORPUS}"
    run = CorpusRun()
    parser = parser_for("mysql")
    for group, paths in GROUPS.items():
        for path in paths:
            run_file(path, parser, run, group)
    total = Counter[str]()
    for key, value in run.counts.items():
        total[key.split(":")[1]] += value
    print("\nDDL corpus figures (statements):")
    for group in GROUPS:
        print(
            f"  {group:24} files={len(GROUPS[group]):3} applied={run.counts[f'{group}:applied']:5} "
            f"skipped={run.counts[f'{group}:skipped']:5} rejected={run.counts[f'{group}:rejected']:3} "
            f"table changes={run.counts[f'{group}:table changes']:5}"
        )
    print(
        f"  {'total':24} files={sum(map(len, GROUPS.values())):3} applied={total['applied']:5} "
        f"skipped={total['skipped']:5} rejected={total['rejected']:3} table changes={total['table changes']:5}"
    )
    return run


def test_current_corpus_and_connector_ddl_parse_without_errors(corpus_run: CorpusRun) -> None:
    failures = [r for r in corpus_run.rejected if not any(r[0] == p.name for p in GROUPS["legacy"])]
    assert failures == []
    assert corpus_run.counts["examples:applied"] > 150
    assert corpus_run.counts["connector-parser-tests:applied"] > 500


def test_legacy_rejections_are_statements_the_server_rejects(
    corpus_run: CorpusRun, mysql_server: LocalMySQLServer, unique_db: str
) -> None:
    legacy = [r for r in corpus_run.rejected if (CORPUS / "legacy" / r[0]).exists()]
    assert len(legacy) <= 10, legacy
    connection = mysql_server.connect(unique_db)
    try:
        with connection.cursor() as cursor:
            for name, statement, reason in legacy:
                with pytest.raises(pymysql.err.ProgrammingError) as refused:
                    cursor.execute(statement)
                assert refused.value.args[0] == 1064, (name, statement, reason)  # ER_PARSE_ERROR
    finally:
        connection.close()


# Table counts Debezium's own parser tests expect for these files (BinlogAntlrDdlParserTest).
DEBEZIUM_TABLE_COUNTS = {
    "mysql-test-create.ddl": 57,
    "mysql-test-statements.ddl": 6,
    "mysql-test-init-5.6.ddl": 85,
    "mysql-test-init-5.7.ddl": 123,
    "mysql-dbz-198j.ddl": 1,
    "mysql-dbz-162.ddl": 1,
}


@pytest.mark.parametrize(("name", "tables"), sorted(DEBEZIUM_TABLE_COUNTS.items()))
def test_known_outcomes_of_the_connector_corpus(corpus_run: CorpusRun, name: str, tables: int) -> None:
    assert len(corpus_run.models[name].tables) == tables


def test_products_script_structure(corpus_run: CorpusRun) -> None:
    model = corpus_run.models["mysql-products.ddl"]
    products = model.table(TableId("connector_test", "products"))
    assert products is not None
    assert [(c.name, c.type_name, c.optional) for c in products.columns] == [
        ("id", "INTEGER", False),
        ("name", "VARCHAR", False),
        ("description", "VARCHAR", True),
        ("weight", "FLOAT", True),
    ]
    assert products.primary_key == ("id",)
    on_hand = model.table(TableId("connector_test", "products_on_hand"))
    assert on_hand is not None and on_hand.primary_key == ("product_id",)
