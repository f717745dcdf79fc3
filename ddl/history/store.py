"""Schema history: every DDL the connector has seen, with the position it was seen at.

On restart the connector rebuilds its ``SchemaModel`` by replaying these records up to the stored
offset, so it never has to ask the server what a table looked like in the past. Records use
Debezium's history document (``source``, ``position``, ``ts_ms``, ``databaseName``, ``schemaName``,
``ddl``, ``tableChanges``) so a history written by Debezium can be read and vice versa.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from pathlib import Path

from ddl.history.record import HistoryRecord, history_record_from_json, history_record_to_json
from mysql_cdc_base.errors import SchemaHistoryError

log = logging.getLogger(__name__)


class SchemaHistory(ABC):
    """Append-only store of ``HistoryRecord``s."""

    def start(self) -> None:  # noqa: B027 - optional hook
        """Open/create the storage."""

    @abstractmethod
    def exists(self) -> bool:
        """True when the storage holds at least one record."""

    @abstractmethod
    def record(self, record: HistoryRecord) -> None:
        """Append durably."""

    @abstractmethod
    def records(self) -> Iterator[HistoryRecord]:
        """All records, oldest first."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        pass


class MemorySchemaHistory(SchemaHistory):
    """History kept in memory (``io.debezium.relational.history.MemorySchemaHistory``): for tests
    and for connectors that always start with a snapshot."""

    def __init__(self, records: Iterable[HistoryRecord] = ()) -> None:
        self._records: list[HistoryRecord] = list(records)
        self._lock = threading.Lock()

    def exists(self) -> bool:
        return bool(self._records)

    def record(self, record: HistoryRecord) -> None:
        with self._lock:
            self._records.append(record)

    def records(self) -> Iterator[HistoryRecord]:
        with self._lock:
            snapshot = list(self._records)
        return iter(snapshot)


class FileSchemaHistory(SchemaHistory):
    """``schema.history.internal.file.filename``: one compact JSON document per line, append-only.

    Every record is flushed and fsync'ed before ``record`` returns, so a record the connector acted
    on survives a crash. A crash in the middle of a write can leave a torn last line; it is dropped
    with a warning when the history is read or reopened (the DDL it described was not acknowledged,
    so it will be seen again from the binlog). A damaged line anywhere else is corruption and raises
    ``SchemaHistoryError``.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._started = False

    def start(self) -> None:
        with self._lock, self._naming_the_file():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._repair_torn_tail()
            self._started = True

    @contextlib.contextmanager
    def _naming_the_file(self) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            raise SchemaHistoryError(
                f"cannot write the schema history file {self.path} (schema.history.internal.file."
                f"filename, default <data.dir>/schema-history.jsonl): {exc.strerror or exc}"
            ) from exc

    def exists(self) -> bool:
        try:
            return self.path.stat().st_size > 0
        except FileNotFoundError:
            return False

    def record(self, record: HistoryRecord) -> None:
        line = history_record_to_json(record) + b"\n"
        with self._lock, self._naming_the_file():
            if not self._started:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._repair_torn_tail()
                self._started = True
            with open(self.path, "ab") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())

    def records(self) -> Iterator[HistoryRecord]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return iter(())
        lines = data.split(b"\n")
        torn_tail = not data.endswith(b"\n")
        out: list[HistoryRecord] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            last = number == len(lines)
            try:
                out.append(history_record_from_json(line))
            except SchemaHistoryError as exc:
                if last and torn_tail:
                    log.warning(
                        "ignoring the torn last line %d of schema history %s (interrupted write): %s",
                        number,
                        self.path,
                        exc,
                    )
                    continue
                raise SchemaHistoryError(
                    f"schema history file {self.path} is corrupt at line {number}: {exc}"
                ) from exc
        return iter(out)

    def _repair_torn_tail(self) -> None:
        """Make the file end with a complete line before appending to it."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size == 0:
            return
        with open(self.path, "rb+") as handle:
            handle.seek(max(0, size - 1))
            if handle.read(1) == b"\n":
                return
            data = self.path.read_bytes()
            cut = data.rfind(b"\n") + 1
            tail = data[cut:]
            try:
                history_record_from_json(tail)
            except SchemaHistoryError:
                log.warning("dropping the torn last line of schema history %s (interrupted write)", self.path)
                handle.truncate(cut)
            else:
                handle.seek(0, os.SEEK_END)
                handle.write(b"\n")
            handle.flush()
            os.fsync(handle.fileno())
