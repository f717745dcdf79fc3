"""Batch reduction: one table's share of a batch becomes changelog rows and, for keyed tables, the
net effect per key (last image wins, deletes remember the key, truncate clears), cut into segments
where the table's schema changes."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.types import StringType, StructField, StructType

from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord
from mysql_cdc_base.table_id import TableId
from sink.spark.evolution import fill_value
from sink.spark_mapping import RowConvert, merge_struct, metadata_values

log = logging.getLogger(__name__)

DELETED: Any = None  # a key whose row the batch removes


@dataclass
class TableState:
    """What the sink knows of one captured table's two Delta tables (read back from them on start)."""

    table_id: TableId
    current_name: str
    changelog_name: str
    current_path: str
    changelog_path: str
    key: tuple[str, ...] | None = None  # None: not known yet; (): no key (changelog only)
    current_schema: StructType | None = None  # None: no current-state table yet
    changelog_schema: StructType | None = None  # the row columns (without __op ...); None: no table yet
    # The row type (JSON) of the last schema applied, to notice when events change it.
    row_type_json: str | None = None
    # Column renames (old, new) of DDL not applied yet: the table's next change event applies them.
    pending_renames: list[tuple[str, str]] = field(default_factory=list)
    # The offset of the last event each Delta table holds (replays at or before it are skipped).
    current_offset: SourceOffset | None = None
    changelog_offset: SourceOffset | None = None
    # The changelog columns (with types) this process last brought the changelog to: a part whose
    # columns equal it needs no look at the table's schema (one query less per commit).
    changelog_checked: StructType | None = None
    # Per Delta table path: the version to restore when the snapshot in progress is interrupted,
    # and the offset the table held at that version.
    snapshot_base: dict[str, tuple[int, SourceOffset | None]] = field(default_factory=dict)
    # Per Delta table path: whether it held no row when the snapshot in progress began (asked at
    # the snapshot's first rows step).
    snapshot_empty: dict[str, bool] = field(default_factory=dict)
    # The events' key is the MySQL table's primary key, so an insert event says that no row with
    # its key exists (not so for message.key.columns, or when events may arrive again from Kafka).
    inserts_are_new: bool = False

    @property
    def keyed(self) -> bool:
        return bool(self.key)


@dataclass
class SchemaInfo:
    row_type: StructType
    row_type_json: str
    node: Mapping[str, Any]
    convert: RowConvert


@dataclass
class RowsStep:
    schema: StructType  # the current-state schema the rows are in
    key: tuple[str, ...]
    net: dict[tuple[Any, ...], tuple[Any, ...] | None]
    truncated: bool
    offset: SourceOffset | None  # the last event's
    # Every key's first event in the step was an insert of a key the table does not hold: the rows
    # are appended (no MERGE). With ``snapshot_rows`` (reads of an initial or blocking snapshot)
    # that holds only if the table was empty when the snapshot began.
    inserts_only: bool = False
    snapshot_rows: bool = False


@dataclass
class EvolveStep:
    old: StructType
    new: StructType
    sources: dict[str, str]  # new column -> old column it takes its values from
    fills: dict[str, Any]  # new column -> fill value for existing rows
    key: tuple[str, ...]
    offset: SourceOffset | None  # the last event before it


@dataclass
class ChangelogPart:
    row_type: StructType  # the events' row type
    table_schema: StructType  # the changelog's row columns after this part
    rows: list[tuple[Any, ...]]
    offset: SourceOffset | None  # the last event's


NOT_WHOLE_SNAPSHOT = frozenset({None, "false", "incremental"})


def _snapshot_marker(source: object) -> object:
    return source.get("snapshot") if isinstance(source, Mapping) else None


def _string_for(schema: StructType, names: list[str]) -> StructType:
    lowered = {n.lower() for n in names}
    return StructType(
        [StructField(f.name, StringType(), True) if f.name.lower() in lowered else f for f in schema.fields]
    )


class TableBatch:
    """Collects one table's events of a batch: changelog rows and the net effect per key."""

    def __init__(self, state: TableState) -> None:
        self.state = state
        self.steps: list[RowsStep | EvolveStep] = []
        self.parts: list[ChangelogPart] = []
        self.events = 0
        self._info: SchemaInfo | None = None
        self._rows: list[tuple[Any, ...]] = []
        self._net: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}
        self._truncated = False
        self._key_index: tuple[int, ...] = ()
        self._width = 0
        self._last: SourceOffset | None = None  # the last event's offset (any Delta table)
        self._rows_last: SourceOffset | None = None
        self._net_last: SourceOffset | None = None
        self._inserts_only = True
        self._snapshot_rows = False

    # -- events ------------------------------------------------------------------------------
    def add(
        self,
        record: ChangeRecord,
        info: SchemaInfo,
        key: tuple[str, ...] | None,
        offset: SourceOffset | None,
        to_changelog: bool = True,
        to_current: bool = True,
    ) -> None:
        """``key``: the event's key columns; None when the event does not say (truncate).
        ``to_changelog``/``to_current``: the Delta table does not hold the event yet."""
        if (
            self._info is None
            or info.row_type_json != self.state.row_type_json
            or (key is not None and key != self.state.key)
        ):
            self.evolve(info, key)
        assert self._info is not None
        self._last = offset or self._last
        value = record.value
        op = value.get("op")
        image = value.get("before") if op == "d" else value.get("after")
        row = info.convert(image) if image is not None else (None,) * len(info.row_type.fields)
        self.events += 1
        if to_changelog:
            self._rows.append((*row, *metadata_values(value)))
            self._rows_last = offset or self._rows_last
        if not self.state.keyed or not to_current:
            return
        self._net_last = offset or self._net_last
        if op == "t":
            self._net.clear()
            self._truncated = True
            return
        if image is None:
            return
        row_key = tuple(row[i] for i in self._key_index)
        if self._inserts_only and row_key not in self._net:
            self._note_first(op, offset, value.get("source"))
        if op == "d":
            self._net[row_key] = DELETED
            return
        if op == "u":
            before = value.get("before")
            if before is not None:
                old = info.convert(before)
                old_key = tuple(old[i] for i in self._key_index)
                if old_key != row_key:  # a key change the event builder did not split
                    if old_key not in self._net:
                        self._inserts_only = False
                    self._net[old_key] = DELETED
        self._net[row_key] = row + (None,) * (self._width - len(row))

    def _note_first(self, op: object, offset: SourceOffset | None, source: object) -> None:
        """A key's first event in the step: only an insert says the table cannot hold the key."""
        if not self.state.inserts_are_new or offset is None:
            self._inserts_only = False
        elif op == "c" and offset.has_position and not offset.in_snapshot:
            pass  # MySQL inserted it: no row had the key at the table's last committed event
        elif op == "r" and _snapshot_marker(source) not in NOT_WHOLE_SNAPSHOT:
            # An initial or blocking snapshot reads each row once (its last row's offset is the
            # completed one); an incremental snapshot's rows race with the table's own events.
            self._snapshot_rows = True
        else:
            self._inserts_only = False

    def note_offset(self, offset: SourceOffset | None) -> None:
        """A schema change event of the table: evolution steps after it carry its offset."""
        self._last = offset or self._last

    def evolve(self, info: SchemaInfo, key: tuple[str, ...] | None) -> None:
        """Make ``info`` the table's schema from here on (segments before it keep theirs)."""
        self._close_segment()
        state = self.state
        key = self._settle_key(key)
        if key:
            self._evolve_current(info, key)
        state.key = key
        self._evolve_changelog(info)
        state.row_type_json = info.row_type_json
        state.pending_renames = []
        self._info = info

    def rename(self, renames: list[tuple[str, str]]) -> None:
        """Column renames (old, new) of a schema change whose new row type is not certain yet (the
        table's next event carries it): the current-state table renames the columns now, values
        and types kept. Kept only in memory until that event, they would be lost to a restart in
        between (the batch's commits move the resume point past the schema change), and the event
        would then read as a drop and an add: the renamed column null on every older row."""
        state = self.state
        old = state.current_schema
        if old is None or not state.keyed:
            return
        names = {f.name.lower(): f.name for f in old.fields}
        mapping: dict[str, str] = {}
        for before, after in renames:
            source = names.get(before.lower())
            if source is not None and after.lower() not in names and source not in mapping:
                mapping[source] = after
                names.pop(before.lower())
                names[after.lower()] = after
        if not mapping:
            return
        self._close_segment()
        new = StructType(
            [StructField(mapping.get(f.name, f.name), f.dataType, f.nullable, f.metadata) for f in old.fields]
        )
        key = tuple(mapping.get(k, k) for k in state.key or ())
        sources = {mapping.get(f.name, f.name): f.name for f in old.fields}
        self.steps.append(EvolveStep(old, new, sources, {}, key, self._last))
        log.info(
            "table %s: column(s) %s renamed",
            state.table_id,
            ", ".join(f"{o} to {n}" for o, n in mapping.items()),
        )
        state.current_schema, state.key = new, key
        # The next event evolves from the renamed table (its own row type decides the rest).
        state.row_type_json, self._info = None, None
        done = {o.lower() for o in mapping}
        state.pending_renames = [(o, n) for o, n in state.pending_renames if o.lower() not in done]

    def _settle_key(self, key: tuple[str, ...] | None) -> tuple[str, ...] | None:
        state = self.state
        if key is None:  # not known yet (a truncate as first event): no current state so far
            return state.key
        if state.key is None or key == state.key:
            return key
        if not state.key:
            log.warning(
                "table %s got a key (%s) but was captured without one: it stays a changelog-only "
                "table (re-snapshot into a new warehouse to build its current state)",
                state.table_id,
                ", ".join(key),
            )
            return ()
        log.info(
            "table %s: key changes from (%s) to (%s)",
            state.table_id,
            ", ".join(state.key),
            ", ".join(key) or "none",
        )
        if not key:
            log.warning(
                "table %s lost its key: its current-state table %s is no longer updated",
                state.table_id,
                state.current_name,
            )
        return key

    def _evolve_current(self, info: SchemaInfo, key: tuple[str, ...]) -> None:
        state = self.state
        new_row = info.row_type
        old = state.current_schema
        target = StructType(list(new_row.fields))
        if old is not None:
            live = {f.name.lower() for f in new_row.fields}
            old_names = {f.name.lower(): f.name for f in old.fields}
            renames = {
                n.lower(): o
                for o, n in state.pending_renames
                if o.lower() in old_names and o.lower() not in live and n.lower() not in old_names
            }
            sources: dict[str, str] = {}
            fills: dict[str, Any] = {}
            nodes = {f["field"].lower(): f for f in info.node.get("fields") or ()}
            for f in new_row.fields:
                name = f.name.lower()
                if name in old_names:
                    sources[f.name] = old_names[name]
                elif name in renames:
                    sources[f.name] = old_names[renames[name].lower()]
                    log.info("table %s: column %s renamed to %s", state.table_id, renames[name], f.name)
                else:
                    fills[f.name] = fill_value(nodes.get(name, {}), f.dataType)
            if target != old or key != state.key:
                self.steps.append(EvolveStep(old, target, sources, fills, key, self._last))
        state.current_schema = target
        names = [f.name.lower() for f in new_row.fields]
        self._key_index = tuple(names.index(k.lower()) for k in key)
        self._width = len(target.fields)

    def _evolve_changelog(self, info: SchemaInfo) -> None:
        state = self.state
        new_row = info.row_type
        if state.changelog_schema is None:
            state.changelog_schema = StructType(list(new_row.fields))
            return
        renamed = {o.lower(): n for o, n in state.pending_renames}
        merged, conflicts = merge_struct(state.changelog_schema, new_row)
        if conflicts:
            log.warning(
                "table %s: column(s) %s changed type incompatibly; the changelog %s keeps them as "
                "strings (earlier values converted to text, nothing dropped)",
                state.table_id,
                ", ".join(conflicts),
                state.changelog_name,
            )
            merged = _string_for(merged, conflicts)
        if renamed:
            log.info(
                "table %s: renamed column(s) %s get new changelog columns; the old ones keep the history",
                state.table_id,
                ", ".join(f"{o}->{n}" for o, n in state.pending_renames),
            )
        state.changelog_schema = merged

    def _close_segment(self) -> None:
        state = self.state
        if self._rows and self._info is not None:
            assert state.changelog_schema is not None
            self.parts.append(
                ChangelogPart(self._info.row_type, state.changelog_schema, self._rows, self._rows_last)
            )
        if state.keyed and (self._net or self._truncated):
            assert state.current_schema is not None and state.key
            self.steps.append(
                RowsStep(
                    state.current_schema,
                    state.key,
                    self._net,
                    self._truncated,
                    self._net_last,
                    inserts_only=self._inserts_only and not self._truncated,
                    snapshot_rows=self._snapshot_rows,
                )
            )
        self._rows, self._net, self._truncated = [], {}, False
        self._inserts_only, self._snapshot_rows = True, False

    def finish(self) -> None:
        self._close_segment()
