"""``mysql-cdc run`` as a subprocess of a test: started from a properties file, waited on until it
has applied everything the server logged, stopped with SIGTERM."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from connector.cli.status import byte_lag, server_binlogs, stored_offset
from connector.config import ConnectorConfig

REPO = Path(__file__).resolve().parents[2]


def cli() -> list[str]:
    """The installed ``mysql-cdc`` script next to this interpreter (``python -m connector.cli``
    when there is none)."""
    script = Path(sys.executable).parent / "mysql-cdc"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    found = shutil.which("mysql-cdc")
    return [found] if found else [sys.executable, "-m", "connector.cli"]


class ConnectorProcess:
    def __init__(self, props: Mapping[str, str], workdir: Path, env: Mapping[str, str] | None = None) -> None:
        self.config_file = workdir / "connector.properties"
        self.config_file.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.log_file = workdir / "connector.log"
        self.config = ConnectorConfig.from_mapping(dict(props))
        with open(self.log_file, "ab") as log:
            self.proc = subprocess.Popen(
                [*cli(), "run", "--config", str(self.config_file)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", **(env or {})},
                cwd=REPO,
                start_new_session=True,
            )

    def log(self, tail: int = 6000) -> str:
        return self.log_file.read_text(errors="replace")[-tail:]

    def wait_for(self, condition: Callable[[], bool], timeout: float, what: str, every: float = 0.5) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"the connector exited ({self.proc.returncode}) while waiting for {what}:\n{self.log()}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}:\n{self.log()}")
            time.sleep(every)

    def lag_bytes(self) -> int | None:
        return lag_bytes(self.config)

    def wait_caught_up(self, timeout: float) -> None:
        self.wait_for(
            lambda: self.lag_bytes() == 0, timeout, "the connector to catch up with the server", 1.0
        )

    def stop(self, timeout: float = 120) -> int:
        """SIGTERM (a clean stop after the current batch); SIGKILL to the group if it hangs."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        return self.proc.returncode


def lag_bytes(config: ConnectorConfig) -> int | None:
    """Bytes of binlog between the connector's stored offset and the server's position (None: no
    offset yet, or still snapshotting). The offset is stored once every sink has the events, so 0
    means every sink has applied everything the server logged."""
    stored = stored_offset(config)
    if stored is None or not stored.has_position or stored.in_snapshot:
        return None
    return byte_lag(stored, *server_binlogs(config))
