"""Helpers shared by test modules (moved out of test_signal_channels.py)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from sink.memory import MemorySink
from tests.connector.incremental_support import (
    data_records,
    payload,
)

# Fast delivery and idle ticks: records reach the memory sink within ~0.1 s, and the server sends a
# binlog heartbeat every 0.1 s while idle (the polled channels are read on those ticks).
FAST = {"poll.interval.ms": "100", "offset.flush.interval.ms": "0"}


# -- a running engine ---------------------------------------------------------------------------------
class Running:
    """``engine.run()`` on a thread; ``wait`` polls a condition and fails at once if the engine died."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="engine", daemon=True)

    def _run(self) -> None:
        try:
            self.engine.run()
        except BaseException as exc:  # re-raised on the test's thread
            self.error = exc

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
        # An upper bound: on a loaded 2-core machine (Spark JVMs beside) the first event after
        # start-up has taken over 30 s.
        deadline = time.monotonic() + timeout
        while not condition():
            if self.error is not None:
                raise AssertionError(f"the engine stopped while waiting for {what}") from self.error
            if not self.thread.is_alive():
                raise AssertionError(f"the engine ended while waiting for {what}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout}s for {what}")
            time.sleep(0.05)


@contextlib.contextmanager
def running(engine: Engine) -> Iterator[Running]:
    runner = Running(engine)
    runner.thread.start()
    try:
        yield runner
    finally:
        engine.stop()
        runner.thread.join(60)
    assert not runner.thread.is_alive(), "the engine did not stop"
    if runner.error is not None:
        raise runner.error


def streamed(memory: MemorySink, table: str, key: int, op: str = "c") -> Callable[[], bool]:
    def seen() -> bool:
        return any(
            payload(r)["op"] == op and (payload(r)["after"] or payload(r)["before"])["id"] == key
            for r in data_records(memory.records, table)
        )

    return seen


def table_state(server: MySQLServerHandle, db: str, table: str = "orders") -> dict[Any, dict[str, Any]]:
    return {
        (row[0],): {"id": row[0], "name": row[1], "qty": row[2]}
        for row in server.query(f"SELECT id, name, qty FROM {table}", database=db)
    }
