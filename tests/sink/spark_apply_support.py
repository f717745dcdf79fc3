"""Helpers of the ``spark-apply`` tests (no tests here): the job as a subprocess (so its driver can
be SIGKILLed), "has the job applied everything Kafka holds" from its checkpoint, the events the
connectors wrote to Kafka, and the comparison of the job's tables with MySQL and with the
in-process sink's tables.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from kafka import KafkaConsumer, TopicPartition
from pyspark.sql import DataFrame, SparkSession

from connector.cli.verify import verify_table
from connector.config import ConnectorConfig
from connector.factories import build_offset_store
from connector.server.connection import ServerProbe, connect
from mysql_cdc_base.table_id import TableId
from sink.spark import Warehouse
from sink.spark.apply import ApplySettings, apply_settings
from tests.kafka_support import consume_all
from tests.sink.connector_process import REPO, ConnectorProcess, cli


def topics_regex(*prefixes: str) -> str:
    """The topics of the connectors with these topic prefixes: the schema change topic and the
    table topics (not the heartbeat topics)."""
    return "(" + "|".join(re.escape(p) for p in prefixes) + r")(\..*)?"


def job_properties(
    bootstrap: str, prefixes: Iterable[str], workdir: Path, **overrides: str
) -> dict[str, str]:
    props = {
        "kafka.bootstrap.servers": bootstrap,
        "topics.regex": topics_regex(*prefixes),
        "sink.spark.warehouse": str(workdir / "warehouse"),
        "spark.apply.checkpoint.location": str(workdir / "checkpoint"),
        "spark.apply.trigger.interval.ms": "1000",
        "spark.apply.kafka.metadata.max.age.ms": "2000",  # new topics found within seconds
        "sink.spark.conf.spark.sql.shuffle.partitions": "2",
        "sink.spark.conf.spark.driver.memory": "768m",
    }
    props.update(overrides)
    return props


def _escaped(value: str) -> str:
    """A value as a .properties file spells it (a backslash starts an escape)."""
    return value.replace("\\", "\\\\")


class ApplyJob:
    """``mysql-cdc spark-apply`` in its own process group."""

    def __init__(self, props: Mapping[str, str], workdir: Path, env: Mapping[str, str] | None = None) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.props = dict(props)
        self.settings: ApplySettings = apply_settings(self.props)
        self.config_file = workdir / "apply.properties"
        self.config_file.write_text("".join(f"{k}={_escaped(v)}\n" for k, v in props.items()))
        self.log_file = workdir / "apply.log"
        self.env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", **(env or {})}
        self.starts = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.starts += 1
        with open(self.log_file, "ab") as log:
            log.write(f"\n=== start {self.starts}\n".encode())
            self.proc = subprocess.Popen(
                [*cli(), "spark-apply", "--config", str(self.config_file), "--progress-interval", "5"],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                cwd=REPO,
                start_new_session=True,
            )

    @property
    def checkpoint(self) -> Path:
        return Path(self.settings.checkpoint_location)

    def log(self, tail: int = 8000) -> str:
        return self.log_file.read_text(errors="replace")[-tail:]

    def kill(self) -> None:
        """SIGKILL the driver (and everything in its process group: its JVM)."""
        assert self.proc is not None
        with suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)

    def stop(self, timeout: float = 180) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        return int(self.proc.returncode)

    def wait(self, timeout: float) -> int:
        assert self.proc is not None
        return int(self.proc.wait(timeout=timeout))

    def committed_batches(self) -> int:
        """How many micro-batches the checkpoint records as done."""
        commits = self.checkpoint / "commits"
        return len([p for p in commits.iterdir() if p.name.isdigit()]) if commits.is_dir() else 0

    def wait_for_batches(self, count: int, timeout: float) -> None:
        self._wait(lambda: self.committed_batches() >= count, timeout, f"{count} micro-batches")

    def wait_caught_up(self, bootstrap: str, timeout: float) -> None:
        """Until the checkpoint's last finished micro-batch ends at Kafka's end of every topic."""
        self._wait(lambda: self.caught_up(bootstrap), timeout, "the job to apply every Kafka record", 2.0)

    def caught_up(self, bootstrap: str) -> bool:
        done = committed_offsets(self.checkpoint)
        if done is None:
            return False
        ends = end_offsets(bootstrap, re.compile(self.props["topics.regex"]))
        return bool(ends) and all(done.get(tp, -1) >= end for tp, end in ends.items() if end > 0)

    def _wait(self, condition: Any, timeout: float, what: str, every: float = 0.5) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"the job exited ({self.proc.returncode}) while waiting for {what}:\n{self.log()}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}:\n{self.log()}")
            time.sleep(every)


def wait_stored_through_marker(connector: ConnectorProcess, server: Any, db: str, timeout: float) -> None:
    """Write one last row (into ``audit``) and wait until the connector's stored offset has reached
    its transaction: every sink has everything before it. (A sink that commits offsets with its data,
    as the Spark sink does, stores the offset of its last event, inside that event's transaction, so
    the byte lag of an idle connector does not reach 0.)"""
    config = connector.config
    probe = ServerProbe(config)
    info = probe.check(need_snapshot_locks=False)
    with connect(config) as conn, conn.cursor() as cur:
        before = probe.current_position(info, cur)
    server.execute("INSERT INTO audit VALUES ('marker', -1)", database=db)

    def stored_through() -> bool:
        store = build_offset_store(config)
        try:
            stored = store.load()
        finally:
            store.close()
        return (
            stored is not None
            and not stored.in_snapshot
            and stored.file == before.file
            and stored.pos >= before.pos
        )

    connector.wait_for(stored_through, timeout, "the connector to store the marker's offset", 1.0)


def committed_offsets(checkpoint: Path) -> dict[tuple[str, int], int] | None:
    """The Kafka end offsets of the last micro-batch the checkpoint records as done."""
    commits = checkpoint / "commits"
    if not commits.is_dir():
        return None
    done = sorted(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    if not done:
        return None
    lines = (checkpoint / "offsets" / str(done[-1])).read_text().splitlines()
    offsets = json.loads(lines[-1])  # v1, the batch metadata, then the source's offsets
    return {(topic, int(p)): int(o) for topic, parts in offsets.items() for p, o in parts.items()}


def end_offsets(bootstrap: str, pattern: re.Pattern[str]) -> dict[tuple[str, int], int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, isolation_level="read_committed")
    try:
        partitions = [
            TopicPartition(t, p)
            for t in consumer.topics()
            if pattern.fullmatch(t)
            for p in sorted(consumer.partitions_for_topic(t) or ())
        ]
        return {(tp.topic, tp.partition): int(o) for tp, o in consumer.end_offsets(partitions).items()}
    finally:
        consumer.close()


def kafka_events(bootstrap: str, prefix: str, db: str) -> dict[str, list[tuple[Any, ...]]]:
    """The change events a connector wrote, per table, as changelog rows identify them."""
    pattern = re.compile(topics_regex(prefix))
    topics = sorted({t for t, _ in end_offsets(bootstrap, pattern)} - {prefix})
    out: dict[str, list[tuple[Any, ...]]] = {}
    for record in consume_all(bootstrap, topics):
        if record.value is None:
            continue
        payload = json.loads(record.value)["payload"]
        s = payload.get("source") or {}
        if "op" in payload and s.get("db") == db:
            out.setdefault(s["table"], []).append(
                (payload["op"], s["file"], s["pos"], s["row"], s.get("snapshot") or "false")
            )
    return out


def changelog_events(spark: SparkSession, path: str) -> list[tuple[Any, ...]]:
    rows = spark.read.format("delta").load(path).select("__op", "__file", "__pos", "__row", "__snapshot")
    return [tuple(r) for r in rows.collect()]


def table_paths(settings: ApplySettings, prefix: str, table: TableId) -> tuple[str, str]:
    """The job's current-state and changelog Delta tables of one connector's table."""
    sink = settings.sink_settings(prefix)
    current, changelog = sink.names(table)
    return sink.location(current), sink.location(changelog)


def verify_against_mysql(
    spark: SparkSession,
    settings: ApplySettings,
    prefix: str,
    config: ConnectorConfig,
    tables: Iterable[TableId],
) -> str:
    """``mysql-cdc verify``'s comparison of the job's current-state tables with the live MySQL
    tables; returns the report (each table ``EQUAL`` or ``DIFFERENT``)."""
    warehouse = Warehouse(spark, settings.sink_settings(prefix))
    out = io.StringIO()
    conn = connect(config, init_command="SET time_zone = '+00:00'")
    try:
        for table in tables:
            _, text = verify_table(spark, conn, warehouse, table, "bytes")
            out.write(text)
    finally:
        conn.close()
    return out.getvalue()


def rows_of(frame: DataFrame, columns: list[str]) -> Counter[str]:
    """The rows as comparable text (every type, binary and nested ones too), with their counts."""
    return Counter(
        json.dumps([_plain(v) for v in row], sort_keys=True, default=str)
        for row in frame.select(*columns).collect()
    )


def _plain(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


KEYED = ("accounts", "ledger", "places")


def connector_props(
    server: Any, db: str, prefix: str, broker: str, tmp_path: Path, **extra: str
) -> dict[str, str]:
    return server.connector_properties(
        **{
            "name": prefix,
            "topic.prefix": prefix,
            "database.include.list": db,
            "data.dir": str(tmp_path / f"data-{prefix}"),
            "skipped.operations": "none",
            "poll.interval.ms": "100",
            "sink.type": "kafka",
            "sink.kafka.bootstrap.servers": broker,
            **extra,
        }
    )
