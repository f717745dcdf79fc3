"""SIGKILL of `mysql-cdc run` in the middle of an incremental snapshot of 60,000 rows that races
with writers: the restarted connector resumes after the last chunk it had stored (it never starts
the table over), and replaying the whole output by key equals the table."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

import orjson

from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer
from tests.connector.crash_support import kill, read_lines, start_connector, wait_for, write_config

# 58 chunks: the kill lands after about 20 are stored, the resumed run reads the other 38. More rows
# lengthened every phase (and the final replay) without adding to what the test shows.
ROWS = 60_000
CHUNK = 1024


def payloads(lines: list[dict[str, Any]], table: str) -> list[dict[str, Any]]:
    return [
        x["value"]["payload"] for x in lines if x["value"] is not None and x["topic"] == f"kill.crash.{table}"
    ]


def stored_offset(path: Path) -> dict[str, Any]:
    (offset,) = orjson.loads(path.read_bytes()).values()
    return offset


def test_sigkill_mid_incremental_snapshot_resumes_from_the_last_stored_chunk(tmp_path: Path) -> None:
    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    with LocalMySQLServer(options=options) as server:
        server.execute(
            "CREATE DATABASE crash",
            "CREATE TABLE crash.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
            "CREATE TABLE crash.done (id INT PRIMARY KEY)",
            "CREATE TABLE crash.dbz_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048))",
            f"GRANT INSERT, DELETE ON crash.dbz_signal TO '{server.connector.user}'@'%'",
        )
        for start in range(1, ROWS + 1, 10_000):
            values = ",".join(f"({i}, 'v{i}', 0)" for i in range(start, start + 10_000))
            server.execute(f"INSERT INTO crash.t VALUES {values}")
        out, offsets, log = tmp_path / "events.jsonl", tmp_path / "offsets.json", tmp_path / "connector.log"
        props = server.connector_properties(
            **{
                "topic.prefix": "kill",
                "database.include.list": "crash",
                "snapshot.mode": "no_data",
                "signal.data.collection": "crash.dbz_signal",
                "incremental.snapshot.chunk.size": str(CHUNK),
                "sink.type": "jsonl",
                "sink.jsonl.path": str(out),
                "offset.storage.file.filename": str(offsets),
                "data.dir": str(tmp_path),
                "max.batch.size": "512",
                "poll.interval.ms": "100",
                "offset.flush.interval.ms": "200",
            }
        )
        config = write_config(props, tmp_path / "connector.properties")

        proc = start_connector(config, log)
        wait_for(offsets.exists, 60, "the connector to store its first offset")
        stop = threading.Event()

        def writer(seed: int) -> None:
            rnd = random.Random(seed)
            with server.connect("crash") as conn, conn.cursor() as cur:
                # A few hundred writes a second each: the stream (and so the snapshot) keeps up on
                # two cores shared with the server and the writers.
                while not stop.wait(0.003):
                    key = rnd.randint(1, ROWS + 5_000)
                    roll = rnd.random()
                    if roll < 0.5:
                        cur.execute("UPDATE t SET n = n + 1, v = %s WHERE id = %s", (f"w{seed}", key))
                    elif roll < 0.75:
                        cur.execute("DELETE FROM t WHERE id = %s", (key,))
                    else:
                        cur.execute("REPLACE INTO t VALUES (%s, %s, 1)", (key, f"r{seed}"))

        writers = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
        for thread in writers:
            thread.start()
        try:
            data = json.dumps({"data-collections": ["crash.t"], "type": "incremental"})
            server.execute(f"INSERT INTO crash.dbz_signal VALUES ('sig-kill', 'execute-snapshot', '{data}')")

            def snapshot_half_stored() -> bool:
                offset = stored_offset(offsets)
                key = offset.get("incremental_snapshot_primary_key")
                return bool(key) and json.loads(key)[0] > ROWS // 3

            wait_for(snapshot_half_stored, 300, "a third of the table read and its offset stored")
            kill(proc)
            resumed_after = json.loads(stored_offset(offsets)["incremental_snapshot_primary_key"])[0]
            before_kill = len(read_lines(out))

            proc = start_connector(config, log)
            try:
                wait_for(
                    lambda: (
                        "incremental_snapshot_collections" not in stored_offset(offsets)
                        and any(p["op"] == "r" for p in payloads(read_lines(out)[before_kill:], "t"))
                    ),
                    600,
                    "the incremental snapshot to finish after the restart",
                )
                stop.set()
                for thread in writers:
                    thread.join()
                server.execute("INSERT INTO crash.done VALUES (1)")
                wait_for(lambda: payloads(read_lines(out), "done"), 120, "the stream to catch up")
            finally:
                kill(proc)
        finally:
            stop.set()
            for thread in writers:
                thread.join()

        lines = read_lines(out)
        state: dict[int, dict[str, Any]] = {}
        for p in payloads(lines, "t"):
            if p["op"] == "d":
                state.pop(p["before"]["id"], None)
            else:
                state[p["after"]["id"]] = p["after"]
        expected = {
            row[0]: {"id": row[0], "v": row[1], "n": row[2]}
            for row in server.query("SELECT id, v, n FROM crash.t")
        }
        assert state == expected

        # Resumed, not restarted: every snapshot row after the restart follows the stored key. What
        # is read again is what was emitted after the last stored offset (at least once): about
        # offset.flush.interval.ms of the stream's rate, so its size follows the machine's speed and
        # is printed, not bounded; starting over would read again the third of the table stored.
        after = [p["after"]["id"] for p in payloads(lines[before_kill:], "t") if p["op"] == "r"]
        assert after and min(after) > resumed_after >= ROWS // 3
        before = [p["after"]["id"] for p in payloads(lines[:before_kill], "t") if p["op"] == "r"]
        reread = len([i for i in after if i <= max(before)])
        print(
            f"rows read again after the restart: {reread} (stored key {resumed_after}, last emitted before the kill {max(before)})"
        )
