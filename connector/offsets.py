"""Offset storage: where the connector keeps the source position it has safely delivered up to.

The stored map is Debezium's offset map (``file``, ``pos``, ``gtids``, ``event``, ``row``,
``ts_sec``, ``server_id``, ``snapshot`` ...) under the source partition ``{"server": <topic.prefix>}``,
so the Kafka-backed store writes exactly what Kafka Connect writes to its offsets topic:
key ``["<connector name>",{"server":"<prefix>"}]``, value the offset JSON.
"""

from __future__ import annotations

import os
import tempfile
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from ddl.errors import OffsetError


def partition_key(connector_name: str, server: str) -> bytes:
    """The Kafka Connect offset key for our single source partition."""
    return orjson.dumps([connector_name, {"server": server}])


class OffsetStore(ABC):
    """Loads and stores the offset map of one source partition."""

    @abstractmethod
    def load(self) -> dict[str, Any] | None: ...

    @abstractmethod
    def save(self, offset: Mapping[str, Any]) -> None:
        """Durably store ``offset``; returns only when a crash afterwards would still see it."""

    def close(self) -> None:  # noqa: B027 - optional hook
        pass


class MemoryOffsetStore(OffsetStore):
    def __init__(self, initial: Mapping[str, Any] | None = None) -> None:
        self._offset = dict(initial) if initial is not None else None
        self._lock = threading.Lock()

    def load(self) -> dict[str, Any] | None:
        with self._lock:
            return dict(self._offset) if self._offset is not None else None

    def save(self, offset: Mapping[str, Any]) -> None:
        with self._lock:
            self._offset = dict(offset)


class FileOffsetStore(OffsetStore):
    """A JSON file mapping partition key → offset, replaced atomically (write, fsync, rename),
    so a crash leaves either the old or the new offset, never a torn one."""

    def __init__(self, path: str | os.PathLike[str], connector_name: str, server: str) -> None:
        self.path = Path(path)
        self._key = partition_key(connector_name, server).decode()

    def _read_all(self) -> dict[str, Any]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        if not data.strip():
            return {}
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise OffsetStoreError(
                f"offset file {self.path} is not valid JSON ({exc}); restore it or delete it to "
                "start over with a new snapshot"
            ) from exc
        if not isinstance(parsed, dict):
            raise OffsetStoreError(f"offset file {self.path} does not hold a JSON object")
        return parsed

    def load(self) -> dict[str, Any] | None:
        value = self._read_all().get(self._key)
        return dict(value) if isinstance(value, dict) else None

    def save(self, offset: Mapping[str, Any]) -> None:
        data = self._read_all()
        data[self._key] = dict(offset)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".offsets-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(orjson.dumps(data, option=orjson.OPT_INDENT_2))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


class OffsetStoreError(OffsetError, RuntimeError):
    pass
