"""Incremental snapshot throughput and memory against the initial snapshot of the same table.

Fills a throwaway server with one table of N rows (default 1,000,000; ``bench.snapshot``'s table),
then, each in a fresh child process so that peak RSS (``ru_maxrss``) belongs to that run alone, runs
the whole connector (``Engine``: dispatcher, converters, records, delivery) into a sink that only
counts records:
  (a) baseline: the initial snapshot (``snapshot.mode=initial_only``) of the table, and
  (b) an incremental snapshot of it (``snapshot.mode=no_data``, then an ``execute-snapshot`` signal
      through the in-process channel, watermarks in the signal table), timed from the signal to the
      last chunk, at ``incremental.snapshot.chunk.size`` 1024 (Debezium's default) and 8192, and at
      each ``incremental.snapshot.max.threads`` of ``--threads`` (default 1; ``--threads 1,3``
      compares one chunk per window with three read at once by reader processes, in the same run).
Prints rows/s of each, the ratio incremental/initial and each run's peak memory (the connector's
process; with threads > 1 also the largest reader process); fails (exit 1) if an incremental run's
peak RSS reaches 300 MB.

    .venv/bin/python -m bench.incremental [--rows 1000000] [--chunks 1024,8192] [--threads 1,3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench.snapshot import fill
from connector.testing.local_server import LocalMySQLServer

REPO = Path(__file__).resolve().parents[1]
LIMIT_MB = 300

# Runs in the child process: argv = mode chunk_size threads data_dir properties-json
CHILD = r"""
import json, resource, sys, time
from connector.config import ConnectorConfig
from connector.engine import Engine
from sink.base import Sink

mode, chunk, threads, data_dir = sys.argv[1:5]
props = json.loads(sys.argv[5])

class Counting(Sink):
    rows = 0
    def send(self, records):
        self.rows += sum(1 for r in records if r.op == "r")
    def flush(self):
        pass

props.update({"data.dir": data_dir, "offset.storage": "memory", "schema.history.internal": "memory",
              "database.include.list": "bench", "topic.prefix": "bench"})
sink = Counting()
if mode == "initial":
    props["snapshot.mode"] = "initial_only"
    engine = Engine(ConnectorConfig.from_mapping(props), sinks=[sink])
    started = time.perf_counter()
    engine.run()
else:
    props.update({"snapshot.mode": "no_data", "signal.data.collection": "bench.dbz_signal",
                  "signal.enabled.channels": "in-process", "incremental.snapshot.chunk.size": chunk,
                  "incremental.snapshot.max.threads": threads})
    engine = Engine(ConnectorConfig.from_mapping(props), sinks=[sink])
    engine.catch_up()
    incremental = engine.streaming.signals.incremental
    started = time.perf_counter()
    engine.signal("execute-snapshot", {"data-collections": ["bench.items"]})
    engine.streaming.signals.processor.poll(force=True)
    while incremental.running:
        engine.catch_up()
    engine.close()
elapsed = time.perf_counter() - started
print(json.dumps({"rows": sink.rows, "seconds": elapsed,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "readers_maxrss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def run_child(
    server: LocalMySQLServer, mode: str, chunk: int, data_dir: Path, threads: int = 1
) -> dict[str, float]:
    props = server.connector_properties(**{"database.server.id": str(7000 + chunk % 1000)})
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(chunk), str(threads), str(data_dir), json.dumps(props)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--chunks", default="1024,8192", help="incremental.snapshot.chunk.size values")
    parser.add_argument("--threads", default="1", help="incremental.snapshot.max.threads values")
    args = parser.parse_args()
    chunks = [int(c) for c in args.chunks.split(",")]
    thread_counts = [int(t) for t in args.threads.split(",")]
    with LocalMySQLServer(extra_options=("--innodb-buffer-pool-size=512M",)) as server:
        t0 = time.perf_counter()
        fill(server, args.rows)
        server.execute(
            "CREATE TABLE bench.dbz_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
            "data VARCHAR(2048))",
            f"GRANT INSERT, DELETE ON bench.dbz_signal TO '{server.connector.user}'@'%'",
        )
        print(f"filled bench.items with {args.rows:,} rows in {time.perf_counter() - t0:.1f} s")
        work = server.workdir / "connector"
        work.mkdir(exist_ok=True)
        results = {"initial": run_child(server, "initial", 0, work)}
        for chunk in chunks:
            for threads in thread_counts:
                name = f"incremental/{chunk}" + (f"x{threads}" if threads > 1 else "")
                results[name] = {**run_child(server, "incremental", chunk, work, threads), "threads": threads}
    failed = False
    base = results["initial"]["rows"] / results["initial"]["seconds"]
    for name, result in results.items():
        if result["rows"] != args.rows:
            print(f"{name}: emitted {result['rows']} r events, expected {args.rows}")
            failed = True
        rate = result["rows"] / result["seconds"]
        ratio = "" if name == "initial" else f"  ratio to initial {rate / base:.2f}"
        readers = (
            f", largest reader {result['readers_maxrss_mb']:.0f} MB" if result.get("threads", 1) > 1 else ""
        )
        print(
            f"{name:>18}: {rate:>9,.0f} rows/s ({result['seconds']:.1f} s, peak RSS "
            f"{result['maxrss_mb']:.0f} MB{readers}){ratio}"
        )
        if name != "initial" and result["maxrss_mb"] >= LIMIT_MB:
            print(f"{name}: peak memory {result['maxrss_mb']:.0f} MB >= {LIMIT_MB} MB: FAIL")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
