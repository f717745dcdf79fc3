"""Bad configuration exits with status 2 and a message naming the key and the expected form."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from connector.cli import main
from connector.config import ConfigError, ConnectorConfig

BASE = {
    "database.hostname": "127.0.0.1",
    "database.port": "3306",
    "database.user": "cdc",
    "database.password": "s3cret-pass",
    "database.server.id": "5400",
    "topic.prefix": "shop",
}


def write_props(tmp_path: Path, props: dict[str, str]) -> Path:
    path = tmp_path / "connector.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


@pytest.mark.parametrize(
    ("missing", "expected"),
    [
        ("database.hostname", "database.hostname: is required"),
        ("database.user", "database.user: is required"),
        ("database.server.id", "database.server.id: is required"),
        ("topic.prefix", "topic.prefix: is required"),
    ],
)
def test_missing_required_key_exits_2_naming_the_key(tmp_path, capsys, missing, expected):
    props = {k: v for k, v in BASE.items() if k != missing}
    assert main(["run", "--config", str(write_props(tmp_path, props))]) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert "s3cret-pass" not in err


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("database.port", "abc", "database.port: expected an integer, got 'abc'"),
        ("database.server.id", "0", "database.server.id: must be at least 1"),
        ("snapshot.mode", "sometimes", "snapshot.mode: expected one of initial, initial_only"),
        ("decimal.handling.mode", "float", "decimal.handling.mode: expected one of precise, double, string"),
        ("tombstones.on.delete", "yes", "tombstones.on.delete: expected true or false, got 'yes'"),
        ("topic.prefix", "shop/eu", "topic.prefix: 'shop/eu' may contain only letters"),
        ("table.include.list", "shop.(orders", "table.include.list: 'shop.(orders' is not a valid regular"),
        ("sink.type", "jsonl,carrier-pigeon", "sink.type: unknown value 'carrier-pigeon'"),
    ],
)
def test_invalid_value_exits_2_naming_key_and_form(tmp_path, capsys, key, value, expected):
    props = {**BASE, key: value}
    assert main(["run", "--config", str(write_props(tmp_path, props))]) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert "s3cret-pass" not in err


def test_include_and_exclude_together_is_an_error():
    with pytest.raises(ConfigError, match="table.exclude.list: set either table.include.list or"):
        ConnectorConfig.from_mapping({**BASE, "table.include.list": "a.b", "table.exclude.list": "a.c"})


def test_unknown_key_warns_and_is_ignored(caplog):
    with caplog.at_level(logging.WARNING):
        config = ConnectorConfig.from_mapping({**BASE, "databse.hostname": "typo"})
    assert config.hostname == "127.0.0.1"
    assert "unknown configuration property databse.hostname" in caplog.text


def test_env_substitution_and_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("CDC_PASSWORD", "from-env")
    path = write_props(
        tmp_path, {**BASE, "database.password": "${CDC_PASSWORD}", "database.port": "${CDC_PORT:-3307}"}
    )
    config = ConnectorConfig.from_file(path, {"topic.prefix": "override"})
    assert config.password == "from-env"
    assert config.port == 3307
    assert config.topic_prefix == "override"


def test_unset_env_variable_names_key_and_variable(tmp_path, capsys):
    path = write_props(tmp_path, {**BASE, "database.password": "${NO_SUCH_VAR_FOR_CDC}"})
    assert main(["run", "--config", str(path)]) == 2
    assert "database.password: environment variable NO_SUCH_VAR_FOR_CDC is not set" in capsys.readouterr().err


def test_set_override_needs_key_value(tmp_path, capsys):
    path = write_props(tmp_path, BASE)
    assert main(["run", "--config", str(path), "--set", "novalue"]) == 2
    assert "--set: expected key=value, got 'novalue'" in capsys.readouterr().err


def test_missing_config_file(tmp_path, capsys):
    assert main(["run", "--config", str(tmp_path / "nope.properties")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_redacted_repr_hides_password():
    config = ConnectorConfig.from_mapping({**BASE, "sink.kafka.producer.sasl.plain.password": "kafka-pw"})
    text = repr(config)
    assert "s3cret-pass" not in text and "kafka-pw" not in text
    assert "********" in text


def test_properties_command_lists_every_property(capsys):
    assert main(["properties"]) == 0
    out = capsys.readouterr().out
    for key in (
        "database.hostname",
        "snapshot.mode",
        "sink.jsonl.path",
        "offset.storage.file.filename",
        "schema.history.internal.file.filename",
        "key.converter.schemas.enable",
    ):
        assert f"  {key}  [default:" in out
