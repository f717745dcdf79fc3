"""Spark sink (work in progress: the session factory comes first)."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

_SESSION_LOCK = threading.Lock()

# Settings for a session the sink creates itself; a session that already exists in the process
# (an application embedding the connector) is used as it is.
SESSION_DEFAULTS: dict[str, str] = {
    "spark.app.name": "mysql-cdc",
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.sources.partitionOverwriteMode": "static",
}


def spark_session(master: str = "local[*]", conf: Mapping[str, str] | None = None,
                  warehouse: str | os.PathLike[str] | None = None) -> SparkSession:
    """The process's SparkSession: created once (with ``master`` and ``conf``), then reused."""
    with _SESSION_LOCK:
        active = SparkSession.getActiveSession()
        if active is not None:
            for key, value in (conf or {}).items():
                if active.conf.isModifiable(key):
                    active.conf.set(key, value)
            return active
        builder = SparkSession.builder.master(master)
        settings = dict(SESSION_DEFAULTS)
        if warehouse is not None:
            settings["spark.sql.warehouse.dir"] = str(Path(warehouse).resolve())
        settings.update(conf or {})
        for key, value in settings.items():
            builder = builder.config(key, value)
        return builder.getOrCreate()
