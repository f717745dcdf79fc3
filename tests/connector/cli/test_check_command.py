"""`mysql-cdc check`: each failure against a real server or sink, and the output names the fix;
a sound configuration passes without writing anything."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connector.testing.local_server import LocalMySQLServer, free_port
from tests.connector.check_support import read_only_directory, run_check, write_config
from tests.connector.cli.test_status_command import catch_up

DB = "check_db"


@pytest.fixture(scope="module")
def server() -> Iterator[LocalMySQLServer]:
    with LocalMySQLServer() as s:
        s.execute(f"CREATE DATABASE {DB}", f"CREATE TABLE {DB}.t (id INT PRIMARY KEY, v INT)")
        yield s


def test_a_sound_configuration_passes_and_writes_nothing(server, tmp_path, capsys):
    path = write_config(server, tmp_path)
    status, out = run_check(path, capsys)
    assert status == 0, out
    assert "[ok]   server:" in out and "[ok]   binlog settings and grants" in out
    assert "[ok]   stored offset: none stored" in out
    assert "events.jsonl is writable" in out
    assert out.rstrip().endswith("all checks passed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["connector.properties"]


def test_a_misspelt_key_gets_a_did_you_mean(server, tmp_path, capsys):
    path = write_config(server, tmp_path, **{"table.include.lst": f"{DB}.t"})
    status, out = run_check(path, capsys)
    assert status == 1
    assert (
        "[FAIL] configuration: unknown property table.include.lst (did you mean table.include.list?)" in out
    )


def test_a_bad_value_names_the_key(server, tmp_path, capsys):
    status, out = run_check(write_config(server, tmp_path, **{"snapshot.mode": "sometimes"}), capsys)
    assert status == 1
    assert "[FAIL] configuration: snapshot.mode" in out


def test_wrong_credentials_name_the_keys_and_hide_the_password(server, tmp_path, capsys):
    path = write_config(server, tmp_path, **{"database.password": "not-the-password"})
    status, out = run_check(path, capsys)
    assert status == 1
    assert "check database.user and database.password" in out
    assert "not-the-password" not in out


def test_an_unreachable_server_names_hostname_and_port(server, tmp_path, capsys):
    path = write_config(server, tmp_path, **{"database.port": str(free_port())})
    status, out = run_check(path, capsys)
    assert status == 1
    assert "check database.hostname and database.port" in out


def test_a_binlog_setting_names_its_fix(server, tmp_path, capsys):
    server.execute("SET GLOBAL binlog_row_image = 'MINIMAL'")
    try:
        status, out = run_check(write_config(server, tmp_path), capsys)
    finally:
        server.execute("SET GLOBAL binlog_row_image = 'FULL'")
    assert status == 1
    assert "[FAIL] binlog settings and grants: binlog_row_image is 'MINIMAL'" in out
    assert "set binlog_row_image=FULL in my.cnf" in out


def test_a_missing_grant_names_the_grant_statement(server, tmp_path, capsys):
    server.create_user("chk_norepl", "pw-chk-1", "SELECT, RELOAD, SHOW DATABASES, REPLICATION CLIENT")
    try:
        path = write_config(
            server, tmp_path, **{"database.user": "chk_norepl", "database.password": "pw-chk-1"}
        )
        status, out = run_check(path, capsys)
    finally:
        server.execute("DROP USER 'chk_norepl'@'%'")
    assert status == 1
    assert "lacks the REPLICATION SLAVE privilege" in out
    assert "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT" in out


def test_a_purged_stored_offset_names_snapshot_mode_when_needed(fresh_mysql_server, tmp_path, capsys):
    server = fresh_mysql_server
    server.execute(
        f"CREATE DATABASE {DB}", f"CREATE TABLE {DB}.t (id INT PRIMARY KEY)", f"INSERT INTO {DB}.t VALUES (1)"
    )
    path = write_config(server, tmp_path, **{"database.include.list": DB})
    catch_up(path)
    status, out = run_check(path, capsys)
    assert status == 0, out
    assert "is still on the server" in out
    # Transactions the connector has not read, then their binlog files purged.
    server.execute(
        f"INSERT INTO {DB}.t VALUES (2)",
        "FLUSH BINARY LOGS",
        f"INSERT INTO {DB}.t VALUES (3)",
        "FLUSH BINARY LOGS",
    )
    current = server.query("SHOW MASTER STATUS")[0][0]
    server.execute(f"PURGE BINARY LOGS TO '{current}'")
    offsets_before = (tmp_path / "offsets.json").read_bytes()
    status, out = run_check(path, capsys)
    assert status == 1
    assert "[FAIL] stored offset:" in out and "purged" in out
    assert "set snapshot.mode=when_needed" in out
    assert (tmp_path / "offsets.json").read_bytes() == offsets_before


def test_a_read_only_jsonl_path_names_the_key(server, tmp_path, capsys):
    with read_only_directory(tmp_path / "ro") as ro:
        path = write_config(server, tmp_path, **{"sink.jsonl.path": str(ro / "out" / "events.jsonl")})
        status, out = run_check(path, capsys)
    assert status == 1
    assert f"sink.jsonl.path {ro}/out/events.jsonl: {ro} is not writable (a read-only file system)" in out
    assert "fix: choose a writable sink.jsonl.path" in out


def test_a_read_only_delta_warehouse_names_the_key(server, tmp_path, capsys):
    with read_only_directory(tmp_path / "warehouse") as ro:
        path = write_config(server, tmp_path, **{"sink.type": "spark", "sink.spark.warehouse": str(ro)})
        status, out = run_check(path, capsys)
    assert status == 1
    assert f"[FAIL] delta warehouse: sink.spark.warehouse file:{ro}: {ro} is not writable" in out
    assert "point sink.spark.warehouse at a writable directory" in out


def test_a_writable_delta_warehouse_and_the_jars_pass(server, tmp_path, capsys):
    path = write_config(
        server, tmp_path, **{"sink.type": "spark", "sink.spark.warehouse": str(tmp_path / "wh")}
    )
    status, out = run_check(path, capsys)
    assert status == 0, out
    assert "[ok]   delta warehouse:" in out and "[ok]   spark jars: Delta jars present" in out
    assert not (tmp_path / "wh").exists()


def test_missing_delta_jars_are_a_warning_naming_setup(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MYSQL_CDC_SPARK_JARS", str(tmp_path / "no-jars"))
    path = write_config(
        server, tmp_path, **{"sink.type": "spark", "sink.spark.warehouse": str(tmp_path / "wh")}
    )
    status, out = run_check(path, capsys)
    assert status == 0, out
    assert "[warn] spark jars: the Delta jars are not in" in out and "run .ci/setup" in out
