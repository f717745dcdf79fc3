"""`mysql-cdc status`: stored offset, server position and lag, against a throwaway MariaDB of the
test's own (so that every transaction in its binlog is one the test wrote)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from connector.cli.commands import main
from connector.cli.status import byte_lag
from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.position import BinlogPosition, SourceOffset
from sink.memory import MemorySink

DB = "status_db"


def write_properties(server: LocalMySQLServer, tmp_path: Path) -> Path:
    props = server.connector_properties(
        **{
            "topic.prefix": "st",
            "database.include.list": DB,
            "offset.storage": "file",
            "offset.storage.file.filename": str(tmp_path / "offsets.json"),
            "schema.history.internal.file.filename": str(tmp_path / "history.jsonl"),
        }
    )
    path = tmp_path / "connector.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def catch_up(path: Path) -> None:
    engine = Engine(ConnectorConfig.from_file(str(path), {}), sinks=[MemorySink()])
    try:
        engine.catch_up()
    finally:
        engine.close()


def wait_for_binlog_checkpoint(server: LocalMySQLServer) -> None:
    """MariaDB writes a Binlog_checkpoint event naming a new binlog file into it after the first
    commit there: wait for it. Such an event is no transaction and never moves the stored offset
    (as in Debezium), so the lag shows its bytes until the next transaction is streamed."""
    if not server.is_mariadb:
        return
    current = str(server.query("SHOW MASTER STATUS")[0][0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        events = server.query(f"SHOW BINLOG EVENTS IN '{current}'")
        if any(str(row[2]) == "Binlog_checkpoint" and str(row[5]) == current for row in events):
            return
        time.sleep(0.05)
    raise AssertionError(f"no Binlog_checkpoint event for {current} within 10 s")


def status(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, str], str]:
    code = main(["status", "--config", str(path)])
    captured = capsys.readouterr()
    fields = dict(re.findall(r"^([a-z ]+):\s+(.*)$", captured.out, re.MULTILINE))
    return code, fields, captured.err


def test_status_reports_lag_and_zero_after_catching_up(
    fresh_mysql_server: LocalMySQLServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = fresh_mysql_server
    server.execute(f"CREATE DATABASE {DB}", f"CREATE TABLE {DB}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    path = write_properties(server, tmp_path)

    code, _, err = status(path, capsys)
    assert code == 1 and "no offset is stored" in err

    catch_up(path)
    code, fields, _ = status(path, capsys)
    assert code == 0, fields
    assert fields["lag bytes"] == "0" and fields["lag transactions"] == "0"

    for i in range(4):  # four transactions
        server.execute(f"INSERT INTO {DB}.t VALUES ({i}, 'row {i}')")
    code, fields, _ = status(path, capsys)
    assert code == 0
    assert int(fields["lag bytes"]) > 0
    assert fields["lag transactions"] == "4"
    assert fields["stored offset"].startswith("GTIDs ")  # the GTID set, then file/pos
    assert fields["stored offset"] != fields["server position"]

    # Across a binlog rotation: the rest of the stored file plus the new file up to the position.
    server.execute("FLUSH BINARY LOGS", f"INSERT INTO {DB}.t VALUES (10, 'after rotation')")
    wait_for_binlog_checkpoint(server)
    code, fields_rotated, _ = status(path, capsys)
    assert code == 0
    assert int(fields_rotated["lag bytes"]) > int(fields["lag bytes"])
    assert fields_rotated["lag transactions"] == "5"

    server.execute(f"INSERT INTO {DB}.t VALUES (11, 'last')")  # after the checkpoint event
    code, fields, _ = status(path, capsys)
    assert fields["lag transactions"] == "6"
    catch_up(path)
    code, fields, _ = status(path, capsys)
    assert code == 0
    assert fields["lag bytes"] == "0" and fields["lag transactions"] == "0"
    assert fields["stored offset"] == fields["server position"]


def test_status_config_error_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.properties"
    path.write_text("topic.prefix=x\n")  # database.hostname and friends missing
    assert main(["status", "--config", str(path)]) == 2
    assert "configuration error" in capsys.readouterr().err


def test_byte_lag_sums_binlog_sizes_across_files() -> None:
    logs = [("mysql-bin.000001", 1000), ("mysql-bin.000002", 500), ("mysql-bin.000003", 300)]
    at = SourceOffset("mysql-bin.000001", 900)
    assert byte_lag(at, BinlogPosition("mysql-bin.000001", 950), logs) == 50
    assert byte_lag(at, BinlogPosition("mysql-bin.000003", 200), logs) == 100 + 500 + 200
    assert (
        byte_lag(SourceOffset("mysql-bin.000000", 4), BinlogPosition("mysql-bin.000003", 200), logs) is None
    )
