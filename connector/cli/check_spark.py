"""``mysql-cdc check``: the Delta sink's warehouse and the Spark jars, without starting Spark.

A local warehouse (a path or a ``file:`` URI) must be writable where it is or where it would be
created; a remote URI (hdfs:, s3a:, abfss: ...) is reported as not checked, since only a Spark
session can reach it. The Delta jars must be in ``$MYSQL_CDC_SPARK_JARS`` (``.ci/setup`` fills it),
or the session configuration must name its own (``sink.spark.conf.spark.jars`` or
``spark.jars.packages``); otherwise Spark downloads them on first use, which a warning says.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from connector.cli.checklist import Item, fail, ok, writable_problem
from connector.config import ConnectorConfig
from mysql_cdc_base.errors import ConfigError
from sink.spark.session import DELTA_PACKAGE, delta_jars, jars_dir
from sink.spark.settings import settings_from_config

NAME = "sink spark"


def check_spark_sink(config: ConnectorConfig) -> list[Item]:
    try:
        settings = settings_from_config(config)
    except ConfigError as exc:
        return [fail(NAME, str(exc))]
    return [_warehouse_item(settings.warehouse), _jars_item(settings.conf)]


def _warehouse_item(uri: str) -> Item:
    if not uri.startswith("file:"):
        return Item(
            "delta warehouse", "warn", f"{uri} is remote: not checked (Spark reaches it at the first commit)"
        )
    path = Path(uri[len("file:") :])
    problem = writable_problem(path)
    if problem is None:
        return ok("delta warehouse", f"{uri} is writable")
    return fail(
        "delta warehouse",
        f"sink.spark.warehouse {uri}: {problem}; fix: point sink.spark.warehouse at a writable "
        "directory (or make this one writable for the connector's user)",
    )


def _jars_item(conf: Mapping[str, str]) -> Item:
    own = [key for key in ("spark.jars", "spark.jars.packages") if conf.get(key)]
    if own:
        return ok("spark jars", f"given by sink.spark.conf.{own[0]}")
    if delta_jars():
        return ok("spark jars", f"Delta jars present in {jars_dir()}")
    return Item(
        "spark jars",
        "warn",
        f"the Delta jars are not in {jars_dir()} ($MYSQL_CDC_SPARK_JARS): Spark will download "
        f"{DELTA_PACKAGE} from Maven Central on first use; to run offline, run .ci/setup or set "
        "sink.spark.conf.spark.jars",
    )
