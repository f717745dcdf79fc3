"""Shared pieces of the exactly-once tests: a mixed writer, an independent replay of the binlog
(``mariadb-binlog``/``mysqlbinlog`` decoding the row events, not the connector's reader), the data
topic read back ``read_committed``, and ``mysql-cdc run`` daemons.

A change is identified by ``(op, id, before v, after v)``: the writer gives every write a ``v``
never used before, so each change in the binlog is unique and a change seen twice in Kafka is a
duplicate.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson
from kafka import KafkaConsumer, TopicPartition

from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, MySQLServerHandle

FAST_SERVER_OPTIONS = (*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2")
Change = tuple[str, int, str | None, str | None]  # op, id, v before, v after


class MixedWriter(threading.Thread):
    """Inserts, updates and deletes on ``<db>.t``, a third of them in multi-statement transactions,
    and (``ddl_after``) one ``ALTER TABLE`` part way through. Paced at about ``per_second``
    transactions."""

    def __init__(
        self,
        server: MySQLServerHandle,
        db: str,
        seed: int,
        per_second: int = 150,
        ddl_after: int | None = None,
    ) -> None:
        super().__init__(daemon=True)
        self.server, self.db, self.rng = server, db, random.Random(seed)
        self.per_second = per_second
        self.ddl_after = ddl_after
        self.stop_event = threading.Event()
        self.keys: list[int] = []
        self.next_id = 1
        self.next_v = 1
        self.transactions = 0
        self.changes = 0
        self.ddl_done = False
        self.error: BaseException | None = None

    def _v(self) -> str:
        self.next_v += 1
        return f"w{self.next_v}"

    def _one(self, cur: Any) -> None:
        roll = self.rng.random()
        if roll < 0.5 or len(self.keys) < 20:
            key = self.next_id
            self.next_id += 1
            cur.execute("INSERT INTO t (id, v) VALUES (%s, %s)", (key, self._v()))
            self.keys.append(key)
        elif roll < 0.8:
            key = self.rng.choice(self.keys)
            cur.execute("UPDATE t SET v = %s WHERE id = %s", (self._v(), key))
        else:
            key = self.keys.pop(self.rng.randrange(len(self.keys)))
            cur.execute("DELETE FROM t WHERE id = %s", (key,))
        self.changes += 1

    def run(self) -> None:
        try:
            started = time.monotonic()
            with self.server.connect(self.db) as conn, conn.cursor() as cur:
                while not self.stop_event.is_set():
                    statements = self.rng.randint(2, 5) if self.rng.random() < 0.33 else 1
                    for _ in range(statements):
                        self._one(cur)
                    conn.commit()
                    self.transactions += 1
                    if (
                        self.ddl_after is not None
                        and not self.ddl_done
                        and self.transactions >= self.ddl_after
                    ):
                        cur.execute("ALTER TABLE t ADD COLUMN note VARCHAR(20) DEFAULT 'n'")
                        self.ddl_done = True
                    ahead = self.transactions / self.per_second - (time.monotonic() - started)
                    if ahead > 0:
                        time.sleep(ahead)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    def finish(self) -> None:
        self.stop_event.set()
        self.join(timeout=60)
        assert self.error is None, f"the writer failed: {self.error!r}"


def create_table(server: MySQLServerHandle, db: str) -> None:
    server.execute(f"CREATE DATABASE {db}", f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(40))")


# -- the independent replay -----------------------------------------------------------------------

_ROW_EVENT = re.compile(r"^### (INSERT INTO|UPDATE|DELETE FROM) `([^`]+)`\.`([^`]+)`$")
_COLUMN = re.compile(r"^###   @(\d+)=(.*)$")


def binlog_changes(server: MySQLServerHandle, db: str) -> list[Change]:
    """Every row change of ``<db>.t`` in the server's binlog, in order, as the server's own
    ``mariadb-binlog``/``mysqlbinlog`` decodes the row events (an implementation independent of
    the connector's binlog reader)."""
    tool = shutil.which("mariadb-binlog" if server.is_mariadb else "mysqlbinlog") or shutil.which(
        "mysqlbinlog"
    )
    assert tool, "mariadb-binlog / mysqlbinlog is needed for the independent binlog replay"
    logs = [str(row[0]) for row in server.query("SHOW BINARY LOGS")]
    text = subprocess.run(
        [
            tool,
            "--read-from-remote-server",
            f"--host={server.host}",
            f"--port={server.port}",
            f"--user={server.connector.user}",
            f"--password={server.connector.password}",
            "--base64-output=decode-rows",
            "--verbose",
            *logs,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    changes: list[Change] = []
    kind: str | None = None
    section: str | None = None
    image: dict[str, dict[int, str]] = {}

    def close() -> None:
        if kind is None:
            return
        before, after = image.get("WHERE"), image.get("SET")
        row = after if after is not None else before
        assert row is not None
        op = {"INSERT INTO": "c", "UPDATE": "u", "DELETE FROM": "d"}[kind]
        changes.append(
            (
                op,
                int(row[1]),
                _unquote(before[2]) if before is not None else None,
                _unquote(after[2]) if after is not None else None,
            )
        )

    for line in text.splitlines():
        event = _ROW_EVENT.match(line)
        if event:
            close()
            kind = event.group(1) if (event.group(2), event.group(3)) == (db, "t") else None
            section, image = None, {}
            continue
        if kind is None:
            continue
        if line in ("### SET", "### WHERE"):
            section = line[4:]
            image[section] = {}
        elif (column := _COLUMN.match(line)) and section is not None:
            image[section][int(column.group(1))] = column.group(2).split(" /*")[0]
        elif not line.startswith("###"):
            close()
            kind = None
    close()
    return changes


def _unquote(text: str) -> str:
    return text[1:-1] if text.startswith("'") and text.endswith("'") else text


# -- Kafka ----------------------------------------------------------------------------------------


def topic_changes(
    bootstrap: str, topic: str, isolation: str = "read_committed", timeout: float = 120
) -> list[Change]:
    """The changes in ``topic`` (one partition) in offset order, as a consumer with ``isolation``
    sees them (tombstones skipped)."""
    return [change_of(value) for _, value in topic_records(bootstrap, topic, isolation, timeout) if value]


def change_of(value: dict[str, Any]) -> Change:
    payload = value.get("payload", value)
    before, after = payload.get("before"), payload.get("after")
    row = after or before
    return (payload["op"], int(row["id"]), before["v"] if before else None, after["v"] if after else None)


def topic_records(
    bootstrap: str, topic: str, isolation: str, timeout: float = 120
) -> list[tuple[int, dict[str, Any] | None]]:
    """(Kafka offset, decoded value or None for a tombstone) of every record a consumer with
    ``isolation`` reads from the topic's partition 0, from the beginning to its current end."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        isolation_level=isolation,
        allow_auto_create_topics=False,
        receive_message_max_bytes=100_000_000,  # kafka-python's 1,000,000 is less than one 1 MiB fetch
    )
    try:
        deadline = time.monotonic() + timeout
        while not consumer.partitions_for_topic(topic):
            assert time.monotonic() < deadline, f"topic {topic} does not exist"
            time.sleep(0.2)
        assert consumer.partitions_for_topic(topic) == {0}, "the tests' data topics have one partition"
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        out: list[tuple[int, dict[str, Any] | None]] = []
        while consumer.position(tp) < end:
            assert time.monotonic() < deadline, f"could not read {topic} to its end {end}"
            for record in consumer.poll(timeout_ms=500).get(tp, []):
                if record.offset < end:
                    out.append(
                        (record.offset, orjson.loads(record.value) if record.value is not None else None)
                    )
        return out
    finally:
        consumer.close()


def java_console_consumer(bootstrap: str, topic: str, isolation: str = "read_committed") -> list[Change]:
    """The changes Kafka's own Java console consumer prints from the beginning of ``topic`` with
    ``--isolation-level isolation`` (tombstones, printed as ``null``, skipped)."""
    from connector.testing.local_kafka import _java, kafka_jars

    done = subprocess.run(
        [
            _java(),
            "-Xmx256m",
            "-cp",
            str(kafka_jars() / "*"),
            "org.apache.kafka.tools.consumer.ConsoleConsumer",
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--from-beginning",
            "--isolation-level",
            isolation,
            "--timeout-ms",
            "15000",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    values = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert values, f"the console consumer printed no record: {done.stdout[-1000:]} {done.stderr[-2000:]}"
    return [change_of(orjson.loads(line)) for line in values]


def end_offset(bootstrap: str, topic: str) -> int:
    """The topic's (one partition's) end offset as an uncommitted reader sees it."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, allow_auto_create_topics=False)
    try:
        tp = TopicPartition(topic, 0)
        return int(consumer.end_offsets([tp])[tp]) if consumer.partitions_for_topic(topic) else 0
    finally:
        consumer.close()


def eos_props(
    server: MySQLServerHandle, bootstrap: str, prefix: str, db: str, data_dir: Path, **extra: str
) -> dict[str, str]:
    """Sink, offsets and history in Kafka, exactly once."""
    return server.connector_properties(
        **{
            "name": prefix,
            "topic.prefix": prefix,
            "database.include.list": db,
            "data.dir": str(data_dir),
            "sink.type": "kafka",
            "sink.kafka.bootstrap.servers": bootstrap,
            "offset.storage": "kafka",
            "offset.storage.topic": f"{prefix}.offsets",
            "offset.storage.partitions": "1",
            "offset.storage.replication.factor": "1",
            "schema.history.internal": "kafka",
            "schema.history.internal.kafka.topic": f"{prefix}.schema-history",
            "schema.history.internal.kafka.bootstrap.servers": bootstrap,
            "exactly.once.support": "required",
            "max.batch.size": "500",
            "poll.interval.ms": "100",
            **extra,
        }
    )


class Daemon:
    """``mysql-cdc run`` in its own process group, its log appended to ``log``."""

    def __init__(self, props: Mapping[str, str], workdir: Path, label: str = "connector") -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.config = workdir / f"{label}.properties"
        self.config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.log_path = workdir / f"{label}.log"
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "connector.cli", "run", "--config", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=self.log_path.open("ab"),
            start_new_session=True,
        )

    def log(self, tail: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-tail:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def terminate(self, timeout: float = 90) -> int:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode

    def wait_streaming(self, timeout: float = 120) -> None:
        wait_for(lambda: "streaming from" in self.log(100_000), timeout, "the connector to stream", self)


def wait_for(predicate: Callable[[], bool], timeout: float, what: str, daemon: Daemon | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if daemon is not None and daemon.proc.poll() is not None:
            raise AssertionError(
                f"the connector exited ({daemon.proc.returncode}) waiting for {what}:\n{daemon.log()}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:.0f}s waiting for {what}"
                + (f":\n{daemon.log()}" if daemon else "")
            )
        time.sleep(0.3)


def exactly_once_report(expected: list[Change], seen: list[Change]) -> tuple[int, int]:
    """(duplicates, missing) of ``seen`` against the binlog's ``expected`` changes."""
    counts = Counter(seen)
    wanted = Counter(expected)
    assert all(n == 1 for n in wanted.values()), "the writer must make every change unique"
    duplicates = sum(n - 1 for n in counts.values() if n > 1)
    missing = sum(1 for change in wanted if change not in counts)
    unexpected = [c for c in counts if c not in wanted]
    assert not unexpected, f"changes in Kafka that are not in the binlog: {unexpected[:5]}"
    return duplicates, missing
