"""Offset storage: where the connector keeps the source position it has safely delivered up to.

Stores hand out and take the typed ``mysql_cdc_base.position.SourceOffset``. What they store is its
``to_map()``, Debezium's offset map (``file``, ``pos``, ``gtids``, ``event``, ``row``, ``ts_sec``,
``server_id``, ``snapshot`` ...), under the source partition ``{"server": <topic.prefix>}``, so the
Kafka-backed store writes exactly what Kafka Connect writes to its offsets topic: key
``["<connector name>",{"server":"<prefix>"}]``, value the offset JSON.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from mysql_cdc_base.errors import OffsetError
from mysql_cdc_base.position import SourceOffset


def partition_key(connector_name: str, server: str) -> bytes:
    """The Kafka Connect offset key for our single source partition."""
    return orjson.dumps([connector_name, {"server": server}])


class OffsetStore(ABC):
    """Loads and stores the offset of one source partition (stored as Debezium's offset map)."""

    @abstractmethod
    def load(self) -> SourceOffset | None:
        """The stored offset, or None when there is none."""

    @abstractmethod
    def save(self, offset: SourceOffset | Mapping[str, Any]) -> None:
        """Durably store ``offset`` (a plain map is read as ``SourceOffset.coerce`` reads it);
        returns only when a crash afterwards would still see it."""

    def close(self) -> None:  # noqa: B027 - optional hook
        pass


class MemoryOffsetStore(OffsetStore):
    def __init__(self, initial: SourceOffset | Mapping[str, Any] | None = None) -> None:
        self._offset = SourceOffset.coerce(initial)
        self._lock = threading.Lock()

    def load(self) -> SourceOffset | None:
        with self._lock:
            return self._offset

    def save(self, offset: SourceOffset | Mapping[str, Any]) -> None:
        with self._lock:
            self._offset = SourceOffset.from_map(offset)


class FileOffsetStore(OffsetStore):
    """A JSON file mapping partition key → offset, replaced atomically (write, fsync, rename),
    so a crash leaves either the old or the new offset, never a torn one."""

    def __init__(self, path: str | os.PathLike[str], connector_name: str, server: str) -> None:
        self.path = Path(path)
        self._key = partition_key(connector_name, server).decode()
        # The file's entries as this store last read or wrote them, and the file's identity then
        # (inode, size, mtime): a save re-reads the file only when someone else has replaced or
        # changed it since (a restored backup, another connector's entry), not once a second.
        self._entries: dict[str, Any] | None = None
        self._stamp: tuple[int, int, int] | None = None

    def _current_entries(self) -> dict[str, Any]:
        """The file's entries, from memory when the file is still the one this store last saw."""
        if self._entries is not None and self._stamp is not None and self._stamp == _stamp_of(self.path):
            return self._entries
        return self._read_all()

    def _read_all(self) -> dict[str, Any]:
        # Stat, then read: a change in between leaves a stamp the next save finds outdated, so
        # it reads the file again (the other order could keep old entries under a new stamp).
        self._entries, self._stamp = None, None
        stamp = _stamp_of(self.path)
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise OffsetStoreError(
                f"cannot read the offset file {self.path} (offset.storage.file.filename, default "
                f"<data.dir>/offsets.json): {exc.strerror or exc}"
            ) from exc
        # The store only ever replaces the file atomically, so an empty or torn file was damaged from
        # outside (a full disk, a copy, an editor): never read it as "no offset" and re-snapshot.
        if not data.strip():
            raise OffsetStoreError(f"offset file {self.path} is empty ({len(data)} bytes); {_CHOICES}")
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise OffsetStoreError(
                f"offset file {self.path} is not valid JSON, it may be truncated ({exc}); {_CHOICES}"
            ) from exc
        if not isinstance(parsed, dict):
            raise OffsetStoreError(f"offset file {self.path} does not hold a JSON object")
        self._entries, self._stamp = parsed, stamp
        return parsed

    def load(self) -> SourceOffset | None:
        value = self._read_all().get(self._key)
        if not isinstance(value, dict):
            return None
        try:
            return SourceOffset.from_map(value)
        except OffsetError as exc:
            raise OffsetStoreError(f"offset file {self.path} holds an invalid offset: {exc}") from exc

    def save(self, offset: SourceOffset | Mapping[str, Any]) -> None:
        stored = SourceOffset.from_map(offset).to_map()
        data = dict(self._current_entries())
        data[self._key] = stored
        try:
            self._stamp = self._write(data)
            self._entries = data
        except OSError as exc:
            self._entries, self._stamp = None, None
            raise OffsetStoreError(
                f"cannot write the offset file {self.path} (offset.storage.file.filename, default "
                f"<data.dir>/offsets.json): {exc.strerror or exc}"
            ) from exc

    def _write(self, data: dict[str, Any]) -> tuple[int, int, int]:
        """Replace the file with ``data`` durably; returns the new file's stamp (``_stamp_of``)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Loaded at the first save, after the first events: tempfile brings shutil, bz2 and lzma,
        # which a start would otherwise pay for (issue 41: time to the first event).
        import tempfile  # noqa: PLC0415

        fd, tmp = tempfile.mkstemp(prefix=".offsets-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(orjson.dumps(data, option=orjson.OPT_INDENT_2))
                fh.flush()
                os.fsync(fh.fileno())
                stamp = _stamp_of_stat(os.fstat(fh.fileno()))
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return stamp


def _stamp_of_stat(status: os.stat_result) -> tuple[int, int, int]:
    return status.st_ino, status.st_size, status.st_mtime_ns


def _stamp_of(path: Path) -> tuple[int, int, int] | None:
    """The identity of the file at ``path`` (None: there is none); a replace changes the inode."""
    try:
        return _stamp_of_stat(os.stat(path))
    except (FileNotFoundError, NotADirectoryError):  # reading it says what is wrong, and where
        return None


_CHOICES = (
    "restore it from a backup to resume where the connector stopped, or delete it (and the schema "
    "history file) to start over with a new snapshot as snapshot.mode says"
)


class OffsetStoreError(OffsetError, RuntimeError):
    pass
