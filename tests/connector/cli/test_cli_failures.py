"""Every mysql-cdc command reports its failures through one path: spark-apply (whose properties are
its own) stops with the same exit statuses and messages as the connector's commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from connector.cli import main

# A connector configuration pointing at a closed port: the command fails at run time, after its
# configuration was read.
CONNECTOR = {
    "database.hostname": "127.0.0.1",
    "database.port": "1",
    "database.user": "cdc",
    "database.password": "pw-never-shown",
    "database.server.id": "5400",
    "topic.prefix": "shop",
    "connect.timeout.ms": "500",
}


def write(path: Path, props: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def test_spark_apply_without_a_config_file_exits_2_naming_the_file(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "absent.properties"
    assert main(["spark-apply", "--config", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"mysql-cdc: configuration error: --config: configuration file {missing} does not exist\n"
    )


def test_spark_apply_with_a_bad_override_exits_2_naming_it(tmp_path: Path, capsys) -> None:
    config = write(tmp_path / "apply.properties", {"topics": "east"})
    assert main(["spark-apply", "--config", str(config), "--set", "no-equals-sign"]) == 2
    assert (
        "mysql-cdc: configuration error: --set: expected key=value, got 'no-equals-sign'"
        in capsys.readouterr().err
    )


def test_spark_apply_settings_refused_by_the_job_exit_2_naming_the_key(tmp_path: Path, capsys) -> None:
    config = write(tmp_path / "apply.properties", {"topics": "east", "sink.spark.warehouse": str(tmp_path)})
    assert main(["spark-apply", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mysql-cdc: configuration error: kafka.bootstrap.servers: is required")


def test_a_connector_command_failing_at_run_time_exits_1_naming_the_cause(tmp_path: Path, capsys) -> None:
    config = write(tmp_path / "connector.properties", {**CONNECTOR, "data.dir": str(tmp_path / "data")})
    assert main(["snapshot", "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mysql-cdc: error: cannot reach MySQL at 127.0.0.1:1 (")
    assert "pw-never-shown" not in err


@pytest.mark.parametrize("command", ["run", "spark-apply"])
def test_an_unreadable_config_is_the_same_error_for_every_command(tmp_path: Path, capsys, command) -> None:
    config = tmp_path / "bad.properties"
    config.write_bytes(b"name=caf\xe9\n")
    assert main([command, "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        f"mysql-cdc: configuration error: --config: {config} line 1: not UTF-8 text (byte 0xe9)\n"
    )
