"""SIGKILL in the middle of a stream of 10,000 transactions loses nothing, and repeats nothing whose
offset had been stored."""

from __future__ import annotations

import threading
from collections import Counter

import orjson

from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer
from mysql_cdc_base.position import BinlogPosition
from tests.connector.crash_support import (
    kill,
    log_tail,
    read_lines,
    start_connector,
    stop,
    wait_for,
    write_config,
)

TRANSACTIONS = 10_000


def ids_of(lines: list[dict]) -> list[int]:
    return [
        x["value"]["payload"]["after"]["id"]
        for x in lines
        if x["value"] is not None and x["topic"].endswith(".crash.t")
    ]


def test_sigkill_mid_stream_loses_nothing_and_repeats_no_stored_transaction(tmp_path):
    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    with LocalMySQLServer(options=options) as server:
        server.execute("CREATE DATABASE crash", "CREATE TABLE crash.t (id INT PRIMARY KEY, v VARCHAR(20))")
        out = tmp_path / "events.jsonl"
        offsets = tmp_path / "offsets.json"
        props = server.connector_properties(
            **{
                "topic.prefix": "kill",
                "database.include.list": "crash",
                "sink.type": "jsonl",
                "sink.jsonl.path": str(out),
                "offset.storage.file.filename": str(offsets),
                "data.dir": str(tmp_path),
                "max.batch.size": "256",
                "poll.interval.ms": "100",
                "offset.flush.interval.ms": "200",
            }
        )
        config = write_config(props, tmp_path / "connector.properties")
        log = tmp_path / "connector.log"

        proc = start_connector(config, log)
        wait_for(offsets.exists, 60, "the connector to store its first offset")

        def writer() -> None:
            with server.connect("crash") as conn, conn.cursor() as cur:
                for i in range(1, TRANSACTIONS + 1):
                    cur.execute("INSERT INTO t VALUES (%s, %s)", (i, f"v{i}"))

        thread = threading.Thread(target=writer)
        thread.start()
        snapshot_pos = next(iter(orjson.loads(offsets.read_bytes()).values()))["pos"]

        def committed_past_snapshot() -> bool:
            (offset,) = orjson.loads(offsets.read_bytes()).values()
            return offset["pos"] != snapshot_pos

        wait_for(
            lambda: len(ids_of(read_lines(out))) >= 2_000 and committed_past_snapshot(),
            120,
            "2,000 delivered events and a stored offset past the snapshot",
        )
        kill(proc)
        stored = orjson.loads(offsets.read_bytes())
        (stored_offset,) = stored.values()
        delivered_before_kill = len(ids_of(read_lines(out)))
        assert delivered_before_kill < TRANSACTIONS, "the kill must land mid-stream"

        proc = start_connector(config, log)
        try:
            thread.join()
            wait_for(
                lambda: len(set(ids_of(read_lines(out)))) >= TRANSACTIONS,
                300,
                "every transaction after the restart",
            )
        finally:
            assert stop(proc) == 0, log_tail(log)

        lines = [x for x in read_lines(out) if x["value"] is not None and x["topic"].endswith(".crash.t")]
        counts = Counter(ids_of(lines))
        assert set(counts) == set(range(1, TRANSACTIONS + 1)), "no transaction may be lost"
        stored_at = (BinlogPosition(stored_offset["file"], 0).file_number, stored_offset["pos"])
        covered = [
            x
            for x in lines
            if (
                BinlogPosition(x["value"]["payload"]["source"]["file"], 0).file_number,
                x["value"]["payload"]["source"]["pos"],
            )
            < stored_at
        ]
        assert covered, "the stored offset must cover some delivered events"
        repeated_covered = [
            x["value"]["payload"]["after"]["id"]
            for x in covered
            if counts[x["value"]["payload"]["after"]["id"]] > 1
        ]
        assert repeated_covered == [], "a transaction whose offset was stored was delivered twice"
        duplicates = sum(n - 1 for n in counts.values())
        print(
            f"\ndelivered before kill: {delivered_before_kill}; covered by stored offset: {len(covered)}; "
            f"redelivered after restart (not covered): {duplicates}"
        )
