"""The golden workloads, shared by the golden tests (our connector) and ``record_debezium`` (real Debezium).

Both sides run exactly these statements with exactly these connector properties, so the records can be
compared one for one. Nothing here needs the connector or Java.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from connector.config import ConnectorConfig
from connector.testing.local_server import MySQLServerHandle
from tests.connector.converter_specs import FAMILIES, Spec, charset_specs, create_sql

HERE = Path(__file__).resolve().parent
DEBEZIUM = HERE / "debezium"  # the recordings of real Debezium 3.6.3 (record_debezium.py)

# -- type families ------------------------------------------------------------------------------------

DB = "golden_types"

# Every representation mode value appears in at least one variant.
VARIANTS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "default": ({}, tuple(FAMILIES) + ("charsets",)),
    "double_precise_base64_connect": (
        {
            "decimal.handling.mode": "double",
            "bigint.unsigned.handling.mode": "precise",
            "binary.handling.mode": "base64",
            "time.precision.mode": "connect",
        },
        ("integers", "decimals", "binaries", "temporals"),
    ),
    "string_urlsafe_adaptive": (
        {
            "decimal.handling.mode": "string",
            "binary.handling.mode": "base64-url-safe",
            "time.precision.mode": "adaptive",
        },
        ("decimals", "binaries", "temporals"),
    ),
    # string_urlsafe_adaptive without time.precision.mode=adaptive, which Debezium 3.6.3 rejects
    # ("no longer supported"): so that decimal string and base64-url-safe binaries are compared with it.
    "string_urlsafe": (
        {"decimal.handling.mode": "string", "binary.handling.mode": "base64-url-safe"},
        ("decimals", "binaries"),
    ),
    "hex_no_adjuster": (
        {"binary.handling.mode": "hex", "enable.time.adjuster": "false"},
        ("binaries", "temporals", "more_numbers"),
    ),
}


def all_families(server: MySQLServerHandle) -> dict[str, list[Spec]]:
    return {**FAMILIES, "charsets": charset_specs(server)}


def _in_db(sql: str) -> str:
    return sql.replace("`conv_types`", f"`{DB}`")


def create_families(server: MySQLServerHandle, families: dict[str, list[Spec]]) -> None:
    """(Re)create the database with one table per family, filled with its rows."""
    server.execute(f"DROP DATABASE IF EXISTS `{DB}`", f"CREATE DATABASE `{DB}` CHARSET utf8mb4")
    statements = ["SET SESSION sql_mode=''"]
    for name, specs in families.items():
        statements += [_in_db(s) for s in create_sql(name, specs)]
    run_statements(server, statements)


def refill_statements(family_names: Sequence[str], families: dict[str, list[Spec]]) -> list[str]:
    """The streaming workload: empty every captured table and insert the same rows again."""
    refill = ["SET SESSION sql_mode=''"]
    for name in family_names:
        refill.append(f"DELETE FROM `{DB}`.`{name}`")
        refill += [_in_db(s) for s in create_sql(name, families[name]) if s.startswith("INSERT")]
    return refill


def variant_properties(variant: str) -> dict[str, str]:
    """The connector properties of a variant, beyond the server's and the stores'."""
    overrides, family_names = VARIANTS[variant]
    return {
        "topic.prefix": f"golden_{variant}",
        "database.include.list": DB,
        "table.include.list": ",".join(f"{DB}\\.{n}" for n in family_names),
        **overrides,
    }


def golden_config(server: MySQLServerHandle, tmp_path: Path, properties: dict[str, str]) -> ConnectorConfig:
    """Our connector's configuration for a golden run: the workload's properties, state in memory."""
    return ConnectorConfig.from_mapping(
        server.connector_properties(
            **{
                "data.dir": str(tmp_path),
                "offset.storage": "memory",
                "schema.history.internal": "memory",
                "poll.interval.ms": "50",
                **properties,
            }
        )
    )


def run_statements(server: MySQLServerHandle, statements: Sequence[str], database: str | None = None) -> None:
    """Run statements on one connection, in order (a BEGIN ... COMMIT spans several of them)."""
    with server.connect(database) as conn, conn.cursor() as cur:
        for sql in statements:
            cur.execute(sql)


# -- modes ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModeCase:
    """One mode workload: ``setup`` runs in the case's database before the connector starts (so the
    snapshot sees it), ``stream`` on one connection once the snapshot is done; ``heartbeat`` asks for
    one more heartbeat at the end (our engine triggers it directly)."""

    overrides: dict[str, str]
    setup: tuple[str, ...]
    stream: tuple[str, ...] = ()
    heartbeat: bool = False
    snapshot_data: bool = False

    def properties(self, db: str) -> dict[str, str]:
        return {
            "topic.prefix": "golden",
            "database.include.list": db,
            **{k: v.format(db=db) for k, v in self.overrides.items()},
        }


def mode_db(case: str) -> str:
    return f"golden_modes_{case}"


CASES: dict[str, ModeCase] = {
    "transaction_metadata": ModeCase(
        {"provide.transaction.metadata": "true", "skipped.operations": "none"},
        setup=(
            "CREATE TABLE orders (id INT PRIMARY KEY, item VARCHAR(20), qty INT NOT NULL)",
            "CREATE TABLE order_lines (order_id INT, n INT, sku VARCHAR(8), PRIMARY KEY (order_id, n))",
        ),
        stream=(
            "BEGIN",
            "INSERT INTO orders VALUES (1, 'pen', 2)",
            "INSERT INTO order_lines VALUES (1, 1, 'P-1'), (1, 2, 'P-2')",
            "UPDATE orders SET qty = 3 WHERE id = 1",
            "DELETE FROM order_lines WHERE n = 2",
            "COMMIT",
            "TRUNCATE TABLE order_lines",
        ),
    ),
    "heartbeat": ModeCase(
        {"heartbeat.interval.ms": "600000"},
        setup=("CREATE TABLE t (id INT PRIMARY KEY)",),
        heartbeat=True,
    ),
    "column_mappers": ModeCase(
        {
            "column.mask.with.4.chars": "{db}.people.name,{db}.people.age",
            "column.mask.hash.SHA-256.with.salt.CzQMA0cB5K": "{db}.people.email",
            "column.mask.hash.v2.MD5.with.salt.pepper": "{db}.people.code",
            "column.truncate.to.5.chars": "{db}.people.bio,{db}.people.photo",
            "column.propagate.source.type": "{db}.people.note",
            "message.key.columns": "{db}.people:email",
        },
        setup=(
            "CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(40), email VARCHAR(100) NOT NULL, "
            "code CHAR(8), bio TEXT, photo VARBINARY(16), age INT, note VARCHAR(30))",
            "INSERT INTO people VALUES (1, 'Ann Lee', 'ann@example.com', 'AB-12', 'Likes 😀 and long walks', "
            "X'00010203040506', 41, 'first')",
            "INSERT INTO people VALUES (2, NULL, 'bo@example.com', NULL, NULL, NULL, NULL, NULL)",
        ),
        stream=("UPDATE people SET email = 'ann@example.org', bio = 'Short' WHERE id = 1",),
        snapshot_data=True,
    ),
    # Savepoints in InnoDB-only transactions: the binlog holds each SAVEPOINT statement (a rollback to
    # one leaves no trace), which must not end the transaction.
    "savepoints": ModeCase(
        {"provide.transaction.metadata": "true"},
        setup=("CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",),
        stream=(
            "BEGIN",
            "INSERT INTO t VALUES (1, 1)",
            "SAVEPOINT a",
            "INSERT INTO t VALUES (2, 2)",
            "COMMIT",
            "BEGIN",
            "INSERT INTO t VALUES (10, 1)",
            "SAVEPOINT a",
            "INSERT INTO t VALUES (11, 2)",
            "ROLLBACK TO SAVEPOINT a",
            "INSERT INTO t VALUES (12, 2)",
            "UPDATE t SET v = 3 WHERE id = 1",
            "COMMIT",
        ),
    ),
    # binlog.buffer.size: a savepoint rolled back in a transaction that also wrote a MyISAM table; the
    # binlog holds the rolled-back row (id 4) followed by ROLLBACK TO (see test_golden_modes GHOSTS).
    "savepoint_rollback_buffered": ModeCase(
        {"provide.transaction.metadata": "true", "binlog.buffer.size": "100"},
        setup=(
            "CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
            "CREATE TABLE m (id INT PRIMARY KEY, v INT) ENGINE=MyISAM",
        ),
        stream=(
            "BEGIN",
            "INSERT INTO t VALUES (3, 3)",
            "SAVEPOINT a",
            "INSERT INTO t VALUES (4, 4)",
            "INSERT INTO m VALUES (2, 2)",
            "ROLLBACK TO SAVEPOINT a",
            "INSERT INTO t VALUES (5, 5)",
            "COMMIT",
            "INSERT INTO t VALUES (6, 6)",
        ),
    ),
    # skip.messages.without.change: an update of an excluded column only is not emitted.
    "skip_unchanged": ModeCase(
        {
            "skip.messages.without.change": "true",
            "column.exclude.list": "{db}.items.note",
            "streaming.delay.ms": "500",
        },
        setup=(
            "CREATE TABLE items (id INT PRIMARY KEY, qty INT, note VARCHAR(20))",
            "INSERT INTO items VALUES (1, 1, 'a'), (2, 2, 'b')",
        ),
        stream=(
            "UPDATE items SET note = 'changed' WHERE id = 1",
            "UPDATE items SET qty = 5 WHERE id = 1",
            "UPDATE items SET qty = 6, note = 'both' WHERE id = 2",
            "UPDATE items SET note = 'again' WHERE id > 0",
            "INSERT INTO items VALUES (3, 3, 'c')",
            "DELETE FROM items WHERE id = 3",
        ),
        snapshot_data=True,
    ),
    # Schema changes beyond the snapshot: one table learned from the snapshot (SHOW CREATE TABLE), one
    # from a streamed CREATE TABLE, both with a MariaDB JSON column and a BIGINT UNSIGNED default at the
    # top of its range (bigint.unsigned.handling.mode=long); then streamed ALTER and DROP TABLE.
    "schema_changes": ModeCase(
        {},
        setup=(
            "CREATE TABLE snap (id INT PRIMARY KEY, js JSON, bu BIGINT UNSIGNED DEFAULT 18446744073709551615)",
            "INSERT INTO snap VALUES (1, '{\"a\": 1}', DEFAULT)",
        ),
        stream=(
            "CREATE TABLE streamed (id INT PRIMARY KEY, js JSON, bu BIGINT UNSIGNED DEFAULT 18446744073709551615)",
            "INSERT INTO streamed VALUES (1, '{\"a\": 1}', DEFAULT)",
            "INSERT INTO snap VALUES (2, '[]', 5)",
            "ALTER TABLE streamed ADD COLUMN note VARCHAR(10)",
            "INSERT INTO streamed VALUES (2, NULL, 7, 'x')",
            "DROP TABLE streamed",
        ),
        snapshot_data=True,
    ),
}


# -- transforms (single message transforms, connector/transforms) --------------------------------------

UNWRAP = "io.debezium.transforms.ExtractNewRecordState"
KAFKA_SMT = "org.apache.kafka.connect.transforms."

_ITEMS = (
    "CREATE TABLE items (id INT PRIMARY KEY, kind VARCHAR(10) NOT NULL, qty INT DEFAULT 7, note VARCHAR(20))",
    "INSERT INTO items VALUES (1, 'tool', 3, 'a'), (2, 'food', NULL, NULL)",
    "CREATE TABLE audit (n INT, msg VARCHAR(20))",
    "INSERT INTO audit VALUES (1, 'x')",
)
_ITEMS_STREAM = (
    "INSERT INTO items VALUES (3, 'tool', 5, 'b')",
    "UPDATE items SET qty = 4 WHERE id = 1",
    "UPDATE items SET id = 10 WHERE id = 2",
    "DELETE FROM items WHERE id = 3",
    "INSERT INTO audit VALUES (2, 'y')",
    "DELETE FROM audit",
    "ALTER TABLE items ADD COLUMN extra INT",
    "INSERT INTO items VALUES (4, 'food', 1, 'c', 9)",
)


def _items_case(overrides: dict[str, str]) -> ModeCase:
    return ModeCase(overrides, setup=_ITEMS, stream=_ITEMS_STREAM)


def _unwrap(**options: str) -> dict[str, str]:
    return {
        "transforms": "unwrap",
        "transforms.unwrap.type": UNWRAP,
        **{f"transforms.unwrap.{k.replace('_', '.')}": v for k, v in options.items()},
    }


TRANSFORM_CASES: dict[str, ModeCase] = {
    "unwrap_default": _items_case(_unwrap()),
    "unwrap_rewrite": _items_case(
        {
            **_unwrap(delete_tombstone_handling_mode="rewrite", add_headers="db,op,table"),
            "transforms.unwrap.add.fields": "op,table,source.ts_ms,ts_ms",
        }
    ),
    "unwrap_rewrite_with_tombstone": _items_case(
        {
            **_unwrap(delete_tombstone_handling_mode="rewrite-with-tombstone", route_by_field="kind"),
            # route.by.field needs the field in every record (Debezium fails on audit's: DataException)
            "table.include.list": "{db}\\.items",
            "transforms.unwrap.add.fields": "op:OPERATION,db,source.snapshot",
            "transforms.unwrap.add.fields.prefix": "meta_",
            "transforms.unwrap.add.headers": "op,source.table",
            "transforms.unwrap.add.headers.prefix": "h_",
        }
    ),
    "unwrap_truncate": ModeCase(
        {**_unwrap(add_fields="op"), "skipped.operations": "none"},
        setup=("CREATE TABLE items (id INT PRIMARY KEY, v INT)", "INSERT INTO items VALUES (1, 1)"),
        stream=("INSERT INTO items VALUES (2, 2)", "TRUNCATE TABLE items", "INSERT INTO items VALUES (3, 3)"),
    ),
    "unwrap_drop": _items_case(_unwrap(delete_tombstone_handling_mode="drop")),
    "unwrap_delete_to_tombstone": _items_case(_unwrap(delete_tombstone_handling_mode="delete-to-tombstone")),
    # Debezium 2.x options (removed in 3.0): what does 3.6 do with a pasted 2.x configuration?
    "unwrap_legacy_options": _items_case(
        {
            **_unwrap(),
            "transforms.unwrap.drop.tombstones": "false",
            "transforms.unwrap.delete.handling.mode": "rewrite",
        }
    ),
    "read_to_insert": _items_case(
        {
            "transforms": "snapshotasinsert",
            "transforms.snapshotasinsert.type": "io.debezium.connector.mysql.transforms.ReadToInsertEvent",
        }
    ),
    "kafka_value_smts": _items_case(
        {
            "transforms": "unwrap,dropAudit,route,replace,insert",
            "transforms.unwrap.type": UNWRAP,
            "transforms.dropAudit.type": KAFKA_SMT + "Filter",
            "transforms.dropAudit.predicate": "isAudit",
            "transforms.route.type": KAFKA_SMT + "RegexRouter",
            "transforms.route.regex": "golden\\.([a-z_]+)\\.items",
            "transforms.route.replacement": "items-from-$1",
            "transforms.replace.type": KAFKA_SMT + "ReplaceField$Value",
            "transforms.replace.exclude": "note",
            "transforms.replace.renames": "qty:quantity,kind:category",
            "transforms.insert.type": KAFKA_SMT + "InsertField$Value",
            "transforms.insert.static.field": "origin",
            "transforms.insert.static.value": "mysql",
            "transforms.insert.topic.field": "topic_name",
            "predicates": "isAudit",
            "predicates.isAudit.type": KAFKA_SMT + "predicates.TopicNameMatches",
            "predicates.isAudit.pattern": ".*\\.audit",
        }
    ),
    "kafka_key_smts": _items_case(
        {
            "transforms": "dropTombstones,dropKeyChanges,onlyItems,valueToKey,extractKey,include",
            "transforms.dropTombstones.type": KAFKA_SMT + "Filter",
            "transforms.dropTombstones.predicate": "tombstone",
            "transforms.dropKeyChanges.type": KAFKA_SMT + "Filter",
            "transforms.dropKeyChanges.predicate": "keyChange",
            "transforms.onlyItems.type": KAFKA_SMT + "Filter",
            "transforms.onlyItems.predicate": "items",
            "transforms.onlyItems.negate": "true",
            "transforms.valueToKey.type": KAFKA_SMT + "ValueToKey",
            "transforms.valueToKey.fields": "op,ts_ms",
            "transforms.extractKey.type": KAFKA_SMT + "ExtractField$Key",
            "transforms.extractKey.field": "op",
            "transforms.include.type": KAFKA_SMT + "ReplaceField$Value",
            "transforms.include.include": "op,after",
            "predicates": "tombstone,keyChange,items",
            "predicates.tombstone.type": KAFKA_SMT + "predicates.RecordIsTombstone",
            "predicates.keyChange.type": KAFKA_SMT + "predicates.HasHeaderKey",
            "predicates.keyChange.name": "__debezium.newkey",
            "predicates.items.type": KAFKA_SMT + "predicates.TopicNameMatches",
            "predicates.items.pattern": ".*\\.items",
        }
    ),
    "logical_router": ModeCase(
        {
            "transforms": "reroute",
            "transforms.reroute.type": "io.debezium.transforms.ByLogicalTableRouter",
            "transforms.reroute.topic.regex": "(.*)\\.shard_[0-9]+",
            "transforms.reroute.topic.replacement": "$1.shards",
        },
        setup=(
            "CREATE TABLE shard_1 (id INT PRIMARY KEY, v VARCHAR(10))",
            "CREATE TABLE shard_2 (id INT PRIMARY KEY, v VARCHAR(10))",
            "INSERT INTO shard_1 VALUES (1, 'a')",
            "INSERT INTO shard_2 VALUES (1, 'b')",
        ),
        stream=(
            "INSERT INTO shard_2 VALUES (2, 'c')",
            "UPDATE shard_1 SET v = 'z' WHERE id = 1",
            "DELETE FROM shard_2 WHERE id = 1",
        ),
    ),
    "logical_router_key_options": ModeCase(
        {
            "transforms": "reroute",
            "transforms.reroute.type": "io.debezium.transforms.ByLogicalTableRouter",
            "transforms.reroute.topic.regex": "(.*)\\.shard_([0-9]+)",
            "transforms.reroute.topic.replacement": "$1.all_shards",
            "transforms.reroute.key.field.name": "shard",
            "transforms.reroute.key.field.regex": "(.*)\\.shard_([0-9]+)",
            "transforms.reroute.key.field.replacement": "$2",
        },
        setup=(
            "CREATE TABLE shard_1 (id INT PRIMARY KEY, v VARCHAR(10))",
            "CREATE TABLE shard_2 (id INT PRIMARY KEY, v VARCHAR(10))",
            "INSERT INTO shard_1 VALUES (1, 'a')",
        ),
        stream=("INSERT INTO shard_2 VALUES (5, 'c')", "DELETE FROM shard_1 WHERE id = 1"),
    ),
    "logical_router_no_key_enforcement": ModeCase(
        {
            "transforms": "reroute",
            "transforms.reroute.type": "io.debezium.transforms.ByLogicalTableRouter",
            "transforms.reroute.topic.regex": "(.*)\\.shard_[0-9]+",
            "transforms.reroute.topic.replacement": "$1.shards",
            "transforms.reroute.key.enforce.uniqueness": "false",
        },
        setup=(
            "CREATE TABLE shard_1 (id INT PRIMARY KEY, v VARCHAR(10))",
            "INSERT INTO shard_1 VALUES (1, 'a')",
        ),
        stream=("INSERT INTO shard_1 VALUES (2, 'c')",),
    ),
}


def transform_db(case: str) -> str:
    return f"golden_tf_{case}"


# -- custom converters (``converters=...``), recorded and compared like the transforms ------------------

BINLOG_CONVERTERS = "io.debezium.connector.binlog.converters."

_FLAGS = (
    "CREATE TABLE flags (id INT PRIMARY KEY, b TINYINT(1), b2 TINYINT(2), u TINYINT(1) UNSIGNED, "
    "nn BOOLEAN NOT NULL DEFAULT 1, plain TINYINT)",
    "INSERT INTO flags VALUES (1, 1, 1, 1, 0, 1), (2, 0, 2, 0, 1, 0), (3, NULL, NULL, NULL, DEFAULT, NULL)",
)
_FLAGS_STREAM = (
    "INSERT INTO flags VALUES (4, -1, 5, 1, 0, 7)",
    "UPDATE flags SET b = 1, b2 = 0 WHERE id = 2",
    "DELETE FROM flags WHERE id = 1",
    "ALTER TABLE flags ADD COLUMN late TINYINT(1) DEFAULT 1",
    "INSERT INTO flags (id, b) VALUES (5, 1)",
)

_SINK_TYPES = (
    "CREATE TABLE sinky (id INT PRIMARY KEY, b BOOLEAN DEFAULT 0, r REAL, f FLOAT(7,2), "
    "s VARCHAR(12) CHARACTER SET latin1, t TEXT, c CHAR(3) DEFAULT 'x', n INT)",
    "INSERT INTO sinky VALUES (1, 1, 1.5, 2.25, 'abc', 'text', 'ab', 3), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
)
_SINK_TYPES_STREAM = (
    "INSERT INTO sinky VALUES (3, 0, -0.5, 1e3, 'é', 'tt', 'zz', 4)",
    "UPDATE sinky SET r = 2.5 WHERE id = 1",
)

TRANSFORM_CASES.update(
    {
        "converter_tinyint_boolean": ModeCase(
            {
                "converters": "boolean",
                "boolean.type": BINLOG_CONVERTERS + "TinyIntOneToBooleanConverter",
                "boolean.selector": "{db}\\.flags\\..*",
            },
            setup=_FLAGS,
            stream=_FLAGS_STREAM,
        ),
        "converter_tinyint_boolean_no_length_check": ModeCase(
            {
                "converters": "boolean",
                "boolean.type": BINLOG_CONVERTERS + "TinyIntOneToBooleanConverter",
                "boolean.selector": ".*\\.b2,.*\\.plain",
                "boolean.length.checker": "false",
            },
            setup=_FLAGS,
            stream=_FLAGS_STREAM,
        ),
        "converter_jdbc_sink_types": ModeCase(
            {
                "converters": "jdbc",
                "jdbc.type": BINLOG_CONVERTERS + "JdbcSinkDataTypesConverter",
                "jdbc.selector.boolean": ".*\\.sinky\\.b",
                "jdbc.selector.real": ".*\\.sinky\\.(r|f)",
                "jdbc.selector.string": ".*\\.sinky\\.(s|t|c)",
            },
            setup=_SINK_TYPES,
            stream=_SINK_TYPES_STREAM,
        ),
        "converter_jdbc_sink_types_double": ModeCase(
            {
                "converters": "jdbc",
                "jdbc.type": BINLOG_CONVERTERS + "JdbcSinkDataTypesConverter",
                "jdbc.selector.real": ".*\\.sinky\\.(r|f)",
                "jdbc.treat.real.as.double": "false",
            },
            setup=_SINK_TYPES,
            stream=_SINK_TYPES_STREAM,
        ),
    }
)


# -- issue 25: defaults, time zones, names, keys (the server at a non-UTC zone) -------------------------

# The fidelity cases run on a server of their own at this zone, so that every TIMESTAMP default, DDL text
# and zero-date fallback would show a shift between the snapshot's and the stream's reading.
FIDELITY_SERVER_OPTIONS = ("--default-time-zone=-11:00",)

_DEFAULTS_DDL = (
    "CREATE TABLE {t} (id INT PRIMARY KEY, "
    "k TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP, "
    "ts TIMESTAMP NOT NULL DEFAULT '1970-01-02 00:00:00', "
    "b BIT(25) DEFAULT b'10110000100001111', "
    "b8 BIT(8) NOT NULL DEFAULT b'101', "
    "f1 FLOAT DEFAULT 5.6, "
    "f2 FLOAT(7,2) DEFAULT 5.6, "
    "d1 DOUBLE DEFAULT 5.6, "
    "modified DATETIME DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, "
    "created DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), "
    "g TIME DEFAULT '0000-00-00 01:00:00.000', "
    "g2 TIME(3) NOT NULL DEFAULT '-12:30:00.5', "
    'dz DATE DEFAULT "0000-00-00", '
    "q VARCHAR(10) DEFAULT 'it''s', "
    "dtz DATETIME NOT NULL DEFAULT '0000-00-00 00:00:00')"
)


# One column per type family with a literal default; rows with NULLs (written as the default by the
# JSON converter where there is one), with defaults, and with values.
_FAMILY_DEFAULTS_DDL = (
    "CREATE TABLE {t} (id INT PRIMARY KEY, "
    "ti TINYINT DEFAULT -5, tu TINYINT UNSIGNED DEFAULT '200', si SMALLINT DEFAULT 1.6, "
    "mi MEDIUMINT UNSIGNED DEFAULT 16777215, i INT DEFAULT -2147483648, iu INT UNSIGNED DEFAULT 4294967295, "
    "bi BIGINT DEFAULT -9223372036854775808, bu BIGINT UNSIGNED DEFAULT 18446744073709551615, "
    "bo BOOLEAN DEFAULT TRUE, b1 BIT(1) DEFAULT b'1', b64 BIT(64) DEFAULT b'1', "
    "de DECIMAL(10,2) DEFAULT 1.5, de0 DECIMAL(5,0) DEFAULT '-3', "
    "fl FLOAT DEFAULT 1e10, fs FLOAT DEFAULT 0.1, db DOUBLE DEFAULT -2.5e10, dd DOUBLE(8,3) DEFAULT 1.0005, "
    "yr YEAR DEFAULT 69, dt DATE DEFAULT '2020-02-29', dtt DATE DEFAULT '2020-01-01 10:00:00', "
    "dt6 DATETIME(6) DEFAULT '2020-01-01 10:00:00.123456', dt3 DATETIME(3) DEFAULT '2020-01-01 10:00:00.5', "
    "tsf TIMESTAMP(3) NULL DEFAULT '2020-01-01 10:00:00.5', tsz TIMESTAMP NULL DEFAULT '0000-00-00 00:00:00', "
    "tm6 TIME(6) DEFAULT '-10:00:00.000001', tm0 TIME DEFAULT 3600, "
    "ch CHAR(3) DEFAULT 'ab', vc VARCHAR(10) DEFAULT _utf8mb4'ü' COLLATE utf8mb4_bin, "
    "tx TEXT DEFAULT 'text', bn BINARY(4) DEFAULT 'ab', vb VARBINARY(4) DEFAULT x'0102', "
    "en ENUM('x', 'y') DEFAULT 'y', st SET('a', 'b', 'c') DEFAULT 'a,c', ee ENUM('x', 'y') NOT NULL)"
)
_FAMILY_DEFAULTS_ROWS = (
    "INSERT INTO {t} (id) VALUES (1)",
    "INSERT INTO {t} VALUES (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, 'x')",
)


def _family_defaults(t: str) -> tuple[str, ...]:
    return (_FAMILY_DEFAULTS_DDL.format(t=t), *(sql.format(t=t) for sql in _FAMILY_DEFAULTS_ROWS))


def _defaults_rows(t: str) -> tuple[str, ...]:
    # Fixed values for the columns whose server default is "now", so both sides see the same rows.
    now = "modified, created"
    return (
        f"INSERT INTO {t} (id, k, {now}) VALUES (1, NULL, '2020-01-01 10:00:00', '2020-01-01 10:00:00')",
        f"INSERT INTO {t} (id, k, b, f1, g, dz, {now}) VALUES "
        f"(2, '2021-06-01 12:00:00', NULL, NULL, NULL, NULL, NULL, '2020-01-01 10:00:00')",
        f"INSERT INTO {t} (id, k, ts, dtz, {now}) VALUES "
        f"(3, '1999-12-31 23:59:59', '0000-00-00 00:00:00', '0000-00-00 00:00:00', NULL, '2020-01-01 10:00:00')",
        f"INSERT INTO {t} (id, k, b, b8, f1, f2, d1, g, g2, dz, {now}) VALUES (4, NULL, b'1', b'0', 1.25, 2.5, "
        f"0.1, '838:59:59', '-838:59:59', '2000-02-29', '2020-01-01 10:00:00', '2020-01-01 10:00:00')",
    )


_NAMES = ("dbz5743中文", "special\"[`]$'", "ümlaut-täble")
_ODD_SNAPSHOT = (
    "CREATE TABLE cs (id INT PRIMARY KEY, c VARCHAR(10) CHARACTER SET 'utf8', l VARCHAR(5) CHARSET \"latin1\", "
    "t TEXT) DEFAULT CHARSET = 'utf8'",
    "CREATE TABLE en (id INT PRIMARY KEY, e ENUM('it''s', 'a\\'b', 'c,d', 'e'))",
    "CREATE TABLE si (id INT PRIMARY KEY, x TINYINT SIGNED, y INT(4) SIGNED DEFAULT -1)",
)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _name_tables(suffix: str) -> tuple[str, ...]:
    out: list[str] = []
    for name in _NAMES:
        t = _quoted(name + suffix)
        out += [f"CREATE TABLE {t} (id INT PRIMARY KEY, v VARCHAR(10))", f"INSERT INTO {t} VALUES (1, 'x')"]
    return tuple(out)


def _odd_tables(suffix: str) -> tuple[str, ...]:
    out: list[str] = []
    for sql in _ODD_SNAPSHOT:
        name = sql.split()[2]
        out.append(sql.replace(f"TABLE {name} ", f"TABLE {name}{suffix} "))
    out += [
        f"INSERT INTO cs{suffix} VALUES (1, 'é', 'ü', 'ß')",
        f"INSERT INTO en{suffix} VALUES (1, 'it''s'), (2, 'a''b'), (3, 'c,d')",
        f"INSERT INTO si{suffix} VALUES (1, -128, DEFAULT)",
    ]
    return tuple(out)


_TIME_KEY = "CREATE TABLE tk (c1 TIME(2) PRIMARY KEY, v INT)"
_INVALID_DATES = "CREATE TABLE {t} (id INT PRIMARY KEY, d DATE, dt DATETIME, dn DATE NOT NULL, n INT)"

FIDELITY_CASES: dict[str, ModeCase] = {
    # Column defaults of every kind named in issue 25, learned from the snapshot (snap) and from a
    # streamed CREATE TABLE (streamed); rows with NULLs, defaults, zero dates; an update.
    "defaults": ModeCase(
        {},
        setup=(
            "SET SESSION sql_mode=''",
            _DEFAULTS_DDL.format(t="snap"),
            *_defaults_rows("snap"),
            *_family_defaults("snap_families"),
        ),
        stream=(
            "SET SESSION sql_mode=''",
            _DEFAULTS_DDL.format(t="streamed"),
            *_defaults_rows("streamed"),
            "INSERT INTO snap (id, k, modified, created) VALUES (5, NULL, '2020-01-01 10:00:00', '2020-01-01 10:00:00')",
            "UPDATE snap SET f1 = 7.5, modified = '2021-01-01 00:00:00' WHERE id = 1",
            # Double-quoted string literals in streamed DDL (Debezium's ddl text shows them single-quoted).
            'CREATE TABLE dq (id INT PRIMARY KEY, a VARCHAR(10) DEFAULT "it\'s", b VARCHAR(10) DEFAULT "x" '
            'COMMENT "n\\"o", e ENUM("p", \'q\') DEFAULT "p", d DATE DEFAULT "2020-01-01")',
            'ALTER TABLE dq ALTER COLUMN b SET DEFAULT "y"',
            "INSERT INTO dq (id) VALUES (1)",
            *_family_defaults("streamed_families"),
        ),
        snapshot_data=True,
    ),
    # The type-family defaults again under the other representation modes.
    "defaults_modes": ModeCase(
        {
            "time.precision.mode": "connect",
            "decimal.handling.mode": "string",
            "binary.handling.mode": "hex",
            "bigint.unsigned.handling.mode": "precise",
        },
        setup=("SET SESSION sql_mode=''", *_family_defaults("snap_families")),
        stream=("SET SESSION sql_mode=''", *_family_defaults("streamed_families")),
        snapshot_data=True,
    ),
    # Table names that need Debezium's topic/schema name sanitising and identifier quoting.
    "names": ModeCase({}, setup=_name_tables(""), stream=_name_tables("_s"), snapshot_data=True),
    # The four Debezium oddities of issue 25: multi-table DROP TABLE, quoted charset names, an ENUM
    # member with an escaped quote, TINYINT SIGNED.
    "oddities": ModeCase(
        {},
        setup=_odd_tables(""),
        stream=(
            *_odd_tables("_s"),
            "CREATE TABLE t1 (id INT PRIMARY KEY)",
            "CREATE TABLE t2 (id INT PRIMARY KEY)",
            "CREATE TABLE t3 (id INT PRIMARY KEY)",
            "CREATE TABLE t4 (id INT PRIMARY KEY)",
            "INSERT INTO t1 VALUES (1)",
            "DROP TABLE t1,t2,t3,t4",
            "INSERT INTO en VALUES (4, 'e')",
            # Quoted charset names in other places of the grammar.
            "ALTER TABLE cs_s ADD COLUMN d VARCHAR(3) CHARACTER SET 'utf8'",
            "ALTER TABLE cs_s MODIFY l VARCHAR(5) CHARACTER SET 'utf8mb4'",
            "ALTER TABLE cs_s DEFAULT CHARACTER SET = 'latin1'",
            "ALTER TABLE cs_s ADD COLUMN e VARCHAR(3)",
            "INSERT INTO cs_s (id, c, d, e) VALUES (2, 'a', 'b', 'c')",
            "ALTER TABLE cs_s CONVERT TO CHARACTER SET 'utf8'",
            "INSERT INTO cs_s (id, c, d, e) VALUES (3, 'a', 'b', 'c')",
            "ALTER DATABASE golden_fid_oddities CHARACTER SET 'latin1'",
            "CREATE DATABASE IF NOT EXISTS golden_fid_oddities",
            "CREATE TABLE cq (id INT PRIMARY KEY, c VARCHAR(5))",
            "INSERT INTO cq VALUES (1, 'x')",
            "CREATE TABLE c1 (id INT PRIMARY KEY, c VARCHAR(5)) CHARACTER SET = 'utf8'",
            "CREATE TABLE c2 (id INT PRIMARY KEY, c VARCHAR(5)) CHARSET 'utf8'",
            "CREATE TABLE c3 (id INT PRIMARY KEY, c VARCHAR(5) COLLATE 'utf8mb3_bin')",
            "CREATE TABLE c4 (id INT PRIMARY KEY, c VARCHAR(5)) COLLATE 'utf8mb3_bin'",
            "CREATE TABLE c5 (id INT PRIMARY KEY, c CHAR(3) CHARACTER SET 'ucs2', v VARCHAR(4) BINARY CHARACTER SET 'utf8')",
            "CREATE TABLE c6 (id INT PRIMARY KEY, c VARCHAR(5)) DEFAULT CHARACTER SET 'utf8' COLLATE 'utf8mb3_general_ci'",
            "ALTER TABLE c1 CHARACTER SET 'latin1'",
            'ALTER TABLE c1 MODIFY c VARCHAR(5) CHARACTER SET "latin1"',
            "ALTER TABLE c2 ADD COLUMN d VARCHAR(5) CHARACTER SET `utf8`",
        ),
        snapshot_data=True,
    ),
    # event.converting.failure.handling.mode: dates that are not calendar dates (ALLOW_INVALID_DATES),
    # in the snapshot and streamed, nullable and NOT NULL, under each mode (warn is the default).
    **{
        f"invalid_dates_{mode}": ModeCase(
            {"event.converting.failure.handling.mode": mode},
            setup=(
                "SET SESSION sql_mode='ALLOW_INVALID_DATES'",
                _INVALID_DATES.format(t="snap"),
                "INSERT INTO snap VALUES (1, '2020-02-31', '2021-04-31 10:00:00', '2020-01-01', 1)",
                "INSERT INTO snap VALUES (2, '2020-03-01', '2021-05-01 10:00:00', '2020-02-30', 2)",
            ),
            # Debezium stops at the first streamed invalid date whatever the mode (its binlog reader
            # cannot deserialize it); what it emits after that is a matter of timing, so nothing follows.
            stream=(
                "SET SESSION sql_mode='ALLOW_INVALID_DATES'",
                "INSERT INTO snap VALUES (3, '2020-02-30', '2021-06-31 10:00:00', '2020-01-01', 3)",
            ),
            snapshot_data=True,
        )
        for mode in ("warn", "skip", "fail")
    },
    # A TIME key beyond 24 h with time.precision.mode=connect: in the snapshot, and streamed.
    "time_key_snapshot": ModeCase(
        {"time.precision.mode": "connect"},
        setup=(_TIME_KEY, "INSERT INTO tk VALUES ('01:00:00', 1), ('517:51:04.77', 2), ('02:00:00', 3)"),
        snapshot_data=True,
    ),
    "time_key_streaming": ModeCase(
        {"time.precision.mode": "connect"},
        setup=(_TIME_KEY, "INSERT INTO tk VALUES ('01:00:00', 1)"),
        stream=(
            "INSERT INTO tk VALUES ('02:00:00', 2)",
            "INSERT INTO tk VALUES ('517:51:04.77', 3)",
            "INSERT INTO tk VALUES ('03:00:00', 4)",
        ),
        snapshot_data=True,
    ),
    "time_key_streaming_warn": ModeCase(
        {"time.precision.mode": "connect", "event.processing.failure.handling.mode": "warn"},
        setup=(_TIME_KEY, "INSERT INTO tk VALUES ('01:00:00', 1)"),
        stream=(
            "INSERT INTO tk VALUES ('02:00:00', 2)",
            "INSERT INTO tk VALUES ('517:51:04.77', 3)",
            "INSERT INTO tk VALUES ('03:00:00', 4)",
        ),
        snapshot_data=True,
    ),
}


def fidelity_db(case: str) -> str:
    return f"golden_fid_{case}"
