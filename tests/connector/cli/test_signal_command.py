"""`mysql-cdc signal`: the command writes a signal through the configured channel and the running
connector carries it out (a real server, a real engine reading the signal table or the file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from connector.cli.commands import main
from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from sink.memory import MemorySink
from tests.connector.incremental_support import (
    data_records,
    fill,
    grant_signal_table,
    payload,
    run_until,
    snapshot_finished,
)


def write_properties(server: MySQLServerHandle, db: str, tmp_path: Path, **extra: str) -> Path:
    props = server.connector_properties(
        **{
            "topic.prefix": "cli",
            "database.include.list": db,
            "data.dir": str(tmp_path),
            "snapshot.mode": "no_data",
            "signal.data.collection": f"{db}.dbz_signal",
            "incremental.snapshot.chunk.size": "40",
            **extra,
        }
    )
    path = tmp_path / "connector.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def start(path: Path) -> tuple[Engine, MemorySink]:
    memory = MemorySink()
    engine = Engine(ConnectorConfig.from_file(str(path), {}), sinks=[memory])
    engine.catch_up()
    return engine, memory


@pytest.fixture
def orders_db(mysql_server: MySQLServerHandle, unique_db: str) -> str:
    grant_signal_table(mysql_server, unique_db)
    mysql_server.execute(
        "CREATE TABLE orders (id INT PRIMARY KEY, name VARCHAR(40), qty INT)", database=unique_db
    )
    fill(mysql_server, unique_db, 200)
    return unique_db


def test_signal_command_starts_a_filtered_incremental_snapshot_through_the_signal_table(
    mysql_server, orders_db, tmp_path, capsys
):
    db = orders_db
    path = write_properties(mysql_server, db, tmp_path)
    engine, memory = start(path)
    try:
        code = main(
            [
                "signal",
                "--config",
                str(path),
                "execute-snapshot",
                "--table",
                f"{db}.orders",
                "--where",
                "qty > 50",
            ]
        )
        assert code == 0
        assert "sent execute-snapshot through the source channel" in capsys.readouterr().out
        run_until(engine, snapshot_finished(engine))
    finally:
        engine.close()
    rows = data_records(memory.records, "orders")
    expected = [
        r[0] for r in mysql_server.query("SELECT id FROM orders WHERE qty > 50 ORDER BY id", database=db)
    ]
    assert [payload(r)["after"]["id"] for r in rows] == expected
    assert {payload(r)["source"]["snapshot"] for r in rows} == {"incremental"}
    (signal_row,) = [
        payload(r)["after"]
        for r in data_records(memory.records, "dbz_signal")
        if payload(r)["after"]["type"] == "execute-snapshot"
    ]
    assert '"additional-conditions"' in signal_row["data"]


def test_signal_command_sends_a_blocking_snapshot_and_a_stop_through_the_file_channel(
    mysql_server, orders_db, tmp_path, capsys
):
    db = orders_db
    signals = tmp_path / "signals.jsonl"
    path = write_properties(
        mysql_server,
        db,
        tmp_path,
        **{"signal.enabled.channels": "file", "signal.file": str(signals), "signal.poll.interval.ms": "0"},
    )
    engine, memory = start(path)
    try:
        args = ["signal", "--config", str(path), "execute-snapshot", "--table", f"{db}.orders"]
        assert main([*args, "--type", "blocking"]) == 0
        assert "through the file channel" in capsys.readouterr().out
        assert signals.read_text().count("\n") == 1
        engine.streaming.signals.poll()  # type: ignore[union-attr] # the file is read, the snapshot runs
        engine.catch_up()
        assert len(data_records(memory.records, "orders")) == 200
        assert signals.read_text() == ""  # read lines are taken out of the file
        # An incremental snapshot stopped by the next command's signal, read in the same poll.
        assert main(args) == 0
        assert main(["signal", "--config", str(path), "stop-snapshot", "--table", f"{db}.orders"]) == 0
        engine.streaming.signals.poll()  # type: ignore[union-attr]
        engine.catch_up()
        assert not engine.streaming.signals.incremental.running  # type: ignore[union-attr]
    finally:
        engine.close()
    rows = data_records(memory.records, "orders")
    blocking = rows[:200]
    assert [payload(r)["after"]["id"] for r in blocking] == list(range(1, 201))
    assert [payload(r)["source"]["snapshot"] for r in blocking[:2]] == ["first", "true"]
    # the stopped incremental snapshot emitted at most its first chunk, never the whole table again
    assert len(rows) - 200 <= 40


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["execute-snapshot", "--table", "orders_without_database"], "--table"),
        (["set-binlog-position", "--file", "mysql-bin.000001"], "--file"),
        (["set-binlog-position", "--gtid-set", "0-1-5", "--position", "4"], "--gtid-set"),
        (["--channel", "kafka", "log", "--message", "hi"], "signal.enabled.channels"),
    ],
)
def test_signal_command_refuses_bad_input_naming_the_option(
    mysql_server, unique_db, tmp_path, capsys, argv, names
):
    path = write_properties(mysql_server, unique_db, tmp_path)
    assert main(["signal", "--config", str(path), *argv[:1], *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert names in err
    assert mysql_server.connector.password not in err
