"""``mysql-cdc run`` as a user runs it: a real subprocess resuming from a stored offset into the
jsonl sink, timed from outside by watching its output file.

``prepare`` takes the start offset once, before the workload: ``mysql-cdc snapshot`` of the still
empty table, which stores the offset (and the schema history) at the binlog's current end and
exits. ``timed_run`` starts ``mysql-cdc run`` on a copy of that state, polls the output file for
newlines, and times the first line's appearance and the arrival of the expected number of lines
from the process's start; then stops the process with SIGTERM and reads its peak RSS and CPU time
from ``wait4``.

The connector's packages are compiled to bytecode first (``compile_connector``), as installing the
package does: otherwise, with ``PYTHONDONTWRITEBYTECODE`` set (as in this project's sessions), every
timed start compiled about 150 modules from source, a third of its time to the first event.

The interpreter runs the package of the current directory (``python -m connector.cli``), so the
``--baseline`` checkout of ``bench/baseline.py`` measures its own connector with this driver. The
allocator variables this benchmark's own re-execution added (``bench.baseline.with_daemon_allocator``)
are taken out of the connector's environment: the connector decides its allocator as a user's run
does, start-up included.
"""

from __future__ import annotations

import compileall
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson

from bench.baseline import PRESET_ALLOCATOR_VARIABLES
from connector.testing.local_server import MySQLServerHandle

# How often the output file is read: short while the first line is awaited (it times the start-up),
# longer afterwards (each read takes CPU from the connector on a small machine).
FIRST_LINE_POLL_S = 0.002
LINES_POLL_S = 0.005
READ_CHUNK = 4 << 20
RUN_TIMEOUT_S = 1800.0


class BenchRunError(RuntimeError):
    """The connector run did not deliver what the workload wrote, or failed; the message names the
    log and output files."""


@dataclass(frozen=True)
class RunTimes:
    """One ``mysql-cdc run`` over the range, seconds from the process's start."""

    first_line_s: float  # the first complete line of output is in the file
    lines_at_first: int  # lines in the file when the first one was seen (a batch is written at once)
    last_line_s: float  # all expected lines are in the file
    peak_rss_mb: float  # of the connector process (wait4's ru_maxrss)
    cpu_s: float  # user + system CPU of the connector process over its whole life
    watch_cpu_s: float  # CPU this process spent polling the output file meanwhile


def connector_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the allocator variables that this benchmark's re-execution added, so
    the connector starts as in a user's shell (its own launcher then decides the allocator)."""
    preset = set(filter(None, environ.get(PRESET_ALLOCATOR_VARIABLES, "").split(",")))

    def added_by_bench(key: str) -> bool:
        return (key == "PYTHONMALLOC" or key.startswith("MALLOC_")) and key not in preset

    return {
        key: value
        for key, value in environ.items()
        if not added_by_bench(key) and key != PRESET_ALLOCATOR_VARIABLES
    }


def write_properties(path: Path, properties: Mapping[str, str]) -> Path:
    path.write_text("".join(f"{key}={value}\n" for key, value in properties.items()))
    return path


def cli(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "connector.cli", *arguments]


# The connector's own packages (in the current directory, where ``python -m connector.cli`` finds them).
CONNECTOR_PACKAGES = ("connector", "ddl", "sink", "snapshot", "mysql_cdc_base")


def compile_connector() -> None:
    """The bytecode of the connector's packages, written next to them as ``pip install`` does
    (py_compile writes it even where ``PYTHONDONTWRITEBYTECODE`` stops the interpreter from doing so)."""
    for package in CONNECTOR_PACKAGES:
        if not compileall.compile_dir(package, quiet=1):
            raise BenchRunError(f"compiling {Path(package).resolve()} to bytecode failed")


def prepare(server: MySQLServerHandle, state: Path, server_id: int) -> tuple[str, int]:
    """Store the connector's offset and schema history in ``state`` (its data.dir) at the binlog's
    current end by a ``mysql-cdc snapshot`` of the captured tables, which must be empty; returns
    the stored (binlog file, position). Compiles the connector first (``compile_connector``)."""
    compile_connector()
    state.mkdir(parents=True)
    props = write_properties(state.parent / f"{state.name}.properties", _properties(server, state, server_id))
    log = state.parent / f"{state.name}.log"
    with log.open("wb") as err:
        done = subprocess.run(
            cli("snapshot", "-c", str(props)),
            env=connector_environment(os.environ),
            stdout=subprocess.DEVNULL,
            stderr=err,
            check=False,
        )
    if done.returncode != 0:
        raise BenchRunError(f"mysql-cdc snapshot exited with {done.returncode}; see {log}")
    stored = orjson.loads((state / "offsets.json").read_bytes())
    (offset,) = stored.values()
    return offset["file"], offset["pos"]


def _properties(server: MySQLServerHandle, data_dir: Path, server_id: int, **extra: str) -> dict[str, str]:
    return server.connector_properties(
        **{
            "topic.prefix": "bench",
            "database.include.list": "bench",
            "database.server.id": str(server_id),
            "data.dir": str(data_dir),
            **extra,
        }
    )


def timed_run(server: MySQLServerHandle, state: Path, workdir: Path, server_id: int, lines: int) -> RunTimes:
    """``mysql-cdc run`` from a copy of the prepared ``state`` into a fresh jsonl file, until it has
    ``lines`` lines; the output and log stay in ``workdir`` (the output is removed by the caller)."""
    data_dir = workdir / "state"
    shutil.copytree(state, data_dir)
    out = workdir / "events.jsonl"
    props = write_properties(
        workdir / "run.properties", _properties(server, data_dir, server_id, **{"sink.jsonl.path": str(out)})
    )
    log = workdir / "run.log"
    with log.open("wb") as err:
        started, watch_cpu = time.perf_counter(), time.process_time()
        proc = subprocess.Popen(
            cli("run", "-c", str(props)),
            env=connector_environment(os.environ),
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            first_s, at_first, last_s = _watch(proc, out, lines, started, log)
            watch_cpu = time.process_time() - watch_cpu
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        proc.send_signal(signal.SIGTERM)
        # wait4, not proc.wait(): its rusage is this child's own (peak RSS, CPU), not all children's.
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise BenchRunError(f"mysql-cdc run exited with {proc.returncode} after SIGTERM; see {log}")
    cpu_s = usage.ru_utime + usage.ru_stime
    return RunTimes(first_s, at_first, last_s, usage.ru_maxrss / 1024, cpu_s, watch_cpu)


def _watch(
    proc: subprocess.Popen[bytes], out: Path, lines: int, started: float, log: Path
) -> tuple[float, int, float]:
    """Poll ``out`` until it holds ``lines`` lines; returns (seconds to the first line, lines then,
    seconds to the last), both from ``started``."""
    seen = 0
    first_s: float | None = None
    at_first = 0
    last_s = 0.0
    deadline = started + RUN_TIMEOUT_S
    fh = None
    try:
        while seen < lines:
            if fh is None and out.exists():
                fh = out.open("rb", buffering=0)
            chunk = fh.read(READ_CHUNK) if fh is not None else b""
            now = time.perf_counter()
            if chunk:
                seen += chunk.count(b"\n")
                last_s = now - started
                if first_s is None and seen:
                    first_s, at_first = last_s, seen
                continue  # more may be there already
            if proc.poll() is not None:
                raise BenchRunError(
                    f"mysql-cdc run exited with {proc.returncode} after {seen} of {lines} lines in {out}; see {log}"
                )
            if now > deadline:
                raise BenchRunError(
                    f"mysql-cdc run wrote {seen} of {lines} lines to {out} in {RUN_TIMEOUT_S:.0f} s"
                )
            time.sleep(FIRST_LINE_POLL_S if first_s is None else LINES_POLL_S)
        if seen != lines:
            raise BenchRunError(
                f"{out} has {seen} lines, {lines} expected: the connector wrote more than the range"
            )
        assert first_s is not None
        return first_s, at_first, last_s
    finally:
        if fh is not None:
            fh.close()
