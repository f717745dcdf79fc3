"""Measuring an earlier commit in the same run: the benchmark's figures for another revision.

``figures_at(rev, module, args)`` checks ``rev`` out into a temporary git worktree, puts this tree's
``bench/`` over that checkout's (so both revisions run the same workload and driver, and only the
connector's code differs), runs ``python -m <module> <args> --json`` there with this interpreter,
and returns the figures that run printed as its last line. The worktree is removed afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# The allocator variables (PYTHONMALLOC, MALLOC_*) that were set before ``with_daemon_allocator``
# re-executed the benchmark, comma-separated: the others are the benchmark's own, and a connector
# started as a subprocess goes without them, as in a user's shell.
PRESET_ALLOCATOR_VARIABLES = "BENCH_PRESET_ALLOCATOR_VARIABLES"


def figures_at(rev: str, module: str, args: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as tmp:
        checkout = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(checkout), rev], check=True
        )
        try:
            shutil.rmtree(checkout / "bench")
            shutil.copytree(REPO / "bench", checkout / "bench")
            result = subprocess.run(
                [sys.executable, "-m", module, *args, "--json"],
                cwd=checkout,
                env={**os.environ, "PYTHONPATH": str(checkout)},
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                raise RuntimeError(f"the baseline run at {rev} failed:\n{result.stdout}\n{result.stderr}")
            figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
            return figures
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(checkout)], check=False
            )


def with_daemon_allocator(module: str) -> None:
    """Re-run this benchmark under the allocator settings ``mysql-cdc run`` uses
    (``connector.cli.allocator``), so both sides of every comparison measure what users run. A
    baseline checkout older than those settings inherits them from the run that started it."""
    try:
        from connector.cli.allocator import reexec_with_tuned_allocator
    except ImportError:
        return
    preset = sorted(key for key in os.environ if key == "PYTHONMALLOC" or key.startswith("MALLOC_"))
    os.environ.setdefault(PRESET_ALLOCATOR_VARIABLES, ",".join(preset))
    reexec_with_tuned_allocator(["-m", module, *sys.argv[1:]])


def print_json(figures: dict[str, Any]) -> None:
    """The line ``figures_at`` reads back."""
    print(json.dumps(figures))
