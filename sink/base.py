"""The one interface every sink implements.

The engine hands a sink batches of records in emission order. ``flush()`` returns only when every
record sent so far is durably accepted (written and fsynced, acknowledged by the broker, committed in
Spark); only then does the engine store the offset of the last record. A sink raises ``SinkError``
for a failure it cannot retry; the engine stops without storing any offset past the failed batch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from ddl.errors import MysqlCdcError
from sink.records import ChangeRecord


class SinkError(MysqlCdcError, RuntimeError):
    """A sink failed in a way retrying will not fix; the message names the target and the cause."""


class Sink(ABC):
    name: str = "sink"

    def start(self) -> None:  # noqa: B027 - optional hook
        """Open connections/files. Called once before the first ``send``."""

    @abstractmethod
    def send(self, records: Sequence[ChangeRecord]) -> None:
        """Accept records, in order. May buffer; must not reorder."""

    @abstractmethod
    def flush(self) -> None:
        """Block until everything sent is durable. Raise ``SinkError`` if it cannot be."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources. ``flush`` has already been called when shutting down cleanly."""

    def committed_offset(self) -> dict[str, object] | None:
        """A sink that stores offsets transactionally with its data (Spark) returns the last
        committed source offset here so the engine can resume exactly once; others return None."""
        return None
