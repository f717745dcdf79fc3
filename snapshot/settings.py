"""The snapshot's properties (``SnapshotSettings``), validated, with the ``snapshot.spi`` plugins that
``snapshot.mode``, ``snapshot.query.mode`` and ``snapshot.locking.mode`` select (built in, or
``custom`` plus ``<key>.custom.name``)."""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from mysql_cdc_base.properties import (
    Property,
    PropertySource,
    by_name,
    compile_regex_list,
    included_by,
    int_of,
    parse_bool,
    prop,
    split_list,
    text_of,
)
from mysql_cdc_base.table_id import TableId
from snapshot.errors import SnapshotConfigError
from snapshot.policy.locking import (
    CUSTOM_LOCKING,
    LOCKING_MODE_KEY,
    LockingStrategy,
    custom_locking,
    locking_strategy,
)
from snapshot.policy.modes import (
    CUSTOM,
    MODE_ALIASES,
    SNAPSHOT_MODE_KEY,
    SNAPSHOT_MODES,
    ConfigurationBasedMode,
    behaviour_for,
    normalize_mode,
)
from snapshot.policy.queries import CUSTOM_QUERY, QUERY_MODE_KEY, QUERY_MODES, SELECT_ALL
from snapshot.rows.scan import DEFAULT_BATCH_ROWS
from snapshot.spi import (
    SNAPSHOT_LOCK,
    SNAPSHOT_QUERY,
    SNAPSHOTTER,
    SnapshotLock,
    SnapshotQuery,
    Snapshotter,
    load_snapshot_lock,
    load_snapshot_query,
    load_snapshotter,
)

log = logging.getLogger(__name__)

OVERRIDES_KEY = "snapshot.select.statement.overrides"
ROW_COUNT_ORDERS = ("disabled", "ascending", "descending")
QUERY_MODE_CHOICES = (*QUERY_MODES, CUSTOM_QUERY)

# The snapshot's Debezium properties, read by SnapshotSettings.from_config.
SNAPSHOT_PROPERTIES: tuple[Property, ...] = (
    prop(
        "snapshot.mode",
        "initial",
        "When to snapshot (custom: the snapshot.spi.Snapshotter named by snapshot.mode.custom.name).",
        kind="choice",
        choices=SNAPSHOT_MODES,
        aliases=dict(MODE_ALIASES),
    ),
    prop(
        "snapshot.mode.custom.name",
        doc="With snapshot.mode=custom: the Snapshotter plugin, an entry point name of the group "
        "mysql_cdc.snapshotters or package.module:Class; its own options go under "
        "snapshot.mode.custom.<option>.",
    ),
    prop(
        "snapshot.query.mode",
        "select_all",
        "The SELECT reading each table in a start-up snapshot (custom: the snapshot.spi.SnapshotQuery "
        "named by snapshot.query.mode.custom.name; snapshot.select.statement.overrides still win; "
        "signalled snapshots read with their own SELECT).",
        kind="choice",
        choices=("select_all", "custom"),
    ),
    prop(
        "snapshot.query.mode.custom.name",
        doc="With snapshot.query.mode=custom: the SnapshotQuery plugin, an entry point name of the "
        "group mysql_cdc.snapshot_queries or package.module:Class; options under "
        "snapshot.query.mode.custom.<option>.",
    ),
    prop(
        "snapshot.locking.mode",
        "minimal",
        "Locks taken during the snapshot (none: no locks, only safe "
        "when nothing writes during the snapshot or with no_data/recovery; custom: the minimal "
        "workflow with the global lock statement of the snapshot.spi.SnapshotLock named by "
        "snapshot.locking.mode.custom.name).",
        kind="choice",
        choices=(
            "minimal",
            "extended",
            "none",
            "minimal_percona",
            "minimal_percona_no_table_locks",
            "minimal_at_least_once",
            "custom",
        ),
    ),
    prop(
        "snapshot.locking.mode.custom.name",
        doc="With snapshot.locking.mode=custom: the SnapshotLock plugin, an entry point name of the "
        "group mysql_cdc.snapshot_locks or package.module:Class; options under "
        "snapshot.locking.mode.custom.<option>.",
    ),
    prop(
        "snapshot.tables.order.by.row.count",
        "disabled",
        "Snapshot table order by estimated rows.",
        kind="choice",
        choices=("ascending", "descending", "disabled"),
    ),
    prop(
        "snapshot.lock.timeout.ms", "10000", "Lock wait timeout during the snapshot.", kind="int", minimum=0
    ),
    prop(
        "snapshot.fetch.size", doc="Rows fetched per round trip during the snapshot.", kind="int", minimum=1
    ),
    prop(
        "snapshot.max.threads",
        "1",
        "Snapshot readers: > 1 cuts each table with a primary key into key-range chunks read by that "
        "many processes in one consistent view (rows still emitted in key order).",
        kind="int",
        minimum=1,
    ),
    prop(
        "snapshot.max.threads.multiplier",
        "1",
        "Chunked snapshot: at least snapshot.max.threads x this many chunks per table.",
        kind="int",
        minimum=1,
    ),
    prop(
        "legacy.snapshot.max.threads",
        "false",
        "With snapshot.max.threads > 1: read whole tables in parallel, one per thread (before Debezium 3.5).",
        kind="bool",
    ),
    prop(
        "snapshot.include.collection.list", doc="Regexes of captured tables to snapshot.", kind="regex-list"
    ),
    prop("snapshot.select.statement.overrides", doc="db.table list whose SELECT is overridden."),
    prop(
        "snapshot.delay.ms",
        "0",
        "Wait after start-up checks before the snapshot starts (stop() interrupts it).",
        kind="int",
        minimum=0,
    ),
)


_DECLARED = by_name(SNAPSHOT_PROPERTIES)


def _default(key: str) -> str:
    """A snapshot property's declared default (the one place it is written)."""
    return _DECLARED[key].default or ""


def _regex_list(config: PropertySource, key: str) -> tuple[re.Pattern[str], ...]:
    return compile_regex_list(key, config.get(key), error=SnapshotConfigError)


# -- settings ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SnapshotSettings:
    """The snapshot's Debezium properties (reference section 2.5), validated."""

    mode: str = _default(SNAPSHOT_MODE_KEY)
    locking_mode: str = _default(LOCKING_MODE_KEY)
    # Rows handed from the streaming cursor to the listener at a time (``snapshot.fetch.size``);
    # rows always stream from the server, so this bounds client memory, not server round trips.
    fetch_size: int | None = None
    max_threads: int = int(_default("snapshot.max.threads"))
    # legacy.snapshot.max.threads: with snapshot.max.threads > 1, read whole tables in parallel (one
    # table per connection, Debezium before 3.5) instead of cutting tables into key-range chunks.
    legacy_max_threads: bool = _default("legacy.snapshot.max.threads") == "true"
    # snapshot.max.threads.multiplier: at least threads x multiplier chunks per table.
    max_threads_multiplier: int = int(_default("snapshot.max.threads.multiplier"))
    lock_timeout_ms: int = int(_default("snapshot.lock.timeout.ms"))
    select_overrides: Mapping[TableId, str] = field(default_factory=lambda: MappingProxyType({}))
    include_collections: tuple[re.Pattern[str], ...] = ()  # snapshot.include.collection.list
    store_only_captured_tables_ddl: bool = False
    store_only_captured_databases_ddl: bool = False
    ignore_builtin: bool = True
    table_include_order: tuple[re.Pattern[str], ...] = ()  # table.include.list (defines table order)
    signal_patterns: tuple[re.Pattern[str], ...] = ()  # signal.data.collection
    order_by_row_count: str = _default("snapshot.tables.order.by.row.count")
    configuration_based: ConfigurationBasedMode = field(default_factory=ConfigurationBasedMode)
    query_mode: str = _default(QUERY_MODE_KEY)
    # The snapshot.spi plugins of the ``custom`` modes (``load_plugins`` loads them by name).
    custom_snapshotter: Snapshotter | None = None
    custom_query: SnapshotQuery | None = None
    custom_lock: SnapshotLock | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "mode", normalize_mode(self.mode))
        except ValueError as exc:
            raise SnapshotConfigError(SNAPSHOT_MODE_KEY, str(exc).split(": ", 1)[-1]) from None
        object.__setattr__(self, "locking_mode", (self.locking_mode or "minimal").strip().lower())
        object.__setattr__(self, "query_mode", (self.query_mode or SELECT_ALL).strip().lower())
        _check_custom(SNAPSHOT_MODE_KEY, self.mode == CUSTOM, self.custom_snapshotter, SNAPSHOTTER.key)
        _check_custom(QUERY_MODE_KEY, self.query_mode == CUSTOM_QUERY, self.custom_query, SNAPSHOT_QUERY.key)
        _check_custom(
            LOCKING_MODE_KEY, self.locking_mode == CUSTOM_LOCKING, self.custom_lock, SNAPSHOT_LOCK.key
        )
        if self.locking_mode != CUSTOM_LOCKING:
            try:
                locking_strategy(self.locking_mode)
            except ValueError as exc:
                raise SnapshotConfigError(LOCKING_MODE_KEY, str(exc).split(": ", 1)[-1]) from None
        if self.query_mode not in QUERY_MODE_CHOICES:
            raise SnapshotConfigError(
                QUERY_MODE_KEY, f"expected one of {', '.join(QUERY_MODE_CHOICES)}, got {self.query_mode!r}"
            )
        if self.max_threads < 1:
            raise SnapshotConfigError("snapshot.max.threads", f"must be at least 1, got {self.max_threads}")
        if self.max_threads_multiplier < 1:
            raise SnapshotConfigError(
                "snapshot.max.threads.multiplier", f"must be at least 1, got {self.max_threads_multiplier}"
            )
        if self.fetch_size is not None and self.fetch_size < 1:
            object.__setattr__(self, "fetch_size", None)  # Debezium's Integer.MIN_VALUE: just stream
        if self.lock_timeout_ms < 0:
            raise SnapshotConfigError(
                "snapshot.lock.timeout.ms", f"must not be negative, got {self.lock_timeout_ms}"
            )
        if self.order_by_row_count not in ROW_COUNT_ORDERS:
            raise SnapshotConfigError(
                "snapshot.tables.order.by.row.count",
                f"expected one of {', '.join(ROW_COUNT_ORDERS)}, got {self.order_by_row_count!r}",
            )
        object.__setattr__(self, "select_overrides", MappingProxyType(dict(self.select_overrides)))

    @property
    def strategy(self) -> LockingStrategy:
        """The locking workflow; a custom lock plugin is asked for its statement on each call."""
        if self.custom_lock is not None and self.locking_mode == CUSTOM_LOCKING:
            return custom_locking(self.custom_lock, dt.timedelta(milliseconds=self.lock_timeout_ms))
        return locking_strategy(self.locking_mode)

    @property
    def snapshotter(self) -> Snapshotter:
        """``snapshot.mode``'s ``snapshot.spi.Snapshotter`` (built in or the custom plugin)."""
        return behaviour_for(self.mode, self.configuration_based, self.custom_snapshotter)

    @property
    def query(self) -> SnapshotQuery:
        """``snapshot.query.mode``'s ``snapshot.spi.SnapshotQuery``."""
        if self.custom_query is not None and self.query_mode == CUSTOM_QUERY:
            return self.custom_query
        return QUERY_MODES[self.query_mode]

    @property
    def chunked(self) -> bool:
        """Tables are cut into key-range chunks read at once (Debezium 3.5's default for
        ``snapshot.max.threads`` > 1; ``legacy.snapshot.max.threads=true`` keeps one table per thread)."""
        return self.max_threads > 1 and not self.legacy_max_threads

    @property
    def batch_rows(self) -> int:
        return self.fetch_size or DEFAULT_BATCH_ROWS

    def select_for(self, table_id: TableId, columns: Sequence[str]) -> str | None:
        """The SELECT reading ``table_id``'s rows: its ``snapshot.select.statement.overrides``
        entry, else ``snapshot.query.mode``'s query for the quoted ``columns``; None: not read."""
        override = self.select_overrides.get(table_id)
        if override is not None:
            return override
        return self.query.snapshot_query(table_id, columns)

    def snapshot_included(self, table_id: TableId) -> bool:
        return included_by(self.include_collections, table_id)

    @classmethod
    def from_config(cls, config: PropertySource) -> SnapshotSettings:
        """From the connector properties; a bad value raises an error naming the key and the fix."""

        def integer(key: str) -> int | None:
            return int_of(config, _DECLARED[key], error=SnapshotConfigError)

        def boolean(key: str, default: bool = False) -> bool:
            # The snapshot.mode.configuration.based.* options are not declared (a prefix passes them).
            text = config.get(key)
            return default if text is None else parse_bool(key, text, error=SnapshotConfigError)

        def text(key: str) -> str:
            return text_of(config, _DECLARED[key]) or ""

        overrides: dict[TableId, str] = {}
        listed = split_list(config.get(OVERRIDES_KEY))
        for name in listed:
            key = f"{OVERRIDES_KEY}.{name}"
            statement = config.get(key)
            try:
                table_id = TableId.parse(name)
            except ValueError:
                raise SnapshotConfigError(OVERRIDES_KEY, f"{name!r} is not a database.table name") from None
            if not statement:
                raise SnapshotConfigError(
                    key,
                    f"{name} is listed in {OVERRIDES_KEY} but {key} (the SELECT to run for it) is not set",
                )
            overrides[table_id] = statement
        for suffix in config.subset(OVERRIDES_KEY + "."):
            if suffix not in listed:
                log.warning(
                    "%s.%s is ignored: add %s to %s (a comma-separated list of database.table) to use it",
                    OVERRIDES_KEY,
                    suffix,
                    suffix,
                    OVERRIDES_KEY,
                )
        based = "snapshot.mode.configuration.based."
        plugins = load_plugins(config)
        return cls(
            mode=text(SNAPSHOT_MODE_KEY),
            locking_mode=text(LOCKING_MODE_KEY),
            query_mode=text(QUERY_MODE_KEY),
            custom_snapshotter=plugins.snapshotter,
            custom_query=plugins.query,
            custom_lock=plugins.lock,
            fetch_size=integer("snapshot.fetch.size"),
            max_threads=integer("snapshot.max.threads") or 1,
            legacy_max_threads=boolean("legacy.snapshot.max.threads"),
            max_threads_multiplier=integer("snapshot.max.threads.multiplier") or 1,
            lock_timeout_ms=integer("snapshot.lock.timeout.ms") or 0,
            select_overrides=overrides,
            include_collections=_regex_list(config, "snapshot.include.collection.list"),
            # Read by the snapshot too, declared by their owners (the history, the filters).
            store_only_captured_tables_ddl=boolean("schema.history.internal.store.only.captured.tables.ddl"),
            store_only_captured_databases_ddl=boolean(
                "schema.history.internal.store.only.captured.databases.ddl"
            ),
            ignore_builtin=boolean("table.ignore.builtin", True),
            table_include_order=_regex_list(config, "table.include.list"),
            signal_patterns=_regex_list(config, "signal.data.collection"),
            order_by_row_count=text("snapshot.tables.order.by.row.count").lower(),
            configuration_based=ConfigurationBasedMode(
                snapshot_data=boolean(based + "snapshot.data"),
                snapshot_schema=boolean(based + "snapshot.schema"),
                start_stream=boolean(based + "start.stream"),
                snapshot_on_schema_error=boolean(based + "snapshot.on.schema.error"),
                snapshot_on_data_error=boolean(based + "snapshot.on.data.error"),
            ),
        )


def _check_custom(key: str, selected: bool, plugin: object | None, name_key: str) -> None:
    if selected and plugin is None:
        raise SnapshotConfigError(
            key, f"custom needs a plugin: set {name_key} (an entry point name or package.module:Class)"
        )


def _selected(config: PropertySource, key: str) -> bool:
    return (text_of(config, _DECLARED[key]) or "").strip().lower() == "custom"


class Plugins(NamedTuple):
    """The plugins the ``custom`` modes name (None where the mode is built in)."""

    snapshotter: Snapshotter | None = None
    query: SnapshotQuery | None = None
    lock: SnapshotLock | None = None


def load_plugins(config: PropertySource) -> Plugins:
    """The plugins the ``custom`` modes name, loaded and configured with every connector property;
    a problem raises ``SnapshotConfigError`` naming the ``*.custom.name`` key."""
    everything = config.subset("")
    try:
        custom_mode = normalize_mode(config.get(SNAPSHOT_MODE_KEY)) == CUSTOM
    except ValueError:
        custom_mode = False  # reported by SnapshotSettings naming snapshot.mode
    for mode_key, name_key, selected in (
        (SNAPSHOT_MODE_KEY, SNAPSHOTTER.key, custom_mode),
        (QUERY_MODE_KEY, SNAPSHOT_QUERY.key, _selected(config, QUERY_MODE_KEY)),
        (LOCKING_MODE_KEY, SNAPSHOT_LOCK.key, _selected(config, LOCKING_MODE_KEY)),
    ):
        if config.get(name_key) and not selected:
            log.warning("%s is ignored: it names the plugin of %s=custom", name_key, mode_key)
    return Plugins(
        load_snapshotter(config.get(SNAPSHOTTER.key), everything) if custom_mode else None,
        load_snapshot_query(config.get(SNAPSHOT_QUERY.key), everything)
        if _selected(config, QUERY_MODE_KEY)
        else None,
        load_snapshot_lock(config.get(SNAPSHOT_LOCK.key), everything)
        if _selected(config, LOCKING_MODE_KEY)
        else None,
    )
