"""The connector as a library: start it in-process, consume change events as Python objects, stop it.

``EmbeddedEngine`` wraps ``connector.engine.Engine`` in a background thread. It starts from a dict of
Debezium properties, keeps offsets and schema history in memory unless told otherwise, and hands
every change event (a ``ChangeRecord``: topic, key, value, headers, plus ``op``/``before``/``after``/
``source`` accessors) to the application after the configured sinks have flushed it, in order:

* iterator form: ``for record in engine: ...`` (blocks for new events, ends once stopped);
* callback form: ``EmbeddedEngine(props, callback=fn)`` (``fn`` runs on the engine thread; an
  exception in it stops the engine before the offset of that batch is stored);
* test helpers (``EventStream``): ``wait_for``, ``drain``, ``mark``/``events_since``.

``stop()`` is safe from any thread and returns only when the engine thread has finished and the
server no longer holds the replication (Binlog Dump) connection.

``EventStream`` (``connector.embedded.events``) is shared with the database-free fake
(``connector.testing.fake.FakeConnector``) so that a test can drive either with the same calls.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pymysql

from connector.config import ConnectorConfig, property_texts
from connector.embedded.events import (
    EventLog,
    EventStream,
    EventWaitTimeout,
    describe_records,
)
from connector.engine import Engine
from connector.factories import build_sinks
from connector.metrics import ConnectorMetrics
from connector.notifications import Notification
from connector.server.connection import PrerequisiteError, connect
from connector.stores.offsets import OffsetStore
from ddl.history.store import SchemaHistory
from mysql_cdc_base.errors import MysqlCdcError
from mysql_cdc_base.position import BinlogPosition
from mysql_cdc_base.records import ChangeRecord
from sink.base import Sink

log = logging.getLogger(__name__)

# What an embedded engine uses unless the properties say otherwise: nothing on disk, and a short
# poll interval (it is also the replication heartbeat) and flush interval (the application sees a
# batch once it is flushed) so events and ``stop()`` are prompt.
EMBEDDED_DEFAULTS: Mapping[str, str] = {
    "offset.storage": "memory",
    "schema.history.internal": "memory",
    "poll.interval.ms": "100",
    "offset.flush.interval.ms": "100",
    # Signals from this process (EmbeddedEngine.signal) as well as from the signal table.
    "signal.enabled.channels": "source,in-process",
    "signal.poll.interval.ms": "100",
}


# -- the embedded engine ------------------------------------------------------------------------------
@dataclass
class _Barrier:
    target: tuple[int, int]
    reached: threading.Event = field(default_factory=threading.Event)


def _position_key(file: str, pos: int) -> tuple[int, int]:
    return BinlogPosition(file, pos).key


def _replication_thread_id(engine: Engine) -> int | None:
    # The server-side id of the open binlog connection, read from the streaming source's reader
    # (mysql-replication's stream connection). Private attributes: the shutdown check in stop()
    # relies on them and tests/embedded/test_embedded_engine.py fails if they move.
    reader = getattr(engine.streaming, "_reader", None)
    stream = getattr(reader, "_stream", None)
    connection = getattr(stream, "_stream_connection", None)
    thread_id = getattr(connection, "server_thread_id", None)
    return int(thread_id[0]) if thread_id else None


class ShutdownError(MysqlCdcError, RuntimeError):
    """The engine did not stop, or the server kept its replication connection open."""


class EmbeddedEngine(EventStream):
    """The connector running in a background thread of this process.

    ``properties`` are Debezium connector properties (``database.hostname``, ``topic.prefix``,
    ``database.include.list``, ...); ``EMBEDDED_DEFAULTS`` fill in memory offsets and history. A
    ``snapshot.spi`` plugin may be given as its class (``"snapshot.mode.custom.name": MySnapshotter``)
    as well as by name.
    Sinks named by ``sink.type`` (only if given) and the ``sinks`` passed here are fed first; the
    application receives a batch once they have all flushed it.

    ``on_notification`` receives every notification (``notification.enabled.channels`` must list
    ``in-process``), as ``on_notification()`` does.

    ``retain=False`` keeps no history of received events (for long-running callback use); the
    iterator and the waiting helpers then need ``retain=True``."""

    def __init__(
        self,
        properties: Mapping[str, Any],
        *,
        sinks: Sequence[Sink] = (),
        callback: Callable[[ChangeRecord], None] | None = None,
        retain: bool = True,
        offsets: OffsetStore | None = None,
        history: SchemaHistory | None = None,
        on_notification: Callable[[Notification], None] | None = None,
    ) -> None:
        given = property_texts(properties)
        self.config = ConnectorConfig({**EMBEDDED_DEFAULTS, **given})
        configured = build_sinks(self.config) if given.get("sink.type", "").strip() else []
        self.callback = callback
        self.retain = retain
        self.engine = Engine(
            self.config,
            sinks=[*configured, *sinks],
            offsets=offsets,
            history=history,
            on_delivered=self._on_delivered,
        )
        self.engine.on_progress = self._on_progress
        if on_notification is not None:
            self.on_notification(on_notification)
        self._log = EventLog()
        self._drain_mark = 0
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._barriers: list[_Barrier] = []
        self._barrier_lock = threading.Lock()
        self._error: BaseException | None = None
        self._replication_ids: set[int] = set()
        self.started_at: float | None = None
        # time.perf_counter() when the first batch reached the application (start-up latency).
        self.first_record_at: float | None = None

    # -- lifecycle ----------------------------------------------------------------------------------
    def start(self, timeout: float = 60.0) -> EmbeddedEngine:
        """Start the engine thread; returns once the connector has read its starting position and
        table structures, so every change committed after this call will be delivered. Raises the
        start-up error (bad server settings, grants, connection) if there is one."""
        if self._thread is not None:
            raise RuntimeError("this EmbeddedEngine was already started; create a new one to restart")
        self.started_at = time.monotonic()
        self._thread = threading.Thread(
            target=self._run, name=f"mysql-cdc-{self.config.topic_prefix}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.05):
            if not self._thread.is_alive():
                break
            if time.monotonic() > deadline:
                self.stop(raise_error=False)
                raise TimeoutError(f"the connector did not finish starting within {timeout}s")
        if self._error is not None:
            self._thread.join()
            error = self._error
            raise error
        return self

    def _run(self) -> None:
        engine = self.engine
        try:
            try:
                engine.prepare()
            except BaseException:
                engine.close()
                raise
            self._ready.set()
            engine.run()
        except BaseException as exc:  # noqa: BLE001 - reported to the application thread
            self._error = exc
            log.error("embedded connector stopped with an error: %s", exc)
        finally:
            try:
                self._close_server_side(10.0)
            except ShutdownError as exc:
                self._error = self._error or exc
            self._log.close(self._error)
            self._release_barriers()

    def on_notification(self, callback: Callable[[Notification], None]) -> None:
        """``callback`` receives every notification (``notification.enabled.channels`` lists
        ``in-process``), on the engine thread: register it before ``start``."""
        self.engine.notifications.subscribe(callback)

    def signal(self, type_: str, data: Mapping[str, Any] | str | None = None, id_: str | None = None) -> str:
        """Sends a signal (``execute-snapshot``, ``stop-snapshot``, ``pause-snapshot``,
        ``resume-snapshot``, ``log``, ``set-binlog-position``) through the in-process channel; the
        engine thread carries it out. ``data`` is Debezium's, e.g. ``{"data-collections":
        ["db.t"]}``. Returns the signal's id."""
        return self.engine.signal(type_, data, id_)

    def stop(self, timeout: float = 30.0, raise_error: bool = True) -> None:
        """Stop streaming, flush, close sinks and the replication connection (gone from the server's
        process list when this returns). Safe from any thread and idempotent. Re-raises (as ``EngineFailed``) an error the engine stopped with, unless
        ``raise_error`` is false."""
        self.engine.stop()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                raise ShutdownError(f"the connector thread did not stop within {timeout}s")
        self._log.close(self._error)
        self._release_barriers()
        if raise_error and self._error is not None:
            self._raise_if_failed()

    def close(self) -> None:
        self.stop()

    def __enter__(self) -> EmbeddedEngine:
        return self.start() if self._thread is None else self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.stop(raise_error=exc is None)

    @property
    def metrics(self) -> ConnectorMetrics:
        """Debezium's snapshot, streaming and schema-history figures (``metrics.figures()``: every
        attribute by context, as served on ``metrics.port``)."""
        return self.engine.metrics

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def error(self) -> BaseException | None:
        return self._error

    @property
    def replication_thread_ids(self) -> frozenset[int]:
        """Server thread ids of the replication connections this engine has opened."""
        return frozenset(self._replication_ids)

    def _close_server_side(self, timeout: float) -> None:
        """Runs on the engine thread once the engine has closed. The client socket is closed by now,
        but the server notices only when it next writes to it: end our dump threads at once (a user
        may always KILL its own connections) and check they are gone."""
        if not self._replication_ids:
            return
        deadline = time.monotonic() + min(timeout, 10.0)
        try:
            conn = connect(self.config)
        except (PrerequisiteError, pymysql.err.MySQLError) as exc:
            # Server gone or unreachable: it holds no connection of ours any more either way.
            log.debug("could not check the replication connection after stopping: %s", exc)
            return
        with conn, conn.cursor() as cur:
            while True:
                try:
                    cur.execute("SHOW PROCESSLIST")
                    open_ids = {int(row[0]) for row in cur.fetchall()} & self._replication_ids
                except pymysql.err.MySQLError as exc:
                    log.debug("could not check the replication connection after stopping: %s", exc)
                    return
                if not open_ids:
                    return
                if time.monotonic() > deadline:
                    raise ShutdownError(
                        f"the server still holds replication connection(s) {sorted(open_ids)} after "
                        "the connector stopped"
                    )
                for thread_id in open_ids:
                    with contextlib.suppress(pymysql.err.MySQLError):  # already gone: fine
                        cur.execute(f"KILL CONNECTION {thread_id}")
                time.sleep(0.02)

    # -- engine-thread callbacks --------------------------------------------------------------------
    def _on_delivered(self, batch: Sequence[ChangeRecord]) -> None:
        if self.first_record_at is None:
            self.first_record_at = time.perf_counter()
        handled = 0
        try:
            if self.callback is not None:
                for record in batch:
                    self.callback(record)
                    handled += 1
            else:
                handled = len(batch)
        finally:
            # The log holds what the application has consumed: not the record its callback failed on.
            if self.retain and handled:
                self._log.append(batch[:handled])

    def _on_progress(self) -> None:
        thread_id = _replication_thread_id(self.engine)
        if thread_id is not None:
            self._replication_ids.add(thread_id)
        if not self._barriers:
            return
        streaming = self.engine.streaming
        if streaming is None:
            return
        here = _position_key(*streaming.last_end)
        with self._barrier_lock:
            reached = [b for b in self._barriers if here >= b.target]
            if not reached:
                return
            self._barriers = [b for b in self._barriers if here < b.target]
        self.engine.delivery.flush()
        for barrier in reached:
            barrier.reached.set()

    def _release_barriers(self) -> None:
        with self._barrier_lock:
            barriers, self._barriers = self._barriers, []
        for barrier in barriers:
            barrier.reached.set()

    # -- EventStream --------------------------------------------------------------------------------
    def _catch_up(self, timeout: float) -> None:
        """Barrier: the server's current binlog position, reached and flushed by the engine thread."""
        if self._thread is None:
            raise RuntimeError("start() the engine before waiting for events")
        self._raise_if_failed()
        if self._log.closed:
            return
        info = self.engine.info
        assert info is not None
        target = self.engine.probe.current_position(info)
        barrier = _Barrier(_position_key(target.file, target.pos))
        with self._barrier_lock:
            self._barriers.append(barrier)
        if self._log.closed:  # stopped meanwhile: nobody would release the barrier
            self._release_barriers()
        if not barrier.reached.wait(timeout):
            with self._barrier_lock:
                self._barriers = [b for b in self._barriers if b is not barrier]
            streaming = self.engine.streaming
            at = streaming.last_end if streaming is not None else "(not streaming yet)"
            raise EventWaitTimeout(
                f"the connector did not reach the server's binlog position {target} within {timeout}s "
                f"(it is at {at}). Events received:\n{describe_records(self._log.since(0))}"
            )
        self._raise_if_failed()

    def _require_log(self, what: str) -> None:
        if not self.retain:
            raise RuntimeError(f"{what} needs the received events: create the engine with retain=True")


def start_engine(properties: Mapping[str, Any], **kwargs: Any) -> EmbeddedEngine:
    """``EmbeddedEngine(properties, **kwargs).start()``."""
    return EmbeddedEngine(properties, **kwargs).start()
