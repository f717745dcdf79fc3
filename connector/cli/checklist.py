"""The preflight checklist's lines (``Item``, ``ok``, ``fail``) and the writability probe, shared by
``check`` and its sink checks (``check_kafka``, ``check_spark``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

OK, WARN, FAIL = "ok", "warn", "FAIL"
_MARKS = {OK: "[ok]  ", WARN: "[warn]", FAIL: "[FAIL]"}


@dataclass(frozen=True)
class Item:
    """One line of the checklist: what was checked, its outcome and, when it failed, the fix."""

    name: str
    status: str
    detail: str

    def line(self) -> str:
        return f"{_MARKS[self.status]} {self.name}: {self.detail}"


def ok(name: str, detail: str) -> Item:
    return Item(name, OK, detail)


def fail(name: str, detail: str) -> Item:
    return Item(name, FAIL, detail)


def _nearest_existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def writable_problem(path: Path) -> str | None:
    """None when ``path`` (a file or a directory, existing or to be created) could be written; else
    why not. Nothing is created."""
    existing = _nearest_existing(path)
    if existing != path.absolute() and not existing.is_dir():
        return f"{existing} is not a directory"
    if not os.access(existing, os.W_OK):
        reason = "a read-only file system" if _read_only_fs(existing) else "no write permission"
        return f"{existing} is not writable ({reason})"
    return None


def _read_only_fs(path: Path) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
