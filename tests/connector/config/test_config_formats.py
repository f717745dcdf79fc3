"""`--config` reads Kafka Connect's REST JSON as well as a .properties file, and names any other
JSON or YAML as the wrong format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connector.cli.commands import main
from connector.config_files import load_properties_file
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.errors import ConfigError

DB = "fmt_db"
# What differs between two runs: the wall clock and the run's id (a header).
_CLOCK_FIELDS = frozenset({"ts_ms", "ts_us", "ts_ns", "__debezium.context.runId"})


def without_clock(value: Any) -> Any:
    """An event without the fields that differ between two runs."""
    if isinstance(value, dict):
        return {k: without_clock(v) for k, v in value.items() if k not in _CLOCK_FIELDS}
    if isinstance(value, list):
        return [without_clock(v) for v in value]
    return value


def properties(server: LocalMySQLServer, out: Path) -> dict[str, str]:
    return server.connector_properties(
        **{
            "topic.prefix": "fmt",
            "database.include.list": DB,
            "offset.storage": "file",
            "offset.storage.file.filename": str(out / "offsets.json"),
            "schema.history.internal.file.filename": str(out / "history.jsonl"),
            "sink.type": "jsonl",
            "sink.jsonl.path": str(out / "events.jsonl"),
            "snapshot.mode": "initial",
        }
    )


def test_connect_rest_json_gives_the_same_events_as_the_properties_file(tmp_path):
    with LocalMySQLServer() as server:
        server.execute(
            f"CREATE DATABASE {DB}",
            f"CREATE TABLE {DB}.t (id INT PRIMARY KEY, name VARCHAR(20), at DATETIME(3))",
            f"INSERT INTO {DB}.t VALUES (1, 'one', '2024-01-02 03:04:05.678'), (2, NULL, NULL)",
        )
        (tmp_path / "p").mkdir()
        (tmp_path / "j").mkdir()
        props = tmp_path / "p" / "connector.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in properties(server, tmp_path / "p").items()))
        connect_json = tmp_path / "j" / "connector.json"
        body = {"name": "mysql-cdc", "config": properties(server, tmp_path / "j")}
        body["config"]["connector.class"] = "io.debezium.connector.mysql.MySqlConnector"
        body["config"]["tasks.max"] = "1"
        connect_json.write_text(json.dumps(body, indent=2))
        assert main(["snapshot", "--config", str(props)]) == 0
        assert main(["snapshot", "--config", str(connect_json)]) == 0
    read = [
        [without_clock(json.loads(line)) for line in (tmp_path / d / "events.jsonl").read_text().splitlines()]
        for d in ("p", "j")
    ]
    assert len(read[0]) >= 2  # the two rows (and the schema changes)
    assert read[0] == read[1]


def test_the_connect_name_is_the_connector_name(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"name": "orders-cdc", "config": {"topic.prefix": "x", "max.batch.size": 10}}))
    assert load_properties_file(path) == {"topic.prefix": "x", "max.batch.size": "10", "name": "orders-cdc"}


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("plain.json", '{"database.hostname": "db"}', 'is JSON but an object without a "config" object'),
        ("list.json", '[{"config": {}}]', "is JSON but not an object"),
        ("broken.json", '{"config": {', "line 1: not valid JSON"),
        ("c.yaml", "database.hostname: db\n", "looks like YAML"),
        ("c.conf", "database:\n  hostname: db\n", "looks like YAML"),
    ],
)
def test_other_json_and_yaml_are_named_as_the_wrong_format(tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_properties_file(path)
    assert expected in str(exc.value)
    if "not valid JSON" not in expected:
        assert "expected a Java .properties file (key=value lines) or Kafka Connect's REST JSON" in str(
            exc.value
        )


def test_a_wrong_format_is_a_configuration_error_of_the_command(tmp_path, capsys):
    path = tmp_path / "c.yml"
    path.write_text("database:\n  hostname: db\n")
    assert main(["run", "--config", str(path)]) == 2
    assert "looks like YAML, which is not read" in capsys.readouterr().err
