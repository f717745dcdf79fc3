"""The Spark sink: change events into Delta Lake tables (see ``sink/spark/sink.py``).

Modules: ``settings`` (``sink.spark.*``), ``session`` (the SparkSession with Delta), ``batch``
(batch reduction), ``evolution`` (schemas from DDL), ``commits`` (the offset in each commit),
``writer`` (the Delta operations), ``sink`` (the sink itself); ``kafka_records`` (the connector's
Kafka records read back) and ``apply`` (``mysql-cdc spark-apply``: Kafka topics into the same tables
with Structured Streaming, through the sink's apply path).
"""

from sink.spark.commits import in_snapshot, is_replay
from sink.spark.session import SESSION_DEFAULTS, session_settings, spark_session
from sink.spark.settings import SparkSinkSettings, ValueModes, settings_from_config
from sink.spark.sink import SparkSink
from sink.spark.warehouse import Warehouse, read_current_state

__all__ = [
    "SESSION_DEFAULTS",
    "SparkSink",
    "SparkSinkSettings",
    "ValueModes",
    "Warehouse",
    "in_snapshot",
    "is_replay",
    "read_current_state",
    "session_settings",
    "settings_from_config",
    "spark_session",
]
