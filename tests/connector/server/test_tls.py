"""TLS to MySQL (database.ssl.*) against a MariaDB started with certificates this test makes with
``openssl`` and ``require_secure_transport=ON``: every connection the connector opens must use TLS,
or the server refuses it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from connector.config import ConfigError, ConnectorConfig
from connector.engine import Engine
from connector.errors import PrerequisiteError
from connector.server.connection import connect
from connector.testing.local_server import CONNECTOR_GRANTS, LocalMySQLServer
from mysql_cdc_base.records import RecordKind
from sink.memory import MemorySink

KEYSTORE_PASSWORD = "ks-pass-123"


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(directory: Path, name: str) -> None:
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
            "-keyout", f"{name}-key.pem", "-out", f"{name}.pem", cwd=directory)  # fmt: skip


def make_signed(directory: Path, ca: str, name: str, san: str | None) -> None:
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", f"{name}-key.pem",
            "-out", f"{name}.csr", cwd=directory)  # fmt: skip
    ext = directory / f"{name}.ext"
    ext.write_text(f"subjectAltName={san}\n" if san else "basicConstraints=CA:FALSE\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}-key.pem",
            "-CAcreateserial", "-days", "2", "-extfile", ext.name, "-out", f"{name}.pem", cwd=directory)  # fmt: skip


@dataclass(frozen=True)
class Certs:
    directory: Path

    def __getitem__(self, name: str) -> str:
        return str(self.directory / name)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    d = tmp_path_factory.mktemp("tls")
    make_ca(d, "ca")
    make_ca(d, "other-ca")
    make_signed(d, "ca", "server", "IP:127.0.0.1")
    make_signed(d, "ca", "client", None)
    openssl("pkcs12", "-export", "-in", "client.pem", "-inkey", "client-key.pem", "-out", "client.p12",
            "-passout", f"pass:{KEYSTORE_PASSWORD}", cwd=d)  # fmt: skip
    openssl("pkey", "-in", "client-key.pem", "-aes256", "-passout", f"pass:{KEYSTORE_PASSWORD}",
            "-out", "client-key-enc.pem", cwd=d)  # fmt: skip
    openssl("pkcs12", "-export", "-nokeys", "-in", "ca.pem", "-out", "trust.p12",
            "-passout", f"pass:{KEYSTORE_PASSWORD}", cwd=d)  # fmt: skip
    return Certs(d)


@pytest.fixture(scope="module")
def tls_server(certs: Certs) -> Iterator[LocalMySQLServer]:
    server = LocalMySQLServer(
        extra_options=[
            f"--ssl-ca={certs['ca.pem']}",
            f"--ssl-cert={certs['server.pem']}",
            f"--ssl-key={certs['server-key.pem']}",
            "--require-secure-transport=ON",
        ]
    )
    with server:
        # the admin's own connections negotiate TLS (PyMySQL's preferred default)
        server.execute(
            "CREATE DATABASE tlsdb",
            "CREATE TABLE tlsdb.t (id INT PRIMARY KEY, v VARCHAR(10))",
            "INSERT INTO tlsdb.t VALUES (1, 'snap')",
            "CREATE TABLE tlsdb.seen (cipher VARCHAR(100))",
            "CREATE USER 'x509'@'%' IDENTIFIED BY 'x509-secret' REQUIRE X509",
            f"GRANT {CONNECTOR_GRANTS} ON *.* TO 'x509'@'%'",
            "GRANT INSERT ON tlsdb.seen TO 'cdc'@'%'",
            "GRANT INSERT ON tlsdb.seen TO 'x509'@'%'",
        )
        yield server


def props(server: LocalMySQLServer, tmp_path: Path, **extra: str) -> dict[str, str]:
    return server.connector_properties(
        **{
            "topic.prefix": "tls",
            "database.include.list": "tlsdb",
            "table.include.list": "tlsdb.t",
            "data.dir": str(tmp_path),
            "offset.storage": "memory",
            "schema.history.internal": "memory",
            **extra,
        }
    )


# Every SQL connection records the cipher its session runs under (empty without TLS).
RECORD_CIPHER = (
    "INSERT INTO tlsdb.seen SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS "
    "WHERE VARIABLE_NAME = 'Ssl_cipher'"
)


def capture(server: LocalMySQLServer, tmp_path: Path, **extra: str) -> list[tuple[str, str]]:
    """Snapshot, then stream one insert, with heartbeats running their action query."""
    memory = MemorySink()
    config = ConnectorConfig.from_mapping(
        props(
            server,
            tmp_path,
            **{
                "database.initial.statements": RECORD_CIPHER,
                "heartbeat.interval.ms": "1",
                "heartbeat.action.query": RECORD_CIPHER,
                **extra,
            },
        )
    )
    engine = Engine(config, sinks=[memory])
    try:
        engine.catch_up()
        server.execute("INSERT INTO tlsdb.t SELECT MAX(id) + 1, 'stream' FROM tlsdb.t")
        engine.catch_up()
    finally:
        engine.close()
    return [(r.op or "", (r.after or {}).get("v", "")) for r in memory.records if r.kind == RecordKind.DATA]


def ciphers(server: LocalMySQLServer) -> list[str]:
    rows = server.query("SELECT cipher FROM tlsdb.seen")
    server.execute("DELETE FROM tlsdb.seen")
    return [str(r[0]) for r in rows]


@pytest.mark.parametrize("mode", ["verify_ca", "verify_identity", "required", "preferred"])
def test_capture_over_tls(certs: Certs, tls_server: LocalMySQLServer, tmp_path: Path, mode: str) -> None:
    ciphers(tls_server)
    events = capture(tls_server, tmp_path, **{"database.ssl.mode": mode, "database.ssl.ca": certs["ca.pem"]})
    assert ("r", "snap") in events and events[-1] == ("c", "stream")
    seen = ciphers(tls_server)
    # probe, snapshot connection(s) and the heartbeat connection's initial statements + actions
    assert len(seen) >= 4 and all(seen), seen


def test_disabled_is_refused_by_the_server_with_a_clear_message(
    tls_server: LocalMySQLServer, tmp_path: Path
) -> None:
    engine = Engine(
        ConnectorConfig.from_mapping(props(tls_server, tmp_path, **{"database.ssl.mode": "disabled"}))
    )
    with pytest.raises(
        PrerequisiteError,
        match=r"refuses unencrypted connections \(require_secure_transport=ON.*database.ssl.mode=disabled never",
    ):
        engine.run()


def test_wrong_ca_fails_naming_database_ssl_ca(
    certs: Certs, tls_server: LocalMySQLServer, tmp_path: Path
) -> None:
    config = props(
        tls_server, tmp_path, **{"database.ssl.mode": "verify_ca", "database.ssl.ca": certs["other-ca.pem"]}
    )
    with pytest.raises(
        PrerequisiteError, match=r"certificate is not trusted .*check database.ssl.ca"
    ) as info:
        Engine(ConnectorConfig.from_mapping(config)).run()
    assert "cdc-secret" not in str(info.value)


def test_a_rotated_ca_file_is_used_at_the_next_connection_without_a_restart(
    certs: Certs, tls_server: LocalMySQLServer, tmp_path: Path
) -> None:
    ca = tmp_path / "rotating-ca.pem"
    ca.write_bytes(Path(certs["other-ca.pem"]).read_bytes())
    config = ConnectorConfig.from_mapping(
        props(tls_server, tmp_path, **{"database.ssl.mode": "verify_ca", "database.ssl.ca": str(ca)})
    )
    with pytest.raises(PrerequisiteError, match=r"certificate is not trusted"):
        connect(config).close()
    ca.write_bytes(Path(certs["ca.pem"]).read_bytes())  # the operator rotates the CA file in place
    with connect(config) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_cipher'"
        )
        row = cur.fetchone()
    assert row is not None and row[0]


def test_missing_ca_file_names_database_ssl_ca(tls_server: LocalMySQLServer, tmp_path: Path) -> None:
    config = props(
        tls_server,
        tmp_path,
        **{"database.ssl.mode": "verify_identity", "database.ssl.ca": str(tmp_path / "nope.pem")},
    )
    with pytest.raises(ConfigError, match=r"database.ssl.ca: file .*nope.pem does not exist"):
        Engine(ConnectorConfig.from_mapping(config)).run()


def test_verify_identity_checks_the_host_name(
    certs: Certs, tls_server: LocalMySQLServer, tmp_path: Path
) -> None:
    # The server certificate names 127.0.0.1 only: "localhost" reaches the same server but fails
    # verify_identity, while verify_ca (no name check) accepts it.
    base = {"database.hostname": "localhost", "database.ssl.ca": certs["ca.pem"]}
    with pytest.raises(PrerequisiteError, match=r"does not name localhost .*verify_identity"):
        Engine(
            ConnectorConfig.from_mapping(
                props(tls_server, tmp_path, **base, **{"database.ssl.mode": "verify_identity"})
            )
        ).run()
    events = capture(tls_server, tmp_path, **base, **{"database.ssl.mode": "verify_ca"})
    assert events[-1] == ("c", "stream")


@pytest.mark.parametrize(
    "client",
    [
        {"database.ssl.cert": "client.pem", "database.ssl.key": "client-key.pem"},
        {
            "database.ssl.cert": "client.pem",
            "database.ssl.key": "client-key-enc.pem",
            "database.ssl.key.password": KEYSTORE_PASSWORD,
        },
        {"database.ssl.keystore": "client.p12", "database.ssl.keystore.password": KEYSTORE_PASSWORD},
    ],
    ids=["pem", "encrypted-pem", "pkcs12"],
)
def test_client_certificate_for_a_user_that_requires_x509(
    certs: Certs, tls_server: LocalMySQLServer, tmp_path: Path, client: dict[str, str]
) -> None:
    user = {
        "database.user": "x509",
        "database.password": "x509-secret",
        "database.ssl.mode": "verify_identity",
    }
    files = {k: (certs[v] if not k.endswith("password") else v) for k, v in client.items()}
    trust = {
        "database.ssl.truststore": certs["trust.p12"],
        "database.ssl.truststore.password": KEYSTORE_PASSWORD,
    }
    events = capture(tls_server, tmp_path, **user, **files, **trust)
    assert events[-1] == ("c", "stream")
    # without the certificate the server refuses the user
    with pytest.raises(PrerequisiteError, match="access denied for user 'x509'"):
        Engine(ConnectorConfig.from_mapping(props(tls_server, tmp_path, **user, **trust))).run()


def test_wrong_keystore_password_names_the_keystore(
    certs: Certs, tls_server: LocalMySQLServer, tmp_path: Path
) -> None:
    config = props(
        tls_server,
        tmp_path,
        **{
            "database.ssl.mode": "required",
            "database.ssl.keystore": certs["client.p12"],
            "database.ssl.keystore.password": "not-the-pass-42",
        },
    )
    with pytest.raises(ConfigError, match=r"database.ssl.keystore: cannot open PKCS12 keystore") as info:
        Engine(ConnectorConfig.from_mapping(config)).run()
    assert "not-the-pass-42" not in str(info.value)


def test_required_against_a_server_without_tls_names_the_mode(
    fresh_mysql_server: LocalMySQLServer, tmp_path: Path
) -> None:
    fresh_mysql_server.execute("CREATE DATABASE tlsdb")
    config = props(fresh_mysql_server, tmp_path, **{"database.ssl.mode": "required"})
    with pytest.raises(PrerequisiteError, match=r"does not offer TLS but database.ssl.mode=required"):
        Engine(ConnectorConfig.from_mapping(config)).run()
    # preferred falls back to plain TCP there, disabled never tries
    for mode in ("preferred", "disabled"):
        engine = Engine(
            ConnectorConfig.from_mapping(
                props(fresh_mysql_server, tmp_path / mode, **{"database.ssl.mode": mode})
            )
        )
        engine.catch_up()
        engine.close()
