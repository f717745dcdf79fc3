"""Signals: requests to a running connector (reference section 1.9), from every enabled channel.

A signal is ``(id, type, data)``; ``data`` is a JSON object. Channels (``signal.enabled.channels``):

* ``source``: rows inserted into the signal table ``signal.data.collection``, read from the binlog
  (the streaming source hands them over as it meets them, in binlog order);
* ``kafka``: records on ``signal.kafka.topic`` whose key is the ``topic.prefix`` and whose value is
  ``{"type": ..., "data": {...}}`` (the record's Kafka offset is its id), read by the consumer group
  ``signal.kafka.groupId`` and committed once processed;
* ``file``: lines ``{"id": ..., "type": ..., "data": {...}}`` in ``signal.file``; lines read are
  removed from the file;
* ``in-process``: ``InProcessSignalChannel.send`` (``EmbeddedEngine.signal``, ``FakeConnector``).

``SignalProcessor`` reads the polled channels every ``signal.poll.interval.ms`` on the streaming
thread and runs each signal's action from a dispatch table. A malformed signal or an unknown type
is logged with the reason and skipped; it never stops the connector.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

import orjson

from connector.records.filters import TableFilter
from connector.server.connection import connect
from connector.sources.settings import CONSUMER_PREFIX, SignalSettings
from connector.sources.signal_names import EXECUTE_SNAPSHOT as EXECUTE_SNAPSHOT
from connector.sources.signal_names import FILE, IN_PROCESS, KAFKA, SOURCE
from connector.sources.signal_names import LOG as LOG
from connector.sources.signal_names import PAUSE_SNAPSHOT as PAUSE_SNAPSHOT
from connector.sources.signal_names import RESUME_SNAPSHOT as RESUME_SNAPSHOT
from connector.sources.signal_names import SET_BINLOG_POSITION as SET_BINLOG_POSITION
from connector.sources.signal_names import STOP_SNAPSHOT as STOP_SNAPSHOT
from connector.sources.signal_records import (
    SignalError as SignalError,
)
from connector.sources.signal_records import (
    SignalRecord as SignalRecord,
)
from connector.sources.signal_records import (
    data_collections as data_collections,
)
from connector.sources.signal_records import (
    parse_data as parse_data,
)
from connector.sources.signal_records import (
    required_type as required_type,
)
from ddl.kafka.client import (
    CONSUMER_SETTINGS,
    client_kwargs,
    security_kwargs,
)
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertyReader
from mysql_cdc_base.table_id import TableId
from snapshot.policy.queries import quote_table

log = logging.getLogger(__name__)

WINDOW_OPEN = "snapshot-window-open"
WINDOW_CLOSE = "snapshot-window-close"


# -- channels -----------------------------------------------------------------------------------------
class SignalChannel(Protocol):
    name: str

    def read(self) -> list[SignalRecord]:
        """The signals that arrived since the last read (malformed ones logged and left out)."""
        ...

    def close(self) -> None: ...


class InProcessSignalChannel:
    """Signals sent from the same process (the embedded engine, the fake connector, tests)."""

    name = IN_PROCESS

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[SignalRecord] = queue.SimpleQueue()

    def send(self, type_: str, data: Mapping[str, Any] | str | None = None, id_: str | None = None) -> str:
        signal_id = id_ or str(uuid.uuid4())
        self._queue.put(SignalRecord(signal_id, type_, parse_data(data), IN_PROCESS))
        return signal_id

    def read(self) -> list[SignalRecord]:
        out = []
        with contextlib.suppress(queue.Empty):
            while True:
                out.append(self._queue.get_nowait())
        return out

    def close(self) -> None:
        pass


class FileSignalChannel:
    """``signal.file``: one JSON signal a line; the lines read are taken out of the file."""

    name = FILE

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def read(self) -> list[SignalRecord]:
        with self._lock:
            try:
                with open(self.path, "r+b") as fh:
                    text = fh.read()
                    if not text.strip():
                        return []
                    # Keep a partly written last line for the next read.
                    complete, _, rest = text.rpartition(b"\n")
                    fh.seek(0)
                    fh.write(rest)
                    fh.truncate()
            except FileNotFoundError:
                return []
        out = []
        for number, line in enumerate(complete.splitlines(), 1):
            if not line.strip():
                continue
            try:
                value = orjson.loads(line)
                if not isinstance(value, dict):
                    raise SignalError('a line must be a JSON object {"id", "type", "data"}')
                out.append(
                    SignalRecord(
                        str(value.get("id") or uuid.uuid4()),
                        required_type(value.get("type")),
                        parse_data(value.get("data")),
                        FILE,
                    )
                )
            except (orjson.JSONDecodeError, SignalError) as exc:
                log.warning("signal file %s line %d skipped: %s", self.path, number, exc)
        return out

    def close(self) -> None:
        pass


def enabled_channels(config: PropertyReader) -> list[str]:
    return list(SignalSettings.from_config(config).channels)


def build_channels(
    settings: SignalSettings, in_process: InProcessSignalChannel | None
) -> list[SignalChannel]:
    """The polled channels ``signal.enabled.channels`` names (the source channel is fed by streaming)."""
    channels: list[SignalChannel] = []
    enabled = settings.channels
    if FILE in enabled:
        channels.append(FileSignalChannel(settings.file))
    if KAFKA in enabled:
        # The Kafka channel loads kafka-python: imported only when the channel is enabled.
        from connector.sources.kafka_signals import KafkaSignalChannel  # noqa: PLC0415

        kwargs = client_kwargs(settings.consumer, CONSUMER_PREFIX, CONSUMER_SETTINGS)
        channels.append(
            KafkaSignalChannel(
                settings.kafka_bootstrap(),
                settings.kafka_topic,
                settings.kafka_group_id,
                settings.topic_prefix,
                settings.kafka_poll_timeout_ms,
                **kwargs,
            )
        )
    if IN_PROCESS in enabled and in_process is not None:
        channels.append(in_process)
    return channels


def signal_table(config: PropertyReader) -> TableId | None:
    tables = TableFilter.from_config(config).always
    return next(iter(tables), None)


# -- processing -----------------------------------------------------------------------------------------
Action = Callable[[SignalRecord], None]


class SignalProcessor:
    """Reads the polled channels (``poll``) and runs each signal's action (``process``)."""

    def __init__(
        self, channels: Iterable[SignalChannel], actions: Mapping[str, Action], interval_s: float
    ) -> None:
        self.channels = list(channels)
        self.actions = dict(actions)
        self.interval_s = interval_s
        self._last_poll = 0.0

    def poll(self, force: bool = False) -> None:
        if not self.channels:
            return
        now = time.monotonic()
        if not force and now - self._last_poll < self.interval_s:
            return
        self._last_poll = now
        for channel in self.channels:
            try:
                signals = channel.read()
            except Exception as exc:  # a channel that cannot be read now is read again next time
                log.warning("cannot read the %s signal channel: %s", channel.name, exc)
                continue
            for signal in signals:
                self.process(signal)

    def process(self, signal: SignalRecord) -> None:
        action = self.actions.get(signal.type)
        if action is None:
            log.warning(
                "signal %s (%s channel) skipped: unknown type %r (known: %s)",
                signal.id,
                signal.channel,
                signal.type,
                ", ".join(sorted(self.actions)),
            )
            return
        log.info("signal %s (%s channel): %s %s", signal.id, signal.channel, signal.type, dict(signal.data))
        try:
            action(signal)
        except SignalError as exc:
            log.warning("signal %s (%s) skipped: %s", signal.id, signal.type, exc)

    def close(self) -> None:
        for channel in self.channels:
            with contextlib.suppress(Exception):
                channel.close()


# -- sending (mysql-cdc signal) -------------------------------------------------------------------------
def send_signal(
    config: PropertyReader, type_: str, data: Mapping[str, Any], *, channel: str | None = None
) -> tuple[str, str]:
    """Sends one signal through ``channel`` (default: the first enabled of source, kafka, file);
    returns (channel, signal id)."""
    settings = SignalSettings.from_config(config)
    enabled = settings.channels
    chosen = channel or next((c for c in (SOURCE, KAFKA, FILE) if c in enabled), None)
    if chosen is None or chosen not in enabled or chosen == IN_PROCESS:
        raise ConfigError(
            "signal.enabled.channels",
            f"a signal can be sent from the command line through source, kafka or file; enabled: "
            f"{', '.join(enabled) or 'none'}",
        )
    signal_id = str(uuid.uuid4())
    text = orjson.dumps(data).decode()
    if chosen == SOURCE:
        table = signal_table(config)
        if table is None:
            raise ConfigError(
                "signal.data.collection", "is required to send a signal through the source channel"
            )
        with connect(config) as conn, conn.cursor() as cur:
            cur.execute(f"INSERT INTO {quote_table(table)} VALUES (%s, %s, %s)", (signal_id, type_, text))
    elif chosen == KAFKA:
        # kafka-python: imported only when a signal goes through the Kafka channel.
        from connector.sources.kafka_signals import signal_log  # noqa: PLC0415

        kwargs = security_kwargs(client_kwargs(settings.consumer, CONSUMER_PREFIX, CONSUMER_SETTINGS))
        topic_log = signal_log(settings.kafka_bootstrap(), settings.kafka_topic, {}, kwargs)
        try:
            topic_log.append(settings.topic_prefix.encode(), orjson.dumps({"type": type_, "data": data}))
        finally:
            topic_log.close()
    else:
        line = orjson.dumps({"id": signal_id, "type": type_, "data": data}) + b"\n"
        with open(settings.file, "ab") as fh:
            fh.write(line)
    return chosen, signal_id
