"""Crash-test helpers: ``mysql-cdc run`` as a subprocess (its own process group, so a kill takes
its JVM with it), killed with SIGKILL or stopped with SIGTERM, waited on, its log read; and the
lines a killed jsonl sink left."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[2]


def write_config(props: Mapping[str, str], path: Path) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def start_connector(config: Path, log: Path, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    """``mysql-cdc run --config config`` with its output appended to ``log`` and ``env`` added to
    this process's environment (a start line in the log names it)."""
    with open(log, "ab") as out:
        out.write(f"--- start {dict(env or {})}\n".encode())
        return subprocess.Popen(
            [sys.executable, "-m", "connector.cli", "run", "--config", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", **(env or {})},
            cwd=REPO,
            start_new_session=True,
        )


def log_tail(log: Path, chars: int = 4000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.exists() else ""


def kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the connector and everything it started (its JVM)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


def stop(proc: subprocess.Popen[bytes], timeout: float = 60) -> int:
    """SIGTERM to the connector alone (it flushes, then stops its JVM); SIGKILL to its process
    group when it has not exited within ``timeout``."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill(proc)
    return proc.returncode


def wait_killed(proc: subprocess.Popen[bytes], log: Path, timeout: float = 300) -> None:
    """Wait for a connector that SIGKILLs itself (a ``MYSQL_CDC_TEST_KILL_AT`` fault point)."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        raise AssertionError("the kill point was never reached:\n" + log_tail(log)) from None
    assert proc.returncode == -signal.SIGKILL, log_tail(log)
    with contextlib.suppress(ProcessLookupError):  # its JVM, orphaned by the kill
        os.killpg(proc.pid, signal.SIGKILL)


def read_lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_bytes().splitlines():
        try:
            out.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            # A line torn by SIGKILL after the last fsync is not covered by a stored offset.
            continue
    return out


def wait_for(
    predicate: Callable[[], bool],
    timeout: float,
    what: str,
    interval: float = 0.1,
    proc: subprocess.Popen[bytes] | None = None,
    log: Path | None = None,
) -> None:
    """Poll ``predicate``; fail after ``timeout`` or as soon as ``proc`` exits, with ``log``'s tail."""
    deadline = time.monotonic() + timeout
    while not predicate():
        tail = "" if log is None else ":\n" + log_tail(log)
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the connector exited ({proc.returncode}) while waiting for {what}{tail}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}{tail}")
        time.sleep(interval)
