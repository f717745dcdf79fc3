"""A Spark standalone cluster on loopback for tests: one master and one worker (1 core, 1g), started
with pyspark's own launcher (``bin/spark-class``) and stopped with their process groups.

Ports are chosen by the daemons themselves (port 0) and read back from their logs, so two clusters
on one machine never race for a port.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
STARTED = re.compile(r"Starting Spark master at (spark://\S+)")
REGISTERED = "Successfully registered with master"


@dataclass(frozen=True)
class SparkCluster:
    master_url: str  # spark://127.0.0.1:<port>
    master_log: Path
    worker_log: Path
    work_dir: Path  # the worker's: one app-* directory per application that ran executors here

    def applications(self) -> list[str]:
        """The ids of the applications whose executors ran on the worker."""
        return sorted(p.name for p in self.work_dir.glob("app-*") if p.is_dir())

    def executor_logs(self, app_id: str) -> str:
        """The stdout and stderr of every executor of ``app_id`` on the worker."""
        parts = []
        for path in sorted((self.work_dir / app_id).glob("*/std*")):
            parts.append(f"--- {path.relative_to(self.work_dir)}\n{path.read_text(errors='replace')}")
        return "\n".join(parts)

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-4000:]}"
            for path in (self.master_log, self.worker_log)
        )


def java_home() -> str | None:
    """JAVA_HOME, or the installation the ``java`` on PATH belongs to (spark-class only needs one
    of them; the executors' launch command is built from it)."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    return str(Path(java).resolve().parents[1]) if java else None


def daemon_env(conf_dir: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_CONF_DIR": str(conf_dir),  # empty: no spark-env.sh or spark-defaults.conf of the host
        "SPARK_DAEMON_MEMORY": "256m",  # the master's and worker's own heap (executors get their own)
        "SPARK_NO_DAEMONIZE": "1",
        # no REST submission server: it listens on a fixed port (6066)
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
    }
    home = java_home()
    if home:
        env["JAVA_HOME"] = home
    return env


@contextmanager
def _daemon(args: list[str], log: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # its own process group: spark-class execs java, java forks nothing else
        )
    try:
        yield proc
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    with suppress(ProcessLookupError):  # anything left behind in the daemon's group
        os.killpg(proc.pid, signal.SIGKILL)


def _wait_for_log(
    log: Path, pattern: re.Pattern[str], proc: subprocess.Popen[bytes], timeout: float, what: str
) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while True:
        found = pattern.search(log.read_text(errors="replace"))
        if found:
            return found
        if proc.poll() is not None:
            raise RuntimeError(
                f"the Spark {what} exited ({proc.returncode}):\n{log.read_text(errors='replace')}"
            )
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"the Spark {what} did not start in {timeout:.0f}s:\n{log.read_text(errors='replace')}"
            )
        time.sleep(0.2)


@contextmanager
def standalone_cluster(
    root: Path, cores: int = 1, memory: str = "1g", timeout: float = 120
) -> Iterator[SparkCluster]:
    """A running master with one registered worker; both are stopped on exit."""
    conf_dir, work_dir = root / "conf", root / "work"
    conf_dir.mkdir(parents=True, exist_ok=True)
    work_dir.mkdir(parents=True, exist_ok=True)
    master_log, worker_log = root / "master.log", root / "worker.log"
    env = daemon_env(conf_dir)
    with ExitStack() as stack:
        master = stack.enter_context(
            _daemon(
                [MASTER_CLASS, "--host", "127.0.0.1", "--port", "0", "--webui-port", "0"], master_log, env
            )
        )
        url = _wait_for_log(master_log, STARTED, master, timeout, "master").group(1)
        worker_args = [WORKER_CLASS, url, "--host", "127.0.0.1", "--port", "0", "--webui-port", "0"]
        worker_args += ["--cores", str(cores), "--memory", memory, "--work-dir", str(work_dir)]
        worker = stack.enter_context(_daemon(worker_args, worker_log, env))
        _wait_for_log(worker_log, re.compile(re.escape(REGISTERED)), worker, timeout, "worker")
        yield SparkCluster(url, master_log, worker_log, work_dir)
