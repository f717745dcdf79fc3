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
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from connector.testing.local_server import LocalMySQLServer
from tests.golden.naming_workloads import NAMING_CASES, naming_db
from tests.golden.oracle import (
    ConfigRejected,
    Debezium,
    feed,
    keep,
    oracle_server,
    running,
    scratch_directory,
    write,
    write_text,
)
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

SCHEMA_CHANGES = "_schema_changes"
REJECTED = "_rejected.txt"  # Debezium's validation message when it refuses a variant's configuration


def topic_of(line: bytes) -> str:
    return str(json.loads(line)["topic"])


def record_variant(server: LocalMySQLServer, variant: str, scratch: Path) -> None:
    print(f"variant {variant}")
    families = all_families(server)
    create_families(server, families)
    _, family_names = VARIANTS[variant]
    props = variant_properties(variant)
    with running(Debezium(server, props, scratch / f"variant-{variant}")) as dbz:
        try:
            dbz.wait_streaming()
        except ConfigRejected as rejected:
            # Recorded as a fact too: the golden test reports it as a difference of ours.
            shutil.rmtree(DEBEZIUM / variant, ignore_errors=True)
            write_text(DEBEZIUM / variant / REJECTED, f"{rejected}\n")
            return
        feed(dbz, server, (refill_statements(family_names, families),))
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
    with running(Debezium(server, spec.properties(db), scratch / f"mode-{case}")) as dbz:
        dbz.wait_streaming()
        feed(dbz, server, (spec.stream,), db)
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
    failure = None
    with running(Debezium(server, spec.properties(db), scratch / f"fidelity-{case}")) as dbz:
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
    with running(Debezium(server, spec.properties(db), scratch / f"naming-{case}")) as dbz:
        dbz.wait_streaming()
        feed(dbz, server, (spec.stream,), db)
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
    with scratch_directory("golden-debezium-", args.keep) as scratch:
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
