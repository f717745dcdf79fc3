"""The in-memory binlog itself (``connector.testing.event_source``): positions, rotates, MariaDB's
GTID events, scripting mistakes, and the dispatcher's handling of rows it cannot convert."""

from __future__ import annotations

import logging

import pytest

from connector.dispatch.dispatcher import EventProcessingError
from connector.testing.event_source import (
    Gtid,
    InMemoryBinlog,
    Rotate,
    Rows,
    ScriptError,
    insert,
    transaction,
)
from mysql_cdc_base.records import RecordKind
from tests.connector.dispatch.stream_support import data, in_memory, offset_map, shape

T = "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))"


def _script(binlog: InMemoryBinlog) -> None:
    binlog.write(
        transaction(insert("inventory.t", {"id": 1, "name": "a"})),
        Rotate("mysql-bin.000002"),
        transaction(insert("inventory.t", {"id": 2, "name": "b"})),
    )


def test_events_follow_each_other_in_the_file() -> None:
    binlog = in_memory(T)
    _script(binlog)
    first_file = [e for e in binlog.events if e.file == "mysql-bin.000001"]
    assert first_file[0].start_pos == 4
    assert all(a.end_pos == b.start_pos for a, b in zip(first_file, first_file[1:], strict=False))
    second_file = [e for e in binlog.events if e.file == "mysql-bin.000002"]
    assert second_file[0].start_pos == 4


def test_a_rotate_moves_the_stream_to_the_next_file() -> None:
    binlog = in_memory(T)
    _script(binlog)
    records = binlog.run()
    assert [(r.value["source"]["file"], r.value["after"]["id"]) for r in records] == [
        ("mysql-bin.000001", 1),
        ("mysql-bin.000002", 2),
    ]
    assert offset_map(records[1])["file"] == "mysql-bin.000002"
    assert binlog.stored_offset.file == "mysql-bin.000002"


def test_a_restart_after_the_rotate_continues_in_the_next_file() -> None:
    straight = in_memory(T)
    _script(straight)
    expected = [(r.topic, r.value["after"]["id"]) for r in straight.run()]
    rotate_index = next(i for i, e in enumerate(straight.events) if type(e.event).__name__ == "RotateEvent")
    for crash_after in (rotate_index, rotate_index + 1, rotate_index + 2):
        binlog = in_memory(T)
        _script(binlog)
        binlog.run(stop_after=crash_after)
        binlog.run()
        assert [(r.topic, r.value["after"]["id"]) for r in binlog.records] == expected, crash_after


def test_mariadb_gtid_event_starts_the_transaction() -> None:
    binlog = in_memory(T, flavor="mariadb", properties={"provide.transaction.metadata": "true"})
    binlog.write(transaction(insert("inventory.t", {"id": 1, "name": "a"})))
    assert [type(e.event).__name__ for e in binlog.events] == [
        "MariadbGtidEvent",
        "TableMapEvent",
        "WriteRowsEvent",
        "XidEvent",
    ]
    records = binlog.run()
    assert shape(records) == ["BEGIN", "c", "END"]
    assert records[0].key == {"id": "0-1-1"}
    assert data(records)[0].value["source"]["gtid"] == "0-1-1"
    assert binlog.recorder.advanced[-1].to_map()["gtids"] == "0-1-1"


def test_scripting_mistakes_are_named() -> None:
    with pytest.raises(ScriptError, match="give db.table"):
        in_memory(T).write(insert("t", {"id": 1}))
    with pytest.raises(ScriptError, match="tagged GTIDs"):
        in_memory(T).write(Gtid("3e11fa47-71ca-11e1-9e33-c80aa9429562:tag:1"))
    with pytest.raises(ScriptError, match="not a scripted binlog step"):
        in_memory(T).write("BEGIN")  # type: ignore[arg-type]


def test_rows_that_cannot_be_converted_stop_the_stream_or_are_skipped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # event.processing.failure.handling.mode: fail (default) names the event; warn logs and skips it.
    bad = Rows("inventory.t", "c", ((None, {"id": 1, "colour": "red"}),))
    failing = in_memory(T)
    failing.write(transaction(bad))
    rows_event = failing.events[3]
    with pytest.raises(EventProcessingError, match=f"{rows_event.file}:{rows_event.start_pos}.*colour"):
        failing.run()
    warning = in_memory(T, properties={"event.processing.failure.handling.mode": "warn"})
    warning.write(transaction(bad), transaction(insert("inventory.t", {"id": 2, "name": "b"})))
    with caplog.at_level(logging.WARNING):
        records = warning.run()
    assert [r.value["after"]["id"] for r in records if r.kind is RecordKind.DATA] == [2]
    assert "event.processing.failure.handling.mode=warn" in caplog.text
