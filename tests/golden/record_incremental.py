"""Record what real Debezium 3.6.3 emits for signal-triggered incremental and blocking snapshots
(needs Java; not a test).

    .venv/bin/python -m tests.golden.record_incremental [--case CASE ...] [--keep]

Same set-up as ``record_debezium.py`` (the oracle's runs: ``tests/golden/oracle.py``): a throwaway MariaDB passing for MySQL
8.0, the oracle's ``Oracle`` main. For each case it (re)creates database ``inc`` with ``orders`` (10
rows), ``pairs`` (6 rows, composite key) and the signal table ``dbz_signal``, starts Debezium with
``snapshot.mode=no_data`` (only the signal produces rows), waits for streaming, inserts the case's
signal rows, waits until quiet, runs the case's follow-up SQL, waits until quiet, stops it, and writes

    tests/golden/debezium/incremental/<case>.jsonl          every record, in Debezium's order
    tests/golden/debezium/incremental/<case>.offsets.json   every distinct offset Debezium stored
    tests/golden/debezium/incremental/<case>_rejected.txt   instead, if Debezium refused the config

What the recordings show is summarised in ``tests/golden/debezium/incremental/FACTS.md``.

Records are verbatim except the MariaDB artefacts ``record_debezium.artefact()`` drops. The offsets
are read from the FileOffsetBackingStore file (a Java-serialized HashMap of JSON byte strings) every
few milliseconds while Debezium runs (``max.batch.size=1``, ``offset.flush.interval.ms=0``:
committed after every record); each distinct (key, value)
is kept in the order first seen, as ``[{"key": [...], "value": {...}}, ...]``.
``--keep`` leaves Debezium's log and ``SHOW BINLOG EVENTS`` in the scratch directory.

The connector user gets ``INSERT, DELETE`` on ``inc.dbz_signal`` only: Debezium writes its window
markers into the signal table through JDBC (Debezium's documented requirement).
"""

from __future__ import annotations

import json
import threading
import time
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
    scratch_directory,
    write,
    write_text,
)
from tests.golden.workloads import DEBEZIUM, run_statements

OUT = DEBEZIUM / "incremental"
DB = "inc"

SETUP = (
    f"CREATE TABLE {DB}.orders (id INT PRIMARY KEY, name VARCHAR(20), qty INT)",
    f"INSERT INTO {DB}.orders VALUES " + ", ".join(f"({i}, 'order-{i}', {i * 10})" for i in range(1, 11)),
    f"CREATE TABLE {DB}.pairs (a INT, b VARCHAR(5), v INT, PRIMARY KEY (a, b))",
    f"INSERT INTO {DB}.pairs VALUES (1, 'x', 1), (1, 'y', 2), (2, 'x', 3), (2, 'y', 4), (3, 'x', 5), (3, 'y', 6)",
    f"CREATE TABLE {DB}.dbz_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048))",
)

BASE_PROPS = {
    "topic.prefix": DB,
    "database.include.list": DB,
    "signal.data.collection": f"{DB}.dbz_signal",
    "incremental.snapshot.chunk.size": "3",
    "snapshot.mode": "no_data",
    # One record per batch, offsets committed after every batch: the offset file then holds each
    # record's offset in turn (the snapshot takes ~0.1 s; a 100 ms flush would show none of it).
    # Neither changes what Debezium emits, only how often the engine commits.
    "max.batch.size": "1",
    "offset.flush.interval.ms": "0",
}


def signal(sig_id: str, kind: str, data: dict[str, object]) -> str:
    payload = json.dumps(data).replace("'", "''")
    return f"INSERT INTO {DB}.dbz_signal VALUES ('{sig_id}', '{kind}', '{payload}')"


ORDERS_INCREMENTAL = signal(
    "sig-1", "execute-snapshot", {"data-collections": [f"{DB}.orders"], "type": "incremental"}
)
# An incremental snapshot of inc.orders and inc.pairs, and a stop of inc.pairs in the same transaction.
SNAPSHOT_AND_STOP_PAIRS = (
    "BEGIN",
    signal(
        "sig-1",
        "execute-snapshot",
        {"data-collections": [f"{DB}.orders", f"{DB}.pairs"], "type": "incremental"},
    ),
    signal("sig-2", "stop-snapshot", {"data-collections": [f"{DB}.pairs"], "type": "incremental"}),
    "COMMIT",
)


@dataclass(frozen=True)
class Case:
    signals: tuple[str, ...]  # run on one connection, in order (a BEGIN ... COMMIT may span them)
    props: dict[str, str] = field(default_factory=dict)
    after: tuple[str, ...] = ()  # SQL once the signal's records are in


CASES: dict[str, Case] = {
    "insert_insert": Case((ORDERS_INCREMENTAL,)),
    "insert_delete": Case(
        (ORDERS_INCREMENTAL,), {"incremental.snapshot.watermarking.strategy": "insert_delete"}
    ),
    "composite_conditions": Case(
        (
            signal(
                "sig-1",
                "execute-snapshot",
                {
                    "data-collections": [f"{DB}.pairs"],
                    "type": "incremental",
                    "additional-conditions": [{"data-collection": f"{DB}.pairs", "filter": "v > 2"}],
                },
            ),
        )
    ),
    "signal_not_included": Case((ORDERS_INCREMENTAL,), {"table.include.list": f"{DB}.orders"}),
    "blocking": Case(
        (signal("sig-1", "execute-snapshot", {"data-collections": [f"{DB}.orders"], "type": "blocking"}),),
        after=(f"INSERT INTO {DB}.orders VALUES (11, 'order-11', 110)",),
    ),
    # Both signals in one transaction: the stop is read from the binlog before the first chunk's
    # window markers, so inc.pairs is dropped from the snapshot before any of its chunks is read.
    "stop_snapshot": Case(SNAPSHOT_AND_STOP_PAIRS),
}


def json_strings(data: bytes) -> list[str]:
    """The top-level JSON arrays/objects in ``data`` (a Java-serialized map of JSON byte strings):
    each ``[`` or ``{`` followed by ``"`` up to its balanced end, string-aware; nested ones skipped."""
    found, i, n = [], 0, len(data)
    while i < n - 1:
        if data[i] in b"[{" and data[i + 1] == ord('"'):
            depth, j, in_str = 0, i, False
            while j < n:
                c = data[j]
                if in_str:
                    if c == ord("\\"):
                        j += 1
                    elif c == ord('"'):
                        in_str = False
                elif c == ord('"'):
                    in_str = True
                elif c in b"[{":
                    depth += 1
                elif c in b"]}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            text = data[i : j + 1].decode("utf-8", errors="replace")
            try:
                json.loads(text)
            except ValueError:
                i += 1
                continue
            found.append(text)
            i = j + 1
        else:
            i += 1
    return found


class OffsetWatcher(threading.Thread):
    """Reads the offset file every few ms; keeps each distinct (key, value) in the order seen."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.seen: list[tuple[str, str]] = []
        self._done = threading.Event()

    def poll(self) -> None:
        try:
            data = self.path.read_bytes()
        except OSError:
            return
        strings = json_strings(data)
        # The map alternates key (a JSON array) and value (a JSON object).
        for key, value in zip(strings[::2], strings[1::2], strict=False):
            if key.startswith("[") and value.startswith("{") and (key, value) not in self.seen:
                self.seen.append((key, value))

    def run(self) -> None:
        while not self._done.is_set():
            self.poll()
            time.sleep(0.003)

    def finish(self) -> list[dict[str, object]]:
        self._done.set()
        self.join()
        self.poll()
        return [{"key": json.loads(k), "value": json.loads(v)} for k, v in self.seen]


def record_case(server: LocalMySQLServer, name: str, scratch: Path) -> None:
    print(f"case {name}")
    case = CASES[name]
    server.execute(f"DROP DATABASE IF EXISTS `{DB}`", f"CREATE DATABASE `{DB}` CHARSET utf8mb4")
    run_statements(server, SETUP)
    # Debezium writes the window markers into the signal table as the connector user.
    server.execute(f"GRANT INSERT, DELETE ON {DB}.dbz_signal TO '{server.connector.user}'@'%'")
    for stale in OUT.glob(f"{name}[._]*"):
        stale.unlink()
    dbz = Debezium(server, {**BASE_PROPS, **case.props}, scratch / name)
    watcher = OffsetWatcher(dbz.workdir / "offsets.dat")
    dbz.start()
    watcher.start()
    try:
        try:
            dbz.wait_streaming()
        except ConfigRejected as rejected:
            write_text(OUT / f"{name}_rejected.txt", f"{rejected}\n")
            return
        feed(dbz, server, (case.signals, case.after), quiet=6.0)
    finally:
        dbz.stop()
        offsets = watcher.finish()
    # The binlog as the server has it, beside Debezium's log (--keep): to read source.pos against.
    with (dbz.workdir / "binlog_events.txt").open("w") as f:
        for log_name, pos, kind, _, end, info in server.query("SHOW BINLOG EVENTS"):
            f.write(f"{log_name}\t{pos}\t{end}\t{kind}\t{info}\n")
    write(OUT / f"{name}.jsonl", keep(dbz.lines()))
    path = OUT / f"{name}.offsets.json"
    path.write_text(json.dumps(offsets, indent=1) + "\n")
    print(f"  {path.name}: {len(offsets)} offsets")


def main(argv: Sequence[str] | None = None) -> int:
    args = case_arguments(__doc__, CASES, argv)
    with scratch_directory("golden-incremental-", args.keep) as scratch, oracle_server() as server:
        for name in args.case or list(CASES):
            record_case(server, name, scratch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
