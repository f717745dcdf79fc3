"""Where streaming spends its CPU, in-process, on issue 31's table and load (``bench.workload``).

An engine is prepared at the end of the binlog (schema read), the workload is written, and the
engine's catch-up over the range (decode -> dispatch -> build -> serialise -> write into the jsonl
sink) runs under cProfile. The top functions by own time and by cumulative time are printed with
their share of the total, so the costs can be listed per stage.

    .venv/bin/python -m bench.profile_streaming [--rows 60000] [--top 30] [--sort tottime]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import tempfile
import time

from bench.baseline import with_daemon_allocator
from bench.streaming import prepared_engine
from bench.workload import CHANGES_TABLE, changes_load, write_changes_workload
from connector.cli.allocator import freeze_start_up_objects
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
        "--rows", type=int, default=60_000, help="inserts; updates and deletes scale with them"
    )
    parser.add_argument("--top", type=int, default=30, help="functions listed per ordering")
    parser.add_argument("--no-profile", action="store_true", help="only time the catch-up (no profiler)")
    args = parser.parse_args()
    with_daemon_allocator("bench.profile_streaming")
    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    with LocalMySQLServer(options=options) as server, tempfile.TemporaryDirectory() as tmp:
        server.execute("CREATE DATABASE bench", CHANGES_TABLE)
        engine, _ = prepared_engine(server, tmp, "profile", 7001)
        changes = sum(write_changes_workload(server, args.rows))
        assert changes == sum(changes_load(args.rows))
        freeze_start_up_objects()  # as `mysql-cdc run` does once set up
        collections = collector_timer()
        profiler = None if args.no_profile else cProfile.Profile()
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
        if profiler is None:
            return
        for order in ("tottime", "cumulative"):
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats(order).print_stats(args.top)
            print(text.getvalue())


if __name__ == "__main__":
    main()
