"""``snapshot.mode``: what a connector start does, as pure functions of the stored state.

Debezium spreads this over its ``Snapshotter`` implementations (``snapshot/mode/*``) and
``BaseSourceTask#validateSchemaHistory``; here the built-in modes are one decision table (reference
section 5.1) whose rows implement the same ``snapshot.spi.Snapshotter`` protocol as a custom plugin
(``snapshot.mode=custom``), and one function, ``decide``, that the engine calls once at start-up with
what it found in its offset and history stores and on the server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, NamedTuple

from snapshot.spi import Snapshotter

SNAPSHOT_MODE_KEY: Final = "snapshot.mode"

CUSTOM: Final = "custom"  # a snapshot.spi.Snapshotter named by snapshot.mode.custom.name
SNAPSHOT_MODES: Final = (
    "initial",
    "initial_only",
    "when_needed",
    "no_data",
    "recovery",
    "never",
    "always",
    "configuration_based",
    CUSTOM,
)
# Deprecated spellings Debezium still accepts.
MODE_ALIASES: Final = {"schema_only": "no_data", "schema_only_recovery": "recovery"}

# Where streaming starts after the start-up decision.
STREAM_FROM_SNAPSHOT: Final = "snapshot"  # the position read under the snapshot's lock
STREAM_FROM_OFFSET: Final = "offset"  # the stored offset
STREAM_FROM_BEGINNING: Final = "beginning"  # the oldest binlog on the server (no offset, no snapshot)

ShouldSnapshot = Callable[[bool, bool], bool]  # (offset_exists, snapshot_in_progress) -> bool


def _first_start_or_unfinished(offset_exists: bool, snapshot_in_progress: bool) -> bool:
    # "a snapshot interrupted by a crash starts over on restart"
    return not offset_exists or snapshot_in_progress


def _always(offset_exists: bool, snapshot_in_progress: bool) -> bool:
    return True


def _never(offset_exists: bool, snapshot_in_progress: bool) -> bool:
    return False


class BuiltinSnapshotter(NamedTuple):
    """One row of the decision table: a built-in mode as an implementation of the
    ``snapshot.spi.Snapshotter`` protocol (Debezium's ``snapshot/mode/*`` classes)."""

    mode: str
    snapshot_schema: ShouldSnapshot
    snapshot_data: ShouldSnapshot
    stream: bool = True
    # May rebuild a lost schema history from the current schema (``recovery``).
    snapshot_on_schema_error: bool = False
    # May throw the offsets away and snapshot again when the stored position was purged (``when_needed``).
    snapshot_on_data_error: bool = False
    # False: after the snapshot, stream from the stored offset, not from the snapshot's position.
    stream_from_snapshot: bool = True

    def name(self) -> str:
        return self.mode

    def configure(self, properties: Mapping[str, str]) -> None:
        """The built-in modes take no properties of their own."""

    def should_snapshot_data(self, offset_exists: bool, snapshot_in_progress: bool) -> bool:
        return self.snapshot_data(offset_exists, snapshot_in_progress)

    def should_snapshot_schema(self, offset_exists: bool, snapshot_in_progress: bool) -> bool:
        return self.snapshot_schema(offset_exists, snapshot_in_progress)

    def should_stream(self) -> bool:
        return self.stream

    def should_snapshot_on_schema_error(self) -> bool:
        return self.snapshot_on_schema_error

    def should_snapshot_on_data_error(self) -> bool:
        return self.snapshot_on_data_error

    def should_stream_events_starting_from_snapshot(self) -> bool:
        return self.stream_from_snapshot

    def snapshot_completed(self) -> None:
        """Nothing to do for a built-in mode."""

    def snapshot_aborted(self) -> None:
        """Nothing to do for a built-in mode."""


MODES: Final[dict[str, BuiltinSnapshotter]] = {
    s.mode: s
    for s in (
        BuiltinSnapshotter("initial", _first_start_or_unfinished, _first_start_or_unfinished),
        BuiltinSnapshotter(
            "initial_only", _first_start_or_unfinished, _first_start_or_unfinished, stream=False
        ),
        BuiltinSnapshotter(
            "when_needed", _first_start_or_unfinished, _first_start_or_unfinished, snapshot_on_data_error=True
        ),
        BuiltinSnapshotter("no_data", _first_start_or_unfinished, _never),
        BuiltinSnapshotter(
            "recovery", _always, _never, snapshot_on_schema_error=True, stream_from_snapshot=False
        ),
        BuiltinSnapshotter("never", _never, _never),
        BuiltinSnapshotter("always", _always, _always),
    )
}


class ConfigurationBasedMode(NamedTuple):
    """``snapshot.mode=configuration_based``: the ``snapshot.mode.configuration.based.*`` flags."""

    snapshot_data: bool = False
    snapshot_schema: bool = False
    start_stream: bool = False
    snapshot_on_schema_error: bool = False
    snapshot_on_data_error: bool = False

    def behaviour(self) -> BuiltinSnapshotter:
        schema, data = self.snapshot_schema, self.snapshot_data
        return BuiltinSnapshotter(
            "configuration_based",
            lambda _o, _p: schema,
            lambda _o, _p: data,
            stream=self.start_stream,
            snapshot_on_schema_error=self.snapshot_on_schema_error,
            snapshot_on_data_error=self.snapshot_on_data_error,
        )


class SnapshotPlan(NamedTuple):
    """What to do at start-up. When ``error`` is set the connector must stop with that message."""

    mode: str
    snapshot_schema: bool = False
    snapshot_data: bool = False
    stream: bool = False
    # Discard the stored offsets first (when_needed after a purge): the start is then a first start.
    reset_offsets: bool = False
    stream_from: str | None = None  # STREAM_FROM_* or None when not streaming
    error: str | None = None

    @property
    def snapshot(self) -> bool:
        return self.snapshot_schema or self.snapshot_data


def normalize_mode(value: str | None) -> str:
    """The canonical mode name; aliases resolved. Raises ``ValueError`` naming the key and the fix."""
    text = (value or "initial").strip().lower()
    text = MODE_ALIASES.get(text, text)
    if text not in SNAPSHOT_MODES:
        raise ValueError(
            f"{SNAPSHOT_MODE_KEY}: expected one of {', '.join(SNAPSHOT_MODES)} "
            f"(or the aliases {', '.join(MODE_ALIASES)}), got {value!r}"
        )
    return text


def behaviour_for(
    mode: str, configuration: ConfigurationBasedMode | None = None, custom: Snapshotter | None = None
) -> Snapshotter:
    """The ``Snapshotter`` of ``mode``: a built-in row, the configuration-based flags, or the
    loaded plugin (``custom``, required for ``snapshot.mode=custom``)."""
    canonical = normalize_mode(mode)
    if canonical == "configuration_based":
        return (configuration or ConfigurationBasedMode()).behaviour()
    if canonical == CUSTOM:
        if custom is None:
            raise ValueError(
                f"{SNAPSHOT_MODE_KEY}: custom needs a snapshotter, named by snapshot.mode.custom.name "
                "(an entry point of mysql_cdc.snapshotters or package.module:Class)"
            )
        return custom
    return MODES[canonical]


def purged_position_message(position: str | None, reason: str | None = None) -> str:
    where = f"binlog starting at {position}" if position else "binlog starting at its stored offset"
    why = reason or "the binlog was purged"
    return (
        f"The connector is trying to read {where}, but this is no longer available on the server "
        f"({why}). Restore or point the connector at a server that has it, or: a new snapshot is required: set snapshot.mode=when_needed to take "
        "one automatically on the next start (or snapshot.mode=always to snapshot on every start), "
        "or delete the stored offsets and schema history to start over with snapshot.mode=initial. "
        "Also raise the server's binlog retention (binlog_expire_logs_seconds / expire_logs_days)."
    )


UNFINISHED_SNAPSHOT_MESSAGE: Final = (
    "The connector previously stopped while taking a snapshot, but now the connector is configured "
    "to never allow snapshots. Reconfigure the connector to use snapshots initially or when needed "
    "(snapshot.mode=initial or when_needed)."
)

MISSING_HISTORY_MESSAGE: Final = (
    "The schema history is missing although offsets exist. You may attempt to recover it by "
    "reconfiguring the connector to snapshot.mode=recovery (this assumes no schema change happened "
    "since the stored offset), or delete the offsets to start over with a new snapshot."
)

RECOVERY_WITHOUT_OFFSET_MESSAGE: Final = (
    "Could not find existing binlog information while attempting schema only recovery snapshot: "
    "snapshot.mode=recovery needs stored offsets. For a first start use snapshot.mode=initial "
    "(or no_data for schema only)."
)


def decide(
    mode: str,
    offset_exists: bool,
    snapshot_in_progress: bool,
    position_purged: bool = False,
    *,
    history_exists: bool = True,
    position: str | None = None,
    configuration: ConfigurationBasedMode | None = None,
    purge_reason: str | None = None,
    custom: Snapshotter | None = None,
) -> SnapshotPlan:
    """Debezium's start-up decision.

    ``offset_exists``: an offset is stored for this connector. ``snapshot_in_progress``: that offset
    carries ``snapshot: INITIAL`` (or legacy ``true``), i.e. a snapshot was interrupted.
    ``position_purged``: the stored file (or a GTID it needs) is no longer on the server.
    ``history_exists``: the schema history store has records. ``position`` and ``purge_reason``
    (what exactly the server lacks) only feed the message. ``custom``: the plugin of
    ``snapshot.mode=custom``. Only the ``Snapshotter`` protocol's methods are asked.
    """
    canonical = normalize_mode(mode)
    b = behaviour_for(canonical, configuration, custom)
    stream, stream_from_snapshot = b.should_stream(), b.should_stream_events_starting_from_snapshot()
    on_schema_error, on_data_error = b.should_snapshot_on_schema_error(), b.should_snapshot_on_data_error()

    def plan(schema: bool, data: bool, *, reset: bool = False, has_offset: bool = True) -> SnapshotPlan:
        snapshotting = schema or data
        if not stream:
            stream_from = None
        elif snapshotting and (stream_from_snapshot or not has_offset):
            stream_from = STREAM_FROM_SNAPSHOT
        elif has_offset:
            stream_from = STREAM_FROM_OFFSET
        else:
            stream_from = STREAM_FROM_BEGINNING
        return SnapshotPlan(canonical, schema, data, stream, reset, stream_from)

    def fail(message: str) -> SnapshotPlan:
        return SnapshotPlan(canonical, error=message)

    if not offset_exists:
        if on_schema_error:
            return fail(RECOVERY_WITHOUT_OFFSET_MESSAGE)
        return plan(
            b.should_snapshot_schema(False, False), b.should_snapshot_data(False, False), has_offset=False
        )

    if snapshot_in_progress:
        schema, data = b.should_snapshot_schema(True, True), b.should_snapshot_data(True, True)
        if not schema and not data:
            return fail(UNFINISHED_SNAPSHOT_MESSAGE)
        # The interrupted snapshot's offset is worthless: the new snapshot starts over and replaces it.
        return plan(schema, data, has_offset=False)

    schema, data = b.should_snapshot_schema(True, False), b.should_snapshot_data(True, False)
    streams_from_stored_offset = stream and not (data and stream_from_snapshot)
    if not history_exists:
        if not on_schema_error:
            return fail(MISSING_HISTORY_MESSAGE)
        if position_purged:
            return fail(purged_position_message(position, purge_reason))
        return plan(True, data)
    if position_purged and streams_from_stored_offset:
        if on_data_error:
            # Debezium resets the offsets; what follows is a first start.
            return plan(
                b.should_snapshot_schema(False, False),
                b.should_snapshot_data(False, False),
                reset=True,
                has_offset=False,
            )
        return fail(purged_position_message(position, purge_reason))
    return plan(schema, data)
