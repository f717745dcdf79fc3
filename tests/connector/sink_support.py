"""Helpers shared by test modules (moved out of test_transaction_metadata.py)."""

from __future__ import annotations

from collections.abc import Sequence

from mysql_cdc_base.records import ChangeRecord
from sink.memory import MemorySink


class FailingSink(MemorySink):
    """Once armed, accepts ``batches`` more batches, then fails like a broker going away."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: int | None = None

    def send(self, records: Sequence[ChangeRecord]) -> None:
        if self.batches == 0:
            raise ConnectionError("sink unavailable")
        if self.batches is not None:
            self.batches -= 1
        super().send(records)
