"""Embedded start-up latency: starting the connector in-process until the first event arrives.

With a throwaway server already up (its own start-up is printed but not counted), each round
  (a) baseline: a bare mysql-replication reader is opened at the server's current position and a row
      is inserted; time until the reader yields that row's event. Each round runs in a fresh Python
      process of its own with default settings (no allocator variables, none of the driver's objects
      or imports), timed inside it from opening the reader, so interpreter start-up is not counted;
  (b) the connector: ``EmbeddedEngine(props).start()``, then the same insert; time from creating the
      engine until ``wait_for`` returns that row's change event (start-up checks, schema capture,
      binlog connection, conversion, delivery). Also timed: the first record of any kind (the
      start-up schema events) and ``stop()`` (until the server's Binlog Dump thread is gone).
Prints min/median/max over the rounds and the ratio (b)/(a). Target: (b) under 2 s.

    .venv/bin/python -m bench.embedded [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.workload import replication_settings
from connector.embedded.api import EmbeddedEngine
from connector.testing.local_server import LocalMySQLServer

REPO = Path(__file__).resolve().parents[1]
DATABASE = "bench"
TARGET_S = 2.0

# One baseline round, in a process of its own: argv[1] = JSON of the settings below. Prints the
# seconds from opening the reader until it yields the inserted row's event.
BASELINE_CHILD = r"""
import json, sys, threading, time
import pymysql
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import WriteRowsEvent

a = json.loads(sys.argv[1])

def insert():
    conn = pymysql.connect(**a["admin"], database=a["database"], autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"INSERT INTO items VALUES ({a['row_id']}, 'b')")
    finally:
        conn.close()

started = time.perf_counter()
stream = BinLogStreamReader(connection_settings=a["replication"], server_id=a["server_id"],
                            log_file=a["file"], log_pos=a["pos"], resume_stream=True, blocking=True,
                            only_events=[WriteRowsEvent])
writer = threading.Thread(target=insert)
writer.start()
try:
    for event in stream:
        if any(row["values"]["id"] == a["row_id"] for row in event.rows):
            print(json.dumps({"seconds": time.perf_counter() - started}))
            break
    else:
        raise RuntimeError("the binlog stream ended before the row arrived")
finally:
    stream.close()
    writer.join()
"""


def default_environment() -> dict[str, str]:
    """This environment without the allocator variables (``PYTHONMALLOC``, ``MALLOC_*``)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONMALLOC" and not k.startswith("MALLOC_")}


def baseline_round(server: LocalMySQLServer, row_id: int) -> float:
    """The bare reader's round, run by ``BASELINE_CHILD`` in a fresh interpreter."""
    file, pos = server.query("SHOW MASTER STATUS")[0][:2]
    settings = {
        "replication": replication_settings(server),
        "admin": {
            "host": server.host,
            "port": server.port,
            "user": server.admin.user,
            "password": server.admin.password,
        },
        "database": DATABASE,
        "server_id": 9000 + row_id,
        "file": file,
        "pos": pos,
        "row_id": row_id,
    }
    out = subprocess.run(
        [sys.executable, "-c", BASELINE_CHILD, json.dumps(settings)],
        cwd=REPO,
        env=default_environment(),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])


def connector_round(server: LocalMySQLServer, row_id: int) -> tuple[float, float, float]:
    """(first change event, first record of any kind, stop) in seconds."""
    props = server.connector_properties(
        **{
            "topic.prefix": "bench",
            "database.include.list": DATABASE,
            "database.server.id": str(8000 + row_id),
        }
    )
    started = time.perf_counter()
    engine = EmbeddedEngine(props)
    engine.start()
    server.execute(f"INSERT INTO items VALUES ({row_id}, 'c')", database=DATABASE)
    engine.wait_for(table="items", op="c", where=lambda row: row["id"] == row_id, timeout=30)
    first_change = time.perf_counter() - started
    assert engine.first_record_at is not None
    first_record = engine.first_record_at - started
    stopping = time.perf_counter()
    engine.stop()
    return first_change, first_record, time.perf_counter() - stopping


def describe(values: list[float]) -> str:
    return (
        f"min {min(values) * 1000:7.1f} ms   median {statistics.median(values) * 1000:7.1f} ms   "
        f"max {max(values) * 1000:7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    boot = time.perf_counter()
    with LocalMySQLServer() as server:
        print(f"server {server.flavor} up in {time.perf_counter() - boot:.2f} s (not counted)")
        server.execute(
            f"CREATE DATABASE {DATABASE}",
            f"CREATE TABLE {DATABASE}.items (id INT PRIMARY KEY, name VARCHAR(20))",
        )
        baseline, change, first_any, stop = [], [], [], []
        for round_no in range(args.rounds):
            baseline.append(baseline_round(server, 2 * round_no + 1))
            c, a, s = connector_round(server, 2 * round_no + 2)
            change.append(c)
            first_any.append(a)
            stop.append(s)
        print(f"rounds: {args.rounds}")
        print(
            f"(a) baseline, bare mysql-replication reader to first row event (own process): {describe(baseline)}"
        )
        print(f"(b) EmbeddedEngine start() to first change event:                 {describe(change)}")
        print(f"    EmbeddedEngine start() to first record (start-up schema events): {describe(first_any)}")
        print(f"    stop() until the server's Binlog Dump thread is gone:           {describe(stop)}")
        ratio = statistics.median(change) / statistics.median(baseline)
        verdict = "OK" if max(change) < TARGET_S else "OVER TARGET"
        print(
            f"ratio (b)/(a) of medians: {ratio:.1f}x;  worst (b) {max(change):.3f} s vs target {TARGET_S} s: "
            f"{verdict}"
        )


if __name__ == "__main__":
    main()
