"""``SHOW CREATE TABLE`` text (the snapshot and first-start path) parsed into the model.

Against the real server (MariaDB 10.11 by default, via the fixtures) the parsed model is checked
column by column against ``information_schema`` - an oracle independent of the parser. MySQL 8
output is covered by verbatim samples of its ``SHOW CREATE TABLE`` format.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from connector.testing.local_server import LocalMySQLServer
from ddl.model import JdbcType, SchemaModel, Table
from ddl.parsing.parser import parser_for
from ddl.parsing.table_draft import charset_of_collation
from mysql_cdc_base.table_id import TableId
from tests.ddl.helpers import column, parse, table

# Column definitions created on the server, grouped into a few tables (one table per group keeps
# the row-size limit away). ENUM/SET values are listed so they can be compared exactly.
COLUMN_GROUPS: dict[str, list[str]] = {
    "numbers": [
        "id INT UNSIGNED NOT NULL AUTO_INCREMENT",
        "t TINYINT",
        "t1 TINYINT(1) DEFAULT 1",
        "tu TINYINT UNSIGNED ZEROFILL",
        "s SMALLINT DEFAULT -3",
        "m MEDIUMINT UNSIGNED",
        "i INT NOT NULL DEFAULT '42'",
        "b BIGINT",
        "bu BIGINT UNSIGNED",
        "d DECIMAL(10,2) DEFAULT 1.5",
        "d0 NUMERIC",
        "f FLOAT",
        "f2 FLOAT(7,3)",
        "db DOUBLE DEFAULT 2.5e3",
        "dp DOUBLE PRECISION(10,4)",
        "r REAL",
        "bo BOOLEAN DEFAULT TRUE",
        "bt BIT(5) DEFAULT b'101'",
        "b1 BIT",
        "PRIMARY KEY (id)",
    ],
    "temporal": [
        "dt DATE DEFAULT '2020-01-31'",
        "dz DATE NOT NULL DEFAULT '0000-00-00'",
        "tm TIME(3)",
        "dtm DATETIME DEFAULT CURRENT_TIMESTAMP",
        "dt6 DATETIME(6) NOT NULL DEFAULT '2000-01-01 00:00:00.000000'",
        "ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP",
        "ts3 TIMESTAMP(3) NULL DEFAULT NULL",
        "y YEAR",
        "y4 YEAR(4) DEFAULT 2024",
    ],
    "strings": [
        "c CHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT 'it''s'",
        "c1 CHAR",
        "v VARCHAR(255) NOT NULL",
        "vl VARCHAR(20) CHARACTER SET latin1 DEFAULT 'x'",
        "vc VARCHAR(10) COLLATE utf8mb4_unicode_ci",
        "nc NCHAR(3)",
        "nv NVARCHAR(7)",
        "tt TINYTEXT",
        "tx TEXT",
        "mt MEDIUMTEXT CHARACTER SET ascii",
        "lt LONGTEXT",
        "bn BINARY(4)",
        "vb VARBINARY(16) DEFAULT 'ab'",
        "tb TINYBLOB",
        "bl BLOB",
        "mb MEDIUMBLOB",
        "lb LONGBLOB",
        "e ENUM('a','b,c','d''e') DEFAULT 'a'",
        "st SET('x','y','z') NOT NULL DEFAULT 'x,y'",
        "UNIQUE KEY uk (v)",
        "KEY kx (tx(10))",
        "FULLTEXT KEY ft (mt)",
    ],
    "others": [
        "k INT NOT NULL",
        "j JSON",
        "g GEOMETRY",
        "p POINT NOT NULL",
        "ls LINESTRING",
        "pg POLYGON",
        "mp MULTIPOINT",
        "gc GEOMETRYCOLLECTION",
        "gen INT AS (k + 1) VIRTUAL",
        "gst INT GENERATED ALWAYS AS (k * 2) STORED",
        "ex VARCHAR(36) DEFAULT (concat('a', 'b'))",
        "ei INT DEFAULT (1 + 1)",
        "SPATIAL KEY sp (p)",
        "CONSTRAINT chk CHECK (k > 0)",
        "UNIQUE KEY (k)",
    ],
}
ENUM_VALUES = {"e": ("a", "b,c", "d'e"), "st": ("x", "y", "z")}
_PARENS = re.compile(r"\(([^)]*)\)")


def information_schema_columns(server: LocalMySQLServer, database: str, name: str) -> list[dict[str, Any]]:
    rows = server.query(
        "SELECT COLUMN_NAME, IS_NULLABLE, DATA_TYPE, COLUMN_TYPE, CHARACTER_SET_NAME, COLUMN_DEFAULT, EXTRA,"
        f" GENERATION_EXPRESSION FROM information_schema.COLUMNS WHERE TABLE_SCHEMA='{database}'"
        f" AND TABLE_NAME='{name}' ORDER BY ORDINAL_POSITION"
    )
    keys = ["name", "nullable", "data_type", "column_type", "charset", "default", "extra", "generation"]
    return [dict(zip(keys, row, strict=True)) for row in rows]


def information_schema_primary_key(server: LocalMySQLServer, database: str, name: str) -> tuple[str, ...]:
    rows = server.query(
        f"SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA='{database}'"
        f" AND TABLE_NAME='{name}' AND INDEX_NAME='PRIMARY' ORDER BY SEQ_IN_INDEX"
    )
    return tuple(r[0] for r in rows)


def assert_matches_information_schema(
    parsed: Table, columns: list[dict[str, Any]], primary_key: tuple[str, ...], table_charset: str
) -> None:
    assert [c.name for c in parsed.columns] == [c["name"] for c in columns]
    assert parsed.default_charset == table_charset
    assert parsed.primary_key == primary_key or (not primary_key and parsed.primary_key)
    for parsed_column, expected in zip(parsed.columns, columns, strict=True):
        where = f"{parsed.id}.{parsed_column.name}: {expected}"
        assert parsed_column.data_type.lower() == expected["data_type"], where
        assert parsed_column.optional == (expected["nullable"] == "YES"), where
        assert parsed_column.unsigned == ("unsigned" in expected["column_type"]), where
        assert parsed_column.zerofill == ("zerofill" in expected["column_type"]), where
        assert parsed_column.charset == expected["charset"], where
        assert parsed_column.auto_increment == (
            "auto_increment" in expected["extra"] or "on update" in expected["extra"].lower()
        ), where
        assert (parsed_column.generation_expression or None) == (expected["generation"] or None), where
        dims = _PARENS.search(expected["column_type"])
        if parsed_column.data_type in ("ENUM", "SET"):
            assert parsed_column.enum_values == ENUM_VALUES[parsed_column.name], where
        elif dims:
            numbers = [int(n) for n in dims.group(1).split(",")]
            assert [parsed_column.length, parsed_column.scale][: len(numbers)] == numbers, where
        default = expected["default"]
        # MariaDB: SQL NULL = no default, 'NULL' = DEFAULT NULL; both mean "no default" to Debezium.
        if default is None or default == "NULL":
            assert not parsed_column.has_default, where
        else:
            assert parsed_column.has_default, where
            literal = re.fullmatch(r"'(.*)'|(-?[0-9.]+)|b'([01]+)'", default, re.DOTALL)
            if default.lower().startswith("current_timestamp"):
                assert parsed_column.default_expression == "1970-01-01 00:00:00", where
            elif literal:
                assert parsed_column.default_expression == next(
                    g for g in literal.groups() if g is not None
                ), where
            else:
                assert parsed_column.default_expression is None, where  # an expression default


@pytest.mark.parametrize("group", sorted(COLUMN_GROUPS))
def test_show_create_table_matches_information_schema(
    mysql_server: LocalMySQLServer, unique_db: str, group: str
) -> None:
    mysql_server.execute(f"ALTER DATABASE `{unique_db}` CHARACTER SET latin1")
    definitions = ",\n  ".join(COLUMN_GROUPS[group])
    mysql_server.execute(f"CREATE TABLE `{unique_db}`.`{group}` (\n  {definitions}\n) ENGINE=InnoDB")
    show_create = mysql_server.query(f"SHOW CREATE TABLE `{unique_db}`.`{group}`")[0][1]
    result = parser_for(mysql_server.flavor).parse(show_create, SchemaModel(), unique_db)
    parsed = table(result, f"{unique_db}.{group}")
    collation = mysql_server.query(
        f"SELECT TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA='{unique_db}'"
        f" AND TABLE_NAME='{group}'"
    )[0][0]
    assert_matches_information_schema(
        parsed,
        information_schema_columns(mysql_server, unique_db, group),
        information_schema_primary_key(mysql_server, unique_db, group),
        charset_of_collation(collation),
    )


def test_streamed_ddl_and_show_create_agree_on_structure(
    mysql_server: LocalMySQLServer, unique_db: str
) -> None:
    """The CREATE as the binlog carries it and the snapshot's SHOW CREATE TABLE give the same shape
    (names, nullability, keys, charsets) - so events do not change when the source of the schema does."""
    parser = parser_for(mysql_server.flavor)
    model = parser.parse(f"CREATE DATABASE `{unique_db}` CHARACTER SET latin1", SchemaModel()).model
    for group, definitions in COLUMN_GROUPS.items():
        ddl = f"CREATE TABLE `{group}` ({', '.join(definitions)})"
        mysql_server.execute(f"ALTER DATABASE `{unique_db}` CHARACTER SET latin1")
        mysql_server.execute(ddl, database=unique_db)
        streamed = table(parser.parse(ddl, model, unique_db), f"{unique_db}.{group}")
        show_create = mysql_server.query(f"SHOW CREATE TABLE `{unique_db}`.`{group}`")[0][1]
        snapshot = table(parser.parse(show_create, SchemaModel(), unique_db), f"{unique_db}.{group}")
        assert [(c.name, c.optional, c.has_default, c.enum_values) for c in streamed.columns] == [
            (c.name, c.optional, c.has_default, c.enum_values) for c in snapshot.columns
        ], group
        # Charsets agree wherever both sides see a character type (NCHAR is Debezium's fixed "utf8";
        # MariaDB shows JSON as LONGTEXT).
        for streamed_column, snapshot_column in zip(streamed.columns, snapshot.columns, strict=True):
            if streamed_column.jdbc_type in (JdbcType.CHAR, JdbcType.VARCHAR):
                assert streamed_column.charset == snapshot_column.charset, (group, streamed_column.name)
        assert streamed.primary_key == snapshot.primary_key, group
        assert streamed.default_charset == snapshot.default_charset, group


def test_show_create_after_alter_sequence_matches_the_streamed_model(
    mysql_server: LocalMySQLServer, unique_db: str
) -> None:
    parser = parser_for(mysql_server.flavor)
    statements = [
        "CREATE TABLE t (id INT NOT NULL, a VARCHAR(10), b INT DEFAULT 5, PRIMARY KEY (id)) CHARSET=utf8mb4",
        "ALTER TABLE t ADD COLUMN c DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) FIRST, "
        "MODIFY a VARCHAR(20) CHARACTER SET latin1 NOT NULL AFTER b",
        "ALTER TABLE t CHANGE b bee BIGINT UNSIGNED, ADD UNIQUE KEY (a)",
        "ALTER TABLE t ALTER bee SET DEFAULT 9",
        "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, a), RENAME COLUMN c TO created",
        "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, ADD COLUMN e ENUM('x','y') AFTER id",
        "RENAME TABLE t TO t2",
    ]
    model = SchemaModel()
    for statement in statements:
        mysql_server.execute(statement, database=unique_db)
        model = parser.parse(statement, model, unique_db).model
    streamed = table(model, f"{unique_db}.t2")
    show_create = mysql_server.query(f"SHOW CREATE TABLE `{unique_db}`.`t2`")[0][1]
    snapshot = table(parser.parse(show_create, SchemaModel(), unique_db), f"{unique_db}.t2")
    assert [
        (c.name, c.data_type, c.unsigned, c.optional, c.charset, c.has_default, c.default_expression)
        for c in streamed.columns
    ] == [
        (c.name, c.data_type, c.unsigned, c.optional, c.charset, c.has_default, c.default_expression)
        for c in snapshot.columns
    ]
    assert streamed.primary_key == snapshot.primary_key == ("id", "a")


MYSQL8_SHOW_CREATE = """CREATE TABLE `orders` (
  `id` bigint unsigned NOT NULL AUTO_INCREMENT,
  `customer_id` int NOT NULL,
  `flag` tinyint(1) NOT NULL DEFAULT '0',
  `status` enum('new','paid','shipped') COLLATE utf8mb4_bin NOT NULL DEFAULT 'new',
  `note` varchar(255) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL,
  `total` decimal(12,2) NOT NULL DEFAULT '0.00',
  `doc` json DEFAULT NULL,
  `created` datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  `updated` timestamp NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  `uuid` varchar(36) COLLATE utf8mb4_bin DEFAULT (uuid()),
  `total_x2` decimal(13,2) GENERATED ALWAYS AS ((`total` * 2)) VIRTUAL,
  `hidden` int DEFAULT NULL /*!80023 INVISIBLE */,
  `location` point NOT NULL /*!80003 SRID 4326 */,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uq_customer` (`customer_id`,`created`),
  KEY `idx_status` (`status`) USING BTREE COMMENT 'lookups',
  SPATIAL KEY `sp_location` (`location`),
  FULLTEXT KEY `ft_note` (`note`) /*!50100 WITH PARSER `ngram` */ ,
  CONSTRAINT `fk_customer` FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`) ON DELETE CASCADE,
  CONSTRAINT `chk_total` CHECK ((`total` >= 0))
) ENGINE=InnoDB AUTO_INCREMENT=1001 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci COMMENT='orders'
/*!50100 PARTITION BY RANGE (`id`)
(PARTITION p0 VALUES LESS THAN (1000) ENGINE = InnoDB,
 PARTITION p1 VALUES LESS THAN MAXVALUE ENGINE = InnoDB) */"""


def test_mysql8_show_create_table_format() -> None:
    r = parse(MYSQL8_SHOW_CREATE, database="shop", flavor="mysql")
    t = table(r, "shop.orders")
    assert t.default_charset == "utf8mb4"
    assert t.primary_key == ("id",)
    assert [
        (
            c.name,
            c.type_name,
            c.jdbc_type,
            c.length,
            c.scale,
            c.optional,
            c.charset,
            c.has_default,
            c.default_expression,
            c.auto_increment,
        )
        for c in t.columns
    ] == [
        ("id", "BIGINT UNSIGNED", JdbcType.BIGINT, None, None, False, None, False, None, True),
        ("customer_id", "INT", JdbcType.INTEGER, None, None, False, None, False, None, False),
        ("flag", "TINYINT", JdbcType.SMALLINT, 1, None, False, None, True, "0", False),
        ("status", "ENUM", JdbcType.CHAR, 1, None, False, "utf8mb4", True, "new", False),
        ("note", "VARCHAR", JdbcType.VARCHAR, 255, None, True, "latin1", False, None, False),
        ("total", "DECIMAL", JdbcType.DECIMAL, 12, 2, False, None, True, "0.00", False),
        ("doc", "JSON", JdbcType.OTHER, None, None, True, None, False, None, False),
        ("created", "DATETIME", JdbcType.TIMESTAMP, 3, None, False, None, True, "1970-01-01 00:00:00", False),
        (
            "updated",
            "TIMESTAMP",
            JdbcType.TIMESTAMP_WITH_TIMEZONE,
            None,
            None,
            True,
            None,
            True,
            "1970-01-01 00:00:00",
            True,
        ),
        ("uuid", "VARCHAR", JdbcType.VARCHAR, 36, None, True, "utf8mb4", True, None, False),
        ("total_x2", "DECIMAL", JdbcType.DECIMAL, 13, 2, True, None, False, None, False),
        ("hidden", "INT", JdbcType.INTEGER, None, None, True, None, False, None, False),
        ("location", "POINT", JdbcType.OTHER, None, None, False, None, False, None, False),
    ]
    assert column(r, "shop.orders.status").enum_values == ("new", "paid", "shipped")
    assert column(r, "shop.orders.total_x2").generation_expression == "(`total` * 2)"
    assert t.unique_keys == (("id",), ("customer_id", "created"))


def test_mysql57_show_create_table_format() -> None:
    r = parse(
        """CREATE TABLE `legacy` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `code` char(3) CHARACTER SET utf8 NOT NULL DEFAULT '',
  `amount` double(8,2) unsigned zerofill DEFAULT NULL,
  `born` year(4) DEFAULT NULL,
  `ts` timestamp NOT NULL DEFAULT '0000-00-00 00:00:00',
  PRIMARY KEY (`id`),
  KEY `code` (`code`)
) ENGINE=MyISAM AUTO_INCREMENT=7 DEFAULT CHARSET=latin1 ROW_FORMAT=DYNAMIC""",
        database="old",
    )
    assert [
        (c.name, c.type_name, c.length, c.scale, c.charset, c.default_expression)
        for c in table(r, "old.legacy").columns
    ] == [
        ("id", "INT", 11, None, None, None),
        ("code", "CHAR", 3, None, "utf8", ""),
        ("amount", "DOUBLE UNSIGNED ZEROFILL", 8, 2, None, None),
        ("born", "YEAR", 4, None, None, None),
        ("ts", "TIMESTAMP", None, None, None, "0000-00-00 00:00:00"),
    ]
    assert r.model.table(TableId("old", "legacy")) is not None


def test_specifications_of_one_alter_resolve_names_like_the_server(
    mysql_server: LocalMySQLServer, unique_db: str
) -> None:
    """DROP/CHANGE/RENAME COLUMN name the columns the table had before the statement (so one
    statement can swap two names); AFTER and ALTER COLUMN see the columns as changed so far."""
    parser = parser_for(mysql_server.flavor)
    statements = [
        "CREATE TABLE t (a INT, b BIGINT, c INT, PRIMARY KEY (a), UNIQUE KEY ub (b))",
        "ALTER TABLE t CHANGE a b INT NOT NULL, CHANGE b a BIGINT",
        "ALTER TABLE t RENAME COLUMN a TO z, RENAME COLUMN b TO a",
        "ALTER TABLE t DROP COLUMN c, CHANGE z c BIGINT",
        "ALTER TABLE t CHANGE c d INT, ADD COLUMN e INT AFTER d",
        "ALTER TABLE t ADD COLUMN f INT, ALTER COLUMN f SET DEFAULT 1",
        "ALTER TABLE t MODIFY d INT AFTER e, ADD COLUMN g INT AFTER d",
        "ALTER TABLE t DROP COLUMN g, ADD COLUMN g BIGINT FIRST",
    ]
    model = SchemaModel()
    for statement in statements:
        mysql_server.execute(statement, database=unique_db)
        model = parser.parse(statement, model, unique_db).model
        streamed = table(model, f"{unique_db}.t")
        show_create = mysql_server.query(f"SHOW CREATE TABLE `{unique_db}`.`t`")[0][1]
        snapshot = table(parser.parse(show_create, SchemaModel(), unique_db), f"{unique_db}.t")
        assert [(c.name, c.type_name, c.optional, c.default_expression) for c in streamed.columns] == [
            (c.name, c.type_name, c.optional, c.default_expression) for c in snapshot.columns
        ], statement
        assert streamed.primary_key == snapshot.primary_key, statement
        assert streamed.unique_keys == snapshot.unique_keys, statement


FLAVOR_SPECIFIC = {
    "mariadb": [
        "CREATE TABLE sv (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING",
        "CREATE TABLE sv2 (id INT, s BIGINT UNSIGNED GENERATED ALWAYS AS ROW START INVISIBLE, "
        "e BIGINT UNSIGNED GENERATED ALWAYS AS ROW END INVISIBLE, PERIOD FOR SYSTEM_TIME(s, e)) WITH SYSTEM VERSIONING",
        "CREATE TABLE inv (id INT, h INT INVISIBLE, c TEXT COMPRESSED, u UUID, i6 INET6, i4 INET4)",
        "CREATE TABLE per (id INT, d1 DATE, d2 DATE, PERIOD FOR p(d1, d2))",
        "CREATE OR REPLACE TABLE ck (a INT CHECK (a > 0), b VARCHAR(3) DEFAULT 'x' COMMENT 'hi') PAGE_CHECKSUM=1",
    ],
    "mysql": [
        "CREATE TABLE inv (id INT, h INT INVISIBLE, p POINT NOT NULL SRID 4326, j JSON, KEY ((lower(j->>'$.a'))))",
        "CREATE TABLE dflt (id INT, u VARCHAR(36) DEFAULT (uuid()), t DATETIME DEFAULT (now()))",
        "CREATE TABLE ck (a INT CHECK (a > 0) NOT ENFORCED, b VARCHAR(3) DEFAULT 'x' COMMENT 'hi')",
    ],
}


def test_flavor_specific_column_forms(mysql_server: LocalMySQLServer, unique_db: str) -> None:
    parser = parser_for(mysql_server.flavor)
    for statement in FLAVOR_SPECIFIC[mysql_server.flavor]:
        mysql_server.execute(statement, database=unique_db)
        name = statement.split("(")[0].split()[-1]
        streamed = table(parser.parse(statement, SchemaModel(), unique_db), f"{unique_db}.{name}")
        show_create = mysql_server.query(f"SHOW CREATE TABLE `{unique_db}`.`{name}`")[0][1]
        snapshot = table(parser.parse(show_create, SchemaModel(), unique_db), f"{unique_db}.{name}")
        assert [(c.name, c.optional, c.generation_expression is not None) for c in streamed.columns] == [
            (c.name, c.optional, c.generation_expression is not None) for c in snapshot.columns
        ], statement
        assert streamed.primary_key == snapshot.primary_key, statement
