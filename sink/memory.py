"""An in-memory sink: records kept as objects, for embedded use and tests."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from mysql_cdc_base.records import ChangeRecord
from sink.base import Sink, SinkConfig


class MemorySink(Sink):
    name = "memory"

    def __init__(self) -> None:
        self.records: list[ChangeRecord] = []
        self._pending: list[ChangeRecord] = []
        self._lock = threading.Condition()

    @classmethod
    def from_config(cls, config: SinkConfig) -> MemorySink:
        return cls()

    def send(self, records: Sequence[ChangeRecord]) -> None:
        with self._lock:
            self._pending.extend(records)

    def flush(self) -> None:
        # Records become visible only once flushed, like a broker acknowledging them.
        with self._lock:
            self.records.extend(self._pending)
            self._pending.clear()
            self._lock.notify_all()

    def wait_for(self, count: int, timeout: float) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: len(self.records) >= count, timeout)
