"""Talking to the source server outside the replication stream: connecting, start-up checks, and
the few status queries whose SQL differs between MySQL and MariaDB.

Every failed check raises ``PrerequisiteError`` whose message names the problem and the fix (the
my.cnf setting or the exact GRANT to add), because that is what an operator needs at 3 a.m.
"""

from __future__ import annotations

import logging
import re
from typing import Any, NamedTuple

import pymysql

from connector.errors import PrerequisiteError
from connector.server.settings import ConnectionSettings, TlsOptions
from connector.server.tls import describe_tls_failure, tls_settings
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.flavor import ServerFlavor, flavor_of, version_tuple
from mysql_cdc_base.position import BinlogPosition
from mysql_cdc_base.properties import PropertyReader
from snapshot.binlog_status import executed_gtids_text

log = logging.getLogger(__name__)


GRANT_HINT = (
    "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, LOCK TABLES "
    "ON *.* TO '{user}'@'%'"
)

# Privilege → names under which SHOW GRANTS may list it (MariaDB ≥ 10.5 renamed REPLICATION CLIENT).
_PRIVILEGE_SPELLINGS = {
    "REPLICATION SLAVE": ("REPLICATION SLAVE", "REPLICATION REPLICA"),
    "REPLICATION CLIENT": ("REPLICATION CLIENT", "BINLOG MONITOR"),
    "SELECT": ("SELECT",),
    "RELOAD": ("RELOAD",),
    "LOCK TABLES": ("LOCK TABLES",),
}


def connect(
    config: PropertyReader, *, database: str | None = None, autocommit: bool = True, **kwargs: Any
) -> pymysql.connections.Connection:
    """A client connection as the connector user, under ``database.ssl.*``, in the session time
    zone of ``database.connectionTimeZone``, after ``database.initial.statements``; connection
    failures become messages that name the property to fix (never the password)."""
    settings = ConnectionSettings.from_config(config)
    tls = tls_settings(settings.tls)
    if settings.session_zone is not None:
        kwargs.setdefault("init_command", f"SET time_zone = '{settings.session_zone}'")
    try:
        conn = tls.open(
            pymysql.connections.Connection,
            host=settings.hostname,
            port=settings.port,
            user=settings.user,
            password=settings.password,
            database=database,
            autocommit=autocommit,
            charset="utf8mb4",
            connect_timeout=settings.connect_timeout_s,
            **kwargs,
        )
    except pymysql.err.OperationalError as exc:
        raise connection_error(config, exc) from None
    statements = settings.initial_statements
    if statements:
        try:
            with conn.cursor() as cur:
                for statement in statements:
                    cur.execute(statement)
                    cur.fetchall()
            if not autocommit:
                conn.commit()
        except pymysql.err.MySQLError as exc:
            conn.close()
            raise ConfigError(
                "database.initial.statements", f"statement {statement!r} failed: {exc.args[-1]}"
            ) from None
    return conn


# Server error codes: a TLS requirement the client did not meet (MySQL 3159; MariaDB 4151 and,
# before 10.5, the generic access-denied text), and the client's "server offers no TLS" (2026).
_INSECURE_TRANSPORT = (3159, 4151)
CR_SSL_CONNECTION_ERROR = 2026


def _tls_hint(tls: TlsOptions) -> str:
    """What else an access denial can mean under the TLS settings (MariaDB reports a server that
    requires secure transport, and a user created REQUIRE SSL/X509, as a plain access denial)."""
    if tls.mode == "disabled":
        return (
            "; or the server refuses unencrypted connections (require_secure_transport=ON, or a user "
            "created REQUIRE SSL): database.ssl.mode=disabled never uses TLS, set "
            "database.ssl.mode=verify_identity (or verify_ca, required)"
        )
    if not (tls.cert or tls.keystore):
        return (
            "; a user created REQUIRE X509 also needs a client certificate (database.ssl.cert and "
            "database.ssl.key, or database.ssl.keystore)"
        )
    return ""


# MariaDB's refusal of a second replica with a server id already streaming (MySQL says it in a 1236).
ER_SLAVE_SAME_ID = 4052
SAME_ID_TEXT = "same server_uuid/server_id"


def connection_error(config: PropertyReader, exc: BaseException) -> PrerequisiteError:
    settings = ConnectionSettings.from_config(config)
    where = f"{settings.hostname}:{settings.port}"
    code = exc.args[0] if exc.args else None
    tls_message = describe_tls_failure(settings.tls, getattr(exc, "original_exception", None))
    if tls_message is not None:
        return PrerequisiteError(f"cannot connect to MySQL at {where}: {tls_message}")
    text = str(exc.args[1]) if len(exc.args) > 1 else ""
    if code in _INSECURE_TRANSPORT or "insecure transport" in text.lower():
        return PrerequisiteError(
            f"MySQL at {where} refuses connections without TLS "
            f"(require_secure_transport=ON) and database.ssl.mode={settings.tls.mode}: "
            "set database.ssl.mode=verify_identity (or verify_ca, required)"
        )
    if code == CR_SSL_CONNECTION_ERROR:
        return PrerequisiteError(
            f"MySQL at {where} does not offer TLS but "
            f"database.ssl.mode={settings.tls.mode} requires it: enable TLS on the server "
            "(ssl_cert, ssl_key in my.cnf) or set database.ssl.mode=preferred"
        )
    if code == 1045:
        return PrerequisiteError(
            f"access denied for user {settings.user!r} at {where}: check "
            f"database.user and database.password{_tls_hint(settings.tls)}"
        )
    if code == ER_SLAVE_SAME_ID or SAME_ID_TEXT in text:
        return PrerequisiteError(
            f"MySQL at {where} has another replica streaming with "
            f"database.server.id={settings.server_id} ({text}): the two disconnect each "
            "other; give each connector and replica its own database.server.id"
        )
    if code in (2003, 2005, 2006, 2013):
        reason = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
        reason = reason.replace(settings.password, "********") if settings.password else reason
        return PrerequisiteError(
            f"cannot reach MySQL at {where} ({reason}): check "
            "database.hostname and database.port, and that the server is running"
        )
    return PrerequisiteError(f"cannot connect to MySQL at {where}: {exc}")


class ServerInfo(NamedTuple):
    version: str
    flavor: ServerFlavor
    gtid_mode: bool
    server_id: int
    binlog_status_sql: str

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return version_tuple(self.version)


class ServerProbe:
    """Start-up checks and status queries over one short-lived client connection."""

    def __init__(self, config: PropertyReader, *, noblob_reselected: bool = False) -> None:
        """``noblob_reselected``: the configuration re-reads what a NOBLOB image leaves out (the
        reselect post-processor, which the caller knows of), so ``binlog_row_image=NOBLOB`` passes."""
        self.config = config
        self.noblob_reselected = noblob_reselected

    def _variables(self, cur: Any, *names: str) -> dict[str, str]:
        placeholders = ",".join(["%s"] * len(names))
        cur.execute(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({placeholders})", names)
        return {str(k).lower(): str(v) for k, v in cur.fetchall()}

    def check(self, *, need_snapshot_locks: bool = True) -> ServerInfo:
        """Run every start-up check; returns what later steps need to know about the server."""
        with connect(self.config) as conn, conn.cursor() as cur:
            cur.execute("SELECT VERSION()")
            version = str(cur.fetchone()[0])
            flavor = flavor_of(version)
            names = [
                "log_bin",
                "binlog_format",
                "binlog_row_image",
                "binlog_row_metadata",
                "server_id",
                "gtid_mode",
                "binlog_transaction_compression",
                "log_bin_compress",
                "binlog_row_value_options",
            ]
            v = self._variables(cur, *names)
            if v.get("log_bin", "OFF").upper() not in ("ON", "1"):
                raise PrerequisiteError(
                    "the binary log is disabled on the server: enable it with log_bin=mysql-bin (and a "
                    "unique server_id) in my.cnf and restart MySQL"
                )
            if v.get("binlog_format", "").upper() != "ROW":
                raise PrerequisiteError(
                    f"binlog_format is {v.get('binlog_format')!r}, the connector needs ROW: set "
                    "binlog_format=ROW in my.cnf (or SET GLOBAL binlog_format='ROW') and restart clients"
                )
            self._check_row_image(v.get("binlog_row_image", ""))
            if v.get("binlog_row_metadata", "FULL").upper() != "FULL":
                raise PrerequisiteError(
                    f"binlog_row_metadata is {v.get('binlog_row_metadata')!r}, the connector needs FULL "
                    "(column names and character sets in the binlog): set binlog_row_metadata=FULL in "
                    "my.cnf (or SET GLOBAL binlog_row_metadata='FULL')"
                )
            if v.get("binlog_transaction_compression", "OFF").upper() in ("ON", "1"):
                raise PrerequisiteError(
                    "binlog_transaction_compression is ON; compressed transaction payloads are not "
                    "supported yet: set binlog_transaction_compression=OFF"
                )
            if v.get("log_bin_compress", "OFF").upper() in ("ON", "1"):
                raise PrerequisiteError(
                    "log_bin_compress is ON; MariaDB compressed binlog events are not supported yet: "
                    "set log_bin_compress=OFF"
                )
            # binlog_row_value_options=PARTIAL_JSON is fine: with binlog_row_image=FULL (checked
            # above) the before image holds the documents the diffs apply to (connector.binlog.json.diff).
            self._check_grants(cur, need_snapshot_locks)
            gtid_mode = flavor.dialect.gtids_always_on or v.get("gtid_mode", "OFF").upper() == "ON"
            status_sql = flavor.dialect.binlog_status_sql(version_tuple(version))
            return ServerInfo(version, flavor, gtid_mode, int(v.get("server_id", "0") or 0), status_sql)

    def _check_row_image(self, image: str) -> None:
        """FULL; or NOBLOB with the reselect post-processor, which re-reads the BLOB/TEXT columns
        an update's image leaves out (``connector.post_processors.reselect``)."""
        if image.upper() == "FULL" or (image.upper() == "NOBLOB" and self.noblob_reselected):
            return
        raise PrerequisiteError(
            f"binlog_row_image is {image!r}, the connector needs FULL, or NOBLOB together with the "
            "reselect post-processor (post.processors, see docs/guides/reselect.md) to re-read the "
            "BLOB/TEXT columns NOBLOB leaves out: set binlog_row_image=FULL in my.cnf (or SET GLOBAL "
            "binlog_row_image='FULL'), or configure the post-processor"
        )

    def _check_grants(self, cur: Any, need_snapshot_locks: bool) -> None:
        cur.execute("SHOW GRANTS FOR CURRENT_USER()")
        grants = " ".join(str(row[0]).upper() for row in cur.fetchall())
        global_grants = " ".join(re.findall(r"GRANT (.*?) ON \*\.\*", grants))
        if "ALL PRIVILEGES" in global_grants:
            return
        hint = GRANT_HINT.format(user=self.config.user)
        for privilege in ("REPLICATION SLAVE", "REPLICATION CLIENT"):
            if not any(s in global_grants for s in _PRIVILEGE_SPELLINGS[privilege]):
                raise PrerequisiteError(
                    f"user {self.config.user!r} lacks the {privilege} privilege needed to read the "
                    f"binlog: run {hint}"
                )
        if "SELECT" not in grants:
            raise PrerequisiteError(
                f"user {self.config.user!r} lacks the SELECT privilege needed to read table "
                f"structures and snapshot rows: run {hint}"
            )
        if need_snapshot_locks and "RELOAD" not in global_grants and "LOCK TABLES" not in grants:
            raise PrerequisiteError(
                f"user {self.config.user!r} has neither RELOAD (for FLUSH TABLES WITH READ LOCK) nor "
                f"LOCK TABLES (for the table-lock snapshot): run {hint}, or set snapshot.locking.mode=none"
            )

    # -- status queries -----------------------------------------------------------------------------
    def current_position(self, info: ServerInfo, cur: Any | None = None) -> BinlogPosition:
        if cur is None:
            with connect(self.config) as conn, conn.cursor() as c:
                return self.current_position(info, c)
        cur.execute(info.binlog_status_sql)
        row = cur.fetchone()
        if not row:
            raise PrerequisiteError("the server reports no binary log status: is log_bin enabled?")
        gtids: str | None = None
        column = info.flavor.dialect.status_gtids_column
        if column is None:
            gtids = executed_gtids_text(cur, info.flavor) or None
        elif info.gtid_mode and len(row) > column:
            gtids = str(row[column] or "").replace("\n", "") or None
        return BinlogPosition(str(row[0]), int(row[1]), gtids)
