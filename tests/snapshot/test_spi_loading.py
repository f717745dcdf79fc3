"""Loading the snapshot SPI plugins: by ``package.module:Class`` and through the entry points of an
installed distribution; every way a name can be wrong stops the start-up naming the key; the fake
applies the same plugins."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from connector.config import ConfigError, ConnectorConfig
from connector.embedded.api import EmbeddedEngine
from connector.engine import Engine
from connector.testing.fake import FakeConnector
from mysql_cdc_base.table_id import TableId
from snapshot.policy.locking import LOCKING_STRATEGIES
from snapshot.policy.modes import MODES, decide
from snapshot.policy.queries import SelectAllQuery
from snapshot.settings import SnapshotSettings
from snapshot.spi import SNAPSHOT_LOCK, SNAPSHOT_QUERY, SNAPSHOTTER, SnapshotLock, SnapshotQuery, Snapshotter
from tests.snapshot import spi_plugins
from tests.snapshot.spi_plugins import calls, write_plugin_dist

BASE = {
    "database.hostname": "127.0.0.1",
    "database.user": "u",
    "database.server.id": "1",
    "topic.prefix": "p",
}
PLUGINS = "tests.snapshot.spi_plugins"


def settings(**props: str) -> SnapshotSettings:
    return SnapshotSettings.from_config(ConnectorConfig.from_mapping({**BASE, **props}))


@pytest.fixture
def plugin_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = write_plugin_dist(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    return site


def test_a_module_path_loads_configures_and_selects_each_plugin(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    s = settings(
        **{
            "snapshot.mode": "custom",
            "snapshot.mode.custom.name": f"{PLUGINS}:FlagSnapshotter",
            "snapshot.mode.custom.calls.file": str(log),
            "snapshot.mode.custom.data": "false",
            "snapshot.query.mode": "custom",
            "snapshot.query.mode.custom.name": f"{PLUGINS}:WhereQuery",
            "snapshot.query.mode.custom.where": "id > 1",
            "snapshot.locking.mode": "custom",
            "snapshot.locking.mode.custom.name": f"{PLUGINS}:MarkedGlobalLock",
            "snapshot.lock.timeout.ms": "7000",
        }
    )
    assert calls(log) == [["configure"]]  # configured once, with the connector properties
    assert isinstance(s.snapshotter, spi_plugins.FlagSnapshotter) and s.snapshotter.name() == "flags"
    assert s.select_for(TableId("db", "t"), ["*"]) == "SELECT * FROM `db`.`t` WHERE id > 1"
    assert s.strategy.global_lock_sql == "FLUSH TABLES WITH READ LOCK /* spi-lock 7s */"
    plan = decide(s.mode, False, False, custom=s.custom_snapshotter)
    assert (plan.snapshot_schema, plan.snapshot_data, plan.stream) == (True, False, True)


def test_entry_points_of_an_installed_distribution_load_by_name(plugin_dist: Path) -> None:
    s = settings(
        **{
            "snapshot.mode": "custom",
            "snapshot.mode.custom.name": "dist-flags",
            "snapshot.query.mode": "custom",
            "snapshot.query.mode.custom.name": "dist-where",
            "snapshot.query.mode.custom.skip": "t",
            "snapshot.locking.mode": "custom",
            "snapshot.locking.mode.custom.name": "dist-lock",
        }
    )
    assert type(s.custom_snapshotter).__module__ == "cdc_spi_dist_plugins"
    assert s.snapshotter.name() == "from-dist"
    assert s.select_for(TableId("db", "t"), ["*"]) is None
    assert s.select_for(TableId("db", "u"), ["`a`"]) == "SELECT `a` FROM `db`.`u`"
    assert s.strategy.global_lock_sql == "FLUSH TABLES WITH READ LOCK /* spi-lock 10s */"


def test_the_built_in_modes_implement_the_same_protocols() -> None:
    for snapshotter in MODES.values():
        assert isinstance(snapshotter, Snapshotter)
    for lock in LOCKING_STRATEGIES.values():
        assert isinstance(lock, SnapshotLock)
        assert lock.table_locking_statement(dt.timedelta(seconds=1), None) == lock.global_lock_sql
    assert isinstance(SelectAllQuery(), SnapshotQuery)
    assert settings().snapshotter.name() == "initial"
    assert settings(**{"snapshot.mode": "when_needed"}).snapshotter.should_snapshot_on_data_error()


@pytest.mark.parametrize(
    ("props", "key", "problem"),
    [
        ({"snapshot.mode": "custom"}, SNAPSHOTTER.key, "is required with custom"),
        (
            {"snapshot.mode": "custom", SNAPSHOTTER.key: "no-such-plugin"},
            SNAPSHOTTER.key,
            "unknown name 'no-such-plugin': not an entry point of group mysql_cdc.snapshotters",
        ),
        (
            {"snapshot.mode": "custom", SNAPSHOTTER.key: "no_such_module_xyz:Plugin"},
            SNAPSHOTTER.key,
            "cannot import 'no_such_module_xyz'",
        ),
        (
            {"snapshot.mode": "custom", SNAPSHOTTER.key: f"{PLUGINS}:Nope"},
            SNAPSHOTTER.key,
            "has no attribute 'Nope'",
        ),
        (
            {"snapshot.mode": "custom", SNAPSHOTTER.key: f"{PLUGINS}:WhereQuery"},
            SNAPSHOTTER.key,
            "does not implement Snapshotter: missing should_snapshot_data",
        ),
        (
            {"snapshot.query.mode": "custom", SNAPSHOT_QUERY.key: f"{PLUGINS}:NotAQuery"},
            SNAPSHOT_QUERY.key,
            "does not implement SnapshotQuery: missing snapshot_query",
        ),
        (
            {"snapshot.mode": "custom", SNAPSHOTTER.key: f"{PLUGINS}:RefusesConfiguration"},
            SNAPSHOTTER.key,
            "configure() failed: ValueError('snapshot.mode.custom.window must be a number')",
        ),
        (
            {"snapshot.locking.mode": "custom", SNAPSHOT_LOCK.key: "broken"},
            SNAPSHOT_LOCK.key,
            "entry point 'broken' (cdc_spi_dist_plugins:Missing) of mysql_cdc.snapshot_locks cannot be loaded",
        ),
    ],
)
def test_a_plugin_that_cannot_be_used_names_the_key_and_the_problem(
    plugin_dist: Path, props: dict[str, str], key: str, problem: str
) -> None:
    with pytest.raises(ConfigError) as exc:
        settings(**props)
    assert exc.value.key == key
    assert problem in str(exc.value)


def test_a_plugin_name_without_custom_is_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    s = settings(
        **{SNAPSHOT_QUERY.key: f"{PLUGINS}:WhereQuery", "snapshot.query.mode.custom.where": "id > 1"}
    )
    assert s.custom_query is None
    assert s.select_for(TableId("db", "t"), ["*"]) == "SELECT * FROM `db`.`t`"
    assert (
        f"{SNAPSHOT_QUERY.key} is ignored: it names the plugin of snapshot.query.mode=custom" in caplog.text
    )


def test_the_engine_start_stops_before_connecting(tmp_path: Path) -> None:
    # Port 1 accepts nothing: the error is the plugin's, so nothing was connected before it.
    props = {**BASE, "database.port": "1", "snapshot.mode": "custom", SNAPSHOTTER.key: "no_such_module_xyz:P"}
    engine = Engine(ConnectorConfig.from_mapping({**props, "data.dir": str(tmp_path)}))
    try:
        with pytest.raises(ConfigError, match=f"^{SNAPSHOTTER.key}: cannot import 'no_such_module_xyz'"):
            engine.prepare()
    finally:
        engine.close()


def test_the_embedded_engine_takes_a_plugin_class_and_refuses_one_it_cannot_import() -> None:
    config = ConnectorConfig.from_mapping(
        {**BASE, "snapshot.mode": "custom", SNAPSHOTTER.key: spi_plugins.FlagSnapshotter}
    )
    assert config.get(SNAPSHOTTER.key) == f"{PLUGINS}:FlagSnapshotter"

    class Local(spi_plugins.FlagSnapshotter):
        pass

    with pytest.raises(ConfigError, match=f"^{SNAPSHOTTER.key}: class .*Local is defined inside a function"):
        EmbeddedEngine({**BASE, "snapshot.mode": "custom", SNAPSHOTTER.key: Local})


def test_the_fake_applies_the_same_plugins(tmp_path: Path, plugin_dist: Path) -> None:
    log = tmp_path / "calls.jsonl"
    tables = ["CREATE TABLE a (id INT PRIMARY KEY)", "CREATE TABLE b (id INT PRIMARY KEY)"]
    rows = {"a": [{"id": 1}, {"id": 2}], "b": [{"id": 3}]}
    plugins = {
        "snapshot.mode": "custom",
        "snapshot.mode.custom.name": spi_plugins.FlagSnapshotter,
        "snapshot.mode.custom.calls.file": str(log),
        "snapshot.query.mode": "custom",
        "snapshot.query.mode.custom.name": "dist-where",
        "snapshot.query.mode.custom.skip": "a",
    }
    fake = FakeConnector(tables, properties=plugins)
    records = fake.snapshot(rows)
    assert [(r.table_id.table if r.table_id else "", r.after) for r in records] == [("b", {"id": 3})]
    assert records[0].source is not None and records[0].source["snapshot"] == "last"
    assert calls(log) == [["configure"], ["snapshot_completed"]]

    no_data = FakeConnector(tables, properties={**plugins, "snapshot.mode.custom.data": "false"})
    assert no_data.snapshot(rows) == []
    assert len(FakeConnector(tables).snapshot(rows)) == 3  # the built-in select_all reads everything
