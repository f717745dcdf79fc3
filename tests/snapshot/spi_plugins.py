"""Snapshot SPI plugins for the tests (loaded as ``tests.snapshot.spi_plugins:Class``), the writer of
a tiny installed distribution that registers plugins through entry points, and of the snapshots guide's
worked example as a module.

The test plugins take their answers from their own properties and append every call of interest to
``<prefix>calls.file`` (one JSON array a line), so a test reads back what the connector asked.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from mysql_cdc_base.table_id import TableId
from snapshot.policy.queries import quote_table

MODE = "snapshot.mode.custom."
QUERY = "snapshot.query.mode.custom."
LOCK = "snapshot.locking.mode.custom."


def record(path: str | None, *call: object) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(list(call)) + "\n")


def calls(path: Path) -> list[list[object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def _answer(text: str, offset_exists: bool, snapshot_in_progress: bool) -> bool:
    """``true``, ``false`` or ``first`` (no offset yet, or the last snapshot did not complete)."""
    if text == "first":
        return not offset_exists or snapshot_in_progress
    return text == "true"


class FlagSnapshotter:
    """A ``Snapshotter`` answering from ``snapshot.mode.custom.<method>`` (true/false/first)."""

    def name(self) -> str:
        return "flags"

    def configure(self, properties: Mapping[str, str]) -> None:
        self.props = {k[len(MODE) :]: v.strip().lower() for k, v in properties.items() if k.startswith(MODE)}
        self.calls_file = properties.get(MODE + "calls.file")
        record(self.calls_file, "configure")

    def _flag(self, name: str, default: str) -> str:
        return self.props.get(name, default)

    def should_snapshot_data(self, offset_exists: bool, snapshot_in_progress: bool) -> bool:
        return _answer(self._flag("data", "first"), offset_exists, snapshot_in_progress)

    def should_snapshot_schema(self, offset_exists: bool, snapshot_in_progress: bool) -> bool:
        return _answer(self._flag("schema", "first"), offset_exists, snapshot_in_progress)

    def should_stream(self) -> bool:
        return self._flag("stream", "true") == "true"

    def should_snapshot_on_schema_error(self) -> bool:
        return self._flag("on.schema.error", "false") == "true"

    def should_snapshot_on_data_error(self) -> bool:
        return self._flag("on.data.error", "false") == "true"

    def should_stream_events_starting_from_snapshot(self) -> bool:
        return self._flag("from.snapshot", "true") == "true"

    def snapshot_completed(self) -> None:
        record(self.calls_file, "snapshot_completed")

    def snapshot_aborted(self) -> None:
        record(self.calls_file, "snapshot_aborted")


class WhereQuery:
    """A ``SnapshotQuery``: ``snapshot.query.mode.custom.where`` as the WHERE of every SELECT;
    the tables (names) in ``snapshot.query.mode.custom.skip`` are not read (None)."""

    def name(self) -> str:
        return "where"

    def configure(self, properties: Mapping[str, str]) -> None:
        self.where = properties.get(QUERY + "where", "")
        self.skip = {t.strip() for t in properties.get(QUERY + "skip", "").split(",") if t.strip()}
        self.calls_file = properties.get(QUERY + "calls.file")

    def snapshot_query(self, table_id: TableId, columns: Sequence[str]) -> str | None:
        record(self.calls_file, "snapshot_query", str(table_id), list(columns))
        if table_id.table in self.skip:
            return None
        where = f" WHERE {self.where}" if self.where else ""
        return f"SELECT {', '.join(columns)} FROM {quote_table(table_id)}{where}"


class MarkedGlobalLock:
    """A ``SnapshotLock``: the global read lock with a comment naming the timeout it was given."""

    def name(self) -> str:
        return "marked"

    def configure(self, properties: Mapping[str, str]) -> None:
        self.calls_file = properties.get(LOCK + "calls.file")

    def table_locking_statement(self, lock_timeout: dt.timedelta, table_id: TableId | None) -> str | None:
        record(self.calls_file, "table_locking_statement", lock_timeout.total_seconds(), table_id)
        return f"FLUSH TABLES WITH READ LOCK /* spi-lock {lock_timeout.total_seconds():g}s */"


class NoLock:
    """A ``SnapshotLock`` that takes no lock at all."""

    def name(self) -> str:
        return "no-lock"

    def configure(self, properties: Mapping[str, str]) -> None:
        pass

    def table_locking_statement(self, lock_timeout: dt.timedelta, table_id: TableId | None) -> str | None:
        return None


class NotAQuery:
    """Lacks ``snapshot_query``: loading it as a SnapshotQuery must fail naming the key."""

    def name(self) -> str:
        return "incomplete"

    def configure(self, properties: Mapping[str, str]) -> None:
        pass


class RefusesConfiguration(FlagSnapshotter):
    def configure(self, properties: Mapping[str, str]) -> None:
        raise ValueError("snapshot.mode.custom.window must be a number")


# -- the guide's worked example ----------------------------------------------------------------------
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "snapshots-signals.md"
EXAMPLE_MODULE = "shop_snapshots"


def write_guide_example(site: Path) -> Path:
    """Writes the snapshots guide's worked example (the python block starting ``# shop_snapshots.py``) as the
    module ``shop_snapshots`` in ``site``, so the test runs exactly what the guide shows."""
    text = GUIDE.read_text()
    start = text.index(f"```python\n# {EXAMPLE_MODULE}.py\n") + len("```python\n")
    site.mkdir(parents=True, exist_ok=True)
    path = site / f"{EXAMPLE_MODULE}.py"
    path.write_text(text[start : text.index("```", start)])
    return path


# -- a tiny installed distribution with entry points -------------------------------------------------
DIST_MODULE = "cdc_spi_dist_plugins"
DIST_SOURCE = """
from tests.snapshot.spi_plugins import FlagSnapshotter, MarkedGlobalLock, WhereQuery


class DistSnapshotter(FlagSnapshotter):
    def name(self):
        return "from-dist"


class DistQuery(WhereQuery):
    pass


class DistLock(MarkedGlobalLock):
    pass
"""
DIST_ENTRY_POINTS = f"""[mysql_cdc.snapshotters]
dist-flags = {DIST_MODULE}:DistSnapshotter

[mysql_cdc.snapshot_queries]
dist-where = {DIST_MODULE}:DistQuery

[mysql_cdc.snapshot_locks]
dist-lock = {DIST_MODULE}:DistLock
broken = {DIST_MODULE}:Missing
"""


def write_plugin_dist(site: Path) -> Path:
    """Installs (by hand, as pip would lay it out) the distribution ``cdc-spi-dist-plugins`` into
    ``site``: its module and a ``.dist-info`` with METADATA and entry_points.txt. Put ``site`` on
    ``sys.path`` for ``importlib.metadata`` to find it."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{DIST_MODULE}.py").write_text(DIST_SOURCE)
    info = site / "cdc_spi_dist_plugins-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cdc-spi-dist-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(DIST_ENTRY_POINTS)
    (info / "RECORD").write_text("")
    return site
