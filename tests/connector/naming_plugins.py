"""Topic naming strategy plugins for the tests (``package.module:Class`` paths and a tiny installed
distribution with entry points, as ``tests/snapshot/spi_plugins.py`` does for the snapshotter SPI),
and the harness the naming and struct maker tests share: the properties of a connector that never
connects (``BASE``), a real run with the plugins (``plugin_engine``), and the refusal that names the
key (``names_the_key``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from connector.config import ConfigError, ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.connect import ConnectSchema, Field, primitive
from mysql_cdc_base.table_id import TableId
from sink.memory import MemorySink

# A connector that never connects (port 1): what start-up refuses is refused before any connection.
BASE = {
    "database.hostname": "127.0.0.1",
    "database.port": "1",
    "database.user": "cdc",
    "database.password": "s3cret-pass",
    "database.server.id": "5400",
    "topic.prefix": "shop",
}


def names_the_key(key: str, message: str = "") -> pytest.RaisesExc[ConfigError]:
    """The refusal of a plugin (or value) that cannot be used: a ``ConfigError`` naming ``key``."""
    return pytest.raises(ConfigError, match=f"^{key}: .*{message}")


@contextlib.contextmanager
def plugin_engine(
    server: MySQLServerHandle, db: str, tmp_path: Path, props: Mapping[str, str]
) -> Iterator[tuple[Engine, MemorySink]]:
    """An engine with ``props`` (the plugins under test) capturing database ``db`` (created empty,
    dropped afterwards) into a memory sink, with transaction metadata, offsets and history in memory;
    closed when the block ends."""
    server.execute(f"DROP DATABASE IF EXISTS `{db}`", f"CREATE DATABASE `{db}`")
    memory = MemorySink()
    cfg = ConnectorConfig.from_mapping(
        server.connector_properties(
            **{
                "topic.prefix": "shop",
                "database.include.list": db,
                "data.dir": str(tmp_path),
                "offset.storage": "memory",
                "schema.history.internal": "memory",
                "provide.transaction.metadata": "true",
                **props,
            }
        )
    )
    engine = Engine(cfg, sinks=[memory])
    try:
        yield engine, memory
    finally:
        engine.close()
        server.execute(f"DROP DATABASE IF EXISTS `{db}`")


class RoutingStrategy:
    """Every table of a database on one topic ``<prefix>.by-db.<db>``; its own transaction,
    schema change and heartbeat topics (``routing.suffix`` comes from the connector properties)."""

    def __init__(self) -> None:
        self.prefix = ""
        self.suffix = ""
        self.configured = 0

    def configure(self, properties: Mapping[str, str]) -> None:
        self.prefix = properties["topic.prefix"]
        self.suffix = properties.get("routing.suffix", "x")
        self.configured += 1

    def data_change_topic(self, table_id: TableId) -> str:
        return f"{self.prefix}.by-db.{table_id.database}"

    def schema_change_topic(self) -> str:
        return f"{self.prefix}.ddl-{self.suffix}"

    def transaction_topic(self) -> str:
        return f"{self.prefix}.tx-{self.suffix}"

    def heartbeat_topic(self) -> str:
        return f"{self.prefix}.beat-{self.suffix}"


class NoHeartbeat:
    """Lacks ``heartbeat_topic`` (and the rest): not a strategy."""

    def configure(self, properties: Mapping[str, str]) -> None:
        pass


class FailsToConfigure(RoutingStrategy):
    def configure(self, properties: Mapping[str, str]) -> None:
        raise ValueError("routing.suffix is missing")


DIST_MODULE = "cdc_naming_dist_plugins"
DIST_SOURCE = """
from tests.connector.naming_plugins import ClusterSource, LabelledTransactions, RoutingStrategy


class DistStrategy(RoutingStrategy):
    def data_change_topic(self, table_id):
        return f"{self.prefix}.dist.{table_id.table}"


class DistSource(ClusterSource):
    pass


class DistTransactions(LabelledTransactions):
    pass
"""
DIST_ENTRY_POINTS = f"""[mysql_cdc.topic_naming_strategies]
dist-routing = {DIST_MODULE}:DistStrategy
broken = {DIST_MODULE}:Missing

[mysql_cdc.source_struct_makers]
dist-cluster = {DIST_MODULE}:DistSource

[mysql_cdc.transaction_struct_makers]
dist-labels = {DIST_MODULE}:DistTransactions
broken = {DIST_MODULE}:Missing
"""


def write_naming_dist(site: Path) -> Path:
    """Installs (laid out as pip would) the distribution ``cdc-naming-dist-plugins`` into ``site``;
    put ``site`` on ``sys.path`` for ``importlib.metadata`` to find it."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{DIST_MODULE}.py").write_text(DIST_SOURCE)
    info = site / "cdc_naming_dist_plugins-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cdc-naming-dist-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(DIST_ENTRY_POINTS)
    (info / "RECORD").write_text("")
    return site


# -- sourceinfo.struct.maker / transaction.metadata.factory ----------------------------------------


def with_field(schema: ConnectSchema, name: str, kind: str) -> ConnectSchema:
    return replace(schema, fields=(*(schema.fields or ()), Field(name, primitive(kind, optional=True))))


class ClusterSource:
    """Adds ``cluster`` (from ``cluster.name``) to every source block."""

    def configure(self, properties: Mapping[str, str]) -> None:
        self.cluster = properties.get("cluster.name", "none")

    def schema(self, default: ConnectSchema) -> ConnectSchema:
        return with_field(default, "cluster", "string")

    def struct(self, source: dict[str, Any]) -> dict[str, Any]:
        return {**source, "cluster": self.cluster}


class LabelledTransactions:
    """Adds ``label`` to the transaction block and ``size_class`` to BEGIN/END values."""

    def configure(self, properties: Mapping[str, str]) -> None:
        pass

    def block_schema(self, default: ConnectSchema) -> ConnectSchema:
        return with_field(default, "label", "string")

    def block(self, block: dict[str, Any]) -> dict[str, Any]:
        return {**block, "label": f"n{block['total_order']}"}

    def value_schema(self, default: ConnectSchema) -> ConnectSchema:
        return with_field(default, "size_class", "string")

    def begin_value(self, value: dict[str, Any]) -> dict[str, Any]:
        return {**value, "size_class": None}

    def end_value(self, value: dict[str, Any]) -> dict[str, Any]:
        return {**value, "size_class": "small" if value["event_count"] < 3 else "large"}


class NotASchema(ClusterSource):
    def schema(self, default: ConnectSchema) -> ConnectSchema:
        return "a string"  # type: ignore[return-value]
