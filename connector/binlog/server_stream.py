"""The replication connection: a thin, strict wrapper around mysql-replication's stream reader.

Why a wrapper: mysql-replication 1.0.17 (a) ignores ``log_file``/``log_pos`` when ``is_mariadb`` is
set, so a file/position start always uses the plain dump (MariaDB accepts it, and the library still
asks for GTID events via ``@mariadb_slave_capability``), while a GTID start uses ``auto_position``:
``@slave_connect_state`` and the GTID dump on MariaDB, ``COM_BINLOG_DUMP_GTID`` on MySQL; (b) on a dropped connection it reconnects forever with
a generic warning, so we refuse its silent reconnects and own the policy (bounded attempts with
backoff, from our own last position, with the real error in the message); (c) it silently drops event
types it does not implement, so we ask for them: ``connector.binlog.guard`` refuses the ones that
carry data we would lose (MariaDB's compressed events, unknown event types). MySQL 8's compressed
transactions (TRANSACTION_PAYLOAD) come as such an event too: ``_iterate`` expands them into their
inner events with ``connector.binlog.packets`` (the file source's implementation).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from typing import Any, Protocol

import pymysql
from pymysql.protocol import MysqlPacket
from pymysqlreplication import BinLogStreamReader

from connector.binlog.direct_reads import events as direct_events
from connector.binlog.fast_events import install as build_events_fast
from connector.binlog.library_support import teach_the_library
from connector.binlog.raw_event import RawEvent
from connector.binlog.settings import ReplicationSettings
from connector.binlog.table_map_cache import install as cache_table_maps
from connector.errors import ReplicationError
from connector.server.connection import connection_error
from connector.server.tls import tls_settings
from mysql_cdc_base.flavor import MYSQL, ServerFlavor, dialect_of, flavor_of
from mysql_cdc_base.position import GtidSet
from mysql_cdc_base.properties import PropertyReader

log = logging.getLogger(__name__)


# MySQL 8.3+/9 contents the library does not know (VECTOR table maps, tagged GTID dump requests).
teach_the_library()
# TABLE_MAP events parsed once per table structure (connector.binlog.table_map_cache).
cache_table_maps()
# Transaction boundaries and known table maps without the library's per-event machinery.
build_events_fast()


class BinlogPositionError(ReplicationError):
    """The server refuses to stream from the requested position (error 1236)."""


ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236


class ReplicationLost(ReplicationError):
    """The replication connection failed and could not be re-established within the limits."""


class StreamDropped(ReplicationError):
    """The replication connection broke; ``cause`` is the real error (None: server ended the dump)."""

    def __init__(self, cause: BaseException | None) -> None:
        super().__init__(str(cause) if cause is not None else "the server closed the binlog dump")
        self.cause = cause


def describe_cause(config: PropertyReader, cause: BaseException | None) -> str:
    if isinstance(cause, pymysql.err.OperationalError):
        return str(connection_error(config, cause))
    return f"{type(cause).__name__}: {cause}" if cause is not None else "the server closed the binlog dump"


class EventReader(Protocol):
    """A source of RawEvents: ``BinlogReader`` (a server) or ``BinlogFileReader`` (files)."""

    def events(self) -> Iterator[RawEvent]: ...

    def close(self) -> None: ...


WAKES_PER_POLL_INTERVAL = 5


class BinlogReader:
    """Streams from ``file``/``pos``, or, when ``gtids`` is given, from the first transaction not in
    that GTID set (MySQL) / after that GTID position (MariaDB, ``flavor=MARIADB``)."""

    def __init__(
        self,
        config: PropertyReader,
        file: str,
        pos: int,
        heartbeat_s: float = 0.5,
        gtids: GtidSet | None = None,
        flavor: ServerFlavor = MYSQL,
    ) -> None:
        self.config = config
        self.file = file
        self.pos = pos
        self.gtids = gtids if gtids else None
        self.flavor = flavor
        self.settings = ReplicationSettings.from_config(config)
        self.keep_alive_s = self.settings.keep_alive_ms / 1000
        # Debezium asks for a server heartbeat every 0.8 × connect.keep.alive.interval.ms. The engine
        # also wakes on them to notice stop() and to hand a partial batch to the sinks once
        # poll.interval.ms (``heartbeat_s``) has passed since the last, as Debezium's queue returns
        # from poll then: a heartbeat every poll interval could come up to a whole interval after
        # that, so the server is asked for WAKES_PER_POLL_INTERVAL of them per interval. The server
        # sends them only while it has no event to send.
        self.heartbeat_s = min(heartbeat_s / WAKES_PER_POLL_INTERVAL, 0.8 * self.keep_alive_s)
        self.max_attempts = self.settings.max_attempts
        self._stream: BinLogStreamReader | None = None
        self._closed = False

    def _open(self) -> BinLogStreamReader:
        connections: list[Any] = []
        last_error: list[BaseException] = []
        connection = self.settings.connection
        tls = tls_settings(connection.tls)
        # include.query on MariaDB: its ANNOTATE_ROWS events carry the statement (see _TrackingConnection).
        annotate_rows = self.settings.include_query

        def connection_factory(**kwargs: Any) -> Any:
            # The library calls this for its stream and its control connection. A third call is
            # its silent reconnect: refuse it so that our own policy (below) takes over.
            if len(connections) >= 2:
                raise StreamDropped(last_error[-1] if last_error else None)
            # The library still spells these the pre-1.0 pymysql way.
            for old, new in (("passwd", "password"), ("db", "database")):
                if old in kwargs:
                    kwargs[new] = kwargs.pop(old)
            # connect.keep.alive.interval.ms: the server sends a heartbeat at least every 0.8 × the
            # interval, so a read that waits longer means the connection is dead (Debezium's
            # keep-alive thread reconnects then; here the read times out and our policy reconnects).
            kwargs["read_timeout"] = self.keep_alive_s
            conn = tls.open(
                functools.partial(_TrackingConnection, last_error, annotate_rows=annotate_rows), **kwargs
            )
            connections.append(conn)
            return conn

        settings = {
            "host": connection.hostname,
            "port": connection.port,
            "user": connection.user,
            "passwd": connection.password,
            "charset": "utf8mb4",
            "connect_timeout": connection.connect_timeout_s,
        }
        return BinLogStreamReader(
            connection_settings=settings,
            server_id=self.settings.server_id,
            log_file=None if self.gtids else self.file,
            log_pos=None if self.gtids else self.pos,
            auto_position=str(self.gtids) if self.gtids else None,
            resume_stream=True,
            blocking=True,
            # See the module docstring: is_mariadb only for the GTID dump.
            is_mariadb=self.gtids is not None and dialect_of(self.flavor).mariadb_gtid_dump,
            slave_heartbeat=self.heartbeat_s,
            filter_non_implemented_events=False,
            pymysql_wrapper=connection_factory,
        )

    def events(self) -> Iterator[RawEvent]:
        """Events from the start position on (heartbeats included) until ``close()``.

        Raises ``StreamDropped`` when the connection breaks; the caller reconnects from its own
        restart point (a transaction start), because table maps do not survive a reconnect."""
        try:
            if self._stream is None:
                self._stream = self._open()
            yield from self._iterate(self._stream)
            if not self._closed:
                raise StreamDropped(None)  # the server ended the dump
        except StreamDropped:
            if not self._closed:
                raise
        except pymysql.err.OperationalError as exc:
            if exc.args and exc.args[0] == ER_MASTER_FATAL_ERROR_READING_BINLOG:
                # Not a network problem: the server cannot serve this position (purged, or not an
                # event boundary). Retrying cannot help.
                raise BinlogPositionError(self._refusal(str(exc.args[1]))) from None
            if not self._closed:
                raise StreamDropped(exc) from exc
        except (pymysql.err.InterfaceError, ConnectionError, OSError) as exc:
            if not self._closed:
                raise StreamDropped(exc) from exc
        finally:
            self._discard_stream()

    def _refusal(self, server_message: str) -> str:
        if self.gtids is not None:
            return (
                f"the server cannot stream the binlog from GTID position {self.gtids}: {server_message}. "
                "It has not got these transactions (it is behind or not a replica of the same primary) "
                "or it purged the ones after them: point the connector at a server that has them, or "
                "take a new snapshot (snapshot.mode=when_needed, or delete the stored offsets and "
                "schema history)"
            )
        return (
            f"the server cannot stream the binlog from {self.file}:{self.pos}: {server_message}. "
            "If the file was purged, a new snapshot is required (snapshot.mode=when_needed, or "
            "delete the stored offsets and schema history); if this is another server than the one "
            "the offset was taken on, binlog positions do not carry over: use GTIDs"
        )

    def _iterate(self, stream: BinLogStreamReader) -> Iterator[RawEvent]:
        # The RawEvents (a TRANSACTION_PAYLOAD expanded into its inner events) straight from the
        # connector's packet loop (issue 41).
        return direct_events(stream, self.file)

    def _discard_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.close()
            except Exception:  # noqa: BLE001 - closing a broken connection may fail in many ways
                log.debug("error closing broken replication stream", exc_info=True)

    def close(self) -> None:
        self._closed = True
        self._discard_stream()


COM_BINLOG_DUMP = 0x12
_read_packet = pymysql.connections.Connection._read_packet


class _TrackingConnection(pymysql.connections.Connection):
    """Remembers the real error of a failed read so the reconnect message can show it; asks a
    MariaDB server for ANNOTATE_ROWS events when ``annotate_rows`` is set.

    mysql-replication only sets MariaDB's BINLOG_SEND_ANNOTATE_ROWS_EVENT on its MariaDB GTID dump, which we
    do not use (module docstring), so the flag is added to the file/position COM_BINLOG_DUMP packet
    here (as Debezium's MariaDB connector asks for the events with include.query)."""

    def __init__(self, sink: list[BaseException], annotate_rows: bool = False, **kwargs: Any) -> None:
        self._error_sink = sink
        self._annotate_rows = annotate_rows
        super().__init__(**kwargs)

    def _write_bytes(self, data: bytes) -> None:
        # Packet: 3-byte length, sequence id, command, 4-byte position, 2-byte flags, server id, file.
        # Sequence id 0 = a command packet, whose fifth byte is the command.
        # The flag is dialect data: MariaDB's BINLOG_SEND_ANNOTATE_ROWS_EVENT, nothing on MySQL.
        if self._annotate_rows and len(data) >= 11 and data[3] == 0 and data[4] == COM_BINLOG_DUMP:
            extra = flavor_of(str(self.server_version)).dialect.annotate_rows_dump_flags
            flags = int.from_bytes(data[9:11], "little") | extra
            data = data[:9] + flags.to_bytes(2, "little") + data[11:]
        super()._write_bytes(data)

    def _read_packet(self, packet_type: Any = MysqlPacket) -> Any:
        # pymysql's own signature: no argument forwarding per packet (issue 41).
        try:
            return _read_packet(self, packet_type)
        except pymysql.err.OperationalError as exc:
            self._error_sink.append(exc)
            raise
