"""The test-only fault point of the Spark sink (``MYSQL_CDC_TEST_KILL_AT``, sink/spark/faults.py):
it kills at the named point, table and occurrence, and nowhere else."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sink.base import SinkError
from sink.spark.faults import KILL_AT_ENV, parse

PROGRAM = """
import sys
from pathlib import Path
from sink.spark.faults import kill_point
marks = Path(sys.argv[1])
for point, path in [("commit", "/wh/db/a"), ("compact", "/wh/db/a_changelog"), ("commit", "/wh/db/a_changelog"),
                    ("commit", "/wh/db/a_changelog"), ("commit", "/wh/db/a_changelog")]:
    kill_point(point, path, lambda: marks.write_text(marks.read_text() + "before;"))
    marks.write_text(marks.read_text() + f"{point}:{path};")
"""


def run(spec: str | None, tmp_path: Path) -> tuple[int, str]:
    marks = tmp_path / "marks"
    marks.write_text("")
    env = {k: v for k, v in os.environ.items() if k != KILL_AT_ENV}
    if spec is not None:
        env[KILL_AT_ENV] = spec
    proc = subprocess.run([sys.executable, "-c", PROGRAM, str(marks)], env=env, timeout=60, check=False)
    return proc.returncode, marks.read_text()


def test_the_fault_point_kills_at_the_nth_time_its_point_and_table_are_reached(tmp_path: Path) -> None:
    code, marks = run("commit:_changelog#2", tmp_path)
    assert code == -signal.SIGKILL
    assert marks == "commit:/wh/db/a;compact:/wh/db/a_changelog;commit:/wh/db/a_changelog;before;"
    code, marks = run("compact:", tmp_path)  # an empty suffix: any table
    assert (code, marks) == (-signal.SIGKILL, "commit:/wh/db/a;before;")


def test_without_the_variable_or_a_match_nothing_is_killed(tmp_path: Path) -> None:
    for spec in (None, "commit:/b", "create:a", "commit:_changelog#4"):
        code, marks = run(spec, tmp_path)
        assert code == 0 and marks.count(";") == 5 and "before" not in marks, spec


@pytest.mark.parametrize("spec", ["commit", ":x", "commit:x#0", "commit:x#two", "commit:x#"])
def test_a_malformed_value_is_refused_naming_the_variable(spec: str) -> None:
    with pytest.raises(SinkError, match=KILL_AT_ENV):
        parse(spec)
    assert parse("commit:items_changelog#3") == ("commit", "items_changelog", 3)
