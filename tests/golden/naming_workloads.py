"""Workloads of issue 43 part 1: topic naming strategies and schema/field name adjustment.

Each case is a ``workloads.ModeCase`` run like the issue-25 fidelity cases (tables created before the
connector starts, so the snapshot sees them; more created, filled, altered while it streams) and
recorded with real Debezium 3.6.3 (``python -m tests.golden.record_debezium --naming CASE``) into
``debezium/naming/<case>.jsonl``; ``test_golden_naming.py`` compares every record.

The tables and columns have the names the strategies and adjusters rewrite: an underscore (the escape
character of the unicode forms), a dash, a non-ASCII letter, a leading digit.
"""

from __future__ import annotations

from tests.golden.workloads import ModeCase

UNICODE_STRATEGY = "io.debezium.schema.DefaultUnicodeTopicNamingStrategy"
DEFAULT_STRATEGY = "io.debezium.schema.DefaultTopicNamingStrategy"

_TABLES = (
    "CREATE TABLE order_lines (id INT PRIMARY KEY, my_col INT, `my-col2` VARCHAR(5), `ü` INT, `9lives` INT)",
    "INSERT INTO order_lines VALUES (1, 2, 'a', 3, 4)",
    "CREATE TABLE `t-ü` (`k_ey` INT PRIMARY KEY, v VARCHAR(5))",
    "INSERT INTO `t-ü` VALUES (1, 'x')",
    "CREATE TABLE `1st` (id INT PRIMARY KEY, `_x` INT)",
    "INSERT INTO `1st` VALUES (1, 1)",
)
_STREAM = (
    "INSERT INTO order_lines VALUES (2, 5, 'b', 6, 7)",
    "UPDATE `t-ü` SET v = 'y' WHERE `k_ey` = 1",
    "BEGIN",
    "INSERT INTO `1st` VALUES (2, 2)",
    "DELETE FROM order_lines WHERE id = 1",
    "COMMIT",
    "CREATE TABLE `new_tbl-2` (id INT PRIMARY KEY, `a b` INT)",
    "INSERT INTO `new_tbl-2` VALUES (1, 1)",
    "ALTER TABLE `new_tbl-2` ADD COLUMN `c_d` INT",
    "INSERT INTO `new_tbl-2` VALUES (2, 2, 2)",
)


def _case(overrides: dict[str, str]) -> ModeCase:
    return ModeCase(
        {"provide.transaction.metadata": "true", **overrides},
        setup=_TABLES,
        stream=_STREAM,
        snapshot_data=True,
    )


NAMING_CASES: dict[str, ModeCase] = {
    # DefaultUnicodeTopicNamingStrategy with both adjusters in avro_unicode, another transaction topic.
    "unicode_avro_unicode": _case(
        {
            "topic.naming.strategy": UNICODE_STRATEGY,
            "schema.name.adjustment.mode": "avro_unicode",
            "field.name.adjustment.mode": "avro_unicode",
            "topic.transaction": "tx_log",
        }
    ),
    # The default strategy named explicitly, with another delimiter and a tiny topic cache; both
    # adjusters in avro.
    "default_avro": _case(
        {
            "topic.naming.strategy": DEFAULT_STRATEGY,
            "topic.delimiter": "_",
            "topic.cache.size": "1",
            "schema.name.adjustment.mode": "avro",
            "field.name.adjustment.mode": "avro",
        }
    ),
    # The unicode strategy alone (names adjusted: none), and field names only in avro.
    "unicode_fields_avro": _case(
        {"topic.naming.strategy": UNICODE_STRATEGY, "field.name.adjustment.mode": "avro"}
    ),
    # The heartbeat topic: <topic.heartbeat.prefix><topic.delimiter><topic.prefix>, or topic.heartbeat.name.
    "heartbeat_prefix_delimiter": ModeCase(
        {"heartbeat.interval.ms": "600000", "topic.heartbeat.prefix": "hb", "topic.delimiter": "-"},
        setup=("CREATE TABLE t (id INT PRIMARY KEY)",),
        heartbeat=True,
    ),
    "heartbeat_name": ModeCase(
        {
            "heartbeat.interval.ms": "600000",
            "topic.heartbeat.name": "shared-heartbeats",
            "topic.naming.strategy": UNICODE_STRATEGY,
        },
        setup=("CREATE TABLE t (id INT PRIMARY KEY)",),
        heartbeat=True,
    ),
}


def naming_db(case: str) -> str:
    return f"golden_naming_{case}"
