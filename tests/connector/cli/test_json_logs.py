"""log.format=json: every log line of `mysql-cdc` is one JSON object with Debezium's context fields."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from connector.cli import main
from connector.testing.local_server import MySQLServerHandle


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_log_lines_parse_and_carry_name_server_and_context(
    mysql_server: MySQLServerHandle,
    unique_db: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
) -> None:
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)", database=unique_db
    )
    props = mysql_server.connector_properties(
        **{
            "name": "orders-cdc",
            "topic.prefix": "shop",
            "database.include.list": unique_db,
            "data.dir": str(tmp_path),
            "snapshot.mode": "initial_only",
            "log.format": fmt,
        }
    )
    path = tmp_path / "c.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    try:
        assert main(["run", "--config", str(path), "--log-level", "INFO"]) == 0
    finally:
        logging.getLogger().handlers.clear()
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines
    if fmt == "text":
        with pytest.raises(json.JSONDecodeError):
            json.loads(lines[0])
        return
    entries = [json.loads(line) for line in lines]  # every line parses on its own
    assert {(e["name"], e["server"]) for e in entries} == {("orders-cdc", "shop")}
    assert any(e["context"] == "snapshot" for e in entries)
    assert all({"timestamp", "level", "logger", "message"} <= set(e) for e in entries)
    assert "cdc-secret" not in "\n".join(lines)
