"""Files after many commits (issue 40): one table, ``--commits`` small batches through the in-process
Delta sink at its default maintenance settings, then its data files and the time of a full read
against the same table freshly compacted, in the same run.

Starts a throwaway server with one table of ``--rows`` rows and a connector with ``sink.type=spark``
(local[2], every ``sink.spark.*`` at its default: ``sink.spark.optimize.interval.commits=10``, Delta's
own checkpoints). Then ``--commits`` times: one transaction of ``--changes`` row changes (inserts,
updates, deletes) and a catch-up, so every round is one batch, one commit to the changelog and one to
the current state. Prints, for both Delta tables:

* the sink's commits, the OPTIMIZE commits, the live data files at the end (``numFiles``) and the
  most seen at any sampled round;
* the log a reader replays: the last checkpoint's version, its ``add`` and ``remove`` actions
  (tombstones), the JSON commits after it, and the data files a full read opens;
* a full read by plain Spark and by delta-rs (``deltalake``; its table open, the log replay, timed
  apart from its read of the data files), ``--reads`` times, each time in a random order with the
  same table copied and compacted (Spark's ``OPTIMIZE``) in this run: medians and their ratio. The
  copy is a file copy, so it holds the table's log and adds one OPTIMIZE commit; where that
  OPTIMIZE committed nothing (the table was already compacted), the copy is the table byte for
  byte and the bench says so: the ratio then compares a table with itself. A third target, the
  table's rows written once by delta-rs as a new table (one file, one commit, no checkpoint, no
  tombstones), shows what the history costs: the ratio against it is not the issue's measure;
* the peak RSS of the Python process and of Spark's JVM.

    .venv/bin/python bench/delta_files.py [--commits 500] [--rows 10000] [--changes 20] [--reads 15]
        [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this directory comes first on sys.path, where bench/snapshot.py and
# bench/kafka.py would shadow the snapshot package and kafka-python.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import pyarrow.parquet as pq  # noqa: E402
from delta.tables import DeltaTable  # noqa: E402
from deltalake import DeltaTable as RustDeltaTable  # noqa: E402
from deltalake import write_deltalake  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from bench.spark import jvm_peak_rss_mb, peak_rss_mb  # noqa: E402
from connector.config import ConnectorConfig  # noqa: E402
from connector.engine import Engine  # noqa: E402
from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer  # noqa: E402
from sink.spark import SparkSink  # noqa: E402

TABLE = (
    "CREATE TABLE bench.items (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, qty INT NOT NULL, "
    "price DECIMAL(10,2) NOT NULL, updated DATETIME(3) NOT NULL)"
)
SAMPLE_EVERY = 25  # rounds between two looks at the files


class Writer:
    """Small transactions on bench.items: about 40% inserts, 45% updates, 15% deletes."""

    def __init__(self, rows: int, seed: int = 500) -> None:
        self.rng = random.Random(seed)
        self.keys = list(range(1, rows + 1))
        self.next_key = rows + 1

    def load(self, server: LocalMySQLServer) -> None:
        with server.connect("bench") as conn, conn.cursor() as cur:
            for start in range(0, len(self.keys), 1000):
                cur.executemany(
                    "INSERT INTO items VALUES (%s, %s, %s, %s, NOW(3))",
                    [
                        (k, f"item-{k}", k % 100, f"{k % 1000}.{k % 100:02d}")
                        for k in self.keys[start : start + 1000]
                    ],
                )

    def transaction(self, server: LocalMySQLServer, changes: int) -> None:
        rng = self.rng
        with server.connect("bench") as conn, conn.cursor() as cur:
            cur.execute("BEGIN")
            for _ in range(changes):
                roll = rng.random()
                if roll < 0.40:
                    key, self.next_key = self.next_key, self.next_key + 1
                    cur.execute(
                        "INSERT INTO items VALUES (%s, %s, %s, %s, NOW(3))", (key, f"new-{key}", 1, "1.00")
                    )
                    self.keys.append(key)
                elif roll < 0.85:
                    cur.execute(
                        "UPDATE items SET qty = qty + 1, updated = NOW(3) WHERE id = %s",
                        (rng.choice(self.keys),),
                    )
                else:
                    key = self.keys.pop(rng.randrange(len(self.keys)))
                    cur.execute("DELETE FROM items WHERE id = %s", (key,))
            cur.execute("COMMIT")


def num_files(spark: SparkSession, path: str) -> int:
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{path}`").first()
    return int(detail["numFiles"]) if detail is not None else -1


def operations(spark: SparkSession, path: str) -> list[str]:
    return [r["operation"] for r in spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()]


def spark_read(spark: SparkSession, path: str) -> float:
    started = time.perf_counter()
    spark.read.format("delta").load(path).write.format("noop").mode("overwrite").save()
    return time.perf_counter() - started


def rust_open_read(path: str) -> tuple[float, float]:
    """delta-rs: seconds to open the table (read the checkpoint, replay the JSON after it) and then to
    read its data files."""
    started = time.perf_counter()
    table = RustDeltaTable(path)
    opened = time.perf_counter()
    table.to_pyarrow_table()
    return opened - started, time.perf_counter() - opened


def log_anatomy(path: str) -> str:
    """What a reader of ``path`` replays: the last checkpoint (its adds and removes) and the JSON
    commits after it, and the data files a full read opens."""
    log_dir = Path(path) / "_delta_log"
    table = RustDeltaTable(path)
    last = log_dir / "_last_checkpoint"
    checkpoint = json.loads(last.read_text())["version"] if last.exists() else -1
    adds = removes = 0
    for part in sorted(log_dir.glob(f"{checkpoint:020d}.checkpoint*.parquet")):
        actions = pq.read_table(part, columns=["add", "remove"])
        adds += len(actions) - actions.column("add").null_count
        removes += len(actions) - actions.column("remove").null_count
    tail = [f for f in log_dir.glob("*.json") if checkpoint < int(f.name.split(".")[0]) <= table.version()]
    return (
        f"version {table.version()}, checkpoint at {checkpoint} ({adds} add, {removes} remove actions), "
        f"{len(tail)} JSON commits after it, {len(table.file_uris())} data files read, "
        f"{len(list(log_dir.glob('*.json')))} JSON commits kept"
    )


def compare_reads(spark: SparkSession, targets: list[str], reads: int) -> dict[str, list[float]]:
    """Median seconds of each target, by reader and delta-rs step; each round reads the targets in
    a random order."""
    names = ("spark", "delta-rs open", "delta-rs read", "delta-rs total")
    times: dict[str, list[list[float]]] = {name: [[] for _ in targets] for name in names}
    rng = random.Random(40)
    for _ in range(reads):
        for reader in ("spark", "delta-rs"):
            order = list(enumerate(targets))
            rng.shuffle(order)
            for i, target in order:
                if reader == "spark":
                    times["spark"][i].append(spark_read(spark, target))
                    continue
                opened, read = rust_open_read(target)
                times["delta-rs open"][i].append(opened)
                times["delta-rs read"][i].append(read)
                times["delta-rs total"][i].append(opened + read)
    return {name: [statistics.median(t) for t in per_target] for name, per_target in times.items()}


def compacted_copy(spark: SparkSession, path: str, copy: str) -> bool:
    """``path`` copied to ``copy`` and compacted there by Spark's OPTIMIZE; False where the OPTIMIZE
    committed nothing (the copy is then the table byte for byte)."""
    shutil.copytree(path, copy)
    before = RustDeltaTable(copy).version()
    DeltaTable.forPath(spark, copy).optimize().executeCompaction()
    return RustDeltaTable(copy).version() > before


def rewritten(path: str, fresh: str) -> None:
    """The table's rows written once as a new table at ``fresh``: one file, one commit, no history."""
    write_deltalake(fresh, RustDeltaTable(path).to_pyarrow_table())


def report(spark: SparkSession, name: str, path: str, tmp: Path, most: int, reads: int) -> None:
    copy = str(tmp / "compacted" / Path(path).name)
    fresh = str(tmp / "rewritten" / Path(path).name)
    ops = operations(spark, path)
    optimized = compacted_copy(spark, path, copy)
    rewritten(path, fresh)
    print(
        f"  {name}: {len(ops)} versions ({ops.count('OPTIMIZE')} OPTIMIZE), data files "
        f"{num_files(spark, path)} at the end, at most {most} at the sampled rounds "
        f"(every {SAMPLE_EVERY}); compacted copy {num_files(spark, copy)}"
    )
    if not optimized:
        print("    the copy's OPTIMIZE committed nothing: the copy is the table byte for byte (same files")
        print("    and log), so the ratios below compare the table with itself")
    print(f"    log of the table:     {log_anatomy(path)}")
    print(f"    log of the copy:      {log_anatomy(copy)}")
    print(f"    log of the rewritten: {log_anatomy(fresh)}")
    medians = compare_reads(spark, [path, copy, fresh], reads)
    print(f"    full reads, medians of {reads} in random order: the table, its compacted copy, its rows")
    print("    rewritten once (no history)")
    for reader, (table_s, copy_s, fresh_s) in medians.items():
        print(
            f"    {reader:<14}: {table_s * 1000:6.1f} ms, copy {copy_s * 1000:6.1f} ms "
            f"({table_s / copy_s:.2f}x), rewritten {fresh_s * 1000:6.1f} ms ({table_s / fresh_s:.2f}x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--commits", type=int, default=500, help="batches (one commit per Delta table each)")
    parser.add_argument("--rows", type=int, default=10_000, help="rows of the table before the commits")
    parser.add_argument("--changes", type=int, default=20, help="row changes per batch")
    parser.add_argument("--reads", type=int, default=15, help="full reads of each table and its copy")
    parser.add_argument("--keep", help="copy the warehouse and the compacted copies here at the end")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    with LocalMySQLServer(options=options) as server, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server.execute("CREATE DATABASE bench", TABLE)
        writer = Writer(args.rows)
        writer.load(server)
        props = server.connector_properties(
            **{
                "topic.prefix": "bench",
                "database.include.list": "bench",
                "data.dir": str(tmp / "data"),
                "skipped.operations": "none",
                "sink.type": "spark",
                "sink.spark.master": "local[2]",
                "sink.spark.warehouse": str(tmp / "wh"),
            }
        )
        engine = Engine(ConnectorConfig.from_mapping(props))
        try:
            engine.catch_up(timeout=1800)  # the snapshot
            sink = next(s for s in engine.sinks if isinstance(s, SparkSink))
            spark = sink.spark
            paths = {
                "current state": str(tmp / "wh" / "bench" / "items"),
                "changelog": str(tmp / "wh" / "bench" / "items_changelog"),
            }
            most = dict.fromkeys(paths, 0)
            started = time.perf_counter()
            for i in range(1, args.commits + 1):
                writer.transaction(server, args.changes)
                engine.catch_up(timeout=600)
                if i % SAMPLE_EVERY == 0 or i == args.commits:
                    for name, path in paths.items():
                        most[name] = max(most[name], num_files(spark, path))
            elapsed = time.perf_counter() - started
            print(
                f"one table of {args.rows} rows, then {args.commits} batches of {args.changes} row changes "
                f"(default maintenance settings): {elapsed:.0f} s, {sink.commits_written} sink commits, "
                f"{sink.tables_compacted} compactions"
            )
            for name, path in paths.items():
                report(spark, name, path, tmp, most[name], args.reads)
            if args.keep:
                shutil.copytree(tmp / "wh", Path(args.keep) / "wh")
                shutil.copytree(tmp / "compacted", Path(args.keep) / "compacted")
                shutil.copytree(tmp / "rewritten", Path(args.keep) / "rewritten")
            print(f"  peak RSS: Python {peak_rss_mb():,.0f} MB, Spark JVM {jvm_peak_rss_mb():,.0f} MB")
        finally:
            engine.close()


if __name__ == "__main__":
    main()
