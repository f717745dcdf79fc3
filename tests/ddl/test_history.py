"""File and memory schema history stores."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ddl.history.record import HistoryRecord, history_record_to_json
from ddl.history.store import FileSchemaHistory, MemorySchemaHistory
from mysql_cdc_base.errors import SchemaHistoryError


def record(n: int) -> HistoryRecord:
    return HistoryRecord(
        source={"server": "s"},
        position={"file": "mysql-bin.000001", "pos": n},
        ts_ms=n,
        ddl=f"CREATE TABLE t{n} (a INT)",
        database_name="db",
        table_changes=({"type": "CREATE", "id": f'"db"."t{n}"'},),
    )


def test_memory_history() -> None:
    history = MemorySchemaHistory()
    assert not history.exists()
    history.record(record(1))
    history.record(record(2))
    assert history.exists()
    assert list(history.records()) == [record(1), record(2)]


def test_file_history_writes_one_compact_line_per_record(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "history.dat"
    history = FileSchemaHistory(path)
    history.start()
    assert not history.exists()
    history.record(record(1))
    history.record(record(2))
    lines = path.read_bytes().split(b"\n")
    assert lines == [history_record_to_json(record(1)), history_record_to_json(record(2)), b""]
    reopened = FileSchemaHistory(path)
    reopened.start()
    assert reopened.exists()
    assert list(reopened.records()) == [record(1), record(2)]


def test_file_history_ignores_a_torn_last_line_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "history.dat"
    history = FileSchemaHistory(path)
    history.record(record(1))
    full = history_record_to_json(record(2))
    with open(path, "ab") as handle:
        handle.write(full[: len(full) // 2])  # crash in the middle of a write
    with caplog.at_level(logging.WARNING, logger="ddl.history.store"):
        assert list(FileSchemaHistory(path).records()) == [record(1)]
    assert "torn last line" in caplog.text
    # Reopening repairs the file so later appends start on a fresh line.
    reopened = FileSchemaHistory(path)
    reopened.start()
    reopened.record(record(3))
    assert list(FileSchemaHistory(path).records()) == [record(1), record(3)]


def test_file_history_keeps_a_complete_last_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "history.dat"
    path.write_bytes(history_record_to_json(record(1)))
    history = FileSchemaHistory(path)
    history.start()
    history.record(record(2))
    assert list(history.records()) == [record(1), record(2)]


def test_file_history_corruption_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "history.dat"
    path.write_bytes(
        history_record_to_json(record(1)) + b"\n{garbage\n" + history_record_to_json(record(2)) + b"\n"
    )
    with pytest.raises(SchemaHistoryError, match="corrupt at line 2"):
        list(FileSchemaHistory(path).records())
