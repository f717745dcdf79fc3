"""Record what real Debezium 3.6.3 emits for notifications and the reselect post-processor (needs
Java; not a test).

    .venv/bin/python -m tests.golden.record_notify [--case CASE ...] [--keep]

Same set-up as ``record_incremental.py`` (database ``inc`` with ``orders``, ``pairs`` and the signal
table). For each case it starts Debezium with the case's properties, waits for streaming, runs the
case's statements, waits until quiet, stops it and writes

    tests/golden/debezium/notify/<case>.jsonl         every record, in Debezium's order
    tests/golden/debezium/notify/<case>.log.txt       the ``LogNotificationChannel`` and reselect lines of its log
    tests/golden/debezium/notify/<case>_rejected.txt  instead, if Debezium refused the config or server

``reselect_*`` cases add ``inc.docs`` (TEXT, BLOB and JSON columns); ``reselect_noblob`` runs on a
server with ``--binlog-row-image=NOBLOB``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from connector.testing.local_server import LocalMySQLServer
from tests.golden.oracle import (
    ConfigRejected,
    Debezium,
    case_arguments,
    feed,
    keep,
    oracle_server,
    running,
    scratch_directory,
    write,
    write_text,
)
from tests.golden.record_incremental import BASE_PROPS, DB, ORDERS_INCREMENTAL, SETUP, SNAPSHOT_AND_STOP_PAIRS
from tests.golden.workloads import DEBEZIUM, run_statements

OUT = DEBEZIUM / "notify"
NOTIFY_TOPIC = f"{DB}.notifications"
NOTIFY_PROPS = {
    "notification.enabled.channels": "sink,log",
    "notification.sink.topic.name": NOTIFY_TOPIC,
}
DOCS_SETUP = (
    f"CREATE TABLE {DB}.docs (id INT PRIMARY KEY, title VARCHAR(20), body TEXT, data BLOB, doc JSON)",
    f"INSERT INTO {DB}.docs VALUES (1, 'one', 'body-1', x'0102', '{{\"a\": 1}}'), "
    f"(2, 'two', NULL, NULL, NULL)",
)
DOCS_WORKLOAD = (
    f"INSERT INTO {DB}.docs VALUES (3, 'three', 'body-3', x'0303', '{{\"c\": [1, 2]}}')",
    f"UPDATE {DB}.docs SET title = 'one*' WHERE id = 1",
    f"UPDATE {DB}.docs SET title = 'three*' WHERE id = 3",
    f"UPDATE {DB}.docs SET body = 'body-2', title = 'two*' WHERE id = 2",
    f"UPDATE {DB}.docs SET data = x'ff', title = 'one**' WHERE id = 1",
    # Re-read after the transaction: the first update's null body is read back as 'later'.
    "BEGIN",
    f"UPDATE {DB}.docs SET body = NULL, title = 'three**' WHERE id = 3",
    f"UPDATE {DB}.docs SET body = 'later' WHERE id = 3",
    "COMMIT",
    # A row gone before the re-read: its nulls cannot be re-read.
    "BEGIN",
    f"INSERT INTO {DB}.docs VALUES (4, 'four', NULL, NULL, NULL)",
    f"UPDATE {DB}.docs SET title = 'four*' WHERE id = 4",
    f"DELETE FROM {DB}.docs WHERE id = 4",
    "COMMIT",
)
RESELECT_PROPS = {
    "snapshot.mode": "initial",
    "table.include.list": f"{DB}.docs",
    "post.processors": "reselector",
    "post.processors.reselector.type": "io.debezium.processors.reselect.ReselectColumnsPostProcessor",
    "post.processors.reselector.reselect.columns.include.list": f"{DB}.docs:body,{DB}.docs:data,{DB}.docs:doc",
    "post.processors.reselector.reselect.null.values": "true",
    "post.processors.reselector.reselect.unavailable.values": "true",
}


@dataclass(frozen=True)
class Case:
    statements: tuple[str, ...]
    props: dict[str, str] = field(default_factory=dict)
    server_options: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()


CASES: dict[str, Case] = {
    # The initial snapshot of inc's three tables, then an incremental snapshot of inc.orders.
    "initial_incremental": Case((ORDERS_INCREMENTAL,), {**NOTIFY_PROPS, "snapshot.mode": "initial"}),
    # Two collections, the second stopped in the same transaction: ABORTED for inc.pairs.
    "stop": Case(SNAPSHOT_AND_STOP_PAIRS, NOTIFY_PROPS),
    "reselect_full": Case(DOCS_WORKLOAD, RESELECT_PROPS, setup=DOCS_SETUP),
    "reselect_noblob": Case(
        DOCS_WORKLOAD, RESELECT_PROPS, server_options=("--binlog-row-image=NOBLOB",), setup=DOCS_SETUP
    ),
}


def logged_lines(log: str) -> list[str]:
    marks = ("LogNotificationChannel", "ReselectColumnsPostProcessor")
    return [line for line in log.splitlines() if any(mark in line for mark in marks)]


def record_case(server: LocalMySQLServer, name: str, scratch: Path) -> None:
    print(f"case {name}")
    case = CASES[name]
    server.execute(f"DROP DATABASE IF EXISTS `{DB}`", f"CREATE DATABASE `{DB}` CHARSET utf8mb4")
    run_statements(server, (*SETUP, *case.setup))
    server.execute(f"GRANT INSERT, DELETE ON {DB}.dbz_signal TO '{server.connector.user}'@'%'")
    for stale in OUT.glob(f"{name}[._]*"):
        stale.unlink()
    props = {**BASE_PROPS, "max.batch.size": "2048", **case.props}
    with running(Debezium(server, props, scratch / name)) as dbz:
        try:
            dbz.wait_streaming()
        except ConfigRejected as rejected:
            write_text(OUT / f"{name}_rejected.txt", f"{rejected}\n")
            return
        except RuntimeError as failed:
            write_text(OUT / f"{name}_rejected.txt", f"{dbz.failure() or failed}\n")
            return
        feed(dbz, server, (case.statements,), quiet=6.0)
    write(OUT / f"{name}.jsonl", keep(dbz.lines()))
    log = dbz.log.read_text(errors="replace") if dbz.log.exists() else ""
    write_text(OUT / f"{name}.log.txt", "".join(f"{line}\n" for line in logged_lines(log)))


def main(argv: Sequence[str] | None = None) -> int:
    args = case_arguments(__doc__, CASES, argv)
    with scratch_directory("golden-notify-", args.keep) as scratch:
        for name in args.case or list(CASES):
            with oracle_server(CASES[name].server_options) as server:
                record_case(server, name, scratch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
