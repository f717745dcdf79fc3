"""A throwaway MySQL-compatible server for the demo, the tests and the pytest plugin.

Starts ``mariadbd`` (MariaDB) or ``mysqld`` (MySQL 8.x) found on PATH (or in /usr/sbin) in a temporary
data directory on a free loopback port, configured the way the connector needs a production server
configured: ROW binlog, FULL row image, FULL row metadata, GTIDs on. It creates an ``admin`` user for
the test's own SQL and a connector user holding exactly the documented grants.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymysql

from connector.records.conversion import SNAPSHOT_CONVERSIONS
from mysql_cdc_base.errors import MysqlCdcError
from mysql_cdc_base.flavor import flavor_of

log = logging.getLogger(__name__)

# The grants docs/getting-started.md documents for the connector user (Debezium's list, plus LOCK TABLES for the
# table-lock snapshot workflow).
CONNECTOR_GRANTS = "SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES"

DEFAULT_SERVER_OPTIONS = (
    "--log-bin=mysql-bin",
    "--server-id=1",
    "--binlog-format=ROW",
    "--binlog-row-image=FULL",
    "--binlog-row-metadata=FULL",
    "--character-set-server=utf8mb4",
    "--collation-server=utf8mb4_general_ci",
    "--skip-name-resolve",
    "--innodb-buffer-pool-size=64M",
    "--innodb-log-file-size=48M",
    "--max-connections=200",
)


# The replica server ids of the connectors tests point at a server: one of their own per
# ``connector_properties`` call. A server lets one replica per id stream: with a shared id, a connector
# that an earlier test left connected to a shared server and the next test's connector kick each
# other off for good (MariaDB error 4052 "A slave with the same server_uuid/server_id is already
# connected"), and the later one never reads its first event.
_REPLICA_SERVER_IDS = itertools.count(1_000_000)


class ServerStartError(MysqlCdcError, RuntimeError):
    pass


def find_server_binary() -> tuple[str, str]:
    """(path, flavor) of the server to run: ``mariadb`` or ``mysql``."""
    search = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin" + os.pathsep + "/usr/local/sbin"
    override = os.environ.get("MYSQL_CDC_SERVER_BINARY")
    candidates = [override] if override else ["mariadbd", "mysqld"]
    for name in candidates:
        path = name if name and os.path.isabs(name) else shutil.which(name or "", path=search)
        if path:
            version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
            return path, flavor_of(version)
    raise ServerStartError(
        "no MySQL-compatible server found: install MariaDB (apt-get install mariadb-server) or "
        "MySQL so that mariadbd or mysqld is on PATH"
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str


class MySQLServerHandle:
    """What tests and tools need from a running server: where it is and how to use it."""

    host: str = "127.0.0.1"
    port: int = 0
    flavor: str = "mysql"
    admin = Credentials("admin", "admin-secret")
    connector = Credentials("cdc", "cdc-secret")

    @property
    def is_mariadb(self) -> bool:
        return self.flavor == "mariadb"

    # -- using it -------------------------------------------------------------------------------
    def connect(
        self,
        database: str | None = None,
        *,
        user: Credentials | None = None,
        autocommit: bool = True,
        **kwargs: Any,
    ) -> pymysql.connections.Connection:
        creds = user or self.admin
        return pymysql.connect(
            host=self.host,
            port=self.port,
            user=creds.user,
            password=creds.password,
            database=database,
            autocommit=autocommit,
            charset="utf8mb4",
            **kwargs,
        )

    def execute(self, *statements: str, database: str | None = None) -> None:
        """Run statements as the admin user, each committed."""
        with self.connect(database) as conn, conn.cursor() as cur:
            for sql in statements:
                cur.execute(sql)

    def query(self, sql: str, database: str | None = None) -> list[tuple[Any, ...]]:
        with self.connect(database) as conn, conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    def create_user(self, user: str, password: str, grants: str | None) -> Credentials:
        self.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'")
        if grants:
            self.execute(f"GRANT {grants} ON *.* TO '{user}'@'%'")
        return Credentials(user, password)

    def snapshot_connect(
        self, database: str | None = None, time_zone: str = "+00:00"
    ) -> pymysql.connections.Connection:
        """A connection as the connector user that reads values the way the snapshot does
        (``SNAPSHOT_CONVERSIONS``, session time zone ``time_zone``), for tests comparing paths."""
        return pymysql.connect(
            host=self.host,
            port=self.port,
            user=self.connector.user,
            password=self.connector.password,
            database=database,
            charset="utf8mb4",
            conv=SNAPSHOT_CONVERSIONS,
            init_command=f"SET time_zone='{time_zone}'",
        )

    def replication_settings(self) -> dict[str, Any]:
        """``connection_settings`` for a bare mysql-replication ``BinLogStreamReader`` as the
        connector user (benchmarks' baselines and tests that read the binlog themselves)."""
        return {
            "host": self.host,
            "port": self.port,
            "user": self.connector.user,
            "passwd": self.connector.password,
        }

    def connector_properties(self, **overrides: Any) -> dict[str, str]:
        """Debezium properties that point the connector at this server as the connector user."""
        props = {
            "database.hostname": self.host,
            "database.port": str(self.port),
            "database.user": self.connector.user,
            "database.password": self.connector.password,
            "database.server.id": str(next(_REPLICA_SERVER_IDS)),
        }
        props.update({k: str(v) for k, v in overrides.items()})
        return props


class ExternalMySQLServer(MySQLServerHandle):
    """A server someone else runs (the docker-compose MySQL 8.4), with the same test users."""

    def __init__(self, host: str, port: int, flavor: str = "mysql") -> None:
        self.host, self.port, self.flavor = host, port, flavor

    def remove(self) -> None:
        """Nothing to remove: the server's owner stops it."""


class LocalMySQLServer(MySQLServerHandle):
    """One throwaway server. Use as a context manager, or call ``start()``/``stop()``."""

    def __init__(
        self,
        *,
        gtid: bool = True,
        options: Sequence[str] = DEFAULT_SERVER_OPTIONS,
        extra_options: Sequence[str] = (),
        connector_grants: str | None = CONNECTOR_GRANTS,
        workdir: str | os.PathLike[str] | None = None,
        binary: str | None = None,
    ) -> None:
        if binary:
            self.binary, self.flavor = binary, flavor_of(binary)
        else:
            self.binary, self.flavor = find_server_binary()
        self.gtid = gtid
        self.options = list(options) + list(extra_options)
        self.connector_grants = connector_grants
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="mysql-cdc-server-"))
        self.host = "127.0.0.1"
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def datadir(self) -> Path:
        return self.workdir / "data"

    @property
    def socket_path(self) -> Path:
        return self.workdir / "mysqld.sock"

    def start(self, timeout: float = 60.0) -> LocalMySQLServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if not (self.datadir / "mysql").exists():
            self._initialize()
        self.port = self.port or free_port()
        args = [
            self.binary,
            "--no-defaults",
            f"--datadir={self.datadir}",
            f"--socket={self.socket_path}",
            f"--port={self.port}",
            "--bind-address=127.0.0.1",
            f"--pid-file={self.workdir}/mysqld.pid",
            f"--log-error={self.workdir}/error.log",
            f"--tmpdir={self.workdir}",
            *self.options,
        ]
        if os.geteuid() == 0:
            args.append("--user=root")
        if self.flavor == "mysql":
            args += ["--mysqlx=OFF"]
            if self.gtid:
                args += ["--gtid-mode=ON", "--enforce-gtid-consistency=ON"]
        self._proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        deadline = time.monotonic() + timeout
        while True:
            if self._proc.poll() is not None:
                raise ServerStartError(f"{self.binary} exited during start-up:\n{self._error_log()}")
            try:
                conn = pymysql.connect(
                    unix_socket=str(self.socket_path), user="root", password="", connect_timeout=2
                )
                break
            except pymysql.err.OperationalError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise ServerStartError(
                        f"server did not accept connections:\n{self._error_log()}"
                    ) from None
                time.sleep(0.1)
        with conn, conn.cursor() as cur:
            self._bootstrap_users(cur)
        return self

    def _initialize(self) -> None:
        self.datadir.mkdir(parents=True, exist_ok=True)
        if self.flavor == "mariadb":
            installer = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
            if installer is None:
                raise ServerStartError("mariadb-install-db not found (apt-get install mariadb-server)")
            cmd = [
                installer,
                "--no-defaults",
                f"--datadir={self.datadir}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                # Its own temp dir, as the server has: bootstraps running side by side in the shared
                # /tmp have collided on temporary table files ("Could not remove temporary table").
                f"--tmpdir={self.workdir}",
            ]
            if os.geteuid() == 0:
                cmd.append("--user=root")
        else:
            cmd = [
                self.binary,
                "--no-defaults",
                "--initialize-insecure",
                f"--datadir={self.datadir}",
                f"--tmpdir={self.workdir}",
            ]
            if os.geteuid() == 0:
                cmd.append("--user=root")
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise ServerStartError(f"initialising {self.datadir} failed:\n{result.stdout}\n{result.stderr}")

    def _bootstrap_users(self, cur: Any) -> None:
        admin, cdc = self.admin, self.connector
        cur.execute(f"CREATE USER IF NOT EXISTS '{admin.user}'@'%' IDENTIFIED BY '{admin.password}'")
        cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{admin.user}'@'%' WITH GRANT OPTION")
        if self.connector_grants is not None:
            cur.execute(f"CREATE USER IF NOT EXISTS '{cdc.user}'@'%' IDENTIFIED BY '{cdc.password}'")
            cur.execute(f"GRANT {self.connector_grants} ON *.* TO '{cdc.user}'@'%'")
        cur.execute("FLUSH PRIVILEGES")

    def _error_log(self) -> str:
        try:
            return (self.workdir / "error.log").read_text(errors="replace")[-4000:]
        except OSError:
            return "(no error log)"

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def remove(self) -> None:
        self.stop()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def restart(self, extra_options: Sequence[str] | None = None) -> None:
        self.stop()
        if extra_options is not None:
            self.options = list(DEFAULT_SERVER_OPTIONS) + list(extra_options)
        self.start()

    def __enter__(self) -> LocalMySQLServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.remove()


@contextlib.contextmanager
def local_server(**kwargs: Any) -> Iterator[LocalMySQLServer]:
    server = LocalMySQLServer(**kwargs)
    try:
        yield server.start()
    finally:
        server.remove()


@contextlib.contextmanager
def scratch_database(server: MySQLServerHandle, label: str, prefix: str = "t_") -> Iterator[str]:
    """A database named after ``label`` (e.g. a test's name), created empty, dropped afterwards."""
    name = (prefix + re.sub(r"[^0-9a-zA-Z]+", "_", label).strip("_").lower())[:60]
    server.execute(f"DROP DATABASE IF EXISTS `{name}`", f"CREATE DATABASE `{name}`")
    try:
        yield name
    finally:
        server.execute(f"DROP DATABASE IF EXISTS `{name}`")
