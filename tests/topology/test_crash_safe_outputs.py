"""Crash-safe outputs: a jsonl file torn by SIGKILL is repaired on restart, and a damaged offsets
file stops the connector instead of silently starting a new snapshot."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from connector.stores.offsets import FileOffsetStore, OffsetStoreError
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord
from sink.jsonl import JsonlSink, repair_torn_tail

ROWS = 400
PAYLOAD = 64 * 1024  # big rows: batches of megabytes, so a kill often lands inside a write


def test_repair_cuts_only_the_torn_last_line(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":2}\n{"a":')
    assert repair_torn_tail(path, chunk=4) == len(b'{"a":')
    assert path.read_bytes() == b'{"a":1}\n{"a":2}\n'
    assert repair_torn_tail(path) == 0
    path.write_bytes(b'{"torn')  # a first line torn: the file becomes empty
    assert repair_torn_tail(path) == 6
    assert path.read_bytes() == b""
    assert repair_torn_tail(tmp_path / "missing.jsonl") == 0


def test_jsonl_sink_appends_after_a_repaired_tail(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"topic":"t","key":null,"value":null,"headers":{}}\n{"topic":"t","ke')
    sink = JsonlSink(path)
    sink.start()
    sink.send([ChangeRecord("t", None, None, None, None)])
    sink.flush()
    sink.close()
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2
    assert all(orjson.loads(line)["topic"] == "t" for line in lines)


@pytest.mark.parametrize("content", [b"", b"  \n", b'{"[\\"c\\",{\\"server\\":\\"s\\"}]": {"file": "mysql-b'])
def test_empty_or_truncated_offsets_file_is_an_error_naming_file_and_choices(tmp_path, content):
    path = tmp_path / "offsets.json"
    path.write_bytes(content)
    store = FileOffsetStore(path, "c", "s")
    with pytest.raises(OffsetStoreError) as info:
        store.load()
    message = str(info.value)
    assert str(path) in message
    assert "restore it from a backup" in message and "delete it" in message and "snapshot.mode" in message
    # A missing file is the one "no offset yet" case.
    assert FileOffsetStore(tmp_path / "absent.json", "c", "s").load() is None
    with pytest.raises(OffsetStoreError):  # nor is the damaged file silently overwritten
        store.save(SourceOffset("mysql-bin.000001", 4))
    assert path.read_bytes() == content


def _start(config: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "connector.cli", "run", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
        start_new_session=True,
    )


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _ids(path: Path, running: bool = False) -> list[int]:
    data = path.read_bytes()
    if running:  # the connector may be writing the last line right now
        data = data[: data.rfind(b"\n") + 1]
    out = []
    for line in data.splitlines():
        record = orjson.loads(line)  # every (complete) line must parse
        if record["value"] is not None and record["topic"].endswith(".torn.t"):
            out.append(record["value"]["payload"]["after"]["id"])
    return out


def test_sigkill_mid_write_then_restart_every_line_parses(tmp_path):
    with LocalMySQLServer() as server:
        server.execute("CREATE DATABASE torn", "CREATE TABLE torn.t (id INT PRIMARY KEY, v LONGTEXT)")
        out = tmp_path / "events.jsonl"
        props = server.connector_properties(
            **{
                "topic.prefix": "torn",
                "database.include.list": "torn",
                "sink.type": "jsonl",
                "sink.jsonl.path": str(out),
                "data.dir": str(tmp_path),
                "max.batch.size": "64",
                "poll.interval.ms": "50",
            }
        )
        config = tmp_path / "connector.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        log = tmp_path / "connector.log"
        proc = _start(config, log)
        _wait(lambda: (tmp_path / "offsets.json").exists(), 60, "the first stored offset")

        def writer() -> None:
            with server.connect("torn") as conn, conn.cursor() as cur:
                for i in range(1, ROWS + 1):
                    cur.execute("INSERT INTO t VALUES (%s, REPEAT('x', %s))", (i, PAYLOAD))

        thread = threading.Thread(target=writer)
        thread.start()
        _wait(lambda: out.exists() and out.stat().st_size > 4 * PAYLOAD * 8, 120, "events being written")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        data = out.read_bytes()
        torn_by_kill = not data.endswith(b"\n")
        if not torn_by_kill:
            # The kill landed between writes this time: tear the tail as an interrupted write would
            # (half of a record no offset covers), so the restart has something to repair.
            data += data[: data.index(b"\n") // 2]
            out.write_bytes(data)
        print(f"\ntail torn by the SIGKILL itself: {torn_by_kill}")

        proc = _start(config, log)
        try:
            thread.join()
            _wait(lambda: len(set(_ids(out, running=True))) >= ROWS, 300, "every row after the restart")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, log.read_text()[-3000:]
        assert set(_ids(out)) == set(range(1, ROWS + 1))
        assert "ended in a torn line" in log.read_text()
