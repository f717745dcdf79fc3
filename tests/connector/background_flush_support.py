"""Jsonl sinks for the background flush tests: real files, with a flush that can be held or fail."""

from __future__ import annotations

import threading

from sink.base import SinkError
from sink.jsonl import JsonlSink


class HeldJsonlSink(JsonlSink):
    """A jsonl sink whose flush waits for ``release`` before its fsync, and notes its thread."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.release = threading.Event()
        self.entered = threading.Event()
        self.flush_threads: list[threading.Thread] = []

    def flush(self) -> None:
        self.flush_threads.append(threading.current_thread())
        self.entered.set()
        if not self.release.wait(30):
            raise TimeoutError("the test never released the held flush")
        super().flush()


class FailingFlushJsonlSink(JsonlSink):
    """A jsonl sink whose flush fails, as an fsync on a failing disk does."""

    def flush(self) -> None:
        raise SinkError(f"cannot write sink.jsonl.path {self.path}: [Errno 5] Input/output error")
