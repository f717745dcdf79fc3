"""Where streaming spends its CPU, in-process, on issue 31's table and load (``bench.workload``)
or, with ``--workload oltp``, issue 41's 40 tables and small transactions (``bench.oltp``).

An engine is prepared at the end of the binlog (schema read), the workload is written, and the
engine's catch-up over the range (decode -> dispatch -> build -> serialise -> write into the jsonl
sink) runs under cProfile. The top functions by own time and by cumulative time are printed with
their share of the total, so the costs can be listed per stage.

    .venv/bin/python -m bench.profile_streaming [--workload bulk|oltp] [--rows N] [--top 30] [--no-profile]
        [--repeat N] [--baseline REV]

``--no-profile`` only times the catch-up (CPU per change, start-up excluded); ``--repeat N`` runs
N engines over the same range, one after the other, and prints the medians; ``--baseline REV`` also
runs the same with the connector of git revision REV (``bench.baseline``) and prints the ratio.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import statistics
import tempfile
import time

from bench.baseline import figures_at, print_json, with_daemon_allocator
from bench.streaming import WORKLOADS, prepared_engine
from connector.cli.allocator import freeze_start_up_objects
from connector.engine import Engine
from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer


class CollectorTimer:
    """Seconds spent in the garbage collector and collections per generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.counts = [0, 0, 0]
        self._started = 0.0

    def on_phase(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.counts[info["generation"]] += 1


def collector_timer() -> CollectorTimer:
    timer = CollectorTimer()
    gc.callbacks.append(timer.on_phase)
    return timer


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rows", type=int, help="bulk: inserts (default 60,000); oltp: row changes (default 40,000)"
    )
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="bulk", help="the binlog to stream")
    parser.add_argument("--top", type=int, default=30, help="functions listed per ordering")
    parser.add_argument("--no-profile", action="store_true", help="only time the catch-up (no profiler)")
    parser.add_argument("--repeat", type=int, default=1, help="catch-ups over the range (medians)")
    parser.add_argument(
        "--baseline", metavar="REV", help="also time the connector of git revision REV (implies --no-profile)"
    )
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    with_daemon_allocator("bench.profile_streaming")
    if args.baseline:
        args.no_profile = True
    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    with LocalMySQLServer(options=options) as server, tempfile.TemporaryDirectory() as tmp:
        workload = WORKLOADS[args.workload]
        rows = args.rows or workload.default_rows
        workload.create(server)
        engines = [prepared_engine(server, tmp, f"profile{i}", 7001 + i)[0] for i in range(args.repeat)]
        changes = sum(workload.write(server, rows).values())
        freeze_start_up_objects()  # as `mysql-cdc run` does once set up
        runs = [catch_up(engine, changes, profile=not args.no_profile, top=args.top) for engine in engines]
    figures = {
        "changes": changes,
        "wall_s": statistics.median(wall for wall, _ in runs),
        "cpu_us": statistics.median(cpu for _, cpu in runs),
    }
    print(
        f"median of {len(runs)}: {figures['wall_s']:.2f} s wall, {figures['cpu_us']:.1f} µs CPU per change "
        f"(rounds: {' '.join(f'{cpu:.1f}' for _, cpu in runs)})"
    )
    if args.baseline:
        old = figures_at(
            args.baseline,
            "bench.profile_streaming",
            ["--rows", str(rows), "--repeat", str(args.repeat), "--workload", args.workload, "--no-profile"],
        )
        print(
            f"at {args.baseline}: {old['cpu_us']:.1f} µs CPU per change, here {figures['cpu_us']:.1f} "
            f"({old['cpu_us'] / figures['cpu_us']:.2f}×); wall {old['wall_s']:.2f} s, here {figures['wall_s']:.2f} s"
        )
    if args.json:
        print_json(figures)


def catch_up(engine: Engine, changes: int, profile: bool, top: int) -> tuple[float, float]:
    """(wall seconds, CPU µs per change) of ``engine`` streaming the range into its jsonl file;
    with ``profile`` under cProfile, whose top functions are printed."""
    collections = collector_timer()
    profiler = cProfile.Profile() if profile else None
    wall, cpu = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    engine.catch_up(timeout=3600)
    if profiler is not None:
        profiler.disable()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    engine.close()
    gc.callbacks.remove(collections.on_phase)
    print(f"{changes:,} row changes: {wall:.2f} s wall, {1e6 * cpu / changes:.1f} µs CPU per change")
    print(
        f"garbage collector: {collections.seconds:.3f} s in {sum(collections.counts)} collections "
        f"(by generation: {collections.counts})"
    )
    if profiler is not None:
        for order in ("tottime", "cumulative"):
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats(order).print_stats(top)
            print(text.getvalue())
    return wall, 1e6 * cpu / changes


if __name__ == "__main__":
    main()
