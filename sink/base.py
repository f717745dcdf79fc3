"""The one interface every sink implements.

The engine hands a sink batches of records in emission order. ``flush()`` returns only when every
record sent so far is durably accepted (written and fsynced, acknowledged by the broker, committed in
Spark); only then does the engine store the offset of the last record. A sink raises ``SinkError``
for a failure it cannot retry; the engine stops without storing any offset past the failed batch.

A sink that commits each batch's source offset atomically with its data (``commits_offsets``, the
Spark sink) batches at its own cadence instead: the engine's periodic offset flush does not force it,
and the offset the engine stores is the one that sink reports as committed (``committed_offset``).
A forced ``flush()`` (catch-up, shutdown) still makes everything durable.

Sinks read their settings through ``SinkConfig``, the part of the connector's configuration they use
(the connector's ``ConnectorConfig`` satisfies it), and report a bad setting as
``mysql_cdc_base.errors.ConfigError`` naming the key.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from mysql_cdc_base.errors import MysqlCdcError
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord


class SinkConfig(Protocol):
    """The configuration methods a sink's ``from_config`` may use (``ConnectorConfig`` has them)."""

    def get(self, key: str, default: str | None = None) -> str | None: ...

    def get_int(self, key: str, default: int | None = None) -> int | None: ...

    def get_bool(self, key: str, default: bool = False) -> bool: ...

    def subset(self, prefix: str) -> Mapping[str, str]:
        """The keys under ``prefix`` (without it) and their values."""
        ...

    def path_or_default(self, key: str, filename: str) -> Path:
        """The path ``key`` names, or ``filename`` in the connector's data directory."""
        ...

    @property
    def topic_prefix(self) -> str: ...


class SinkError(MysqlCdcError, RuntimeError):
    """A sink failed in a way retrying will not fix; the message names the target and the cause."""


class InstanceFencedError(SinkError):
    """Another instance with the same name (Kafka ``transactional.id``) started and fenced this one:
    this instance must stop, and must not start a new producer (that would fence the newer
    instance in turn). Nothing it wrote since its last committed transaction becomes visible."""


class TransactionAbandonedError(SinkError):
    """The open transaction could not be completed (the brokers did not acknowledge it in time):
    none of it becomes visible. After ``restart_transactions`` the records can be sent again in a
    new transaction."""


class Sink(ABC):
    name: str = "sink"
    # True for a sink that commits source offsets with its data and batches at its own cadence
    # (see the module docstring); its ``committed_offset`` must then follow its commits.
    commits_offsets: bool = False
    # True when ``flush`` may run on another thread while ``send`` goes on, making durable at least
    # every record sent before it was called (the engine then flushes it off the streaming thread).
    flushes_off_thread: bool = False

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

    def commit_due(self) -> None:  # noqa: B027 - optional hook
        """Called at every periodic offset flush instead of ``flush`` when ``commits_offsets``:
        commit what the sink's own cadence says is due (e.g. records waiting longer than its
        interval), without waiting for what it does not."""

    def waiting_seconds(self) -> float:
        """How long the sink has been blocked on a target that does not take records yet while it
        retries (brokers that do not acknowledge), 0 when it is not waiting. Read by metrics."""
        return 0.0

    def waits(self) -> int:
        """How many such waits there have been since start."""
        return 0

    def committed_offset(self) -> SourceOffset | None:
        """A sink that stores offsets transactionally with its data (Spark) returns the last
        committed source offset here so the engine can resume exactly once; others return None."""
        return None


@runtime_checkable
class TransactionalSink(Protocol):
    """A sink whose records can be committed atomically together with extra records (the source
    offset) in one broker transaction: the Kafka sink's producers implement it for
    ``exactly.once.support``. ``enable_transactions`` is called before ``start``; the first
    ``send`` or ``add_to_transaction`` after a commit begins the next transaction."""

    def enable_transactions(self, transactional_id: str, owner: str) -> None:
        """Use a transactional producer with ``transactional_id``; ``owner`` (the connector) is
        named when another instance fences this one."""
        ...

    def add_to_transaction(self, topic: str, key: bytes | None, value: bytes | None) -> None:
        """One more record in the open transaction (e.g. the offset record)."""
        ...

    def commit_transaction(self) -> None:
        """Flush and commit the open transaction; ``SinkError`` if it cannot be committed
        (``InstanceFencedError`` when another instance took over), ``TransactionAbandonedError``
        if it may be retried after ``restart_transactions``."""
        ...

    def restart_transactions(self) -> None:
        """Replace the producer by a new one with the same transactional.id, which aborts the
        abandoned transaction; the next ``send`` begins a new one."""
        ...
