"""Streaming throughput: ``mysql-cdc run`` against a bare mysql-replication loop and, when
installed, mysql-event-stream, over the same binlog range, on one of two workloads.

``--workload bulk`` (the default) is issue 31's table and load, described next. ``--workload oltp``
is issue 41's: the 40 tables of ``bench/oltp.py`` and ``--rows`` row changes (default 40,000) in
transactions of 1-4 single-row statements (about 40% inserts, 45% updates, 15% deletes), so that
every change brings its own GTID, BEGIN, TABLE_MAP, rows event and XID.

The table has eleven column types (INT key, BIGINT, VARCHAR(64), TEXT, DECIMAL(12,2), DATETIME(3),
DATE, TIMESTAMP(6), ENUM, JSON, TINYINT); the load is ``--rows`` inserts (default 60,000), then
5/12 as many updates and 1/4 as many deletes (25,000 and 15,000), each statement changing 1,000
rows. Each of ``--repeat`` rounds (default 3) runs, one after the other, so that a drift in the
machine's speed hits every side alike:

  (1) the bare loop: mysql-replication reading the range and touching every value of every row
      image (before and after of updates), nothing else, in a Python process of its own with
      default settings (``bench.readers.bare_loop_process``);
  (5) mysql-event-stream (a C++ decoder with a Python binding) doing the same, raw values without
      Debezium's envelope: the native reference, when the package is installed;
  (2-4) the connector: ``mysql-cdc run`` as a subprocess with default settings, resuming from an
      offset stored before the workload (``mysql-cdc snapshot`` of the empty table), into the jsonl
      sink. Its output file is polled: (4) the time to the first line from the process's start,
      (2) the rate from the first line to the last (the records of that first write are left out:
      they were made before it), (3) the rate from the process's start to the last line. Then it is
      stopped with SIGTERM, and its peak RSS and CPU time come from wait4.

Medians over the rounds are printed, with the connector's rates as ratios of the bare loop's. The
output is checked: every insert, update and delete once, and a tombstone per delete.

    .venv/bin/python -m bench.streaming [--workload bulk|oltp] [--rows N] [--repeat 3] [--metrics]
        [--baseline REV]

``--baseline REV`` also runs the same workload (this tree's ``bench/``) with the connector of git
revision REV, on its own throwaway server, and prints its figures and the ratios of the two.

``--metrics`` also streams the range in this process with Debezium's metrics on (metrics.port
served, scraped every 0.2 s) and off (no metrics hooks), alternating off/on/off/on over the same
range, and prints the best time of each and the cost of metrics in percent.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bench.baseline import figures_at, print_json, with_daemon_allocator
from bench.connector_run import BenchRunError, RunTimes, connector_environment, prepare, timed_run
from bench.oltp import OltpWriter, create_tables
from bench.readers import bare_loop_process, native_available, native_loop
from bench.workload import CHANGES_TABLE, changes_load, write_changes_workload
from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import (
    DEFAULT_SERVER_OPTIONS,
    LocalMySQLServer,
    MySQLServerHandle,
    free_port,
)
from sink.jsonl import JsonlSink

# The op field of each kind of change in a record's payload, as the jsonl sink writes it.
_OPS = {"inserts": b'"op":"c"', "updates": b'"op":"u"', "deletes": b'"op":"d"'}
_TOMBSTONE = b'"value":null'


@dataclass
class Rounds:
    """The seconds of each side in each round (filled as the rounds run)."""

    bare_s: list[float] = field(default_factory=list)
    bare_cpu_s: list[float] = field(default_factory=list)
    native_s: list[float] = field(default_factory=list)
    import_s: list[float] = field(default_factory=list)
    runs: list[RunTimes] = field(default_factory=list)


def timed(read: Callable[[], int], changes: int, name: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of ``read``, which must return ``changes``."""
    wall, cpu = time.perf_counter(), time.process_time()
    got = read()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if got != changes:
        raise BenchRunError(f"{name} read {got} row changes over the range, {changes} written")
    return wall, cpu


def check_output(out: Path, expected: dict[str, int]) -> None:
    """Every change of the workload once in ``out``, and one tombstone per delete (the default
    tombstones.on.delete); streamed, as the output can be larger than memory."""
    counts: Counter[str] = Counter()
    with out.open("rb") as lines:
        for line in lines:
            kinds = [kind for kind, op in _OPS.items() if op in line]
            counts.update(kinds or (["tombstones"] if _TOMBSTONE in line else ["other"]))
    wanted = {**expected, "tombstones": expected["deletes"]}
    if dict(counts) != wanted:
        raise BenchRunError(f"{out} holds {dict(counts)}, the workload wrote {wanted}")


def stream_rate(run: RunTimes, changes: int, lines: int) -> float:
    """Row changes/s from the first line to the last: the changes whose lines came after the
    first write, over that time."""
    if run.lines_at_first == lines:
        raise BenchRunError(
            f"all {lines} lines came in the connector's first write: no rate to measure; raise --rows"
        )
    return changes * (lines - run.lines_at_first) / lines / (run.last_line_s - run.first_line_s)


def metrics_engine(server: LocalMySQLServer, tmp: str, index: int, metrics: bool) -> tuple[Engine, Path, int]:
    """An engine prepared at the current end of the binlog; ``metrics``: served on a port, else
    without metrics hooks."""
    port = free_port() if metrics else 0
    engine, out = prepared_engine(server, tmp, f"m{index}", 6000 + index, **{"metrics.port": str(port)})
    if not metrics:  # the hooks' cost is what is measured: take them out
        assert engine.streaming is not None
        engine.streaming.dispatcher.metrics = None
        engine.streaming.metrics = None
        engine.delivery.metrics = None
    return engine, out, port


def timed_catch_up(engine: Engine, port: int) -> float:
    stop = threading.Event()

    def scraper() -> None:
        while not stop.wait(0.2):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                response.read()

    thread = threading.Thread(target=scraper, daemon=True)
    if port:
        thread.start()
    t0 = time.perf_counter()
    engine.catch_up(timeout=3600)
    elapsed = time.perf_counter() - t0
    stop.set()
    engine.close()
    return elapsed


def prepared_engine(
    server: LocalMySQLServer, tmp: str, name: str, server_id: int, **extra: str
) -> tuple[Engine, Path]:
    """An engine with its own offsets, history and output file, prepared at the current end of the
    binlog (schema read; its stream sits at the start of the range written next)."""
    config = ConnectorConfig.from_mapping(
        server.connector_properties(
            **{
                "topic.prefix": "bench",
                "database.include.list": "bench",
                "data.dir": f"{tmp}/{name}",
                "database.server.id": str(server_id),
                **extra,
            }
        )
    )
    out = Path(tmp) / f"{name}.jsonl"
    engine = Engine(config, sinks=[JsonlSink(out)])
    engine.catch_up()
    return engine, out


def run_rounds(
    server: MySQLServerHandle,
    tmp: Path,
    state: Path,
    span: tuple[tuple[str, int], tuple[str, int]],
    load: dict[str, int],
    repeat: int,
    native: bool,
) -> Rounds:
    """``repeat`` rounds of the bare loop, mysql-event-stream (when ``native``) and the connector
    over ``span``, which holds ``load`` (row changes by kind)."""
    start, end = span
    changes = sum(load.values())
    lines = changes + load["deletes"]  # a tombstone follows each delete
    rounds = Rounds()
    for index in range(repeat):
        read, wall, cpu = bare_loop_process(server, start, end, 9100 + index)
        if read != changes:
            raise BenchRunError(f"the bare loop read {read} row changes over the range, {changes} written")
        rounds.bare_s.append(wall)
        rounds.bare_cpu_s.append(cpu)
        if native:
            wall, _ = timed(
                partial(native_loop, server, start, changes, 9200 + index), changes, "mysql-event-stream"
            )
            rounds.native_s.append(wall)
        rounds.import_s.append(import_seconds())
        workdir = tmp / f"round{index}"
        workdir.mkdir()
        rounds.runs.append(timed_run(server, state, workdir, 9300 + index, lines))
        check_output(workdir / "events.jsonl", load)
        (workdir / "events.jsonl").unlink()
    return rounds


def import_seconds() -> float:
    """Wall seconds of a bare ``python -c "import pymysqlreplication"``, started as the connector
    is: the yardstick of the time to the first event (issue 41: within 2× of it)."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import pymysqlreplication"], env=connector_environment(os.environ), check=True
    )
    return time.perf_counter() - started


def figures(rounds: Rounds, changes: int, deletes: int) -> dict[str, Any]:
    lines = changes + deletes
    median = statistics.median
    bare = changes / median(rounds.bare_s)
    stream = median(stream_rate(run, changes, lines) for run in rounds.runs)
    from_start = median(changes / run.last_line_s for run in rounds.runs)
    return {
        "changes": changes,
        "bare": bare,
        "native": changes / median(rounds.native_s) if rounds.native_s else None,
        "connector": stream,
        "connector_from_start": from_start,
        "ratio": stream / bare,
        "ratio_from_start": from_start / bare,
        "first_event_s": median(run.first_line_s for run in rounds.runs),
        "import_s": median(rounds.import_s),
        "peak_rss_mb": max(run.peak_rss_mb for run in rounds.runs),
        # CPU per change is steadier than wall time on a shared machine.
        "bare_cpu_us": 1e6 * median(rounds.bare_cpu_s) / changes,
        "connector_cpu_us": 1e6 * median(run.cpu_s for run in rounds.runs) / changes,
        "watch_cpu_us": 1e6 * median(run.watch_cpu_s for run in rounds.runs) / changes,
    }


def report(fig: dict[str, Any], rounds: Rounds, native_version: str | None) -> None:
    bare = fig["bare"]
    runs = rounds.runs
    print(f"row changes in range: {fig['changes']:,}; {len(runs)} alternating rounds, medians")
    print("| over the same binlog range | row changes/s | vs bare loop |")
    print("|---|---|---|")
    if fig["native"] is not None:
        print(
            f"| mysql-event-stream {native_version} (raw values, no envelope) | {fig['native']:,.0f} "
            f"| {fig['native'] / bare:.2f}× |"
        )
    print(f"| bare mysql-replication loop | {bare:,.0f} | 1.00 |")
    print(f"| connector → jsonl, first event to last | {fig['connector']:,.0f} | **{fig['ratio']:.2f}** |")
    print(
        f"| connector → jsonl, from process start | {fig['connector_from_start']:,.0f} "
        f"| **{fig['ratio_from_start']:.2f}** |"
    )
    print(
        f"time to the first event: {fig['first_event_s']:.2f} s "
        f"(rounds: {' '.join(f'{run.first_line_s:.2f}' for run in runs)}; "
        f"lines in the first write: {' '.join(str(run.lines_at_first) for run in runs)})"
    )
    print(
        f"a bare python -c 'import pymysqlreplication': {fig['import_s']:.2f} s; the first event came "
        f"after {fig['first_event_s'] / fig['import_s']:.2f}× that"
    )
    print(
        f"connector from process start to the last event: {' '.join(f'{run.last_line_s:.2f}' for run in runs)} s"
    )
    print(f"bare loop: {' '.join(f'{s:.2f}' for s in rounds.bare_s)} s")
    print(f"peak RSS of the connector: {fig['peak_rss_mb']:.0f} MB (max of rounds)")
    print(
        f"CPU per row change: connector {fig['connector_cpu_us']:.1f} µs (whole process, start-up included), "
        f"bare loop {fig['bare_cpu_us']:.1f} µs: {fig['bare_cpu_us'] / fig['connector_cpu_us']:.2f}× by CPU time; "
        f"watching the output took {fig['watch_cpu_us']:.1f} µs of this process's CPU"
    )


def report_baseline(rev: str, new: dict[str, Any], old: dict[str, Any]) -> None:
    print(f"--- the same at {rev} (its own server, same workload and driver) ---")
    rows = (
        ("bare loop", "bare", "rows/s"),
        ("connector, first event to last", "connector", "rows/s"),
        ("connector, from process start", "connector_from_start", "rows/s"),
    )
    for label, key, unit in rows:
        print(f"{label}: {old[key]:,.0f} {unit} at {rev}, {new[key]:,.0f} here: {new[key] / old[key]:.2f}×")
    print(
        f"vs bare loop at {rev}: {old['ratio']:.2f} first event to last, {old['ratio_from_start']:.2f} from start"
    )
    print(
        f"time to the first event at {rev}: {old['first_event_s']:.2f} s; here {new['first_event_s']:.2f} s"
    )
    print(f"peak RSS at {rev}: {old['peak_rss_mb']:.0f} MB; here {new['peak_rss_mb']:.0f} MB")
    print(
        f"connector CPU per row change at {rev}: {old['connector_cpu_us']:.1f} µs; here {new['connector_cpu_us']:.1f} µs "
        f"({old['connector_cpu_us'] / new['connector_cpu_us']:.2f}×)"
    )


def metrics_cost(
    server: LocalMySQLServer, tmp: str, changes: int, compared: Sequence[tuple[Engine, Path, int]]
) -> None:
    times: dict[bool, list[float]] = {False: [], True: []}
    for on, (metrics_run, _, port) in zip(METRICS_FLAGS, compared, strict=True):
        times[on].append(timed_catch_up(metrics_run, port))
    off_s, on_s = min(times[False]), min(times[True])
    print(
        f"metrics off: {changes / off_s:,.0f} events/s; on (served, scraped): {changes / on_s:,.0f} events/s"
    )
    print(f"metrics cost: {100 * (on_s - off_s) / off_s:+.1f}% (best of 2 each)")


METRICS_FLAGS = (False, True, False, True)


@dataclass(frozen=True)
class Workload:
    """A binlog to stream: ``create`` makes the captured tables (before the start offset is
    stored), ``write`` writes ``rows`` and returns the row changes written by kind."""

    default_rows: int
    create: Callable[[MySQLServerHandle], None]
    write: Callable[[MySQLServerHandle, int], dict[str, int]]


def _create_bulk(server: MySQLServerHandle) -> None:
    server.execute("CREATE DATABASE bench", CHANGES_TABLE)


def _write_bulk(server: MySQLServerHandle, rows: int) -> dict[str, int]:
    written = write_changes_workload(server, rows)
    assert written == changes_load(rows)
    return dict(zip(("inserts", "updates", "deletes"), written, strict=True))


def _create_oltp(server: MySQLServerHandle) -> None:
    create_tables(server, "bench")


def _write_oltp(server: MySQLServerHandle, rows: int) -> dict[str, int]:
    writer = OltpWriter("bench")
    written = writer.write(server, rows)
    load = {kind: writer.counts[kind] for kind in ("inserts", "updates", "deletes")}
    assert sum(load.values()) == written == rows
    return load


# bulk: issue 31's one table, 1,000-row statements; oltp: issue 41's 40 tables, transactions of
# 1-4 single-row statements (bench/oltp.py).
WORKLOADS = {
    "bulk": Workload(60_000, _create_bulk, _write_bulk),
    "oltp": Workload(40_000, _create_oltp, _write_oltp),
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rows",
        type=int,
        help="bulk: inserts (default 60,000), updates and deletes scale with them; "
        "oltp: row changes (default 40,000)",
    )
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="bulk", help="the binlog to stream")
    parser.add_argument("--repeat", type=int, default=3, help="alternating rounds of each side (medians)")
    parser.add_argument("--metrics", action="store_true", help="also compare metrics on vs off")
    parser.add_argument("--no-native", action="store_true", help="leave mysql-event-stream out")
    parser.add_argument(
        "--baseline", metavar="REV", help="also run the same workload with the connector of git revision REV"
    )
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    with_daemon_allocator("bench.streaming")
    native = native_available() and not args.no_native
    native_version = importlib.metadata.version("mysql-event-stream") if native else None
    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    with LocalMySQLServer(options=options) as server, tempfile.TemporaryDirectory() as tmp:
        workload = WORKLOADS[args.workload]
        rows = args.rows or workload.default_rows
        workload.create(server)
        compared = (
            [metrics_engine(server, tmp, i, on) for i, on in enumerate(METRICS_FLAGS)] if args.metrics else []
        )
        state = Path(tmp) / "prepared"
        stored = prepare(server, state, 9000)
        start_file, start_pos = server.query("SHOW MASTER STATUS")[0][:2]
        if stored != (start_file, start_pos):
            raise BenchRunError(
                f"the stored offset {stored} is not the binlog's end {start_file}:{start_pos}"
            )
        load = workload.write(server, rows)
        end_file, end_pos = server.query("SHOW MASTER STATUS")[0][:2]
        rounds = run_rounds(
            server,
            Path(tmp),
            state,
            ((start_file, start_pos), (end_file, end_pos)),
            load,
            args.repeat,
            native,
        )
        changes = sum(load.values())
        fig = figures(rounds, changes, load["deletes"])
        print(f"workload: {args.workload} {load}")
        report(fig, rounds, native_version)
        if args.baseline:
            baseline_args = [
                *("--rows", str(rows), "--repeat", str(args.repeat), "--workload", args.workload),
                "--no-native",
            ]
            report_baseline(args.baseline, fig, figures_at(args.baseline, "bench.streaming", baseline_args))
        if compared:
            metrics_cost(server, tmp, changes, compared)
        if args.json:
            print_json(fig)


if __name__ == "__main__":
    main()
