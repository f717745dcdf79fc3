"""Embedded start-up latency: starting the connector in-process until the first event arrives.

With a throwaway server already up (its own start-up is printed but not counted), each round
  (a) baseline: a bare mysql-replication reader is opened at the server's current position and a row
      is inserted; time until the reader yields that row's event;
  (b) the connector: ``EmbeddedEngine(props).start()``, then the same insert; time from creating the
      engine until ``wait_for`` returns that row's change event (start-up checks, schema capture,
      binlog connection, conversion, delivery). Also timed: the first record of any kind (the
      start-up schema events) and ``stop()`` (until the server's Binlog Dump thread is gone).
Prints min/median/max over the rounds and the ratio (b)/(a). Target: (b) under 2 s.

    .venv/bin/python -m bench.embedded [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import WriteRowsEvent

from bench.workload import replication_settings
from connector.embedded.api import EmbeddedEngine
from connector.testing.local_server import LocalMySQLServer

DATABASE = "bench"
TARGET_S = 2.0


def baseline_round(server: LocalMySQLServer, row_id: int) -> float:
    file, pos = server.query("SHOW MASTER STATUS")[0][:2]
    started = time.perf_counter()
    stream = BinLogStreamReader(
        connection_settings=replication_settings(server),
        server_id=9000 + row_id,
        log_file=file,
        log_pos=pos,
        resume_stream=True,
        blocking=True,
        only_events=[WriteRowsEvent],
    )
    writer = threading.Thread(
        target=server.execute,
        args=(f"INSERT INTO items VALUES ({row_id}, 'b')",),
        kwargs={"database": DATABASE},
    )
    writer.start()
    try:
        for event in stream:
            if any(row["values"]["id"] == row_id for row in event.rows):
                return time.perf_counter() - started
        raise RuntimeError("the binlog stream ended before the row arrived")
    finally:
        stream.close()
        writer.join()


def connector_round(server: LocalMySQLServer, row_id: int) -> tuple[float, float, float]:
    """(first change event, first record of any kind, stop) in seconds."""
    props = server.connector_properties(
        **{
            "topic.prefix": "bench",
            "database.include.list": DATABASE,
            "database.server.id": str(8000 + row_id),
        }
    )
    started = time.perf_counter()
    engine = EmbeddedEngine(props)
    engine.start()
    server.execute(f"INSERT INTO items VALUES ({row_id}, 'c')", database=DATABASE)
    engine.wait_for(table="items", op="c", where=lambda row: row["id"] == row_id, timeout=30)
    first_change = time.perf_counter() - started
    assert engine.first_record_at is not None
    first_record = engine.first_record_at - started
    stopping = time.perf_counter()
    engine.stop()
    return first_change, first_record, time.perf_counter() - stopping


def describe(values: list[float]) -> str:
    return (
        f"min {min(values) * 1000:7.1f} ms   median {statistics.median(values) * 1000:7.1f} ms   "
        f"max {max(values) * 1000:7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    boot = time.perf_counter()
    with LocalMySQLServer() as server:
        print(f"server {server.flavor} up in {time.perf_counter() - boot:.2f} s (not counted)")
        server.execute(
            f"CREATE DATABASE {DATABASE}",
            f"CREATE TABLE {DATABASE}.items (id INT PRIMARY KEY, name VARCHAR(20))",
        )
        baseline, change, first_any, stop = [], [], [], []
        for round_no in range(args.rounds):
            baseline.append(baseline_round(server, 2 * round_no + 1))
            c, a, s = connector_round(server, 2 * round_no + 2)
            change.append(c)
            first_any.append(a)
            stop.append(s)
        print(f"rounds: {args.rounds}")
        print(f"(a) baseline, bare mysql-replication reader to first row event:  {describe(baseline)}")
        print(f"(b) EmbeddedEngine start() to first change event:                 {describe(change)}")
        print(f"    EmbeddedEngine start() to first record (start-up schema events): {describe(first_any)}")
        print(f"    stop() until the server's Binlog Dump thread is gone:           {describe(stop)}")
        ratio = statistics.median(change) / statistics.median(baseline)
        verdict = "OK" if max(change) < TARGET_S else "OVER TARGET"
        print(
            f"ratio (b)/(a) of medians: {ratio:.1f}x;  worst (b) {max(change):.3f} s vs target {TARGET_S} s: "
            f"{verdict}"
        )


if __name__ == "__main__":
    main()
