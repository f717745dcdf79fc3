"""``mysql-cdc run`` in a child interpreter that reports, once its first event is written, which
modules it has imported (for tests/connector/cli/test_startup_imports.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from connector.testing.local_server import MySQLServerHandle

# The child: the CLI's entry point running `run` in the main thread (it installs its signal handlers
# there), with the default allocator (MYSQL_CDC_ALLOCATOR=tuned would re-execute, ending this
# probe). A watcher thread waits for the first complete line of the jsonl output, records
# sys.modules and the collector's state at that moment (the start-up is what is checked, not what an
# orderly stop loads) and stops the run with SIGTERM.
_PROBE = """
import gc, json, os, signal, sys, threading, time
from pathlib import Path

properties, output, report = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])

def report_at_first_event():
    deadline = time.monotonic() + 60
    # The most objects seen frozen: run freezes its start-up objects before it streams, and its
    # settling collection after the first records unfreezes them for its duration (on CI's loaded
    # machine a sample after the first event once fell in that window for 15 s).
    peak = 0
    while time.monotonic() < deadline:
        peak = max(peak, gc.get_freeze_count())
        if output.exists() and b"\\n" in output.read_bytes():
            modules = sorted(sys.modules)
            # run's full collection after its first records unfreezes for its duration: the freeze
            # is read once it is over (within a second alone; CI's loaded machine took longer).
            settled = time.monotonic() + 15
            while gc.get_freeze_count() == 0 and time.monotonic() < settled:
                time.sleep(0.001)
            frozen = max(peak, gc.get_freeze_count())
            state = {"modules": modules, "gc_enabled": gc.isenabled(), "frozen": frozen}
            report.write_text(json.dumps(state))
            break
        time.sleep(0.001)
    os.kill(os.getpid(), signal.SIGTERM)

threading.Thread(target=report_at_first_event, daemon=True).start()
from connector.cli import main
sys.argv = ["mysql-cdc", "run", "-c", properties]
sys.exit(main())
"""


def write_properties(server: MySQLServerHandle, database: str, state: Path, output: Path) -> Path:
    props = server.connector_properties(
        **{
            "topic.prefix": "startup",
            "database.include.list": database,
            "data.dir": str(state),
            "sink.jsonl.path": str(output),
        }
    )
    path = state.parent / "run.properties"
    path.write_text("".join(f"{key}={value}\n" for key, value in props.items()))
    return path


def store_offset(properties: Path) -> None:
    """``mysql-cdc snapshot``: the schema history and an offset at the binlog's current end, which
    the next ``run`` resumes from, as after a restart."""
    done = subprocess.run(
        [sys.executable, "-m", "connector.cli", "snapshot", "-c", str(properties)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@dataclass(frozen=True)
class FirstEventState:
    """``mysql-cdc run``'s process when its first event was in the output."""

    modules: frozenset[str]
    gc_enabled: bool
    frozen_objects: int


def state_at_first_event(properties: Path, output: Path, report: Path) -> FirstEventState:
    """The modules ``mysql-cdc run`` had imported, and its collector's state, when its first event
    was in ``output``."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(properties), str(output), str(report)],
        capture_output=True,
        text=True,
        env={
            **{k: v for k, v in os.environ.items() if k != "MYSQL_CDC_ALLOCATOR"},
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        },
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"exit status {done.returncode}; stderr:\n{done.stderr}"
    assert report.exists(), f"no event written within 60 s; stderr:\n{done.stderr}"
    state = json.loads(report.read_text())
    return FirstEventState(frozenset(state["modules"]), state["gc_enabled"], state["frozen"])
