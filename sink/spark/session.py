"""The process's SparkSession, with Delta Lake.

The Delta jars come from ``$MYSQL_CDC_SPARK_JARS`` (default ``~/.cache/mysql-cdc/jars``, filled by
``.ci/setup`` from Maven Central, see ``.ci/spark-jars.xml``); without them the session asks Spark
to resolve the same coordinate itself (``spark.jars.packages``, a download on first use). A user's
own ``spark.jars``/``spark.jars.packages`` in ``sink.spark.conf.*`` wins. ``spark.jars`` also ships
the jars to a cluster's executors.
"""

from __future__ import annotations

import os
import tempfile
import threading
import zlib
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession

from sink.base import SinkError

DELTA_VERSION = "4.4.0"
_SPARK_MINOR = ".".join(pyspark.__version__.split(".")[:2])
DELTA_PACKAGE = f"io.delta:delta-spark_{_SPARK_MINOR}_2.13:{DELTA_VERSION}"
DELTA_JARS = (f"delta-spark_{_SPARK_MINOR}_2.13-{DELTA_VERSION}.jar", f"delta-storage-{DELTA_VERSION}.jar")
# Spark's Kafka source (``mysql-cdc spark-apply``) and what it needs beyond pyspark's own jars
# (``.ci/spark-jars.xml``: 4.1.3, whose restart from a checkpoint works, runs on every pyspark 4.1.x).
KAFKA_SOURCE_VERSION = "4.1.3"
KAFKA_SOURCE_PACKAGE = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{KAFKA_SOURCE_VERSION}"
KAFKA_SOURCE_JARS = (
    f"spark-sql-kafka-0-10_2.13-{KAFKA_SOURCE_VERSION}.jar",
    "spark-token-provider-kafka-0-10_2.13-4.1.1.jar",
    "kafka-clients-3.9.1.jar",
    "commons-pool2-2.12.1.jar",
)
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

_SESSION_LOCK = threading.Lock()
LOOPBACK = "127.0.0.1"

# Settings for a session the sink creates itself; a session that already exists in the process
# (an application embedding the connector) is used as it is, if it has Delta.
SESSION_DEFAULTS: dict[str, str] = {
    "spark.app.name": "mysql-cdc",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",  # no progress bars in the connector's output
    "spark.driver.host": LOOPBACK,  # loopback unless sink.spark.conf.* says otherwise
    "spark.driver.bindAddress": LOOPBACK,
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.extensions": DELTA_EXTENSION,
    "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
    # A batch's commit is mostly fixed cost: Delta's log replay need not fan out to 50 tasks.
    "spark.databricks.delta.snapshotPartitions": "2",
    # Spark's VACUUM (of tables delta-rs cannot vacuum) lists a table's files in this many tasks:
    # Spark's 10,000 tiny ones take minutes on a few cores.
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "4",
    # MERGE's source is rows the sink built in memory: deterministic, nothing to materialise.
    "spark.databricks.delta.merge.materializeSource": "none",
}

# Spark's own log level for a session the sink creates (sink.spark.log.level overrides it).
DEFAULT_LOG_LEVEL = "ERROR"
# Without sink.spark.log.level the driver JVM starts with this log4j2 configuration: errors only,
# so Spark's start-up banners ("Using Spark's default log4j profile", "Setting default log level",
# NativeCodeLoader) stay out of the connector's output. (PySpark counts as a shell: Spark announces
# "Setting default log level" unless the root level is its shell default, WARN; so the root stays at
# WARN and the console appender's threshold keeps the warnings out until setLogLevel.)
QUIET_LOG4J2 = """rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = error
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
"""


def jars_dir() -> Path:
    return Path(os.environ.get("MYSQL_CDC_SPARK_JARS") or Path.home() / ".cache" / "mysql-cdc" / "jars")


def delta_jars() -> list[str]:
    """The local Delta jars for this pyspark, or [] when they are not all there."""
    paths = [jars_dir() / name for name in DELTA_JARS]
    return [str(p) for p in paths] if all(p.is_file() for p in paths) else []


def kafka_source_jars() -> list[str]:
    """The local jars of Spark's Kafka source, or [] when they are not all there."""
    paths = [jars_dir() / name for name in KAFKA_SOURCE_JARS]
    return [str(p) for p in paths] if all(p.is_file() for p in paths) else []


def _check_delta_pin() -> None:
    try:
        installed = metadata.version("delta-spark")
    except metadata.PackageNotFoundError:
        return
    if installed != DELTA_VERSION:
        raise SinkError(
            f"delta-spark {installed} is installed but the sink's Delta jars are {DELTA_VERSION}: "
            f"install delta-spark=={DELTA_VERSION}"
        )


def session_settings(conf: Mapping[str, str] | None = None, warehouse: str | None = None) -> dict[str, str]:
    """The settings of a session the sink creates: ``SESSION_DEFAULTS``, the Delta jars, then the
    user's ``conf``."""
    settings = dict(SESSION_DEFAULTS)
    if warehouse is not None:
        settings["spark.sql.warehouse.dir"] = warehouse
    conf = dict(conf or {})
    if "spark.jars" not in conf and "spark.jars.packages" not in conf:
        jars = delta_jars()
        if jars:
            settings["spark.jars"] = ",".join(jars)
        else:
            settings["spark.jars.packages"] = DELTA_PACKAGE
    settings.update(conf)
    return settings


def quiet_log4j2() -> Path:
    """The file of ``QUIET_LOG4J2`` (written to the temporary directory once per content)."""
    path = (
        Path(tempfile.gettempdir()) / f"mysql-cdc-log4j2-{zlib.crc32(QUIET_LOG4J2.encode()):08x}.properties"
    )
    if not path.is_file():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(QUIET_LOG4J2)
        tmp.replace(path)
    return path


def has_delta(session: SparkSession) -> bool:
    return DELTA_EXTENSION in (session.conf.get("spark.sql.extensions", "") or "")


def spark_session(
    master: str = "local[*]",
    conf: Mapping[str, str] | None = None,
    warehouse: str | None = None,
    log_level: str | None = None,
) -> SparkSession:
    """The process's SparkSession: created once (with ``master`` and ``conf``), then reused.

    Spark's log level is ``log_level``, or WARN for a session created here; an existing session
    keeps its level unless ``log_level`` is given. An existing session without Delta is refused."""
    _check_delta_pin()
    with _SESSION_LOCK:
        active = SparkSession.getActiveSession()
        if active is not None:
            if not has_delta(active):
                raise SinkError(
                    "the application's SparkSession has no Delta Lake: create it with "
                    f"spark.sql.extensions={DELTA_EXTENSION} and "
                    f"spark.sql.catalog.spark_catalog={DELTA_CATALOG} (and the Delta jars, "
                    f"{DELTA_PACKAGE})"
                )
            for key, value in (conf or {}).items():
                if active.conf.isModifiable(key):
                    active.conf.set(key, value)
            if log_level:
                active.sparkContext.setLogLevel(log_level.upper())
            return active
        settings = session_settings(conf, warehouse)
        if log_level is None and "spark.driver.extraJavaOptions" not in settings:
            settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{quiet_log4j2()}"
        if settings.get("spark.driver.bindAddress") == LOOPBACK:
            # Spark's own address lookups stay on loopback too (it would pick an interface).
            os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
        builder = SparkSession.builder.master(master)
        for key, value in settings.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel((log_level or DEFAULT_LOG_LEVEL).upper())
        return session
