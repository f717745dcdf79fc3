"""The connector as a library: ``EmbeddedEngine`` runs it in-process (see ``connector.embedded.api``)."""

from connector.embedded.api import EmbeddedEngine, start_engine
from connector.embedded.events import EngineFailed, EventLog, EventStream, EventWaitTimeout

__all__ = ["EmbeddedEngine", "EngineFailed", "EventLog", "EventStream", "EventWaitTimeout", "start_engine"]
