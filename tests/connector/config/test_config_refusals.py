"""Debezium properties we do not implement are refused naming the key; Java-runtime keys are accepted
silently; unreadable properties files, missing keys and file-system problems name what to fix."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from connector.cli import main
from connector.config import NOT_APPLICABLE, REFUSED, ConfigError, ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.errors import MysqlCdcError

BASE = {
    "database.hostname": "127.0.0.1",
    "database.port": "3306",
    "database.user": "cdc",
    "database.password": "s3cret-pass",
    "database.server.id": "5400",
    "topic.prefix": "shop",
}


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "connector.properties"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def props_text(props: dict[str, str]) -> str:
    return "".join(f"{k}={v}\n" for k, v in props.items())


@pytest.mark.parametrize(
    ("key", "value"),
    [
        # (transforms, predicates and converters are implemented: tests/connector/records/test_transforms.py)
        ("sink.spark.retain.ms", "1000"),
        ("database.history.kafka.topic", "old"),
    ],
)
def test_debezium_properties_that_change_output_stop_the_cli_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: str
) -> None:
    path = write(tmp_path, props_text({**BASE, key: value}))
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{key}: this Debezium property is not supported" in err
    assert "s3cret-pass" not in err


def test_every_refused_entry_is_refused() -> None:
    for entry in REFUSED:
        with pytest.raises(ConfigError, match=f"^{entry}: this Debezium property is not supported"):
            ConnectorConfig.from_mapping({**BASE, entry: "x"})


def test_not_applicable_runtime_keys_are_accepted_silently(caplog: pytest.LogCaptureFixture) -> None:
    extra = {key: "1" for key in NOT_APPLICABLE}
    extra["connector.class"] = "io.debezium.connector.mysql.MySqlConnector"
    extra["key.converter"] = "org.apache.kafka.connect.json.JsonConverter"
    extra["value.converter"] = "org.apache.kafka.connect.json.JsonConverter"
    extra["header.converter"] = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    with caplog.at_level(logging.WARNING):
        config = ConnectorConfig.from_mapping({**BASE, **extra})
    assert config.unknown_keys() == []
    assert "unknown configuration property" not in caplog.text


def test_a_converter_that_changes_the_format_is_refused() -> None:
    with pytest.raises(
        ConfigError, match="value.converter: io.confluent.connect.avro.AvroConverter is not supported"
    ):
        ConnectorConfig.from_mapping({**BASE, "value.converter": "io.confluent.connect.avro.AvroConverter"})


def test_all_missing_required_keys_are_named_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, props_text({"database.port": "3306"}))
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "database.hostname, database.user, database.server.id, topic.prefix: are required" in err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"database.hostname=h\nname=a\\u12x4b\n", r"line 2: invalid \u escape '\\u12x4'"),
        (b"database.hostname=h\n\ntopic.prefix=caf\xe9\n", "line 3: not UTF-8 text (byte 0xe9)"),
    ],
)
def test_unreadable_properties_file_exits_2_with_line_and_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, expected: str
) -> None:
    path = write(tmp_path, content)
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{path} {expected}" in err


def test_properties_path_that_is_a_directory_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--config", str(tmp_path)]) == 2
    assert f"cannot read configuration file {tmp_path}" in capsys.readouterr().err


# -- file-system errors name the file and the property ------------------------------------------------
@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("sink.jsonl.path", "cannot open sink.jsonl.path {path}"),
        ("offset.storage.file.filename", "offset file {path} (offset.storage.file.filename"),
        ("schema.history.internal.file.filename", "schema history file {path} (schema.history.internal.file"),
    ],
)
def test_a_path_under_a_regular_file_names_the_file_and_the_property(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path, key: str, expected: str
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    path = blocker / "file"
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "fs",
            "database.include.list": unique_db,
            "data.dir": str(tmp_path / "d"),
            key: str(path),
        }
    )
    engine = Engine(ConnectorConfig.from_mapping(props))
    with pytest.raises(MysqlCdcError) as info:
        engine.run()
    assert expected.format(path=path) in str(info.value)


def test_no_space_left_names_the_sink_file_and_property(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, pad TEXT)",
        *(f"INSERT INTO t VALUES ({i}, REPEAT('x', 2000))" for i in range(50)),
        database=unique_db,
    )
    full = Path("/dev/full")  # every write fails with ENOSPC, as on a full disk
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "fs",
            "database.include.list": unique_db,
            "data.dir": str(tmp_path / "d"),
            "sink.jsonl.path": str(full),
            "snapshot.mode": "initial_only",
        }
    )
    with pytest.raises(MysqlCdcError, match=f"cannot write sink.jsonl.path {full}: .*No space left"):
        Engine(ConnectorConfig.from_mapping(props)).run()


@pytest.mark.parametrize("value", ["default", "legacy"])
def test_ddl_parser_type_is_accepted_and_an_unknown_grammar_is_refused(value: str) -> None:
    assert ConnectorConfig.from_mapping({**BASE, "ddl.parser.type": value}).get("ddl.parser.type") == value
    with pytest.raises(ConfigError, match="ddl.parser.type"):
        ConnectorConfig.from_mapping({**BASE, "ddl.parser.type": "antlr3"})
