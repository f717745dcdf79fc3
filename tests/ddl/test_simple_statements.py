"""The schema history's non-table statements replayed without the DDL grammar (issue 41).

``ddl.parsing.simple`` reads the plain USE, SET and CREATE/DROP DATABASE statements a history holds
into the statement trees the grammar gives; the parser applies them with its handlers, so that
neither recovery nor the snapshot's first statements load sqlglot for them. Each is checked against the grammar itself: the same tree, and
the same model after it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ddl.history.record import HistoryRecord
from ddl.history.serialize import table_change_to_history
from ddl.history.store import FileSchemaHistory
from ddl.model import Database, SchemaModel
from ddl.parsing.dialect import split_statements
from ddl.parsing.grammar import parse_statement
from ddl.parsing.parser import parser_for
from ddl.parsing.simple import simple_statement
from ddl.parsing.statements import Statement

PLAIN = [
    "SET character_set_server=utf8mb4, collation_server=utf8mb4_general_ci",
    "set collation_server = latin1_swedish_ci;",
    "SET @@global.character_set_server = 'latin1', collation_database=utf8mb4_bin",
    "SET @@SESSION.collation_database=latin1_bin",
    "SET sql_mode=ANSI_QUOTES",
    "SET character_set_database = DEFAULT",
    "DROP DATABASE IF EXISTS `bench`",
    "drop schema shop",
    "DROP DATABASE `a``b`",
    "CREATE DATABASE `bench` CHARSET utf8mb4 COLLATE utf8mb4_general_ci",
    "CREATE DATABASE IF NOT EXISTS shop DEFAULT CHARACTER SET = 'latin1'",
    "CREATE SCHEMA `new db` COLLATE=utf8mb4_bin",
    "CREATE DATABASE plain",
    "CREATE DATABASE d CHAR SET latin1 DEFAULT COLLATE latin1_bin ;",
    "USE `bench`",
    "use shop ;",
    "DROP TABLE IF EXISTS `shop`.`items`",
    "drop table items, `shop`.`gone`, other.`x``y`",
    "DROP TABLE shop.items;",
]

# Other shapes and statements: left to the grammar.
OTHERS = [
    "SET NAMES utf8mb4",
    "SET GLOBAL character_set_server=latin1",
    "SET character_set_server=utf8mb4 COLLATE utf8mb4_bin",
    "SET @user_var = 5",
    "CREATE DATABASE x /* comment */",
    "CREATE DATABASE x ENCRYPTION 'Y'",
    "DROP DATABASE x; DROP DATABASE y",
    'USE "quoted"',
    "CREATE TABLE shop.t (id INT PRIMARY KEY)",
    "DROP TEMPORARY TABLE shop.t",
    "DROP TABLE shop.t CASCADE",
    "DROP TABLES a, b",
    "",
]


def grammar_tree(sql: str) -> Statement:
    dialect = parser_for("mysql").dialect
    (chunk,) = split_statements(dialect.tokenize(sql))
    tree, used = parse_statement(chunk, sql, dialect)
    assert used == len(chunk)
    return tree


def start_model() -> SchemaModel:
    parser = parser_for("mysql")
    model = parser.parse("CREATE DATABASE shop CHARACTER SET latin1", SchemaModel()).model
    return parser.parse("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))", model, "shop").model


@pytest.mark.parametrize("sql", PLAIN)
def test_plain_statements_read_as_the_grammar_reads_them(sql: str) -> None:
    plain = simple_statement(sql)
    assert plain is not None
    assert plain[0] == grammar_tree(sql)


@pytest.mark.parametrize("sql", PLAIN + OTHERS[:-1])
@pytest.mark.parametrize("flavor", ["mysql", "mariadb"])
def test_parse_gives_what_the_grammar_gives(sql: str, flavor: str) -> None:
    # The model, the statements (text, database, kind: what schema change events are made of) and
    # the default database after them.
    parser = parser_for(flavor)
    for database in ("shop", None):
        expected = parser.parse_with_grammar(sql, start_model(), database)
        assert parser.parse(sql, start_model(), database) == expected


@pytest.mark.parametrize("sql", OTHERS)
def test_other_statements_are_left_to_the_grammar(sql: str) -> None:
    assert simple_statement(sql) is None


def test_plain_statements_change_the_model() -> None:
    # The comparisons above are not between two unchanged models.
    parser = parser_for("mysql")
    set_server = "SET character_set_server=utf8mb4, collation_server=utf8mb4_bin ;"
    result = parser.parse(set_server, start_model())
    assert (result.model.server_charset, result.model.server_collation) == ("utf8mb4", "utf8mb4_bin")
    assert [s.ddl for s in result.statements] == [set_server[:-2]]  # as the grammar's split gives it
    model = parser.parse("CREATE DATABASE `a``b` CHARSET latin1 COLLATE latin1_bin", result.model).model
    assert model.databases["a`b"] == Database("a`b", "latin1", "latin1_bin")
    assert "shop" not in parser.parse("DROP DATABASE IF EXISTS shop", model).model.databases
    assert parser.parse("USE `a``b`", model).default_database == "a`b"


# A history as the snapshot writes it: SET, DROP TABLE (with tableChanges), DROP / CREATE DATABASE,
# USE, CREATE TABLE (with tableChanges); then a later DROP DATABASE and SET.
HISTORY_DDL = [
    ("", "SET character_set_server=utf8mb4, collation_server=utf8mb4_general_ci", True),
    ("shop", "DROP TABLE IF EXISTS `shop`.`items`", False),
    ("shop", "DROP DATABASE IF EXISTS `shop`", True),
    ("shop", "CREATE DATABASE `shop` CHARSET latin1 COLLATE latin1_swedish_ci", True),
    ("shop", "USE `shop`", True),
    ("shop", "CREATE TABLE `items` (`id` int(11) NOT NULL, `name` varchar(20), PRIMARY KEY (`id`))", False),
    ("", "CREATE DATABASE `gone`", True),
    ("gone", "USE `gone`", True),
    ("gone", "CREATE TABLE `t` (`id` int NOT NULL PRIMARY KEY)", False),
    ("gone", "DROP DATABASE `gone`", True),
    ("shop", "SET @@global.collation_database = 'latin1_bin'", True),
]

RECOVER_WITHOUT_GRAMMAR = """
import json, sys
from ddl.history.recovery import recover
from ddl.history.store import FileSchemaHistory
from ddl.parsing.parser import parser_for

history = FileSchemaHistory(sys.argv[1])
offset = {"file": "mysql-bin.000001", "pos": 10_000}
recovered = recover(history, {"server": "s"}, offset, parser_for("mariadb"))
loaded = "sqlglot" in sys.modules
# The same history with every statement without tableChanges parsed by the grammar.
grammar = parser_for("mariadb")
grammar.parse = grammar.parse_with_grammar
expected = recover(history, {"server": "s"}, offset, grammar)
print(json.dumps({
    "sqlglot_loaded": loaded,
    "same": recovered == expected,
    "grammar_loaded": "sqlglot" in sys.modules,
    "tables": sorted(str(t) for t in recovered.tables),
    "databases": sorted(recovered.databases),
    "server": [recovered.server_charset, recovered.server_collation],
    "shop": [recovered.databases["shop"].default_charset, recovered.databases["shop"].default_collation],
}))
"""


def write_history(path: Path) -> None:
    """The records of ``HISTORY_DDL`` in the file store's format, table changes from the parser."""
    parser = parser_for("mariadb")
    history = FileSchemaHistory(str(path))
    model, database = SchemaModel(), None
    for index, (record_db, ddl, without_changes) in enumerate(HISTORY_DDL):
        result = parser.parse(ddl, model, database)
        model, database = result.model, result.default_database
        (statement,) = result.statements
        changes = (
            () if without_changes else tuple(table_change_to_history(c) for c in statement.table_changes)
        )
        assert bool(changes) != without_changes, ddl
        position = {"file": "mysql-bin.000001", "pos": 100 + index}
        history.record(
            HistoryRecord({"server": "s"}, position, 1, ddl, database_name=record_db, table_changes=changes)
        )


def test_recovering_a_history_of_plain_statements_does_not_load_sqlglot(tmp_path: Path) -> None:
    path = tmp_path / "schema-history.jsonl"
    write_history(path)
    done = subprocess.run(
        [sys.executable, "-c", RECOVER_WITHOUT_GRAMMAR, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["sqlglot_loaded"] is False
    assert result["same"] is True
    assert result["grammar_loaded"] is True  # the model compared with came from the grammar
    assert result["tables"] == ["shop.items"]
    assert result["databases"] == ["shop"]
    assert result["server"] == ["utf8mb4", "utf8mb4_general_ci"]
    assert result["shop"] == ["latin1", "latin1_bin"]
