"""``spark-apply`` throughput: connector -> Kafka -> Spark job -> Delta against the in-process Delta
sink, on the same binlog range, in the same run.

Starts a throwaway server and a real Kafka broker (Kafka's own jars, see
``connector/testing/local_kafka.py``). Two connectors read the same server from the same binlog
point: one with the in-process Spark sink (local[2]), one writing to Kafka. The ``mysql-cdc
spark-apply`` job (its own process and Spark driver, local[2]) applies the Kafka topics. A warm-up
workload goes through all of them first (JVM and plan warm-up is a one-off cost); then N inserts,
N/2 updates and N/4 deletes are written and timed, one after another so they do not share the CPU:

* in-process: the Spark sink's warm catch-up over the range;
* Kafka: the Kafka connector's catch-up (the topics then hold the range);
* job: the job is SIGSTOPped (warm, reading nothing) while the range is written and the Kafka
  connector runs, then resumed: its warm catch-up until its checkpoint records a finished
  micro-batch at the end of every topic.

``--rounds`` repeats that, alternating whether the in-process sink or the Kafka route goes first.
Prints events/s of each against the in-process sink (medians), the Delta time per table commit of
both (the fixed cost a batch pays for each table it touches), and the peak RSS of both (Python and
Spark's JVM). Data files after 500 commits: ``bench/delta_files.py`` (both write through
``SparkSink``, with the same maintenance).

``--baseline-job REV`` also runs the job of git revision REV (a checkout of its own, its own
process, warehouse and checkpoint) and times it in the same rounds, paused while the others run.

    .venv/bin/python bench/spark_apply.py --workload oltp [--rows 40000] [--rounds 2] [--max-offsets 50000]
        [--baseline-job main]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a script, this directory comes first on sys.path, where bench/snapshot.py and
# bench/kafka.py would shadow the snapshot package and kafka-python.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from kafka import KafkaConsumer, TopicPartition  # noqa: E402

from bench.oltp import TABLES, OltpWriter, create_tables  # noqa: E402
from bench.spark import jvm_peak_rss_mb, peak_rss_mb  # noqa: E402
from connector.config import ConnectorConfig  # noqa: E402
from connector.engine import Engine  # noqa: E402
from connector.testing.local_kafka import LocalKafkaCluster  # noqa: E402
from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer  # noqa: E402
from sink.spark import SparkSink  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
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
                (i, f"item-{i}", i % 100, f"{i % 1000}.{i % 100:02d}", "2024-05-01 12:00:00.123", None)
                for i in range(start, min(last, start + 500))
            ]
            cur.executemany("INSERT INTO items VALUES (%s, %s, %s, %s, %s, %s)", values)
        for start in range(first, first + rows // 2, 500):
            cur.execute("UPDATE items SET qty = qty + 1 WHERE id >= %s AND id < %s", (start, start + 500))
        cur.execute("DELETE FROM items WHERE id >= %s AND id < %s", (first, first + rows // 4))
    return rows + rows // 2 + rows // 4


def engine(server: LocalMySQLServer, tmp: Path, name: str, server_id: int, **props: str) -> Engine:
    config = ConnectorConfig.from_mapping(
        server.connector_properties(
            **{
                "topic.prefix": "bench",
                "database.include.list": "bench",
                "data.dir": str(tmp / name),
                "database.server.id": str(server_id),
                "skipped.operations": "none",
                **props,
            }
        )
    )
    return Engine(config)


def timed(step: object) -> float:
    started = time.perf_counter()
    step()  # type: ignore[operator]
    return time.perf_counter() - started


class Job:
    """One ``mysql-cdc spark-apply`` process: this tree's, or (``repo``) another checkout's."""

    def __init__(
        self, bootstrap: str, tmp: Path, max_offsets: int, repo: Path = REPO, name: str = "job"
    ) -> None:
        self.bootstrap = bootstrap
        tmp = tmp / name
        tmp.mkdir()
        self.checkpoint = tmp / "checkpoint"
        config = tmp / "apply.properties"
        props = {
            "kafka.bootstrap.servers": bootstrap,
            "topics.regex": r"bench(\..*)?",
            "sink.spark.warehouse": str(tmp / "job-warehouse"),
            "sink.spark.master": "local[2]",
            "spark.apply.checkpoint.location": str(self.checkpoint),
            "spark.apply.trigger.interval.ms": "500",
            "spark.apply.max.offsets.per.trigger": str(max_offsets),
            "spark.apply.kafka.metadata.max.age.ms": "2000",
            "sink.spark.conf.spark.sql.shuffle.partitions": "2",
        }
        config.write_text("".join(f"{k}={_escaped(v)}\n" for k, v in props.items()))
        self.log = tmp / "apply.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "connector.cli", "spark-apply", "--config", str(config)],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=repo,
                env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(repo)},
                start_new_session=True,
            )

    def done_offsets(self) -> dict[tuple[str, int], int]:
        commits = self.checkpoint / "commits"
        done = sorted(int(p.name) for p in commits.iterdir() if p.name.isdigit()) if commits.is_dir() else []
        if not done:
            return {}
        offsets = json.loads((self.checkpoint / "offsets" / str(done[-1])).read_text().splitlines()[-1])
        return {(t, int(p)): int(o) for t, parts in offsets.items() for p, o in parts.items()}

    def wait_caught_up(self, timeout: float = 3600) -> None:
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None)
        try:
            topics = [t for t in consumer.topics() if t == "bench" or t.startswith("bench.")]
            partitions = [
                TopicPartition(t, p) for t in topics for p in consumer.partitions_for_topic(t) or ()
            ]
            ends = {(tp.topic, tp.partition): o for tp, o in consumer.end_offsets(partitions).items()}
        finally:
            consumer.close()
        deadline = time.monotonic() + timeout
        while True:
            done = self.done_offsets()
            if all(done.get(tp, -1) >= end for tp, end in ends.items() if end > 0):
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"the job exited:\n{self.log.read_text()[-4000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError("the job did not catch up")
            time.sleep(0.02)  # (the in-process catch-up returns the moment it is done)

    def pause(self) -> None:
        """SIGSTOP the job (its Python driver and Spark's JVM): it stays warm and reads nothing."""
        os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.killpg(self.proc.pid, signal.SIGCONT)

    def delta_totals(self) -> tuple[int, float]:
        """The job's Delta commits and seconds in Delta operations so far (its micro-batch log)."""
        found = re.findall(r"so far: (\d+) Delta commits, ([\d.]+) s in Delta", self.log.read_text())
        return (int(found[-1][0]), float(found[-1][1])) if found else (0, 0.0)

    def peak_rss_mb(self) -> tuple[float, float]:
        """VmHWM of the job's Python driver and of its Spark JVM."""
        return _vm_hwm_mb(self.proc.pid), sum(_vm_hwm_mb(pid) for pid in _spark_children(self.proc.pid))

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def _vm_hwm_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _spark_children(parent: int) -> list[int]:
    """The Spark JVMs started by process ``parent`` (not the Kafka broker or mysqld)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) != parent:
                continue
            if b"org.apache.spark" in (stat.parent / "cmdline").read_bytes():
                found.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _escaped(value: str) -> str:
    """A value as a .properties file spells it (a backslash starts an escape)."""
    return value.replace("\\", "\\\\")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--warmup", type=int, default=2_000)
    parser.add_argument(
        "--workload",
        choices=("bulk", "oltp"),
        default="bulk",
        help="oltp: bench/oltp.py's 40 tables and small transactions (--rows changes)",
    )
    parser.add_argument("--tables", type=int, default=TABLES, help="oltp: the number of tables")
    parser.add_argument("--rounds", type=int, default=1, help="timed rounds (alternating order)")
    parser.add_argument("--max-offsets", type=int, default=50_000, help="spark.apply.max.offsets.per.trigger")
    parser.add_argument(
        "--job-log",
        type=Path,
        help="keep the job's log (its micro-batch phases) here, the baseline job's in <file>.base",
    )
    parser.add_argument(
        "--baseline-job",
        metavar="REV",
        help="also time the job of git revision REV (its own checkout and process) in the same rounds",
    )
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    kafka = LocalKafkaCluster(1)
    with LocalMySQLServer(options=options) as server, tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        baseline = None
        if args.baseline_job is not None:
            baseline = tmp / "baseline-tree"
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(REPO),
                    "worktree",
                    "add",
                    "--detach",
                    "--quiet",
                    str(baseline),
                    args.baseline_job,
                ],
                check=True,
            )
        kafka.start()
        if args.workload == "oltp":
            create_tables(server, "bench", args.tables)
            oltp = OltpWriter("bench", args.tables)

            def write(first: int, rows: int) -> int:
                return oltp.write(server, rows)
        else:
            server.execute("CREATE DATABASE bench", TABLE)

            def write(first: int, rows: int) -> int:
                return write_workload(server, first, rows)

        in_process = engine(
            server,
            tmp,
            "spark",
            5402,
            **{
                "sink.type": "spark",
                "sink.spark.master": "local[2]",
                "sink.spark.warehouse": str(tmp / "wh"),
            },
        )
        to_kafka = engine(
            server,
            tmp,
            "kafka",
            5403,
            **{"sink.type": "kafka", "sink.kafka.bootstrap.servers": kafka.bootstrap},
        )
        jobs: dict[str, Job] = {}
        times: dict[str, list[float]] = {"in-process": [], "kafka": []}
        costs: dict[str, list[Any]] = {"in-process": [0, 0.0]}  # Delta commits, seconds in the rounds
        rss: dict[str, tuple[float, float]] = {}
        changes = 0
        try:
            for run in (in_process, to_kafka):
                run.catch_up(timeout=600)  # positioned at the current binlog end
            write(10_000_000, args.warmup)
            for run in (in_process, to_kafka):
                run.catch_up(timeout=600)
            jobs["job"] = Job(kafka.bootstrap, tmp, args.max_offsets)
            if baseline is not None:
                jobs[f"job at {args.baseline_job}"] = Job(
                    kafka.bootstrap, tmp, args.max_offsets, baseline, "base"
                )
            for job in jobs.values():
                job.wait_caught_up()
            sink = next(s for s in in_process.sinks if isinstance(s, SparkSink))
            for round_no in range(args.rounds):
                for job in jobs.values():
                    job.pause()  # warm, and reads nothing while the Kafka connector writes the range
                changes = write(round_no * 1_000_000, args.rows)
                run_round(round_no, in_process, to_kafka, sink, jobs, times, costs)
            rss["in-process"] = (peak_rss_mb(), jvm_peak_rss_mb())
            for name, job in jobs.items():
                rss[name] = job.peak_rss_mb()
        finally:
            for job in jobs.values():
                job.resume()
                job.stop()
            if args.job_log is not None:
                for name, job in jobs.items():  # the baseline's next to it, as <job-log>.base
                    shutil.copyfile(job.log, args.job_log if name == "job" else f"{args.job_log}.base")
            in_process.close()
            to_kafka.close()
            kafka.destroy()
            if baseline is not None:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(baseline)], check=False
                )
    report(args, changes, times, costs, rss)


def run_round(
    round_no: int,
    in_process: Engine,
    to_kafka: Engine,
    sink: SparkSink,
    jobs: dict[str, Job],
    times: dict[str, list[float]],
    costs: dict[str, list[Any]],
) -> None:
    """One timed round: the in-process sink's catch-up, the Kafka connector's, then each job's
    (paused meanwhile); every other round in the reverse order, so none always gets the quieter
    turn."""

    def in_process_round() -> None:
        before = sink.commits_written, sink.delta_seconds
        times["in-process"].append(timed(lambda: in_process.catch_up(timeout=3600)))
        costs["in-process"][0] += sink.commits_written - before[0]
        costs["in-process"][1] += sink.delta_seconds - before[1]

    def job_round(name: str, job: Job) -> None:
        before = job.delta_totals()
        job.resume()
        times.setdefault(name, []).append(timed(job.wait_caught_up))
        after = job.delta_totals()
        total = costs.setdefault(name, [0, 0.0])
        total[0] += after[0] - before[0]
        total[1] += after[1] - before[1]

    def kafka_round() -> None:
        times["kafka"].append(timed(lambda: to_kafka.catch_up(timeout=3600)))

    job_steps: list[Callable[[], None]] = [
        functools.partial(job_round, name, job) for name, job in jobs.items()
    ]
    steps: list[Callable[[], None]]
    if round_no % 2 == 0:
        steps = [in_process_round, kafka_round, *job_steps]
    else:
        steps = [kafka_round, *reversed(job_steps), in_process_round]
    for step in steps:
        step()


def report(
    args: argparse.Namespace,
    changes: int,
    times: dict[str, list[float]],
    costs: dict[str, list[Any]],
    rss: dict[str, tuple[float, float]],
) -> None:
    what = (
        f"{changes} row changes in transactions of 1-4 statements over {args.tables} tables"
        if args.workload == "oltp"
        else f"{args.rows} inserts, {args.rows // 2} updates, {args.rows // 4} deletes = {changes} change events"
    )
    print(
        f"workload: {what} (after a {args.warmup}-change warm-up), {args.rounds} round(s), medians; "
        f"spark.apply.max.offsets.per.trigger={args.max_offsets}"
    )
    median = {name: statistics.median(values) for name, values in times.items()}
    base = changes / median["in-process"]
    jobs = [name for name in times if name.startswith("job")]
    rows = [
        ("in-process Delta sink, warm catch-up", median["in-process"]),
        ("connector -> Kafka", median["kafka"]),
        *((f"spark-apply {name}, warm catch-up", median[name]) for name in jobs),
        ("Kafka + job, one after the other", median["kafka"] + median["job"]),
    ]
    for name, seconds in rows:
        rate = changes / seconds
        print(f"  {name:<44} {seconds:8.2f} s  {rate:10,.0f} events/s  {rate / base:6.2f}x in-process")
    for name in jobs:
        ratios = (f"{b / a:.2f}x" for a, b in zip(times[name], times["in-process"], strict=True))
        print(f"  {name} / in-process, per round: {', '.join(ratios)}")
    for name, (commits, seconds) in costs.items():
        if commits:
            print(
                f"  {name}: {commits} Delta commits over the rounds, {seconds:.1f} s in Delta operations: "
                f"{seconds / commits * 1000:,.0f} ms per table commit (the fixed cost a batch pays per table)"
            )
    for name, (python, jvm) in rss.items():
        print(f"  peak RSS {name}: Python {python:,.0f} MB, Spark JVM {jvm:,.0f} MB")


if __name__ == "__main__":
    main()
