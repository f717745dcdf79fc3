"""Every missing server prerequisite fails start-up with a message naming the setting or GRANT."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from connector.cli import main
from connector.config import ConnectorConfig
from connector.server.connection import PrerequisiteError, ServerProbe
from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer, free_port


def config_for(
    server: LocalMySQLServer, user: str | None = None, password: str | None = None, **extra: str
) -> ConnectorConfig:
    props = server.connector_properties(**{"topic.prefix": "pre", **extra})
    if user is not None:
        props["database.user"] = user
    if password is not None:
        props["database.password"] = password
    return ConnectorConfig.from_mapping(props)


@pytest.fixture(scope="module")
def server() -> Iterator[LocalMySQLServer]:
    with LocalMySQLServer() as s:
        yield s


def test_healthy_server_passes_all_checks(server):
    info = ServerProbe(config_for(server)).check()
    assert info.flavor in ("mariadb", "mysql")
    assert info.gtid_mode


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        (
            "binlog_format",
            "STATEMENT",
            "binlog_format is 'STATEMENT', the connector needs ROW: set binlog_format=ROW",
        ),
        ("binlog_format", "MIXED", "binlog_format is 'MIXED', the connector needs ROW"),
        (
            "binlog_row_image",
            "MINIMAL",
            "binlog_row_image is 'MINIMAL', the connector needs FULL, or NOBLOB together with the reselect "
            "post-processor",
        ),
        ("binlog_row_metadata", "MINIMAL", "binlog_row_metadata is 'MINIMAL', the connector needs FULL"),
    ],
)
def test_wrong_binlog_setting_names_the_setting(server, variable, value, expected):
    server.execute(f"SET GLOBAL {variable} = '{value}'")
    try:
        with pytest.raises(PrerequisiteError) as exc:
            ServerProbe(config_for(server)).check()
        assert expected in str(exc.value)
    finally:
        server.execute(
            f"SET GLOBAL {variable} = DEFAULT"
            if variable != "binlog_row_metadata"
            else "SET GLOBAL binlog_row_metadata = 'FULL'"
        )
        server.execute("SET GLOBAL binlog_format = 'ROW'", "SET GLOBAL binlog_row_image = 'FULL'")


@pytest.mark.parametrize(
    ("grants", "expected"),
    [
        ("SELECT, RELOAD, SHOW DATABASES, REPLICATION CLIENT", "lacks the REPLICATION SLAVE privilege"),
        ("SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE", "lacks the REPLICATION CLIENT privilege"),
        ("RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT", "lacks the SELECT privilege"),
        ("SELECT, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT", "has neither RELOAD"),
    ],
)
def test_missing_grant_names_the_grant_statement(server, grants, expected, request):
    user = f"u{abs(hash(request.node.name)) % 10**8}"
    server.create_user(user, "pw-123456", grants)
    try:
        with pytest.raises(PrerequisiteError) as exc:
            ServerProbe(config_for(server, user, "pw-123456")).check()
        message = str(exc.value)
        assert expected in message
        assert (
            f"GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES ON *.* TO '{user}'@'%'"
            in message
        )
        assert "pw-123456" not in message
    finally:
        server.execute(f"DROP USER '{user}'@'%'")


def test_lock_tables_instead_of_reload_is_enough(server):
    server.create_user(
        "locker", "pw-locker", "SELECT, LOCK TABLES, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT"
    )
    try:
        ServerProbe(config_for(server, "locker", "pw-locker")).check()
    finally:
        server.execute("DROP USER 'locker'@'%'")


def test_wrong_credentials_name_user_and_password_keys(server):
    with pytest.raises(PrerequisiteError) as exc:
        ServerProbe(config_for(server, password="definitely-wrong")).check()
    assert "access denied for user 'cdc'" in str(exc.value)
    assert "check database.user and database.password" in str(exc.value)
    assert "definitely-wrong" not in str(exc.value)


def test_unreachable_host_names_hostname_and_port():
    port = free_port()  # nothing listens there
    config = ConnectorConfig.from_mapping(
        {
            "database.hostname": "127.0.0.1",
            "database.port": str(port),
            "database.user": "cdc",
            "database.password": "x-secret",
            "database.server.id": "1",
            "topic.prefix": "pre",
            "connect.timeout.ms": "2000",
        }
    )
    with pytest.raises(PrerequisiteError) as exc:
        ServerProbe(config).check()
    assert f"cannot reach MySQL at 127.0.0.1:{port}" in str(exc.value)
    assert "check database.hostname and database.port" in str(exc.value)


def test_binlog_disabled_says_how_to_enable_it():
    options = [o for o in DEFAULT_SERVER_OPTIONS if not o.startswith("--log-bin")]
    with LocalMySQLServer(options=options) as server:
        with pytest.raises(PrerequisiteError) as exc:
            ServerProbe(config_for(server)).check()
        assert "the binary log is disabled on the server: enable it with log_bin=mysql-bin" in str(exc.value)


def test_cli_reports_prerequisite_failure_with_exit_1(server, tmp_path: Path, capsys):
    server.execute("SET GLOBAL binlog_format = 'STATEMENT'")
    try:
        props = config_for(server, **{"data.dir": str(tmp_path)}).raw
        path = tmp_path / "c.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        assert main(["run", "--config", str(path)]) == 1
        err = capsys.readouterr().err
        assert "binlog_format is 'STATEMENT'" in err
        assert server.connector.password not in err
    finally:
        server.execute("SET GLOBAL binlog_format = 'ROW'")
