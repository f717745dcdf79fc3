"""A small snapshot into Delta from the command line prints the connector's own lines only: no
Spark banners, log4j profile notes or progress bars on stderr (sink.spark.log.level brings Spark's
logging back)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from connector.testing.local_server import MySQLServerHandle

SPARK_NOISE = ("log4j", "Setting default log level", "NativeCodeLoader", "[Stage", "WARN ", "sc.setLogLevel")


@pytest.mark.slow  # `mysql-cdc snapshot` as a subprocess, starting Spark (the fast tier's rule)
def test_a_two_row_snapshot_into_delta_prints_no_spark_banners(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    mysql_server.execute(
        "CREATE TABLE customers (id INT PRIMARY KEY)",
        "INSERT INTO customers VALUES (1), (2)",
        database=unique_db,
    )
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": "quiet",
            "database.include.list": unique_db,
            "data.dir": str(tmp_path / "data"),
            "skipped.operations": "none",
            "sink.type": "spark",
            "sink.spark.warehouse": str(tmp_path / "wh"),
            "sink.spark.conf.spark.sql.shuffle.partitions": "2",
        }
    )
    path = tmp_path / "c.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    run = subprocess.run(
        [sys.executable, "-m", "connector.cli", "snapshot", "--config", str(path), "--log-level", "WARNING"],
        capture_output=True,
        text=True,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "2 row(s)" in run.stdout
    noise = [line for line in run.stderr.splitlines() if any(n in line for n in SPARK_NOISE)]
    assert noise == [], run.stderr
