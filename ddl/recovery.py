"""Rebuilding the schema model from the schema history on restart.

``recover`` replays, in order, every history record of this connector's source partition whose
position is at or before the stored offset (Debezium's ``AbstractSchemaHistory.recover`` with the
binlog ``HistoryRecordComparator``). Records carrying ``tableChanges`` are applied from them
(the table definitions as they were); the others (SET, USE, CREATE/DROP DATABASE ...) are parsed
again with the database they were recorded under.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ddl.history import HistoryRecord, SchemaHistory, SchemaHistoryError
from ddl.model import SchemaModel
from ddl.parser import DdlParseError, DdlParser
from ddl.serialize import parse_quoted_table_id, table_from_history

log = logging.getLogger(__name__)

RECOVERY_HINT = (
    "The connector has a stored offset but cannot rebuild the table structures it had then. "
    "Restore the schema history, or restart once with snapshot.mode=recovery to rebuild the schema "
    "history from the current table structures (safe only if no schema change happened since the "
    "stored offset)."
)


# --- GTID sets --------------------------------------------------------------------------------------

_MYSQL_GTID_ELEMENT = re.compile(r"^\s*([0-9A-Fa-f-]{36})((?::\d+(?:-\d+)?)+)\s*$")
_MARIADB_GTID_ELEMENT = re.compile(r"^\s*(\d+)-(\d+)-(\d+)\s*$")


@dataclass(frozen=True)
class GtidSet:
    """A MySQL GTID set (``uuid:1-5:7,uuid2:1-3``) or a MariaDB GTID position (``0-1-100,1-2-7``).

    ``contains`` answers "is every transaction of ``other`` also in this set", the subset test of
    Debezium's history record comparator. MariaDB positions are compared per replication domain by
    sequence number.
    """

    mysql: Mapping[str, tuple[tuple[int, int], ...]]
    mariadb: Mapping[int, int]

    @classmethod
    def parse(cls, text: str) -> GtidSet:
        mysql: dict[str, list[tuple[int, int]]] = {}
        mariadb: dict[int, int] = {}
        for element in text.replace("\n", "").split(","):
            if not element.strip():
                continue
            match = _MYSQL_GTID_ELEMENT.match(element)
            if match:
                intervals = mysql.setdefault(match.group(1).lower(), [])
                for part in match.group(2).strip(":").split(":"):
                    low, _, high = part.partition("-")
                    intervals.append((int(low), int(high or low)))
                continue
            match = _MARIADB_GTID_ELEMENT.match(element)
            if match:
                domain, sequence = int(match.group(1)), int(match.group(3))
                mariadb[domain] = max(mariadb.get(domain, 0), sequence)
                continue
            raise SchemaHistoryError(f"invalid GTID set {text!r}")
        return cls({uuid: _merge(intervals) for uuid, intervals in mysql.items()}, mariadb)

    def contains(self, other: GtidSet) -> bool:
        for uuid, intervals in other.mysql.items():
            mine = self.mysql.get(uuid, ())
            if not all(any(lo <= a and b <= hi for lo, hi in mine) for a, b in intervals):
                return False
        return all(self.mariadb.get(domain, -1) >= seq for domain, seq in other.mariadb.items())


def _merge(intervals: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(intervals):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)


# --- position comparison ----------------------------------------------------------------------------


def _int(position: Mapping[str, Any], key: str) -> int:
    value = position.get(key)
    try:
        return int(value) if value is not None else 0
    except (TypeError, ValueError):
        return 0


def _is_snapshot(position: Mapping[str, Any]) -> bool:
    value = position.get("snapshot")
    if isinstance(value, str):
        return value.lower() not in ("", "false")
    return bool(value)


def _binlog_file(position: Mapping[str, Any]) -> tuple[str, int]:
    name = str(position.get("file") or "")
    base, _, extension = name.rpartition(".")
    return (base, int(extension)) if extension.isdigit() else (name, 0)


def is_position_at_or_before(recorded: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """Debezium's binlog history comparator: is ``recorded`` at or before ``desired``?"""
    recorded_gtids = recorded.get("gtids") or None
    desired_gtids = desired.get("gtids") or None
    if desired_gtids is not None:
        if recorded_gtids is None:
            # GTIDs are enabled later, never disabled: a position without them is older.
            return True
        recorded_set = GtidSet.parse(str(recorded_gtids))
        desired_set = GtidSet.parse(str(desired_gtids))
        if recorded_set == desired_set:
            if not _is_snapshot(recorded) and _is_snapshot(desired):
                return False
            return _int(recorded, "event") <= _int(desired, "event")
        return desired_set.contains(recorded_set)
    if recorded_gtids is not None:
        return False
    if _int(recorded, "server_id") != _int(desired, "server_id"):
        return _int(recorded, "ts_sec") <= _int(desired, "ts_sec")
    recorded_file, desired_file = _binlog_file(recorded), _binlog_file(desired)
    if recorded_file[0] != desired_file[0]:
        # Binlog base name changed (server rebuilt/renamed): the recorded DDL is older.
        return True
    for key_recorded, key_desired in (
        (recorded_file[1], desired_file[1]),
        (_int(recorded, "pos"), _int(desired, "pos")),
        (_int(recorded, "event"), _int(desired, "event")),
    ):
        if key_recorded != key_desired:
            return key_recorded < key_desired
    return _int(recorded, "row") <= _int(desired, "row")


# --- replay -----------------------------------------------------------------------------------------


def recover(
    history: SchemaHistory,
    partition: Mapping[str, Any],
    offset: Mapping[str, Any] | None,
    parser: DdlParser,
    *,
    skip_unparseable: bool = False,
    prefer_ddl: bool = False,
    ddl_filter: Callable[[str], bool] | None = None,
) -> SchemaModel:
    """The schema model at ``offset``, rebuilt from ``history`` alone.

    ``offset`` None means "everything recorded". Raises ``SchemaHistoryError`` (pointing to
    ``snapshot.mode=recovery``) when an offset exists but the history is missing or unreadable.
    ``ddl_filter`` returns True for statements to skip (``schema.history.internal.ddl.filter``).
    """
    try:
        records = list(history.records())
    except SchemaHistoryError as exc:
        if offset is None:
            raise
        raise SchemaHistoryError(f"{exc}. {RECOVERY_HINT}") from exc
    if offset is not None and not any(_same_source(r, partition) for r in records):
        raise SchemaHistoryError(
            f"the schema history holds no records for source {dict(partition)} although an offset "
            f"{dict(offset)} is stored. {RECOVERY_HINT}"
        )
    model = SchemaModel()
    for record in records:
        if not record.position:
            log.warning("skipping schema history record without position: %s", record.ddl[:200])
            continue
        if not _same_source(record, partition):
            continue
        try:
            if offset is not None and not is_position_at_or_before(record.position, offset):
                continue
        except SchemaHistoryError as exc:
            raise SchemaHistoryError(f"{exc}. {RECOVERY_HINT}") from exc
        model = _replay(record, model, parser, skip_unparseable, prefer_ddl, ddl_filter)
    return model


def _same_source(record: HistoryRecord, partition: Mapping[str, Any]) -> bool:
    return dict(record.source) == dict(partition)


def _replay(
    record: HistoryRecord,
    model: SchemaModel,
    parser: DdlParser,
    skip_unparseable: bool,
    prefer_ddl: bool,
    ddl_filter: Callable[[str], bool] | None,
) -> SchemaModel:
    if record.table_changes and not prefer_ddl:
        return _apply_table_changes(record, model)
    if ddl_filter is not None and ddl_filter(record.ddl):
        return model
    try:
        return parser.parse(record.ddl, model, record.database_name or None).model
    except DdlParseError as exc:
        if skip_unparseable:
            log.warning(
                "skipping unparseable DDL in schema history "
                "(schema.history.internal.skip.unparseable.ddl=true): %s",
                exc,
            )
            return model
        raise SchemaHistoryError(
            f"cannot replay schema history record at {dict(record.position)}: {exc}. {RECOVERY_HINT}"
        ) from exc


def _apply_table_changes(record: HistoryRecord, model: SchemaModel) -> SchemaModel:
    for change in record.table_changes:
        kind = change.get("type")
        try:
            table_id = parse_quoted_table_id(str(change["id"]))
        except KeyError as exc:
            raise SchemaHistoryError(
                f"tableChanges element without id in record {record.ddl[:200]!r}. {RECOVERY_HINT}"
            ) from exc
        if kind == "DROP":
            model = model.with_tables(remove=[table_id])
        elif kind in ("CREATE", "ALTER"):
            table = table_from_history(change)
            remove = [parse_quoted_table_id(str(change["previousId"]))] if change.get("previousId") else []
            model = model.with_tables(put=[table], remove=remove)
        else:
            raise SchemaHistoryError(f"unknown tableChanges type {kind!r} in schema history. {RECOVERY_HINT}")
    return model
