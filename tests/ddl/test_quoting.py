"""Double-quoted string literals in DDL text, written as Debezium 3.6.3 records them
(tests/golden/debezium/fidelity/defaults.jsonl holds the recorded statements)."""

from __future__ import annotations

import pytest

from ddl.parsing.quoting import as_single_quoted_body, single_quoted_strings
from tests.ddl.helpers import parse, table


@pytest.mark.parametrize(
    ("written", "recorded"),
    [
        # As recorded from Debezium 3.6.3:
        ('dz DATE DEFAULT "0000-00-00"', "dz DATE DEFAULT '0000-00-00'"),
        ('a VARCHAR(10) DEFAULT "it\'s"', "a VARCHAR(10) DEFAULT 'it''s'"),
        ('b VARCHAR(10) DEFAULT "x" COMMENT "n\\"o"', "b VARCHAR(10) DEFAULT 'x' COMMENT 'n\\\"o'"),
        ('e ENUM("p", \'q\') DEFAULT "p"', "e ENUM('p', 'q') DEFAULT 'p'"),
        # Left alone: single-quoted strings, backquoted names, comments.
        ("CREATE TABLE `a\"b` (c INT COMMENT 'x\"y')", "CREATE TABLE `a\"b` (c INT COMMENT 'x\"y')"),
        ('c INT /* "z" */ -- "w"\n, d INT # "v"', 'c INT /* "z" */ -- "w"\n, d INT # "v"'),
        # A doubled double quote inside is one double quote.
        ('DEFAULT "a""b"', "DEFAULT 'a\"b'"),
        # Unterminated: unchanged from there.
        ('DEFAULT "abc', 'DEFAULT "abc'),
    ],
)
def test_double_quoted_strings_are_single_quoted(written: str, recorded: str) -> None:
    assert single_quoted_strings(written) == recorded


def test_a_double_quoted_default_reads_as_its_single_quoted_body() -> None:
    """Debezium's defaultValueExpression of DEFAULT "it's" is it''s (the body of 'it''s')."""
    r = parse('CREATE TABLE dq (id INT PRIMARY KEY, a VARCHAR(10) DEFAULT "it\'s", b VARCHAR(3) DEFAULT "x")')
    assert [c.default_expression for c in table(r, "db.dq").columns] == [None, "it''s", "x"]
    assert as_single_quoted_body('n\\"o') == 'n\\"o'


def test_rewritten_text_parses_to_the_same_table() -> None:
    """The history stores the rewritten text; replaying it must give the same structure."""
    sql = 'CREATE TABLE dq (id INT PRIMARY KEY, a VARCHAR(10) DEFAULT "it\'s" COMMENT "n\\"o", e ENUM("p", "q"))'
    assert table(parse(single_quoted_strings(sql)), "db.dq") == table(parse(sql), "db.dq")
