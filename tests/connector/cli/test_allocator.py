"""The allocator settings of the long-running commands (``connector.cli.allocator``)."""

from __future__ import annotations

import gc
import os
import platform
import subprocess
import sys
import weakref

import pytest

from connector.cli.allocator import (
    CHOICE,
    TUNED,
    allocator_choice,
    freeze_before_first_records,
    freeze_start_up_objects,
    glibc_thresholds_to_set,
    pause_collector_for_start_up,
    settle_after_first_records,
    tuned_environment,
)
from mysql_cdc_base.errors import ConfigError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the settings are glibc's")


@glibc
def test_tuned_environment_adds_the_settings_and_keeps_the_operators() -> None:
    env = tuned_environment({"PATH": "/bin", "MALLOC_TOP_PAD_": "1", CHOICE: "tuned"})
    assert env is not None
    assert env["PYTHONMALLOC"] == "malloc" and env["PATH"] == "/bin"
    assert env["MALLOC_TOP_PAD_"] == "1"  # the operator's own value wins
    assert env["MALLOC_MMAP_THRESHOLD_"] == TUNED["MALLOC_MMAP_THRESHOLD_"]


def test_nothing_to_do_unless_asked_for_or_when_already_set() -> None:
    assert tuned_environment({}) is None  # the interpreter's own allocator by default
    assert tuned_environment({CHOICE: "default"}) is None
    assert tuned_environment({CHOICE: "tuned", "PYTHONMALLOC": "pymalloc"}) is None


def _run_without_config(tmp_path: object, choice: str | None) -> subprocess.CompletedProcess[str]:
    """``mysql-cdc run`` on a missing configuration file, with a ``sitecustomize`` probe that writes
    each interpreter's ``PYTHONMALLOC`` to stderr, and each interpreter's imports listed there."""
    probe = os.path.join(str(tmp_path), "sitecustomize.py")
    with open(probe, "w") as fh:
        fh.write("import os, sys\nsys.stderr.write('allocator=%s\\n' % os.environ.get('PYTHONMALLOC'))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONMALLOC" and k != CHOICE}
    if choice is not None:
        env[CHOICE] = choice
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), REPO])
    env["PYTHONPROFILEIMPORTTIME"] = "1"  # both interpreters list their imports on stderr
    return subprocess.run(
        [sys.executable, "-m", "connector.cli", "run", "--config", "/nonexistent.properties"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_run_command_keeps_the_interpreters_allocator_by_default(tmp_path: object) -> None:
    """Without ``MYSQL_CDC_ALLOCATOR=tuned`` there is one interpreter: no re-execution."""
    result = _run_without_config(tmp_path, None)
    assert result.returncode == 2, result.stderr
    probes = [line for line in result.stderr.splitlines() if line.startswith("allocator=")]
    assert probes == ["allocator=None"]
    assert "nonexistent.properties" in result.stderr


def test_an_unknown_allocator_choice_is_refused_naming_the_variable(tmp_path: object) -> None:
    result = _run_without_config(tmp_path, "tunned")
    assert result.returncode == 1
    assert f"{CHOICE}: 'tunned' is not an allocator" in result.stderr
    assert "thresholds, tuned, default" in result.stderr


def test_an_unknown_allocator_choice_is_refused_for_embedded_callers_at_set_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``main(argv)`` from Python code does not pass the launcher's check: the set-up refuses it,
    rather than run on with glibc's defaults."""
    assert allocator_choice({}) == allocator_choice({CHOICE: " "}) == "thresholds"
    assert allocator_choice({CHOICE: "Tuned"}) == "tuned"
    monkeypatch.setenv(CHOICE, "tunned")
    for set_up in (freeze_before_first_records, freeze_start_up_objects):
        with pytest.raises(ConfigError, match=f"{CHOICE}: 'tunned' is not an allocator"):
            set_up()
    assert gc.isenabled()  # (refused before the collector was touched)
    with pytest.raises(ConfigError, match=CHOICE):
        glibc_thresholds_to_set({CHOICE: "tunned"})


@glibc
def test_run_command_reexecutes_itself_with_the_settings_when_asked(tmp_path: object) -> None:
    """``mysql-cdc run`` started as a process with ``MYSQL_CDC_ALLOCATOR=tuned`` replaces itself
    (same PID) by one with the tuned environment before it reads its configuration: the child
    reports a configuration error for the missing file, and the allocator it ran with is visible to
    the probe."""
    result = _run_without_config(tmp_path, "tuned")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    probes = [line for line in lines if line.startswith("allocator=")]
    assert probes[0] == "allocator=None"  # the first interpreter
    assert "allocator=malloc" in lines  # the re-executed one
    # The first interpreter only decided the allocator: the commands are imported once, after.
    first = lines[: lines.index("allocator=malloc")]
    assert any(line.endswith(" connector.cli.allocator") for line in first)
    assert not any(line.endswith(" connector.engine") for line in first)
    assert any(line.endswith(" connector.engine") for line in lines[lines.index("allocator=malloc") :])
    assert "nonexistent.properties" in result.stderr


def test_start_up_objects_are_frozen_out_of_the_collector() -> None:
    alive = [[i] for i in range(1000)]  # containers made at start-up, alive for good
    try:
        freeze_start_up_objects()
        assert gc.get_freeze_count() >= len(alive)
        scanned = {id(o) for generation in range(3) for o in gc.get_objects(generation=generation)}
        assert not any(id(o) in scanned for o in alive)  # no collection looks at them again
    finally:
        gc.unfreeze()


def test_the_collector_paused_for_the_start_up_runs_again_after_the_freeze() -> None:
    pause_collector_for_start_up()
    try:
        assert not gc.isenabled()
        freeze_start_up_objects()
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


class _Node:
    """A container that can sit in a reference cycle and be watched by a weak reference."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def test_run_freezes_at_once_and_collects_after_its_first_records() -> None:
    # ``run`` freezes without the full collection (issue 41: time to the first event) and runs it
    # once the first records are out: garbage of the start-up is freed then, the rest stays frozen.
    alive = [[i] for i in range(1000)]
    first, second = _Node(), _Node()
    first.other, second.other = second, first
    garbage = weakref.ref(first)
    del first, second  # a cycle: only a collection frees it
    pause_collector_for_start_up()
    try:
        freeze_before_first_records()
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(alive)
        assert garbage() is not None  # not collected before the first records
        settle_after_first_records()
        assert garbage() is None
        assert gc.get_freeze_count() >= len(alive)
        scanned = {id(o) for generation in range(3) for o in gc.get_objects(generation=generation)}
        assert not any(id(o) in scanned for o in alive)
    finally:
        gc.enable()
        gc.unfreeze()


@glibc
def test_glibc_thresholds_are_set_in_process_by_default_but_those_the_operator_set() -> None:
    trim, top_pad, mmap = -1, -2, -3  # mallopt's parameters (malloc.h)
    assert glibc_thresholds_to_set({}) == {
        trim: int(TUNED["MALLOC_TRIM_THRESHOLD_"]),
        top_pad: int(TUNED["MALLOC_TOP_PAD_"]),
        mmap: int(TUNED["MALLOC_MMAP_THRESHOLD_"]),
    }
    assert glibc_thresholds_to_set({CHOICE: "thresholds", "MALLOC_TOP_PAD_": "1"}).keys() == {trim, mmap}
    # tuned sets them in the re-executed environment; default and PYTHONMALLOC leave glibc alone.
    for environ in ({CHOICE: "tuned"}, {CHOICE: "default"}, {"PYTHONMALLOC": "pymalloc"}):
        assert glibc_thresholds_to_set(environ) == {}


# A child that counts glibc's mmapped blocks (mallinfo2().hblks) around an allocation of 1 MB, then
# after keep_freed_memory_for_reuse one of 4 MB: with glibc's default threshold (128 KiB) the first
# is mmapped, and freeing it raises glibc's dynamic threshold to 1 MB only, so the second is
# mmapped too unless the thresholds were set (64 MB).
_MMAPPED_BLOCKS = """
import ctypes, sys
from connector.cli.allocator import keep_freed_memory_for_reuse

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
        "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2

def mmapped_by_one_allocation(size):
    before = libc.mallinfo2().hblks
    block = bytearray(size)
    after = libc.mallinfo2().hblks
    del block
    return after - before

first = mmapped_by_one_allocation(1 << 20)
keep_freed_memory_for_reuse()
print(first, mmapped_by_one_allocation(4 << 20))
"""


def _mmapped_blocks(choice: str | None) -> list[str]:
    """``_MMAPPED_BLOCKS`` in a child without the operator's allocator settings, with ``choice``."""
    env = {k: v for k, v in os.environ.items() if k not in (CHOICE, "PYTHONMALLOC")}
    env = {k: v for k, v in env.items() if not k.startswith("MALLOC_")}
    env["PYTHONPATH"] = REPO
    if choice is not None:
        env[CHOICE] = choice
    done = subprocess.run(
        [sys.executable, "-c", _MMAPPED_BLOCKS],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.split()


@glibc
def test_keeping_freed_memory_serves_large_blocks_from_the_heap() -> None:
    assert _mmapped_blocks(None) == ["1", "0"]
    assert _mmapped_blocks("default") == ["1", "1"]  # turned off, glibc keeps its defaults
