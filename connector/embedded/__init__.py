"""The connector as a library: ``EmbeddedEngine`` runs it in-process (see ``connector.embedded.api``)."""

from connector.embedded.api import (
    EmbeddedEngine,
    EngineFailed,
    EventLog,
    EventStream,
    EventWaitTimeout,
    start_engine,
)

__all__ = ["EmbeddedEngine", "EngineFailed", "EventLog", "EventStream", "EventWaitTimeout", "start_engine"]
