"""Topic naming strategy plugins for the tests (``package.module:Class`` paths and a tiny installed
distribution with entry points, as ``tests/snapshot/spi_plugins.py`` does for the snapshotter SPI)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ddl.model import TableId


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
from tests.connector.naming_plugins import RoutingStrategy


class DistStrategy(RoutingStrategy):
    def data_change_topic(self, table_id):
        return f"{self.prefix}.dist.{table_id.table}"
"""
DIST_ENTRY_POINTS = f"""[mysql_cdc.topic_naming_strategies]
dist-routing = {DIST_MODULE}:DistStrategy
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
