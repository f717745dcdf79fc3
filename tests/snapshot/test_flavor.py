"""The server-kind dialects (``mysql_cdc_base.flavor``): chosen once from ``SELECT VERSION()``, their status and
GTID SQL runs on the real server, and the snapshot's and the probe's readings of the binlog status
agree."""

from __future__ import annotations

import pytest

from connector.config import ConnectorConfig
from connector.server.connection import ServerProbe
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.flavor import MARIADB, MYSQL, ServerFlavor, dialect_of, flavor_of, version_tuple
from mysql_cdc_base.position import GtidSet
from snapshot.binlog_status import executed_gtids, read_binlog_position


def test_each_kind_has_its_own_status_statement_by_version() -> None:
    assert MYSQL.dialect.binlog_status_sql((8, 4, 2)) == "SHOW BINARY LOG STATUS"
    assert MYSQL.dialect.binlog_status_sql((8, 0, 36)) == "SHOW MASTER STATUS"
    assert MARIADB.dialect.binlog_status_sql((11, 8, 0)) == "SHOW MASTER STATUS"
    assert MYSQL.dialect.executed_gtids_sql() == "SELECT @@global.gtid_executed"
    assert MARIADB.dialect.executed_gtids_sql() == "SELECT @@global.gtid_binlog_pos"


def test_the_flavour_is_its_text_and_unknown_text_names_the_key() -> None:
    assert flavor_of("10.11.19-MariaDB-0+deb12u1") is MARIADB and flavor_of("8.0.36") is MYSQL
    assert MARIADB == "mariadb" and f"{MYSQL}" == "mysql"
    assert dialect_of("MariaDB") is MARIADB.dialect
    with pytest.raises(ConfigError, match="flavor: expected mysql or mariadb, got 'oracle'"):
        dialect_of("oracle")


def test_probe_and_snapshot_read_the_same_status_through_one_dialect(cdc_mysql: LocalMySQLServer) -> None:
    config = ConnectorConfig(
        {
            "database.hostname": cdc_mysql.host,
            "database.port": str(cdc_mysql.port),
            "database.user": cdc_mysql.admin.user,
            "database.password": cdc_mysql.admin.password,
            "database.server.id": "9101",
            "topic.prefix": "flavor",
        }
    )
    probe = ServerProbe(config)
    info = probe.check(need_snapshot_locks=False)
    (version,) = cdc_mysql.query("SELECT VERSION()")[0]
    assert isinstance(info.flavor, ServerFlavor) and info.flavor is flavor_of(str(version))
    assert info.binlog_status_sql == info.flavor.dialect.binlog_status_sql(version_tuple(str(version)))
    with cdc_mysql.connect() as conn, conn.cursor() as cur:
        from_probe = probe.current_position(info, cur)
        from_snapshot = read_binlog_position(cur, info.flavor, str(version))
        executed = executed_gtids(cur, info.flavor)
    assert from_probe == from_snapshot
    if info.gtid_mode:
        assert GtidSet.parse(from_snapshot.gtids or "") == executed
