"""The connector's knowledge of table structures over time.

Every DDL statement the connector meets (in the snapshot or in the binlog) goes through
``SchemaState.apply``: parsed into a new ``SchemaModel``, recorded in the schema history with its
position, and turned into schema change records. On restart ``recover`` rebuilds the model from the
history alone, up to the stored offset.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from connector.dispatch.settings import SchemaStateSettings
from connector.records.builder import EventBuilder, SourcePosition, schema_change_record
from connector.records.filters import TableFilter
from connector.records.transactions import java_hashmap_order
from ddl.history.record import HistoryRecord
from ddl.history.serialize import table_change_to_history, table_change_to_schema_change_payload
from ddl.history.store import SchemaHistory
from ddl.model import SchemaModel
from ddl.parsing.parser import DdlParseError, DdlParser, ParsedStatement
from ddl.parsing.quoting import single_quoted_strings
from mysql_cdc_base.errors import DdlError
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.properties import PropertyReader
from mysql_cdc_base.records import ChangeRecord
from mysql_cdc_base.table_id import TableId

log = logging.getLogger(__name__)


class UnparseableDdlError(DdlError, RuntimeError):
    pass


class SchemaState:
    def __init__(
        self,
        config: PropertyReader,
        parser: DdlParser,
        history: SchemaHistory,
        table_filter: TableFilter,
        builder: EventBuilder,
        settings: SchemaStateSettings | None = None,
    ) -> None:
        self.config = config
        self.parser = parser
        self.history = history
        self.filter = table_filter
        self.builder = builder
        self.partition = {"server": config.topic_prefix}
        self.model = SchemaModel()
        self.settings = settings or SchemaStateSettings.from_config(config)

    def apply(
        self,
        ddl: str,
        database: str | None,
        history_position: Mapping[str, Any],
        where: SourcePosition,
        record_offset: Mapping[str, Any] | None,
    ) -> tuple[list[ChangeRecord], list[ParsedStatement]]:
        """Apply one query event's (or snapshot step's) DDL text."""
        if self.settings.ddl_filter(ddl) and not _is_truncate(ddl):
            # Debezium's schema.history.internal.ddl.filter: neither applied, stored nor emitted.
            # TRUNCATE is in the default list but must still become an op "t" event.
            return [], []
        try:
            result = self.parser.parse(ddl, self.model, database)
        except DdlParseError as exc:
            where_text = f"{where.file}:{where.pos}"
            if self.settings.skip_unparseable:
                log.warning(
                    "skipping unparseable DDL at %s (schema.history.internal.skip.unparseable.ddl=true): %s",
                    where_text,
                    exc,
                )
                return [], []
            if database and not self.filter.database_captured(database):
                log.warning(
                    "skipping unparseable DDL at %s in non-captured database %s: %s",
                    where_text,
                    database,
                    exc,
                )
                return [], []
            raise UnparseableDdlError(
                f"cannot parse the DDL statement at binlog position {where_text}: {exc}. Fix or report "
                "the statement; to skip such statements set "
                "schema.history.internal.skip.unparseable.ddl=true"
            ) from exc
        self.model = result.model
        records: list[ChangeRecord] = []
        ts_ms = self.builder.clock() // 1_000_000
        for statement in result.statements:
            if statement.kind == "ignored" or statement.kind == "truncate":
                continue
            if not self._should_store(statement):
                continue
            history_changes = tuple(table_change_to_history(c) for c in statement.table_changes)
            self.history.record(
                HistoryRecord(
                    source=self.partition,
                    position=SourceOffset.from_map(history_position).to_map(),
                    ts_ms=ts_ms,
                    ddl=single_quoted_strings(statement.ddl),
                    database_name=statement.database,
                    schema_name=None,
                    table_changes=history_changes,
                )
            )
            if self.settings.include_schema_changes:
                records.extend(self._schema_change_records(statement, where, record_offset, ts_ms))
        return records, list(result.statements)

    def _tables_of(self, statement: ParsedStatement) -> list[TableId]:
        return [c.id for c in statement.table_changes] + list(statement.truncated)

    def _should_store(self, statement: ParsedStatement) -> bool:
        tables = self._tables_of(statement)
        if (
            self.settings.only_captured_dbs
            and statement.database
            and not self.filter.database_captured(statement.database)
        ):
            return False
        if self.settings.only_captured_tables and tables:
            return any(self.filter.table_captured(t) for t in tables)
        return True

    def _schema_change_records(
        self,
        statement: ParsedStatement,
        where: SourcePosition,
        record_offset: Mapping[str, Any] | None,
        ts_ms: int,
    ) -> list[ChangeRecord]:
        # Debezium groups a statement's table changes per database: one record each.
        by_db: dict[str, list[Any]] = {}
        for change in statement.table_changes:
            by_db.setdefault(change.id.database, []).append(change)
        if not by_db:
            by_db[statement.database or ""] = []
        out = []
        for db, changes in by_db.items():
            names = _source_tables(statement, db, changes, where.snapshot is None)
            source = self.builder.source(None, where, table_names=names)
            source["db"] = db
            payload = [table_change_to_schema_change_payload(c) for c in changes]
            ddl = single_quoted_strings(statement.ddl)
            out.append(schema_change_record(self.builder, db, ddl, payload, source, record_offset, ts_ms))
        return out

    def truncated_tables(self, statements: Sequence[ParsedStatement]) -> list[TableId]:
        return [t for s in statements if s.kind == "truncate" for t in s.truncated]


def _source_tables(statement: ParsedStatement, db: str, changes: Sequence[Any], streamed: bool) -> str | None:
    """``source.table`` of a schema change record, as Debezium's ``parseDdl`` sets it: the names of the
    statement's tables in this database (every table of a statement split in several, such as
    ``DROP TABLE t1, t2``) in the order of its ``HashSet<TableId>`` (by the hash of ``db.table``).
    A statement without tables has null, except a streamed ALTER DATABASE: "" (recorded in
    tests/golden/debezium/fidelity/oddities.jsonl next to a streamed CREATE DATABASE's null)."""
    tables = [t for t in statement.statement_tables if t.database == db] or [c.id for c in changes]
    if not tables:
        return "" if streamed and statement.alters_database else None
    ids = {f"{t.database}.{t.table}": t.table for t in tables}
    return ",".join(ids[key] for key in java_hashmap_order(list(ids)))


def _is_truncate(ddl: str) -> bool:
    return ddl.lstrip().upper().startswith("TRUNCATE")
