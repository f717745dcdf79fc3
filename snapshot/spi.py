"""The custom snapshotter SPI: Debezium's ``Snapshotter``, ``SnapshotQuery`` and ``SnapshotLock``
interfaces as Python protocols, and the loader that turns a configured name into a configured plugin.

The built-in ``snapshot.mode`` / ``snapshot.query.mode`` / ``snapshot.locking.mode`` values are
implementations of the same protocols (``snapshot.policy.modes``, ``snapshot.policy.locking``); ``custom`` plus
``<key>.custom.name`` selects a plugin, loaded by ``load_plugin``:

* a name registered in the entry-point group (``mysql_cdc.snapshotters``,
  ``mysql_cdc.snapshot_queries``, ``mysql_cdc.snapshot_locks``) of an installed distribution, or
* ``package.module:Class`` (``Class`` may be a dotted attribute path).

The object found is called without arguments when it is a class, checked for every method of its
protocol and given the connector properties (``configure``). Any problem is a ``SnapshotConfigError``
naming the ``*.custom.name`` key.
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol, cast, runtime_checkable

from mysql_cdc_base.table_id import TableId
from snapshot.errors import SnapshotConfigError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint


@runtime_checkable
class Snapshotter(Protocol):
    """Debezium's ``io.debezium.spi.snapshot.Snapshotter``: what a connector start does."""

    def name(self) -> str:
        """The mode's name (logged; ``snapshot.mode`` for the built-ins)."""
        ...

    def configure(self, properties: Mapping[str, str]) -> None:
        """Called once, before any other method, with every connector property."""
        ...

    def should_snapshot_data(self, offset_exists: bool, snapshot_in_progress: bool) -> bool:
        """Read the captured tables' rows at this start. ``offset_exists``: an offset is stored;
        ``snapshot_in_progress``: that offset is of a snapshot that did not complete."""
        ...

    def should_snapshot_schema(self, offset_exists: bool, snapshot_in_progress: bool) -> bool:
        """Read the table structures (schema change records, schema history) at this start."""
        ...

    def should_stream(self) -> bool:
        """Follow the binlog after the start-up (False: stop once the snapshot is done)."""
        ...

    def should_snapshot_on_schema_error(self) -> bool:
        """An offset is stored but the schema history is missing: rebuild it from the current
        structures (True) or stop (False)."""
        ...

    def should_snapshot_on_data_error(self) -> bool:
        """The stored position is no longer on the server: drop the offsets and start as a first
        start (True) or stop (False)."""
        ...

    def should_stream_events_starting_from_snapshot(self) -> bool:
        """After a snapshot at a start with a stored offset: stream from the snapshot's position
        (True) or from the stored offset (False)."""
        ...

    def snapshot_completed(self) -> None:
        """The snapshot of this start completed (called once)."""
        ...

    def snapshot_aborted(self) -> None:
        """The snapshot of this start failed or was stopped (called once)."""
        ...


@runtime_checkable
class SnapshotQuery(Protocol):
    """Debezium's ``io.debezium.spi.snapshot.SnapshotQuery``: the SELECT that reads a table."""

    def name(self) -> str: ...

    def configure(self, properties: Mapping[str, str]) -> None: ...

    def snapshot_query(self, table_id: TableId, columns: Sequence[str]) -> str | None:
        """The SELECT for ``table_id`` (``.database``, ``.table``; ``quote_table`` quotes it).
        ``columns``: what the built-in query selects, quoted; ``["*"]`` in the connector, which reads
        every column and applies the column filters itself. None: the table's rows are not read (its
        structure still is)."""
        ...


@runtime_checkable
class SnapshotLock(Protocol):
    """Debezium's ``io.debezium.spi.snapshot.SnapshotLock``: the statement that blocks writes."""

    def name(self) -> str: ...

    def configure(self, properties: Mapping[str, str]) -> None: ...

    def table_locking_statement(self, lock_timeout: dt.timedelta, table_id: TableId | None) -> str | None:
        """The statement run where the snapshot takes its global read lock (``table_id`` is None,
        as in Debezium's MySQL connector), released by ``UNLOCK TABLES`` once the structure is read.
        None: no lock at all. Asked at each use: the start-up's grant check (a lock needs RELOAD or
        LOCK TABLES) and each snapshot."""
        ...


class PluginKind(NamedTuple):
    """One of the three SPI interfaces: where its plugins are named and found."""

    key: str  # the property naming the plugin
    group: str  # the entry-point group
    protocol: type
    methods: tuple[str, ...]


_COMMON: Final = ("name", "configure")
SNAPSHOTTER: Final = PluginKind(
    "snapshot.mode.custom.name",
    "mysql_cdc.snapshotters",
    Snapshotter,
    (
        *_COMMON,
        "should_snapshot_data",
        "should_snapshot_schema",
        "should_stream",
        "should_snapshot_on_schema_error",
        "should_snapshot_on_data_error",
        "should_stream_events_starting_from_snapshot",
        "snapshot_completed",
        "snapshot_aborted",
    ),
)
SNAPSHOT_QUERY: Final = PluginKind(
    "snapshot.query.mode.custom.name",
    "mysql_cdc.snapshot_queries",
    SnapshotQuery,
    (*_COMMON, "snapshot_query"),
)
SNAPSHOT_LOCK: Final = PluginKind(
    "snapshot.locking.mode.custom.name",
    "mysql_cdc.snapshot_locks",
    SnapshotLock,
    (*_COMMON, "table_locking_statement"),
)


def _entry_points(kind: PluginKind) -> list[EntryPoint]:
    # importlib.metadata (with the email package under it) only when a plugin is looked up: most
    # runs name none, and its import was some 10 ms of every start (issue 41).
    from importlib.metadata import entry_points  # noqa: PLC0415

    return list(entry_points(group=kind.group))


def _entry_point(kind: PluginKind, name: str) -> EntryPoint | None:
    return next((ep for ep in _entry_points(kind) if ep.name == name), None)


def _import_path(kind: PluginKind, name: str) -> Any:
    module_name, _, attribute = name.partition(":")
    try:
        found: Any = importlib.import_module(module_name.strip())
    except Exception as exc:  # noqa: BLE001 - any failure to import is the plugin's problem, reported
        raise SnapshotConfigError(kind.key, f"cannot import {module_name!r} for {name!r}: {exc!r}") from exc
    for part in attribute.strip().split("."):
        if not hasattr(found, part):
            raise SnapshotConfigError(kind.key, f"{name!r}: {module_name!r} has no attribute {attribute!r}")
        found = getattr(found, part)
    return found


def _find(kind: PluginKind, name: str) -> Any:
    entry = _entry_point(kind, name)
    if entry is not None:
        try:
            return entry.load()
        except Exception as exc:  # noqa: BLE001 - reported naming the key
            raise SnapshotConfigError(
                kind.key, f"entry point {name!r} ({entry.value}) of {kind.group} cannot be loaded: {exc!r}"
            ) from exc
    if ":" in name:
        return _import_path(kind, name)
    known = sorted(ep.name for ep in _entry_points(kind))
    raise SnapshotConfigError(
        kind.key,
        f"unknown name {name!r}: not an entry point of group {kind.group} "
        f"(installed: {', '.join(known) or 'none'}) and not a package.module:Class path",
    )


def _instantiate(kind: PluginKind, name: str, found: Any) -> Any:
    if not isinstance(found, type):
        return found
    try:
        return found()
    except Exception as exc:  # noqa: BLE001 - reported naming the key
        raise SnapshotConfigError(kind.key, f"{name!r}: {found.__qualname__}() failed: {exc!r}") from exc


def missing_methods(kind: PluginKind, plugin: object) -> list[str]:
    return [m for m in kind.methods if not callable(getattr(plugin, m, None))]


def load_plugin(kind: PluginKind, name: str | None, properties: Mapping[str, str]) -> Any:
    """The configured plugin ``name`` of ``kind``; raises ``SnapshotConfigError`` naming
    ``kind.key`` when it is unset, unknown, cannot be imported or built, lacks a method of the
    protocol, or its ``configure`` fails."""
    text = (name or "").strip()
    if not text:
        raise SnapshotConfigError(
            kind.key,
            "is required with custom: an entry point name of " + kind.group + " or package.module:Class",
        )
    plugin = _instantiate(kind, text, _find(kind, text))
    missing = missing_methods(kind, plugin)
    if missing:
        raise SnapshotConfigError(
            kind.key,
            f"{text!r} ({type(plugin).__qualname__}) does not implement {kind.protocol.__name__}: "
            f"missing {', '.join(missing)}",
        )
    try:
        plugin.configure(dict(properties))
    except Exception as exc:  # noqa: BLE001 - reported naming the key
        raise SnapshotConfigError(kind.key, f"{text!r}: configure() failed: {exc!r}") from exc
    return plugin


def load_snapshotter(name: str | None, properties: Mapping[str, str]) -> Snapshotter:
    return cast(Snapshotter, load_plugin(SNAPSHOTTER, name, properties))


def load_snapshot_query(name: str | None, properties: Mapping[str, str]) -> SnapshotQuery:
    return cast(SnapshotQuery, load_plugin(SNAPSHOT_QUERY, name, properties))


def load_snapshot_lock(name: str | None, properties: Mapping[str, str]) -> SnapshotLock:
    return cast(SnapshotLock, load_plugin(SNAPSHOT_LOCK, name, properties))
