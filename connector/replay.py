"""``mysql-cdc replay-binlog``: archived binlog files → the configured sinks, without a server.

The engine's parts are the ones ``mysql-cdc run`` uses (sinks, offset store, schema history,
transforms, delivery, the one StreamingSource with its dispatcher); only the start-up differs:
instead of the server checks and the snapshot decision (``connector.coordinator``), the start is
the stored offset (with the table structures recovered from the schema history, as on a restart)
or, without one, the first file's first event with the structures the schema history holds. Events
come from ``BinlogFileReader``; the run ends when the last file's last event is delivered.

Table structures come from the files' own DDL (QUERY events take the dispatcher's DDL path), from
the schema history (``schema.history.internal.*``), or, for a captured table neither knows, from
the TABLE_MAP's FULL row metadata (``connector.binlog.table_map_ddl``); with none of these the replay stops
naming the table, the position and the two fixes.

Nothing here connects to a server: settings that would (``heartbeat.action.query``, GTID source
filters merged with the server's executed set on restart) are refused or work from the files alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pymysqlreplication.row_event import TableMapEvent

from connector.binlog.files import (
    FORMAT_DESCRIPTION_EVENT,
    BinlogFileReader,
    binlog_files,
    format_description,
    read_file_events,
)
from connector.binlog.gtid_events import PREVIOUS_GTIDS_EVENT, decode_previous_gtids
from connector.binlog.packets import CHECKSUM_LEN, HEADER_LEN
from connector.binlog.server_stream import EventReader, RawEvent
from connector.binlog.table_map_ddl import create_table_statement
from connector.config import ConfigError, ConnectorConfig
from connector.dispatch.schema_state import SchemaState
from connector.engine import Engine
from connector.errors import ReplicationError
from connector.server.connection import ServerInfo
from connector.sources.streaming import StreamingSource
from connector.stores.offsets import OffsetStore
from ddl.history.recovery import recover
from ddl.history.store import SchemaHistory
from mysql_cdc_base.flavor import ServerFlavor
from mysql_cdc_base.position import BinlogPosition, SourceOffset
from mysql_cdc_base.records import ChangeRecord
from mysql_cdc_base.table_id import TableId
from sink.base import Sink

log = logging.getLogger(__name__)

# Settings that make streaming talk to the server; a replay has none.
_SERVER_ONLY_SETTINGS = {
    "heartbeat.action.query": "it runs a query on the server at every heartbeat",
}


class UnknownTableStructureError(ReplicationError):
    """A captured table's rows arrive, and no DDL, history or FULL row metadata describes it."""


def files_flavor(files: Sequence[Path]) -> tuple[ServerFlavor, str]:
    """(flavor, server version) from the first file's FORMAT_DESCRIPTION event."""
    for event in read_file_events(files[0]):
        if event.event_type == FORMAT_DESCRIPTION_EVENT:
            fde = format_description(event, files[0])
            return fde.dbms, fde.server_version
        break
    raise ReplicationError(f"{files[0]}: the file does not start with a FORMAT_DESCRIPTION event")


def previous_gtids(path: Path) -> str | None:
    """The GTID set a MySQL binlog file's PREVIOUS_GTIDS event names (None: no such event, as in
    MariaDB's files, or an empty set). The event comes right after the FORMAT_DESCRIPTION."""
    checksum = False
    for event in read_file_events(path):
        if event.event_type == FORMAT_DESCRIPTION_EVENT:
            checksum = format_description(event, path).checksum
            continue
        if event.event_type != PREVIOUS_GTIDS_EVENT:
            return None
        body = event.data[HEADER_LEN : len(event.data) - (CHECKSUM_LEN if checksum else 0)]
        return decode_previous_gtids(body).text or None
    return None


class _StructureKeeper:
    """Wraps a reader: before a captured table's TABLE_MAP reaches the dispatcher, makes sure its
    structure is known, from the table map's FULL metadata if nothing else describes it."""

    def __init__(self, reader: BinlogFileReader, schema: SchemaState) -> None:
        self.reader = reader
        self.schema = schema

    def events(self) -> Iterator[RawEvent]:
        for raw in self.reader.events():
            if isinstance(raw.event, TableMapEvent):
                self._ensure_structure(raw)
            yield raw

    def _ensure_structure(self, raw: RawEvent) -> None:
        event = raw.event
        table_id = TableId(str(event.schema), str(event.table))
        if not self.schema.filter.table_captured(table_id) or self.schema.model.table(table_id) is not None:
            return
        statement = create_table_statement(event)
        if statement is None:
            raise UnknownTableStructureError(
                f"no structure is known for table {table_id} at {raw.file}:{raw.start_pos}: the files "
                "hold no CREATE TABLE for it before this point, the schema history has none, and the "
                "table map carries no column names (binlog_row_metadata=MINIMAL) or a column type "
                "it cannot describe. Give a schema "
                "history file that describes it (schema.history.internal.file.filename, e.g. the one "
                "of a connector that captured this server), or write the binlog with "
                "binlog_row_metadata=FULL"
            )
        self.schema.model = self.schema.parser.parse(statement, self.schema.model, table_id.database).model
        log.info(
            "table %s: structure taken from the TABLE_MAP's FULL row metadata at %s:%d (%s)",
            table_id,
            raw.file,
            raw.start_pos,
            statement,
        )

    def close(self) -> None:
        self.reader.close()

    @property
    def finished(self) -> bool:
        return self.reader.finished


class BinlogReplay:
    """Replays ``files`` (in that order) into the configured sinks; ``run()`` returns when done."""

    def __init__(
        self,
        config: ConnectorConfig,
        files: Sequence[str | Path],
        *,
        sinks: Sequence[Sink] | None = None,
        offsets: OffsetStore | None = None,
        history: SchemaHistory | None = None,
        on_delivered: Callable[[Sequence[ChangeRecord]], None] | None = None,
    ) -> None:
        """``on_delivered``: called with every batch the sinks have flushed (as ``Engine``'s)."""
        for key, why in _SERVER_ONLY_SETTINGS.items():
            if (config.get(key) or "").strip():
                raise ConfigError(key, f"replay-binlog connects to no server, and {why}: remove it")
        self.files = binlog_files(files)
        self.config = config
        self.engine = Engine(config, sinks, offsets=offsets, history=history, on_delivered=on_delivered)
        self._keeper: _StructureKeeper | None = None

    @property
    def delivered(self) -> int:
        return self.engine.delivery.delivered

    def run(self) -> None:
        engine = self.engine
        try:
            start = self._prepare()
            assert engine.schema is not None and engine.info is not None
            engine.streaming = StreamingSource(
                self.config,
                engine.info.flavor,
                engine.schema,
                engine.builder,
                engine.filter,
                engine.delivery,
                start,
                engine.metrics,
                engine.signals,
                reader_factory=self._reader,
            )
            log.info(
                "replaying %d binlog files from %s", len(self.files), engine.streaming.offset().describe()
            )
            engine.streaming.run(self._done)
        finally:
            engine.close()

    def _prepare(self) -> SourceOffset:
        engine = self.engine
        coordinator = engine.coordinator
        flavor, version = files_flavor(self.files)
        coordinator.info = ServerInfo(version, flavor, False, 0, "")
        engine.history.start()
        for sink in engine.sinks:
            sink.start()
        schema = coordinator.schema = coordinator.schema_state(coordinator.info)
        offset = coordinator.starting_offset()
        if offset is not None and offset.has_position and not offset.in_snapshot:
            if self._history_describes(schema.partition):
                coordinator.recover(offset)
            else:
                # Unlike a server run, a replay needs no history to go on: the tables it met had
                # their structures from FULL table-map metadata, which it meets again.
                log.info("the schema history holds no table structures; they come from the files")
            return offset
        if engine.history.exists():
            # No offset: every structure the history holds (e.g. a server-backed connector's).
            schema.model = recover(
                engine.history,
                schema.partition,
                None,
                schema.parser,
                skip_unparseable=schema.settings.skip_unparseable,
                ddl_filter=schema.settings.ddl_filter,
            )
        # The transactions before the first file (its PREVIOUS_GTIDS) are part of the start, as a
        # server's executed set is for a server-backed start: the stored offsets then name every
        # transaction a GTID restart must not ask for again (tagged GTIDs included).
        return SourceOffset.at(BinlogPosition(self.files[0].name, 4, previous_gtids(self.files[0])))

    def _history_describes(self, partition: Mapping[str, Any]) -> bool:
        history = self.engine.history
        return history.exists() and any(dict(r.source) == dict(partition) for r in history.records())

    def _reader(self, file: str, pos: int) -> EventReader:
        assert self.engine.schema is not None
        self._keeper = _StructureKeeper(BinlogFileReader(self.files, file, pos), self.engine.schema)
        return self._keeper

    def _done(self) -> bool:
        # Engine._stopping runs the embedded API's on_progress hook after every event, as in run().
        return self.engine._stopping() or (self._keeper is not None and self._keeper.finished)

    def stop(self) -> None:
        self.engine.stop()
