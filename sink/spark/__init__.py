"""The Spark sink: change events into Delta Lake tables (see ``sink/spark/sink.py``).

Modules: ``settings`` (``sink.spark.*``), ``session`` (the SparkSession with Delta), ``batch``
(batch reduction), ``evolution`` (schemas from DDL), ``commits`` (the offset in each commit),
``writer`` (the Delta operations), ``sink`` (the sink itself); ``kafka_records`` (the connector's
Kafka records read back) and ``apply`` (``mysql-cdc spark-apply``: Kafka topics into the same tables
with Structured Streaming, through the sink's apply path).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sink.spark.commits import in_snapshot, is_replay
    from sink.spark.session import SESSION_DEFAULTS, session_settings, spark_session
    from sink.spark.settings import SparkSinkSettings, ValueModes, settings_from_config
    from sink.spark.sink import SparkSink
    from sink.spark.warehouse import Warehouse, describe_commit, read_current_state

# Loaded on first use: the sink's settings and property declarations (``sink.spark.settings``) are
# read by every connector's configuration, pyspark only by a process that uses Spark.
_HOMES = {
    "in_snapshot": "sink.spark.commits",
    "is_replay": "sink.spark.commits",
    "SESSION_DEFAULTS": "sink.spark.session",
    "session_settings": "sink.spark.session",
    "spark_session": "sink.spark.session",
    "SparkSinkSettings": "sink.spark.settings",
    "ValueModes": "sink.spark.settings",
    "settings_from_config": "sink.spark.settings",
    "SparkSink": "sink.spark.sink",
    "Warehouse": "sink.spark.warehouse",
    "describe_commit": "sink.spark.warehouse",
    "read_current_state": "sink.spark.warehouse",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sink.spark' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "SESSION_DEFAULTS",
    "SparkSink",
    "SparkSinkSettings",
    "ValueModes",
    "Warehouse",
    "describe_commit",
    "in_snapshot",
    "is_replay",
    "read_current_state",
    "session_settings",
    "settings_from_config",
    "spark_session",
]
