"""Helpers of the ``mysql-cdc check`` tests: a properties file for a server, running the command,
and a read-only directory (a read-only bind mount: the tests run as root, whom permission bits do
not stop)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from connector.cli.commands import main
from connector.testing.local_server import MySQLServerHandle


def write_config(server: MySQLServerHandle, tmp_path: Path, **extra: Any) -> Path:
    props = server.connector_properties(
        **{
            "topic.prefix": "chk",
            "offset.storage": "file",
            "offset.storage.file.filename": str(tmp_path / "offsets.json"),
            "schema.history.internal.file.filename": str(tmp_path / "history.jsonl"),
            "sink.type": "jsonl",
            "sink.jsonl.path": str(tmp_path / "events.jsonl"),
            **extra,
        }
    )
    path = tmp_path / "connector.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def run_check(path: Path, capsys: pytest.CaptureFixture[str], *overrides: str) -> tuple[int, str]:
    argv = ["check", "--config", str(path)]
    for item in overrides:
        argv += ["--set", item]
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out + captured.err


@contextmanager
def read_only_directory(path: Path) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "--bind", str(path), str(path)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(path)], check=True)
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)
