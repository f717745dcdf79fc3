"""Spark sink throughput: connector -> Delta Lake against connector -> jsonl, same workload, same run.

Starts a throwaway server and four connectors on it (each with its own data directory and
server id), all positioned at the same binlog point: one writes to the jsonl sink, three to the
Spark sink (local Spark, Delta tables) — with the default settings (batches of up to 50,000
events), with batches of 10,000 (the default before commits were pipelined) and with batches of up
to 200,000 (and a 30 s interval). A warm-up workload is streamed
by all of them first (JVM and query-plan warm-up is a one-off cost), then N inserts, N/2 updates
and N/4 deletes are written and each connector's catch-up over that same range is timed. Then the
fixed cost of a commit: single-row transactions, each caught up on its own (Spark's time minus
jsonl's). Prints events/s and the ratio to jsonl, the time spent in Delta's own operations (and
the rate that time alone allows: the ceiling of any sink built on Spark and Delta here), the Delta
commits made, the peak RSS of the Python process and of Spark's JVM, and checks with ``verify`` that the Delta tables equal MySQL.

``--workload oltp`` (issue 40) replaces the one bulk-written table with the OLTP workload of
``bench/oltp.py``: 40 tables of 100 rows, then ``--rows`` changes (default 40,000) in transactions of
1-4 single-row statements over every table, written while the connectors wait; each connector's warm
catch-up over that range is timed, and the Delta time per table commit (the fixed cost a batch pays
for every table it touches) is printed. Only the default Spark variant runs unless ``--only`` says.

``--baseline REV`` also runs ``bench/spark.py`` of git revision REV (e.g. the last commit with the
old Parquet sink) in a subprocess of the same run, for its figures beside these (with
``--workload oltp``, this revision's benchmark over REV's connector and sink).

    .venv/bin/python bench/spark.py [--rows 40000] [--workload bulk|oltp] [--baseline 0842aef]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

# Run as a script, this directory comes first on sys.path, where bench/snapshot.py and
# bench/kafka.py would shadow the snapshot package and kafka-python.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from bench.oltp import OltpWriter, create_tables  # noqa: E402
from connector.cli.verify import run_verify  # noqa: E402
from connector.config import ConnectorConfig  # noqa: E402
from connector.engine import Engine  # noqa: E402
from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer  # noqa: E402
from sink.base import Sink  # noqa: E402
from sink.jsonl import JsonlSink  # noqa: E402
from sink.spark import SparkSink  # noqa: E402

TABLE = (
    "CREATE TABLE bench.items (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, qty INT NOT NULL, "
    "price DECIMAL(10,2) NOT NULL, updated DATETIME(3) NOT NULL, note TEXT)"
)


def write_workload(server: LocalMySQLServer, first: int, rows: int) -> int:
    """N inserts (500-row statements), N/2 updates, N/4 deletes; returns the row changes written."""
    last = first + rows
    with server.connect("bench") as conn, conn.cursor() as cur:
        for start in range(first, last, 500):
            values = [
                (
                    i,
                    f"item-{i}",
                    i % 100,
                    f"{i % 1000}.{i % 100:02d}",
                    "2024-05-01 12:00:00.123",
                    "lorem ipsum" if i % 3 else None,
                )
                for i in range(start, min(last, start + 500))
            ]
            cur.executemany("INSERT INTO items VALUES (%s, %s, %s, %s, %s, %s)", values)
        for start in range(first, first + rows // 2, 500):
            cur.execute("UPDATE items SET qty = qty + 1 WHERE id >= %s AND id < %s", (start, start + 500))
        cur.execute("DELETE FROM items WHERE id >= %s AND id < %s", (first, first + rows // 4))
    return rows + rows // 2 + rows // 4


class Run:
    def __init__(
        self,
        name: str,
        server: LocalMySQLServer,
        tmp: Path,
        server_id: int,
        sink_props: dict[str, str],
        make_sink: Any,
    ) -> None:
        self.name = name
        props = server.connector_properties(
            **{
                "topic.prefix": "bench",
                "database.include.list": "bench",
                "data.dir": str(tmp / name),
                "database.server.id": str(server_id),
                "skipped.operations": "none",
                **sink_props,
            }
        )
        self.config = ConnectorConfig.from_mapping(props)
        self.sink: Sink = make_sink(self.config)
        self.engine = Engine(self.config, sinks=[self.sink])
        self.seconds = 0.0
        self.commits = 0
        self.delta_seconds = 0.0

    def catch_up(self) -> float:
        started = time.perf_counter()
        self.engine.catch_up(timeout=1800)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--workload", choices=("bulk", "oltp"), default="bulk")
    parser.add_argument("--warmup", type=int, default=2_000)
    parser.add_argument("--single", type=int, default=10, help="single-row transactions for the commit cost")
    parser.add_argument("--baseline", metavar="REV", help="also run bench/spark.py of this git revision")
    parser.add_argument(
        "--only",
        metavar="NAME",
        action="append",
        help="run only this Spark variant (spark, spark-batches-10k, spark-batches-200k; repeatable); "
        "jsonl always runs, it is the yardstick",
    )
    args = parser.parse_args()
    if args.baseline:
        run_baseline(args.baseline, args.rows, args.warmup, args.workload)
    if args.workload == "oltp" and not args.only:
        args.only = ["spark"]
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    with LocalMySQLServer(options=options) as server, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.workload == "oltp":
            create_tables(server, "bench")
            oltp = OltpWriter("bench")

            def write(first: int, rows: int) -> int:
                return oltp.write(server, rows)

            single_table = "bench.t00"
        else:
            server.execute("CREATE DATABASE bench", TABLE)

            def write(first: int, rows: int) -> int:
                return write_workload(server, first, rows)

            single_table = "bench.items"
        spark_common = {"sink.spark.master": "local[2]"}
        runs = [
            Run(
                "jsonl",
                server,
                tmp,
                5401,
                {"sink.jsonl.path": str(tmp / "events.jsonl")},
                JsonlSink.from_config,
            ),
            Run(
                "spark",
                server,
                tmp,
                5402,
                {**spark_common, "sink.spark.warehouse": str(tmp / "wh1")},
                SparkSink.from_config,
            ),
            Run(
                "spark-batches-10k",
                server,
                tmp,
                5403,
                {
                    **spark_common,
                    "sink.spark.warehouse": str(tmp / "wh2"),
                    "sink.spark.batch.max.events": "10000",
                },
                SparkSink.from_config,
            ),
            Run(
                "spark-batches-200k",
                server,
                tmp,
                5404,
                {
                    **spark_common,
                    "sink.spark.warehouse": str(tmp / "wh3"),
                    "max.batch.size": "20000",
                    "max.queue.size": "80000",
                    "sink.spark.batch.max.events": "200000",
                    "sink.spark.batch.max.interval.ms": "30000",
                },
                SparkSink.from_config,
            ),
        ]
        if args.only:
            kept = [run for run in runs[1:] if run.name in args.only]
            for run in runs[1:]:
                if run not in kept:
                    run.engine.close()
            runs = [runs[0], *kept]
        try:
            for run in runs:
                run.catch_up()  # structure read, positioned at the current binlog end
            write(10_000_000, args.warmup)
            for run in runs:
                run.catch_up()
            changes = write(0, args.rows)
            for run in runs:
                spark_sink = run.sink if isinstance(run.sink, SparkSink) else None
                commits_before = spark_sink.commits_written if spark_sink else 0
                delta_before = spark_sink.delta_seconds if spark_sink else 0.0
                run.seconds = run.catch_up()
                if spark_sink:
                    run.commits = spark_sink.commits_written - commits_before
                    run.delta_seconds = spark_sink.delta_seconds - delta_before
            latencies: dict[str, list[float]] = {run.name: [] for run in runs}
            for i in range(args.single):
                row = (
                    f"({20_000_000 + i}, 1, 'one', 1.00, NOW(3))"
                    if args.workload == "oltp"
                    else f"({20_000_000 + i}, 'one', 1, 1.00, NOW(3), NULL)"
                )
                server.execute(f"INSERT INTO {single_table} VALUES {row}")
                for run in runs:
                    latencies[run.name].append(run.catch_up())
        finally:
            for run in runs:
                run.engine.close()

        if args.workload == "oltp":
            print(
                f"workload: {changes} row changes in transactions of 1-4 statements over 40 tables "
                f"(after a {args.warmup}-change warm-up)"
            )
        else:
            print(
                f"workload: {args.rows} inserts, {args.rows // 2} updates, {args.rows // 4} deletes "
                f"= {changes} change events (after a {args.warmup}-insert warm-up)"
            )
        base = changes / runs[0].seconds
        for run in runs:
            rate = changes / run.seconds
            line = f"  {run.name:<22} {run.seconds:8.2f} s  {rate:10,.0f} events/s  {rate / base:6.2f}x jsonl"
            if run.commits:
                line += f"  ({run.commits} Spark commits, {changes / run.commits:,.0f} events/commit)"
            print(line)
            if run.delta_seconds:
                # The rate this sink could reach if everything but Delta's own operations took no
                # time: the bound Spark and Delta set on this machine, whatever the connector does.
                ceiling = changes / run.delta_seconds
                print(
                    f"    of which Delta operations (DataFrames and commits) {run.delta_seconds:.2f} s: "
                    f"ceiling {ceiling:,.0f} events/s, {ceiling / base:.2f}x jsonl"
                )
                if run.commits:
                    print(
                        f"    Delta time per table commit: {run.delta_seconds / run.commits * 1000:,.0f} ms"
                    )
        base_latency = statistics.median(latencies[runs[0].name])
        for run in runs[1:]:
            extra = statistics.median(latencies[run.name]) - base_latency
            print(
                f"  fixed cost of a commit ({run.name}): {extra * 1000:,.0f} ms per batch (median of {args.single})"
            )
        print(f"  peak RSS: Python {peak_rss_mb():,.0f} MB, Spark JVM {jvm_peak_rss_mb():,.0f} MB")
        for run in runs[1:]:
            out = io.StringIO()
            code = run_verify(run.config, [], out)
            print(f"  verify {run.name}: {'equal' if code == 0 else 'DIFFERENT'}")
            if code:
                print(out.getvalue())


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def jvm_peak_rss_mb() -> float:
    """VmHWM of this process's child JVMs (Spark's driver JVM)."""
    total = 0.0
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[1] != me:
                continue
            for line in (stat.parent / "status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) / 1024
        except (OSError, IndexError, ValueError):
            continue
    return total


def run_baseline(revision: str, rows: int, warmup: int, workload: str) -> None:
    """bench/spark.py of ``revision`` (its own sink), in a subprocess, printed before this run's."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(root), "archive", revision], check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        if workload != "bulk":
            # An older revision may not have this workload: its connector and sink run under this
            # revision's benchmark code.
            for name in ("spark.py", "oltp.py"):
                (Path(tmp) / "bench" / name).write_bytes((root / "bench" / name).read_bytes())
        print(f"== baseline: bench/spark.py at {revision}")
        sys.stdout.flush()
        subprocess.run(
            [
                sys.executable,
                str(Path(tmp) / "bench" / "spark.py"),
                "--rows",
                str(rows),
                "--warmup",
                str(warmup),
                *(["--workload", workload] if workload != "bulk" else []),
            ],
            env={**os.environ, "PYTHONPATH": tmp},
            cwd=tmp,
            check=False,
        )
        print("== this revision")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
