"""Time to the first event: ``mysql-cdc run`` against a bare ``python -c "import pymysqlreplication"``
(issue 41: the first event within 2× of that import, same machine, same run).

On a throwaway server with ``--tables`` small tables (the columns of ``bench/oltp.py``, ``--rows``
rows each), each of ``--repeat`` rounds runs, one after the other and each in a process of its own:

  (1) the bare import: ``python -c "import pymysqlreplication"``, timed from its start to its exit;
  (2) a first start: ``mysql-cdc run`` (jsonl, default settings) on an empty data.dir, so it
      snapshots the tables and then streams; timed to the first line in its output file;
  (3) the bare import again;
  (4) a recovering start: ``mysql-cdc run`` on a copy of a data.dir where ``mysql-cdc snapshot``
      stored an offset and the schema history (SET, DROP/CREATE DATABASE, USE, DROP/CREATE TABLE
      records), with one row inserted after that offset; it recovers the schema from the history
      and streams the row; timed to the first line in its output file.

Each connector is then stopped with SIGTERM. Medians over the rounds are printed, with each start's
time as a ratio of the median of the bare imports of the same run, and per round its ratio to the
import run just before it.

    .venv/bin/python -m bench.startup [--repeat 5] [--tables 5] [--rows 20] [--json] [--baseline REV]

``--baseline REV`` then runs the same (this tree's ``bench/``) with the connector of git revision
REV, on its own throwaway server, and prints its figures beside these.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.baseline import figures_at, print_json
from bench.connector_run import (
    BenchRunError,
    cli,
    connector_environment,
    prepare,
    write_properties,
)
from bench.oltp import create_tables
from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer, MySQLServerHandle

POLL_S = 0.002
FIRST_LINE_TIMEOUT_S = 120.0


@dataclass
class Starts:
    """Seconds of each kind of process, by round."""

    import_s: list[float] = field(default_factory=list)
    first_start_s: list[float] = field(default_factory=list)
    recovering_s: list[float] = field(default_factory=list)


def bare_import_seconds() -> float:
    """Wall seconds of ``python -c "import pymysqlreplication"`` from start to exit, in the
    environment the connector is started with."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import pymysqlreplication"], env=connector_environment(os.environ), check=True
    )
    return time.perf_counter() - started


def first_line_seconds(server: MySQLServerHandle, data_dir: Path, workdir: Path, server_id: int) -> float:
    """Seconds from starting ``mysql-cdc run`` on ``data_dir`` to the first complete line of its
    jsonl output; the process is stopped with SIGTERM afterwards and must exit cleanly (or, during
    a snapshot, report the snapshot cancelled)."""
    out = workdir / "events.jsonl"
    properties = server.connector_properties(
        **{
            "topic.prefix": "bench",
            "database.include.list": "bench",
            "database.server.id": str(server_id),
            "data.dir": str(data_dir),
            "sink.jsonl.path": str(out),
        }
    )
    props = write_properties(workdir / "run.properties", properties)
    log = workdir / "run.log"
    with log.open("wb") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            cli("run", "-c", str(props)),
            env=connector_environment(os.environ),
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            elapsed = _await_first_line(proc, out, started, log)
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
    # A first start stopped while it still snapshots says so and exits with 1.
    if code != 0 and not (code == 1 and b"snapshot cancelled" in log.read_bytes()):
        raise BenchRunError(f"mysql-cdc run exited with {code} after SIGTERM: {_tail(log)}")
    return elapsed


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:]


def _await_first_line(proc: subprocess.Popen[bytes], out: Path, started: float, log: Path) -> float:
    deadline = started + FIRST_LINE_TIMEOUT_S
    while True:
        if out.exists():
            with out.open("rb") as fh:
                if b"\n" in fh.read(1 << 20):
                    return time.perf_counter() - started
        if proc.poll() is not None:
            raise BenchRunError(
                f"mysql-cdc run exited with {proc.returncode} before its first event: {_tail(log)}"
            )
        if time.perf_counter() > deadline:
            raise BenchRunError(f"no event from mysql-cdc run in {FIRST_LINE_TIMEOUT_S:.0f} s: {_tail(log)}")
        time.sleep(POLL_S)


def run_rounds(server: MySQLServerHandle, tmp: Path, prepared: Path, repeat: int) -> Starts:
    starts = Starts()
    for index in range(repeat):
        for kind, times, state in (
            ("first", starts.first_start_s, None),
            ("recovering", starts.recovering_s, prepared),
        ):
            starts.import_s.append(bare_import_seconds())
            workdir = tmp / f"{kind}{index}"
            workdir.mkdir()
            data_dir = workdir / "state"
            if state is None:
                data_dir.mkdir()
            else:
                shutil.copytree(state, data_dir)
            times.append(
                first_line_seconds(server, data_dir, workdir, 9500 + 2 * index + (state is not None))
            )
    return starts


def figures(starts: Starts) -> dict[str, float]:
    median: Callable[[list[float]], float] = statistics.median
    bare = median(starts.import_s)
    return {
        "import_s": bare,
        "first_start_s": median(starts.first_start_s),
        "recovering_s": median(starts.recovering_s),
        "first_start_ratio": median(starts.first_start_s) / bare,
        "recovering_ratio": median(starts.recovering_s) / bare,
    }


def report(fig: dict[str, float], starts: Starts) -> None:
    print(f"{len(starts.recovering_s)} alternating rounds, medians; load: {os.getloadavg()[0]:.2f} (1 min)")
    print("| process | seconds | × bare import |")
    print("|---|---|---|")
    print(f"| python -c 'import pymysqlreplication' (start to exit) | {fig['import_s']:.3f} | 1.00 |")
    print(
        f"| mysql-cdc run, first start (snapshot), to the first event | {fig['first_start_s']:.3f} "
        f"| **{fig['first_start_ratio']:.2f}** |"
    )
    print(
        f"| mysql-cdc run, recovering start (history + offset), to the first event | {fig['recovering_s']:.3f} "
        f"| **{fig['recovering_ratio']:.2f}** |"
    )
    print(f"bare imports: {' '.join(f'{s:.3f}' for s in starts.import_s)} s")
    print(f"first starts: {' '.join(f'{s:.3f}' for s in starts.first_start_s)} s")
    print(f"recovering starts: {' '.join(f'{s:.3f}' for s in starts.recovering_s)} s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="alternating rounds (medians)")
    parser.add_argument("--tables", type=int, default=5, help="captured tables")
    parser.add_argument("--rows", type=int, default=20, help="rows in each table before the start")
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    parser.add_argument(
        "--baseline", metavar="REV", help="also run the same with the connector of git revision REV, after"
    )
    args = parser.parse_args()
    with LocalMySQLServer(options=DEFAULT_SERVER_OPTIONS) as server, tempfile.TemporaryDirectory() as tmp:
        create_tables(server, "bench", tables=args.tables, rows=args.rows)
        prepared = Path(tmp) / "prepared"
        prepare(server, prepared, 9000)
        server.execute(
            f"INSERT INTO bench.t00 VALUES ({args.rows + 1}, 1, 'after', 1.00, '2024-05-01 12:00:00.000')"
        )
        starts = run_rounds(server, Path(tmp), prepared, args.repeat)
        fig = figures(starts)
        report(fig, starts)
    if args.baseline:
        baseline_args = ["--repeat", str(args.repeat), "--tables", str(args.tables), "--rows", str(args.rows)]
        old = figures_at(args.baseline, "bench.startup", baseline_args)
        print(f"--- the same at {args.baseline} (its own server, same driver) ---")
        for key, label in (("first_start", "first start"), ("recovering", "recovering start")):
            print(
                f"{label}: {old[key + '_s']:.3f} s = {old[key + '_ratio']:.2f}× its bare import "
                f"({old['import_s']:.3f} s) at {args.baseline}; here {fig[key + '_s']:.3f} s = "
                f"{fig[key + '_ratio']:.2f}×"
            )
    if args.json:
        print_json(fig)


if __name__ == "__main__":
    main()
