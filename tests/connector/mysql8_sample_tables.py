"""Table structures for the sample binlogs whose files do not describe their tables.

Six samples hold row events for tables that no CREATE TABLE in the file creates, with only MINIMAL
row metadata (no column names); a replay of them needs the structure from a schema history, as a user
replaying such archives would give one. The statements below are reconstructed from each file's
TABLE_MAP (column types, lengths, charsets; SIGNEDNESS where present) and from the statements the files
themselves quote (ROWS_QUERY events, row values): column names the files do not give are placeholders,
and ENUM/SET labels are chosen so the labels the quoted statements use get the indices the rows hold.
``percona-operator/binlog.000003``'s table is created in the file before it (``binlog.000002``): that
one is replayed after its predecessor instead.
"""

from __future__ import annotations

from collections.abc import Mapping

from ddl.history.record import HistoryRecord
from ddl.history.store import MemorySchemaHistory

# sample file -> ((database, CREATE TABLE statement), ...)
RECONSTRUCTED_TABLES: Mapping[str, tuple[tuple[str, str], ...]] = {
    # TABLE_MAP: one TIME(0) column (types [19], meta [0]).
    "rust_mysql_common/time_issue.000001": (("noria", "CREATE TABLE t (c0 TIME)"),),
    # TABLE_MAP: INT, BLOB (binary charset), CHAR of 8 bytes in utf8mb4, INT, INT; SIGNEDNESS 0x20
    # (MSB first: the third numeric column, c4, is unsigned).
    "rust_mysql_common/minimal_row_metadata.000001": (
        (
            "noria",
            "CREATE TABLE t1 (c0 INT, c1 BLOB, c2 CHAR(2) CHARACTER SET utf8mb4, c3 INT, c4 INT UNSIGNED)",
        ),
    ),
    # TABLE_MAP: INT, INT, DECIMAL(10,2) (meta 0x020A), SIGNEDNESS all signed.
    "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001": (
        ("test", "CREATE TABLE orders (id INT, c1 INT, amount DECIMAL(10,2))"),
    ),
    # TABLE_MAP inside the compressed payload: one INT column.
    "rust_mysql_common/transaction_compression.000001": (("test", "CREATE TABLE tb1 (c0 INT)"),),
    # TABLE_MAP inside the payload: INT, VARCHAR(1024 bytes), INT, 8 more VARCHARs of 1024/4096/2048
    # bytes, default charset utf8mb4 (collation 255); the names follow the row values (a film).
    "osheroff/mysql-bin.compressed": (
        (
            "demo",
            "CREATE TABLE movies (movie_id INT NOT NULL PRIMARY KEY, title VARCHAR(256), "
            "release_year INT, country VARCHAR(256), genres VARCHAR(256), actors VARCHAR(1024), "
            "directors VARCHAR(512), composers VARCHAR(256), screenwriters VARCHAR(256), "
            "cinematographer VARCHAR(256), production_companies VARCHAR(256)) "
            "DEFAULT CHARSET=utf8mb4",
        ),
    ),
    # TABLE_MAP inside the payloads: 20 columns, default charset utf8mb3 (collation 33) with the CHAR
    # column binary (63). The ROWS_QUERY events quote product_id, product_item_2, enum_field ('large'
    # is index 4 in the rows) and set_field ('c' is bit 2, 'd' bit 3).
    "apecloud/mysql-bin.000057": (
        (
            "a",
            "CREATE TABLE test_table_3 (product_id INT NOT NULL PRIMARY KEY, product_item VARCHAR(255), "
            "c2 DATE, c3 INT, c4 TEXT, c5 TIMESTAMP NULL, "
            "enum_field ENUM('tiny','small','medium','large'), set_field SET('a','b','c','d'), "
            "c8 BINARY(3), c9 JSON, product_item_2 VARCHAR(255), c11 DATE, c12 DATE, c13 INT, c14 TEXT, "
            "c15 TIMESTAMP NULL, c16 DATE, c17 INT, c18 TEXT, c19 TIMESTAMP NULL) "
            "DEFAULT CHARSET=utf8mb3",
        ),
    ),
}

# sample file -> the sample files replayed before it (same server, in order)
PRECEDING_FILES: Mapping[str, tuple[str, ...]] = {
    "percona-operator/binlog.000003": ("percona-operator/binlog.000002",),
}


def reconstructed_history(name: str) -> MemorySchemaHistory | None:
    """A schema history holding the reconstructed tables of sample ``name``; None if it needs none."""
    tables = RECONSTRUCTED_TABLES.get(name)
    if tables is None:
        return None
    records = [
        HistoryRecord(
            source={"server": "replay"},
            position={"file": "reconstructed", "pos": 4},
            ts_ms=0,
            ddl=statement,
            database_name=database,
        )
        for database, statement in tables
    ]
    return MemorySchemaHistory(records)
