"""Debezium's notifications (``notification.enabled.channels``): what the connector tells about its
initial and incremental snapshots, sent to every enabled channel.

Channels, by the name ``notification.enabled.channels`` lists:

* ``sink``: a record on ``notification.sink.topic.name`` through the sinks, key
  ``io.debezium.connector.common.NotificationKey`` and value ``io.debezium.connector.common.Notification``
  (Debezium's ``SinkNotificationChannel`` schemas);
* ``log``: an INFO line ``[Notification Service]  {id=..., aggregateType=..., ...}`` (``LogNotificationChannel``);
* ``jmx``: kept in the connector's metrics, served as JSON on the metrics endpoint's
  ``/notifications`` (the JMX MBean's ``Notifications`` attribute; there is no JVM here);
* ``in-process``: every callback registered with ``NotificationService.subscribe`` (the embedded API's
  ``on_notification``) is called on the engine thread.

``additionalData`` keeps Debezium's keys and prints them in Java ``HashMap`` order (``java_order``).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from connector.notifications.java_order import copied_map_capacity, hashmap_order
from connector.notifications.properties import CHANNELS_KEY, IN_PROCESS, JMX, LOG, SINK, TOPIC_KEY
from mysql_cdc_base.connect import ConnectSchema, Field, primitive, struct
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.records import ChangeRecord, RecordKind

if TYPE_CHECKING:
    from mysql_cdc_base.properties import PropertyReader

log = logging.getLogger(__name__)
# Debezium sends to the other channels first, then to the sink (NotificationService#notify).
_SEND_ORDER = (LOG, JMX, IN_PROCESS, SINK)

JMX_KEPT = 1000  # notifications the jmx channel keeps (the oldest are dropped)

NOTIFICATION_KEY_SCHEMA = struct(
    "io.debezium.connector.common.NotificationKey", [Field("id", primitive("string"))], version=1
)
NOTIFICATION_VALUE_SCHEMA = struct(
    "io.debezium.connector.common.Notification",
    [
        Field("id", primitive("string")),
        Field("type", primitive("string")),
        Field("aggregate_type", primitive("string")),
        Field(
            "additional_data",
            ConnectSchema("map", optional=True, keys=primitive("string"), values=primitive("string")),
        ),
        Field("timestamp", primitive("int64")),
    ],
    version=1,
)


@dataclass(frozen=True)
class Notification:
    """One notification, as Debezium's ``Notification``."""

    id: str
    aggregate_type: str
    type: str
    additional_data: Mapping[str, str]
    timestamp: int

    def __str__(self) -> str:
        data = ", ".join(f"{k}={v}" for k, v in self.additional_data.items())
        return (
            f"{{id='{self.id}', aggregateType='{self.aggregate_type}', type='{self.type}', "
            f"additionalData={{{data}}}, timestamp={self.timestamp}}}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "aggregate_type": self.aggregate_type,
            "additional_data": dict(self.additional_data),
            "timestamp": self.timestamp,
        }


def notification(
    aggregate_type: str, type_: str, connector: str, data: Sequence[tuple[str, str]], id_: str | None = None
) -> Notification:
    """A notification whose ``additional_data`` is ``data`` plus ``connector_name``, in the order a
    Java ``HashMap`` copy of ``data`` iterates them after that put."""
    values = {**dict(data), "connector_name": connector}
    order = hashmap_order(list(values), copied_map_capacity(len(data), 1))
    return Notification(
        id_ or str(uuid.uuid4()),
        aggregate_type,
        type_,
        {k: values[k] for k in order},
        time.time_ns() // 1_000_000,
    )


class RecordEmitter(Protocol):
    def emit(self, records: list[ChangeRecord]) -> None: ...


class NotificationService:
    """Sends notifications to the enabled channels (module docstring)."""

    def __init__(self, config: PropertyReader) -> None:
        self.connector = config.topic_prefix
        self.channels = frozenset(config.get_list(CHANNELS_KEY))
        self.topic = config.get(TOPIC_KEY)
        if SINK in self.channels and not self.topic:
            raise ConfigError(TOPIC_KEY, "is required when notification.enabled.channels lists sink")
        self.emitter: RecordEmitter | None = None  # the delivery, once the engine has one
        self.kept: deque[Notification] = deque(maxlen=JMX_KEPT)
        self._callbacks: list[Callable[[Notification], None]] = []

    @property
    def enabled(self) -> bool:
        return bool(self.channels)

    @property
    def sends_records(self) -> bool:
        """The sink channel is on: notifications are records among the change events."""
        return SINK in self.channels

    def subscribe(self, callback: Callable[[Notification], None]) -> None:
        """``callback`` gets every notification (the ``in-process`` channel must be enabled)."""
        if IN_PROCESS not in self.channels:
            raise ConfigError(
                CHANNELS_KEY, "add in-process to the list to receive notifications in this process"
            )
        self._callbacks.append(callback)

    def send(self, item: Notification) -> None:
        for channel in _SEND_ORDER:
            if channel in self.channels:
                _SENDERS[channel](self, item)

    def _to_log(self, item: Notification) -> None:
        log.info("[Notification Service]  %s", item)

    def _to_sink(self, item: Notification) -> None:
        assert self.topic is not None
        if self.emitter is None:
            log.warning("notification %s not sent to %s: no sink yet", item.type, self.topic)
            return
        record = ChangeRecord(
            self.topic,
            NOTIFICATION_KEY_SCHEMA,
            {"id": item.id},
            NOTIFICATION_VALUE_SCHEMA,
            item.to_json(),
            RecordKind.NOTIFICATION,
        )
        self.emitter.emit([record])

    def _to_jmx(self, item: Notification) -> None:
        self.kept.append(item)

    def _to_callbacks(self, item: Notification) -> None:
        for callback in self._callbacks:
            try:
                callback(item)
            except Exception:  # noqa: BLE001 - a subscriber's failure must not stop the connector
                log.exception("a notification callback failed on %s", item)

    def jmx_json(self) -> list[dict[str, Any]]:
        """What the jmx channel has kept, oldest first (the metrics endpoint's ``/notifications``)."""
        return [n.to_json() for n in list(self.kept)]


_SENDERS: dict[str, Callable[[NotificationService, Notification], None]] = {
    SINK: NotificationService._to_sink,
    LOG: NotificationService._to_log,
    JMX: NotificationService._to_jmx,
    IN_PROCESS: NotificationService._to_callbacks,
}
