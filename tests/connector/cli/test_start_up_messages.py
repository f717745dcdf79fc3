"""Start-up messages name the fix: Kafka unreachable is one line naming bootstrap.servers (with
kafka-python's own logging quiet), and configuration warnings follow log.format=json."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from connector.cli import main
from connector.testing.local_server import MySQLServerHandle, free_port


def write(path: Path, props: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


@pytest.mark.parametrize("offsets_in_kafka", [False, True])
def test_kafka_unreachable_is_one_line_naming_bootstrap_servers(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, capsys, offsets_in_kafka: bool
) -> None:
    address = f"127.0.0.1:{free_port()}"
    key = "offset.storage.kafka.bootstrap.servers" if offsets_in_kafka else "sink.kafka.bootstrap.servers"
    sink = {"sink.type": "jsonl"} if offsets_in_kafka else {"sink.type": "kafka", key: address}
    offsets = (
        {"offset.storage": "kafka", key: address, "offset.storage.topic": "o"} if offsets_in_kafka else {}
    )
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "down",
            "database.include.list": unique_db,
            "data.dir": str(tmp_path),
            **sink,
            **offsets,
        }
    )
    try:
        status = main(["run", "--config", str(write(tmp_path / "c.properties", props))])
    finally:
        logging.getLogger().handlers.clear()
    err = capsys.readouterr().err
    assert status == 1
    problems = [line for line in err.splitlines() if "ERROR" in line or "error" in line]
    assert problems == [
        f"mysql-cdc: error: no Kafka broker answered at {key}={address} ({address} refused the "
        f"connection): check {key}, that the brokers run and that their advertised listeners are "
        "reachable from here"
    ], err
    assert "kafka.conn" not in err and "NoBrokersAvailable" not in err


def test_a_misspelt_key_warns_in_json_with_a_did_you_mean(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, capsys
) -> None:
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "js",
            "database.include.list": unique_db,
            "data.dir": str(tmp_path),
            "snapshot.mode": "initial_only",
            "log.format": "json",
            "table.include.lst": f"{unique_db}.t",
        }
    )
    try:
        assert main(["run", "--config", str(write(tmp_path / "c.properties", props))]) == 0
    finally:
        logging.getLogger().handlers.clear()
    entries = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]
    warnings = [e for e in entries if e["level"] == "WARN" or e["level"] == "WARNING"]
    assert [e["message"] for e in warnings if "table.include.lst" in e["message"]] == [
        "unknown configuration property table.include.lst is ignored (did you mean table.include.list?)"
    ]
    assert {e["server"] for e in warnings} == {"js"}
