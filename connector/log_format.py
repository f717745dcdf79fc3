"""``log.format=json``: one JSON object per log line with Debezium's MDC context fields.

Debezium's logs carry ``connector.context`` (the connector ``name``, the logical ``server`` name =
``topic.prefix`` and the task ``context``: snapshot or streaming). The context is kept in a context
variable that the coordinator and the engine set when the snapshot and the streaming start.
"""

from __future__ import annotations

import contextvars
import logging
import time

import orjson

from mysql_cdc_base.properties import Property, prop

# Chosen by mysql-cdc run/snapshot when logging is set up.
LOG_FORMAT_PROPERTIES: tuple[Property, ...] = (
    prop(
        "log.format",
        "text",
        "Log line format of mysql-cdc run/snapshot: text, or json (one object per line with the "
        "connector name, server and context snapshot/streaming).",
        kind="choice",
        choices=("text", "json"),
    ),
)

CONTEXT: contextvars.ContextVar[str] = contextvars.ContextVar("mysql_cdc_context", default="")


def set_context(context: str) -> None:
    """The phase the current thread works in: ``snapshot`` or ``streaming``."""
    CONTEXT.set(context)


class JsonFormatter(logging.Formatter):
    def __init__(self, name: str, server: str) -> None:
        super().__init__()
        self.connector_name = name
        self.server = server

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "thread": record.threadName,
            "message": record.getMessage(),
            "name": self.connector_name,
            "server": self.server,
            "context": CONTEXT.get(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


class HeldRecords(logging.Handler):
    """Holds the records logged while the configuration is read (an unknown key's warning, say),
    before ``log.format`` is known; ``replay`` then hands them to the handlers set up since, so that
    with ``log.format=json`` they are JSON lines like every other."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    @classmethod
    def install(cls) -> HeldRecords:
        held = cls()
        logging.getLogger().handlers[:] = [held]
        return held

    def replay(self) -> None:
        root = logging.getLogger()
        for record in self.records:
            if record.levelno < root.getEffectiveLevel():
                continue
            for handler in root.handlers:
                if record.levelno >= handler.level:
                    handler.handle(record)
        self.records.clear()
