"""Garbage in: the parser either parses it or raises its own DdlParseError - nothing else escapes."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddl.model import SchemaModel
from ddl.parsing.parser import DdlParseError, parser_for

SEED_DDL = [
    "CREATE TABLE `t` (`id` INT(11) NOT NULL AUTO_INCREMENT, `v` VARCHAR(20) CHARACTER SET latin1 DEFAULT 'x', "
    "e ENUM('a','b') NOT NULL, d DECIMAL(10,2) DEFAULT -1.5, PRIMARY KEY (`id`), UNIQUE KEY u (v)) "
    "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 /*!50100 PARTITION BY HASH (id) */",
    "ALTER TABLE t ADD COLUMN c INT FIRST, DROP COLUMN v, MODIFY e ENUM('x') AFTER id, CHANGE d dd BIGINT, "
    "RENAME COLUMN c TO cc, ALTER COLUMN cc SET DEFAULT 5, ADD PRIMARY KEY (id), RENAME TO u",
    "RENAME TABLE a TO b, c.d TO e.f",
    "DROP TABLE IF EXISTS a, b; TRUNCATE TABLE c; USE db; SET character_set_server = utf8mb4",
    "CREATE DEFINER=`u`@`%` PROCEDURE p() BEGIN IF x THEN SELECT 1; END IF; END",
    "CREATE INDEX i ON t (a(10) DESC) USING BTREE; DROP INDEX i ON t",
    "CREATE DATABASE d CHARACTER SET = latin1 COLLATE latin1_bin",
]
WORDS = sorted({w for ddl in SEED_DDL for w in re.findall(r"[A-Za-z_]+|\S", ddl)})


def tokens_of(text: str) -> list[str]:
    return re.findall(r"`[^`]*`|'[^']*'|[A-Za-z_0-9.]+|\s+|.", text)


@st.composite
def mutated_ddl(draw: st.DrawFn) -> str:
    tokens = tokens_of(draw(st.sampled_from(SEED_DDL)))
    for _ in range(draw(st.integers(1, 6))):
        if not tokens:
            break
        at = draw(st.integers(0, len(tokens) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "replace", "insert", "truncate"]))
        if action == "delete":
            del tokens[at]
        elif action == "duplicate":
            tokens.insert(at, tokens[at])
        elif action == "replace":
            tokens[at] = draw(st.sampled_from(WORDS))
        elif action == "insert":
            tokens.insert(
                at,
                draw(
                    st.sampled_from(
                        [
                            *WORDS,
                            "(",
                            ")",
                            "'",
                            "`",
                            '"',
                            "/*",
                            "*/",
                            "/*!",
                            "--",
                            "#",
                            ";",
                            "\n",
                            "\\",
                            "@@",
                            ".",
                            ",",
                            "0x",
                            "b'",
                        ]
                    )
                ),
            )
        else:
            tokens = tokens[:at]
    return "".join(tokens)


GARBAGE = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=st.sampled_from(list("()`'\";,.#-/*!@ \nabcSETLABCRE0123456789=_\\")), max_size=200),
    st.lists(
        st.sampled_from(WORDS + ["(", ")", ",", ";", " ", "'x'", "`y`", "1", "-", "."]), max_size=40
    ).map(" ".join),
    mutated_ddl(),
)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sql=GARBAGE, flavor=st.sampled_from(["mysql", "mariadb"]))
def test_garbage_only_ever_raises_ddl_parse_error(sql: str, flavor: str) -> None:
    parser = parser_for(flavor)
    model = parser.parse(
        "CREATE TABLE t (id INT, v VARCHAR(3), e INT, d INT, a INT, c INT)", SchemaModel(), "db"
    ).model
    try:
        result = parser.parse(sql, model, "db")
    except DdlParseError as error:
        assert error.statement is not None and error.reason and error.position.startswith("line ")
        return
    for statement in result.statements:
        assert statement.kind in {"table", "database", "set", "use", "truncate", "ignored"}
