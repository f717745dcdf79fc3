"""Helpers shared by test modules (moved out of test_kafka_engine.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path

from kafka import KafkaConsumer

from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer, MySQLServerHandle

FAST_SERVER_OPTIONS = (*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2")


def topics_with_prefix(bootstrap: str, prefix: str) -> list[str]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        names = consumer.topics()
    finally:
        consumer.close()
    return sorted(
        t for t in names if t == prefix or t.startswith(prefix + ".") or t == f"__debezium-heartbeat.{prefix}"
    )


def write_config(path: Path, props: Mapping[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def gtid_seq(text: str) -> int:
    """The sequence number of a single-server GTID: MariaDB ``0-1-42`` / MySQL ``uuid:42`` or the
    end of ``uuid:1-42``."""
    last = text.split(",")[0].strip()
    if ":" in last:
        return int(last.rsplit(":", 1)[1].split("-")[-1])
    return int(last.rsplit("-", 1)[1])


def current_gtid_seq(server: MySQLServerHandle) -> int:
    variable = "@@gtid_binlog_pos" if server.is_mariadb else "@@gtid_executed"
    return gtid_seq(str(server.query(f"SELECT {variable}")[0][0]).replace("\n", ""))


def insert_rows(
    server: LocalMySQLServer,
    db: str,
    first: int,
    last: int,
    done: threading.Event,
    per_second: int | None = None,
) -> threading.Thread:
    def run() -> None:
        started = time.monotonic()
        with server.connect(db) as conn, conn.cursor() as cur:
            for i in range(first, last + 1):
                cur.execute("INSERT INTO t VALUES (%s, %s)", (i, f"value {i}"))
                conn.commit()
                if per_second and i % 100 == 0:
                    ahead = (i - first) / per_second - (time.monotonic() - started)
                    if ahead > 0:
                        time.sleep(ahead)
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
