"""The references the connector is measured against: readers that decode a binlog range and touch
every value of every row image, and do nothing else (no envelope, no serialisation, no output).

* ``bare_loop``: mysql-replication, the library the connector reads the binlog with.
  ``bare_loop_process`` runs it in a Python process of its own with default settings.
* ``native_loop``: mysql-event-stream (a C++ decoder with a Python binding), when it is installed;
  its import name is ``mysql_event_stream``.

Both return the number of row changes they read and stop at the range's end, so they cover exactly
the row events the connector turns into records.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from bench.connector_run import connector_environment
from bench.workload import replication_settings
from connector.testing.local_server import MySQLServerHandle

# The row images each kind of rows event carries, by the key mysql-replication gives them.
_IMAGES: Mapping[type, tuple[str, ...]] = {
    WriteRowsEvent: ("values",),
    DeleteRowsEvent: ("values",),
    UpdateRowsEvent: ("before_values", "after_values"),
}


def bare_loop(server: MySQLServerHandle, start: tuple[str, int], end: tuple[str, int], server_id: int) -> int:
    """Row changes from ``start`` (binlog file, position) up to the event that reaches ``end``,
    every value of every image touched (mysql-replication decodes the rows when ``rows`` is read)."""
    stream = BinLogStreamReader(
        connection_settings=replication_settings(server),
        server_id=server_id,
        log_file=start[0],
        log_pos=start[1],
        resume_stream=True,
        blocking=False,
        only_events=list(_IMAGES),
    )
    count = 0
    try:
        for event in stream:
            images = _IMAGES[type(event)]
            for row in event.rows:
                for image in images:
                    for _value in row[image].values():
                        pass
                count += 1
            if (stream.log_file, stream.log_pos) >= end:
                break
    finally:
        stream.close()
    return count


def native_available() -> bool:
    return importlib.util.find_spec("mysql_event_stream") is not None


def native_loop(server: MySQLServerHandle, start: tuple[str, int], changes: int, server_id: int) -> int:
    """Row changes read by mysql-event-stream from ``start`` until ``changes`` of them are in (it
    has no non-blocking end of stream; a shortfall ends with its read timeout's error), every value
    of the before and after images touched. Its synchronous client and engine are used directly, as
    its asynchronous ``CdcStream`` does in a worker thread, without the event loop's hand-offs."""
    import mysql_event_stream as mes

    client = mes.BinlogClient(
        host=server.host,
        port=server.port,
        user=server.connector.user,
        password=server.connector.password,
        server_id=server_id,
        start_binlog_file=start[0],
        start_binlog_position=start[1],
        ssl_mode=mes.SslMode.DISABLED,
        read_timeout_s=30,
    )
    engine = mes.CdcEngine()
    engine.set_include_databases(["bench"])
    count = 0
    try:
        client.connect()
        client.start()
        while count < changes:
            for result in client.poll_batch():
                data = result.data
                if data is None:
                    continue
                # A format description event can change the framing mid-stream: set it per event.
                engine.set_checksum_enabled(result.checksum_enabled)
                while data:
                    consumed = engine.feed(data)
                    while (event := engine.next_event()) is not None:
                        for image in (event.before, event.after):
                            if image is not None:
                                for _value in image.values():
                                    pass
                        count += 1
                    data = data[consumed:]  # the engine's queue was full: feed the rest
    finally:
        engine.close()
        client.close()
    return count


def bare_loop_process(
    server: MySQLServerHandle, start: tuple[str, int], end: tuple[str, int], server_id: int
) -> tuple[int, float, float]:
    """``bare_loop`` in a Python process of its own with default settings (no allocator tuning, no
    frozen objects, the environment of a user's shell): (row changes, wall seconds, CPU seconds) of
    the loop, timed inside that process."""
    arguments = {
        "host": server.host,
        "port": server.port,
        "user": server.connector.user,
        "password": server.connector.password,
        "start": list(start),
        "end": list(end),
        "server_id": server_id,
    }
    done = subprocess.run(
        [sys.executable, "-m", "bench.readers"],
        input=json.dumps(arguments),
        env=connector_environment(os.environ),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the bare loop's process exited with {done.returncode}:\n{done.stderr}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures["changes"], figures["wall_s"], figures["cpu_s"]


@dataclass(frozen=True)
class _Server:
    """The parts of a server handle ``bare_loop`` reads, rebuilt from the parent's arguments."""

    host: str
    port: int
    connector: Any


def _bare_loop_main() -> None:
    arguments = json.loads(sys.stdin.read())
    user = SimpleNamespace(user=arguments["user"], password=arguments["password"])
    server = _Server(arguments["host"], arguments["port"], user)
    start, end = tuple(arguments["start"]), tuple(arguments["end"])
    wall, cpu = time.perf_counter(), time.process_time()
    changes = bare_loop(server, start, end, arguments["server_id"])  # type: ignore[arg-type]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"changes": changes, "wall_s": wall, "cpu_s": cpu}))


if __name__ == "__main__":
    _bare_loop_main()
