"""snapshot.mode decision table (reference 5.1) and the other pure parts of the snapshot."""

from __future__ import annotations

import re

import pytest

from connector.config import ConnectorConfig
from mysql_cdc_base.flavor import flavor_of
from mysql_cdc_base.table_id import TableId
from snapshot.binlog_status import binlog_status_sql
from snapshot.listener import resolve_marker
from snapshot.policy.locking import LOCKING_STRATEGIES, locking_strategy
from snapshot.policy.modes import (
    STREAM_FROM_BEGINNING,
    STREAM_FROM_OFFSET,
    STREAM_FROM_SNAPSHOT,
    ConfigurationBasedMode,
    decide,
    normalize_mode,
)
from snapshot.rows.scan import batch_markers
from snapshot.server_sql import create_database_statement, set_statement_for
from snapshot.snapshotter import SnapshotConfigError, SnapshotSettings, order_tables, quote_table

S, OFF, BEG = STREAM_FROM_SNAPSHOT, STREAM_FROM_OFFSET, STREAM_FROM_BEGINNING

# (mode, offset_exists, snapshot_in_progress) -> (schema, data, stream, stream_from)
TABLE = [
    ("initial", False, False, (True, True, True, S)),
    ("initial", True, False, (False, False, True, OFF)),
    ("initial", True, True, (True, True, True, S)),  # interrupted snapshot starts over
    ("initial_only", False, False, (True, True, False, None)),
    ("initial_only", True, False, (False, False, False, None)),
    ("initial_only", True, True, (True, True, False, None)),
    ("when_needed", False, False, (True, True, True, S)),
    ("when_needed", True, False, (False, False, True, OFF)),
    ("when_needed", True, True, (True, True, True, S)),
    ("no_data", False, False, (True, False, True, S)),
    ("no_data", True, False, (False, False, True, OFF)),
    ("no_data", True, True, (True, False, True, S)),
    ("schema_only", False, False, (True, False, True, S)),  # alias of no_data
    ("recovery", True, False, (True, False, True, OFF)),  # schema rebuilt, offset kept
    ("schema_only_recovery", True, False, (True, False, True, OFF)),
    ("always", False, False, (True, True, True, S)),
    ("always", True, False, (True, True, True, S)),
    ("never", False, False, (False, False, True, BEG)),
    ("never", True, False, (False, False, True, OFF)),
]


@pytest.mark.parametrize(("mode", "offset", "in_progress", "expected"), TABLE)
def test_decision_table(mode, offset, in_progress, expected):
    plan = decide(mode, offset, in_progress)
    assert plan.error is None
    assert (plan.snapshot_schema, plan.snapshot_data, plan.stream, plan.stream_from) == expected
    assert not plan.reset_offsets


def test_aliases_resolve_to_current_names():
    assert normalize_mode("schema_only") == "no_data"
    assert normalize_mode("SCHEMA_ONLY_RECOVERY") == "recovery"
    assert decide("schema_only", False, False).mode == "no_data"


@pytest.mark.parametrize("mode", ["initial", "schema_only", "no_data", "recovery", "never"])
def test_purged_position_is_an_error_saying_how_to_get_a_new_snapshot(mode):
    plan = decide(mode, True, False, True, position="mysql-bin.000003:157")
    assert plan.error is not None and not plan.snapshot and not plan.stream
    assert "mysql-bin.000003:157" in plan.error and "no longer available" in plan.error
    assert "new snapshot is required" in plan.error and "snapshot.mode=when_needed" in plan.error


def test_when_needed_resnapshots_after_a_purge():
    plan = decide("when_needed", True, False, True)
    assert plan.error is None and plan.reset_offsets
    assert (plan.snapshot_schema, plan.snapshot_data, plan.stream_from) == (True, True, S)


def test_always_does_not_care_about_a_purged_position():
    plan = decide("always", True, False, True)
    assert plan.error is None and plan.snapshot_data and plan.stream_from == S


def test_never_after_an_interrupted_snapshot_is_an_error():
    for mode in ("never",):
        plan = decide(mode, True, True)
        assert plan.error is not None and "previously stopped while taking a snapshot" in plan.error


def test_missing_history_needs_recovery():
    plan = decide("initial", True, False, history_exists=False)
    assert plan.error is not None and "snapshot.mode=recovery" in plan.error
    recovery = decide("recovery", True, False, history_exists=False)
    assert recovery.error is None and recovery.snapshot_schema and not recovery.snapshot_data
    assert recovery.stream_from == OFF
    purged = decide("recovery", True, False, True, history_exists=False)
    assert purged.error is not None and "no longer available" in purged.error


def test_recovery_needs_offsets():
    plan = decide("recovery", False, False)
    assert plan.error is not None and "needs stored offsets" in plan.error


def test_configuration_based():
    flags = ConfigurationBasedMode(snapshot_data=True, snapshot_schema=True, start_stream=False)
    plan = decide("configuration_based", True, False, configuration=flags)
    assert (plan.snapshot_schema, plan.snapshot_data, plan.stream, plan.stream_from) == (
        True,
        True,
        False,
        None,
    )


@pytest.mark.parametrize("bad", ["sometimes", "custom"])
def test_unknown_mode_names_the_key(bad):
    with pytest.raises(ValueError, match="snapshot.mode"):
        decide(bad, False, False)


def test_markers():
    assert resolve_marker(True, True, True, True) == "last"
    assert resolve_marker(True, False, True, True) == "first"
    assert resolve_marker(False, False, True, True) == "last_in_data_collection"
    assert resolve_marker(False, False, True, False) == "first_in_data_collection"
    assert resolve_marker(False, False, False, False) == "true"
    # A batch that is both the table's first and last, in the first of several tables.
    assert batch_markers(3, True, True, True, False) == ((0, "first"), (2, "last_in_data_collection"))
    assert batch_markers(1, True, True, False, True) == ((0, "last"),)
    assert batch_markers(5, False, False, True, True) == ()


def test_sql_text_helpers():
    assert (
        set_statement_for({"collation_server": "utf8mb4_general_ci", "character_set_server": "utf8mb4"})
        == "SET character_set_server=utf8mb4, collation_server=utf8mb4_general_ci;"
    )
    assert set_statement_for({"a": "x,y"}) == "SET a='x,y';"
    assert create_database_statement("d`b", "latin1", None) == "CREATE DATABASE `d``b` CHARSET latin1"
    assert quote_table(TableId("a b", "c`d")) == "`a b`.`c``d`"


def test_table_order_follows_include_list_patterns():
    ids = [TableId("db", n) for n in ("c", "a", "b", "sig")]
    assert order_tables(ids, ()) == sorted(ids)
    ordered = order_tables(ids, (re.compile("db\\.b"), re.compile("db\\.[ac]")), (re.compile("db\\.sig"),))
    assert [t.table for t in ordered] == ["b", "a", "c", "sig"]


def test_binlog_status_statement_per_server():
    assert binlog_status_sql("mysql", "8.4.2") == "SHOW BINARY LOG STATUS"
    assert binlog_status_sql("mysql", "9.1.0") == "SHOW BINARY LOG STATUS"
    assert binlog_status_sql("mysql", "8.0.36") == "SHOW MASTER STATUS"
    assert binlog_status_sql("mariadb", "10.11.19-MariaDB-0+deb12u1") == "SHOW MASTER STATUS"
    assert flavor_of("10.11.19-MariaDB-0+deb12u1") == "mariadb" and flavor_of("8.0.36") == "mysql"


def test_locking_modes():
    assert set(LOCKING_STRATEGIES) >= {"minimal", "extended", "none"}
    assert not locking_strategy("none").locking
    assert locking_strategy("extended").release_after_schema is False
    with pytest.raises(ValueError, match="snapshot.locking.mode"):
        locking_strategy("sometimes")


def base_props(**extra: str) -> dict[str, str]:
    return {
        "database.hostname": "127.0.0.1",
        "database.user": "u",
        "database.server.id": "1",
        "topic.prefix": "p",
        **extra,
    }


def test_settings_from_config():
    config = ConnectorConfig.from_mapping(
        base_props(
            **{
                "snapshot.mode": "schema_only",
                "snapshot.locking.mode": "extended",
                "snapshot.fetch.size": "500",
                "snapshot.max.threads": "3",
                "snapshot.lock.timeout.ms": "2500",
                "snapshot.select.statement.overrides": "db.t1, db.t2",
                "snapshot.select.statement.overrides.db.t1": "SELECT * FROM db.t1 WHERE id > 5",
                "snapshot.select.statement.overrides.db.t2": "SELECT a FROM db.t2",
                "snapshot.include.collection.list": "db\\.t.*",
                "schema.history.internal.store.only.captured.tables.ddl": "true",
            }
        )
    )
    s = SnapshotSettings.from_config(config)
    assert (s.mode, s.locking_mode, s.fetch_size, s.max_threads, s.lock_timeout_ms) == (
        "no_data",
        "extended",
        500,
        3,
        2500,
    )
    assert dict(s.select_overrides) == {
        TableId("db", "t1"): "SELECT * FROM db.t1 WHERE id > 5",
        TableId("db", "t2"): "SELECT a FROM db.t2",
    }
    assert s.snapshot_included(TableId("db", "t9")) and not s.snapshot_included(TableId("db", "x"))
    assert s.store_only_captured_tables_ddl and not s.store_only_captured_databases_ddl
    defaults = SnapshotSettings.from_config(ConnectorConfig.from_mapping(base_props()))
    assert (defaults.mode, defaults.locking_mode, defaults.fetch_size, defaults.max_threads) == (
        "initial",
        "minimal",
        None,
        1,
    )


def test_listed_override_without_statement_names_the_key():
    config = ConnectorConfig.from_mapping(base_props(**{"snapshot.select.statement.overrides": "db.t1"}))
    with pytest.raises(SnapshotConfigError) as exc:
        SnapshotSettings.from_config(config)
    assert exc.value.key == "snapshot.select.statement.overrides.db.t1"


def test_unlisted_override_is_ignored_with_a_warning(caplog):
    config = ConnectorConfig.from_mapping(
        base_props(**{"snapshot.select.statement.overrides.db.t1": "SELECT 1"}), warn_unknown=False
    )
    assert not SnapshotSettings.from_config(config).select_overrides
    assert "add db.t1 to snapshot.select.statement.overrides" in caplog.text


def test_bad_settings_name_the_key():
    with pytest.raises(SnapshotConfigError, match="snapshot.max.threads"):
        SnapshotSettings(max_threads=0)
    with pytest.raises(SnapshotConfigError, match="snapshot.locking.mode"):
        SnapshotSettings(locking_mode="custom")
    with pytest.raises(SnapshotConfigError, match="snapshot.mode"):
        SnapshotSettings(mode="sometimes")


def test_initial_only_after_completion_has_nothing_to_do_even_if_purged():
    plan = decide("initial_only", True, False, True)
    assert plan.error is None and not plan.snapshot and not plan.stream
