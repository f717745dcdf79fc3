"""Rebuilding the schema model from the schema history on restart.

``recover`` replays, in order, every history record of this connector's source partition whose
position is at or before the stored offset (Debezium's ``AbstractSchemaHistory.recover`` with the
binlog ``HistoryRecordComparator``). Records carrying ``tableChanges`` are applied from them
(the table definitions as they were); the others (SET, USE, CREATE/DROP DATABASE ...) are applied
again with the database they were recorded under: the plain shapes of those the snapshot writes
without the DDL grammar (``DdlParser.parse``), so that a start does not load sqlglot for them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from ddl.history.record import HistoryRecord
from ddl.history.serialize import parse_quoted_table_id, table_from_history
from ddl.history.store import SchemaHistory
from ddl.model import SchemaModel
from ddl.parsing.parser import DdlParseError, DdlParser
from mysql_cdc_base.errors import SchemaHistoryError
from mysql_cdc_base.position import SourceOffset

log = logging.getLogger(__name__)

RECOVERY_HINT = (
    "The connector has a stored offset but cannot rebuild the table structures it had then. "
    "Restore the schema history, or restart once with snapshot.mode=recovery to rebuild the schema "
    "history from the current table structures (safe only if no schema change happened since the "
    "stored offset)."
)


# --- position comparison ----------------------------------------------------------------------------


def is_position_at_or_before(recorded: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """Debezium's binlog history comparator: is ``recorded`` at or before ``desired``?"""
    return SourceOffset.from_map(recorded).is_at_or_before(SourceOffset.from_map(desired))


# --- replay -----------------------------------------------------------------------------------------


def recover(
    history: SchemaHistory,
    partition: Mapping[str, Any],
    offset: SourceOffset | Mapping[str, Any] | None,
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
    desired = SourceOffset.coerce(offset)
    try:
        records = list(history.records())
    except SchemaHistoryError as exc:
        if desired is None:
            raise
        raise SchemaHistoryError(f"{exc}. {RECOVERY_HINT}") from exc
    if desired is not None and not any(_same_source(r, partition) for r in records):
        raise SchemaHistoryError(
            f"the schema history holds no records for source {dict(partition)} although an offset "
            f"({desired.describe()}) is stored. {RECOVERY_HINT}"
        )
    model = SchemaModel()
    for record in records:
        if not record.position:
            log.warning("skipping schema history record without position: %s", record.ddl[:200])
            continue
        if not _same_source(record, partition):
            continue
        try:
            if desired is not None and not SourceOffset.from_map(record.position).is_at_or_before(desired):
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
