"""Snapshot throughput and memory: the snapshotter vs a bare pymysql server-side-cursor loop.

Fills a throwaway server with one table of N rows (default 2,000,000), then, each in a fresh child
process so that peak RSS (``ru_maxrss``) belongs to that run alone, times
  (a) baseline: ``for row in SSCursor`` over ``SELECT * FROM bench.items`` (fetch and decode only), and
  (b) the snapshotter's full workflow (lock, position, structure, row estimate, streaming scan with
      markers) into a listener that only counts rows, with one reader, and
  (c) the same with ``snapshot.max.threads=N`` (``--threads``, default 2): the table is cut into key
      ranges read by N reader processes inside the one consistent view, rows emitted in key order,
all with the snapshot value conversions. Prints rows/s, the ratios to (a) and (c)/(b), and the peak
RSS of each (for (c) the parent's and the largest reader process's); fails (exit 1) if a snapshot's
peak RSS reaches 300 MB.

    .venv/bin/python -m bench.snapshot [--rows 2000000] [--repeat 2] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from connector.testing.local_server import LocalMySQLServer

REPO = Path(__file__).resolve().parents[1]
LIMIT_MB = 300

TABLE = (
    "CREATE TABLE bench.items (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, qty INT NOT NULL, "
    "price DECIMAL(10,2) NOT NULL, updated DATETIME(3) NOT NULL, note VARCHAR(100))"
)

_DIGITS = (
    "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 "
    "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
)

# Runs in the child process: argv = mode host port user password flavor
CHILD = r"""
import json, resource, sys, time
import pymysql, pymysql.cursors
from connector.records.conversion import SNAPSHOT_CONVERSIONS
import functools
mode, host, port, user, password, flavor, threads = sys.argv[1:8]

# A partial (it pickles): the chunked snapshot's reader processes open their connections with it.
connect = functools.partial(pymysql.connect, host=host, port=int(port), user=user, password=password,
                            charset="utf8mb4", autocommit=False, conv=SNAPSHOT_CONVERSIONS)

started = time.perf_counter()
if mode == "baseline":
    conn = connect()
    cur = conn.cursor(pymysql.cursors.SSCursor)
    cur.execute("SELECT * FROM bench.items")
    rows = 0
    for row in cur:
        rows += 1
    conn.close()
else:
    from snapshot.progress import NoProgress
    from snapshot.snapshotter import SnapshotSettings, Snapshotter

    class Counting:
        rows = 0
        def on_schema_statement(self, ddl, database): pass
        def on_position(self, position): pass
        def on_table_start(self, table_id, estimated_rows, source_ts_ms): pass
        def on_row(self, table_id, values, marker): self.rows += 1
        def on_table_end(self, table_id, rows): pass
        def on_complete(self): pass

    listener = Counting()
    settings = SnapshotSettings(max_threads=int(threads) if mode == "chunked" else 1)
    Snapshotter(settings, connect, lambda t: t.database == "bench", flavor,
                progress=NoProgress()).run(listener)
    rows = listener.rows
elapsed = time.perf_counter() - started
# RUSAGE_CHILDREN: the largest reader process (waited for when the snapshot ended).
usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
print(json.dumps({"rows": rows, "seconds": elapsed,
                  "cpu_s": usage[0].ru_utime + usage[0].ru_stime,
                  "reader_cpu_s": usage[1].ru_utime + usage[1].ru_stime,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "reader_maxrss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def fill(server: LocalMySQLServer, rows: int) -> None:
    server.execute(
        "CREATE DATABASE bench",
        TABLE,
        "CREATE TABLE bench.n (n INT PRIMARY KEY)",
        f"INSERT INTO bench.n SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d "
        f"FROM {_DIGITS} a, {_DIGITS} b, {_DIGITS} c, {_DIGITS} e",
    )
    # rows = hi * 10000 + lo; one INSERT ... SELECT per 10,000-row block keeps each statement small.
    blocks = (rows + 9999) // 10000
    with server.connect("bench") as conn, conn.cursor() as cur:
        for block in range(blocks):
            cur.execute(
                "INSERT INTO items SELECT %s + n + 1, CONCAT('item-', %s + n), n %% 100, "
                "(n %% 100000) / 100, TIMESTAMP('2024-05-01 12:00:00.123') + INTERVAL n SECOND, "
                "IF(n %% 3 = 0, NULL, 'lorem ipsum dolor sit amet') FROM n WHERE %s + n < %s",
                (block * 10000, block * 10000, block * 10000, rows),
            )
    server.execute("DROP TABLE bench.n", "ANALYZE TABLE bench.items")


def run_child(server: LocalMySQLServer, mode: str, threads: int = 1) -> dict[str, float]:
    creds = server.connector
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            mode,
            server.host,
            str(server.port),
            creds.user,
            creds.password,
            server.flavor,
            str(threads),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


LABELS = {
    "baseline": "baseline (bare pymysql SSCursor loop)",
    "snapshot": "snapshot, 1 reader (counting listener)",
    "chunked": "snapshot, chunked (counting listener)",
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each; the best rate is reported")
    parser.add_argument("--threads", type=int, default=2, help="snapshot.max.threads of the chunked run")
    args = parser.parse_args()
    with LocalMySQLServer(extra_options=("--innodb-buffer-pool-size=1G",)) as server:
        t0 = time.perf_counter()
        fill(server, args.rows)
        print(f"filled bench.items with {args.rows:,} rows in {time.perf_counter() - t0:.1f} s")
        run_child(server, "baseline")  # warm the buffer pool
        results: dict[str, list[dict[str, float]]] = {mode: [] for mode in LABELS}
        for _ in range(args.repeat):
            for mode in LABELS:  # alternating, so that drift hits every mode alike
                result = run_child(server, mode, args.threads)
                if result["rows"] != args.rows:
                    print(f"{mode}: read {result['rows']} rows, expected {args.rows}")
                    return 1
                results[mode].append(result)
    best = {mode: max(runs, key=lambda r: r["rows"] / r["seconds"]) for mode, runs in results.items()}
    peak = {mode: max(r["maxrss_mb"] for r in runs) for mode, runs in results.items()}
    reader_peak = max(r["reader_maxrss_mb"] for r in results["chunked"])
    rate = {mode: best[mode]["rows"] / best[mode]["seconds"] for mode in best}
    print(f"rows: {args.rows:,}; chunked: snapshot.max.threads={args.threads}")
    for mode, label in LABELS.items():
        run = best[mode]
        extra = f", largest reader process {reader_peak:.0f} MB" if mode == "chunked" else ""
        cpu = f"CPU {run['cpu_s']:.2f} s" + (
            f" + readers {run['reader_cpu_s']:.2f} s" if mode == "chunked" else ""
        )
        print(
            f"{label:<42} {rate[mode]:>10,.0f} rows/s  "
            f"({run['seconds']:.2f} s, {cpu}, peak RSS {peak[mode]:.0f} MB{extra})"
        )
    print(f"ratio snapshot/baseline: {rate['snapshot'] / rate['baseline']:.2f}")
    print(f"ratio chunked/baseline: {rate['chunked'] / rate['baseline']:.2f}")
    print(f"ratio chunked/snapshot (threads={args.threads} vs 1): {rate['chunked'] / rate['snapshot']:.2f}")
    print(f"CPU cores: {os.cpu_count()}, load average at the end: {os.getloadavg()[0]:.1f}")
    worst = max(peak["snapshot"], peak["chunked"], reader_peak)
    ok = worst < LIMIT_MB
    print(
        f"snapshot peak memory {worst:.0f} MB {'<' if ok else '>='} {LIMIT_MB} MB: {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
