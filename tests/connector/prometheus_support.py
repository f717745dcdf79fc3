"""A real Prometheus (Debian's package, fetched by ``.ci/setup``) scraping a connector's
``metrics.port`` once a second, and instant queries against it."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from connector.testing.local_server import free_port


def prometheus_binary() -> str:
    cached = Path(
        os.environ.get("MYSQL_CDC_PROMETHEUS") or Path.home() / ".cache" / "mysql-cdc" / "prometheus"
    )
    if (cached / "prometheus").is_file():
        return str(cached / "prometheus")
    found = shutil.which("prometheus")
    if found is None:
        raise AssertionError(f"no prometheus in {cached} or on PATH: run .ci/setup")
    return found


class Prometheus:
    def __init__(self, target: str, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        config = workdir / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\n  evaluation_interval: 2s\n"
            f"scrape_configs:\n  - job_name: mysql-cdc\n    static_configs:\n      - targets: ['{target}']\n"
        )
        self.port = free_port()
        self.log_file = workdir / "prometheus.log"
        with open(self.log_file, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    prometheus_binary(),
                    f"--config.file={config}",
                    f"--storage.tsdb.path={workdir / 'data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.wait_ready(60)

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            assert self.proc.poll() is None, self.log_file.read_text()[-3000:]
            time.sleep(0.3)
        raise AssertionError(f"prometheus not ready after {timeout}s:\n{self.log_file.read_text()[-3000:]}")

    def query(self, expr: str) -> list[dict[str, Any]]:
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def query_with_data(self, expr: str, timeout: float) -> list[dict[str, Any]]:
        """The query's result once it has a finite value (a scrape of a loaded machine may time out,
        which leaves the series stale until the next one succeeds); [] when it never has."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(expr)
            if any(math.isfinite(float(r["value"][1])) for r in result) or time.monotonic() > deadline:
                return result
            time.sleep(1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
