"""Readers of the sink's Delta tables that do not import this project: a plain PySpark process with
delta-spark, and delta-rs (the ``deltalake`` package). Test helpers, no tests here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

# Runs in its own Python process: pyspark and delta-spark only, as any Spark user would set up.
PLAIN_PYSPARK_READER = r"""
import json, sys
from pyspark.sql import SparkSession
jars, tables = sys.argv[1], json.loads(sys.argv[2])
spark = (
    SparkSession.builder.master("local[1]")
    .config("spark.jars", jars)
    .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    .config("spark.ui.enabled", "false")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)
out = {}
for name, path in tables.items():
    if "." in name:
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {name.rsplit('.', 1)[0]}")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {name} USING delta LOCATION '{path}'")
    by_name = sorted(repr(tuple(r)) for r in spark.table(name).collect())
    by_path = sorted(repr(tuple(r)) for r in spark.read.format("delta").load(path).collect())
    version = spark.sql(f"DESCRIBE HISTORY delta.`{path}` LIMIT 1").first()["version"]
    first = sorted(repr(tuple(r)) for r in spark.read.format("delta").option("versionAsOf", 0).load(path).collect())
    out[name] = {"by_name": by_name, "by_path": by_path, "version": version, "version0": first}
print("RESULT " + json.dumps(out))
"""


def read_with_plain_pyspark(jars: list[str], tables: dict[str, str]) -> dict[str, Any]:
    """``tables``: catalog name -> Delta path. Returns per name the rows (as ``repr`` of tuples)
    read by name and by path, the latest version and the rows of version 0 (time travel)."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run(
        [sys.executable, "-c", PLAIN_PYSPARK_READER, ",".join(jars), json.dumps(tables)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd="/",  # nothing of this project on the path
    )
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return dict(json.loads(line[len("RESULT ") :]))
    raise AssertionError(f"the plain PySpark reader failed ({done.returncode}):\n{done.stderr[-4000:]}")


def read_with_delta_rs(path: str) -> list[dict[str, Any]]:
    """The table's rows as delta-rs (Rust, no JVM) reads them."""
    from deltalake import DeltaTable

    local = path[len("file:") :] if path.startswith("file:") else path
    return list(DeltaTable(local).to_pyarrow_table().to_pylist())
