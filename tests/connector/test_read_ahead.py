"""The replication connection's read-ahead (connector.binlog.prefetch) on real sockets: exactly the
peer's bytes in order, its end, its errors after the bytes before them, a prompt close, the idle
callback; and on a real server's binlog stream, that pymysql reads the dump through it."""

from __future__ import annotations

import os
import socket
import ssl
import threading
import time

import pytest

from connector.binlog.prefetch import ReadAhead, can_read_ahead
from connector.binlog.server_stream import BinlogReader
from connector.config import ConnectorConfig
from connector.testing.local_server import MySQLServerHandle
from tests.connector.read_ahead_support import (
    connected_pair,
    read_in_packets,
    reset,
    send_in_random_pieces,
    stream_file_of,
    stream_socket_of,
)


@pytest.mark.parametrize("limit", [64 * 1024, 8 * 1024 * 1024])
def test_reads_return_exactly_the_peers_bytes_in_order(limit: int) -> None:
    payload = os.urandom(6 * 1024 * 1024)
    with connected_pair() as (client, server):
        reader = ReadAhead(client, read_timeout=30, chunk=32 * 1024, limit=limit)
        sender = send_in_random_pieces(server, payload, seed=limit)
        assert read_in_packets(reader, len(payload), seed=limit) == payload
        sender.join(10)
        # Never more than the limit, or the largest read (300,000 bytes), and one receive ahead of
        # the reader: memory stays flat, and a packet larger than the limit still comes through.
        assert reader.most_buffered <= max(limit, 300_000) + 32 * 1024
        reader.close()


def test_the_end_of_the_stream_comes_after_the_last_byte() -> None:
    with connected_pair() as (client, server):
        reader = ReadAhead(client, read_timeout=30)
        server.sendall(b"0123456789")
        server.shutdown(socket.SHUT_WR)
        assert reader.read(4) == b"0123"
        assert reader.read(10) == b"456789"  # fewer than asked: the end, as a file's read
        assert reader.read(4) == b""
        reader.close()


def test_a_reset_is_raised_after_the_bytes_that_came_before_it() -> None:
    with connected_pair() as (client, server):
        reader = ReadAhead(client, read_timeout=30)
        server.sendall(b"header+body")
        time.sleep(0.2)  # the bytes are received before the reset
        reset(server)
        assert reader.read(11) == b"header+body"
        with pytest.raises(ConnectionResetError):
            reader.read(4)
        reader.close()


def test_a_silent_peer_is_a_timeout_after_the_read_timeout() -> None:
    with connected_pair() as (client, _server):
        reader = ReadAhead(client, read_timeout=0.3)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            reader.read(4)
        assert 0.25 < time.monotonic() - started < 5
        reader.close()


def test_close_ends_the_receiving_thread_while_it_waits() -> None:
    with connected_pair() as (client, _server):
        reader = ReadAhead(client, read_timeout=60)
        time.sleep(0.1)  # the thread is in recv, the peer silent
        started = time.monotonic()
        reader.close()
        assert time.monotonic() - started < 2
        assert not reader.receiving
        assert reader.read(4) == b""  # closed: the end


def test_the_idle_callback_runs_on_the_reading_thread_while_nothing_comes() -> None:
    calls: list[threading.Thread] = []
    with connected_pair() as (client, server):
        reader = ReadAhead(
            client, read_timeout=30, idle_s=0.05, on_idle=lambda: calls.append(threading.current_thread())
        )
        threading.Timer(0.5, server.sendall, args=(b"late",)).start()
        assert reader.read(4) == b"late"
        assert len(calls) >= 4 and set(calls) == {threading.current_thread()}
        reader.close()


def test_tls_sockets_are_not_read_ahead() -> None:
    plain = socket.socket()
    tls = ssl.create_default_context().wrap_socket(socket.socket(), server_hostname="localhost")
    try:
        assert can_read_ahead(plain) and not can_read_ahead(tls)
    finally:
        plain.close()
        tls.close()


def test_the_binlog_dump_is_read_through_the_read_ahead(
    mysql_server: MySQLServerHandle, unique_db: str
) -> None:
    """pymysql must read the replication stream through ``Connection._rfile`` and mysql-replication
    must send the dump request with ``_write_bytes``: if either changes, this fails."""
    mysql_server.execute("CREATE TABLE t (id INT PRIMARY KEY, v TEXT)", database=unique_db)
    file, pos = mysql_server.query("SHOW MASTER STATUS")[0][:2]
    mysql_server.execute(
        *(f"INSERT INTO t VALUES ({i}, REPEAT('x', 5000))" for i in range(50)), database=unique_db
    )
    end = mysql_server.query("SHOW MASTER STATUS")[0][1]
    config = ConnectorConfig.from_mapping(
        mysql_server.connector_properties(**{"topic.prefix": "ra", "database.server.id": "6401"})
    )
    idle: list[float] = []
    reader = BinlogReader(config, file, pos, heartbeat_s=0.5, on_idle=lambda: idle.append(time.monotonic()))
    events = reader.events()
    try:
        rows = 0
        for raw in events:
            rows += raw.event_type in (23, 30)  # WRITE_ROWS v1/v2
            if raw.end_pos >= end:
                break
        assert rows == 50
        read_ahead = stream_file_of(reader)
        sock = stream_socket_of(reader)
        assert isinstance(read_ahead, ReadAhead), "pymysql no longer reads the stream through _rfile"
        assert read_ahead.received > 50 * 5000
        assert read_ahead.handed_out > 50 * 5000, "the read-ahead received bytes pymysql did not read"
        # The server is idle now: reads wait for its heartbeats (every 0.5 s), calling on_idle
        # every 0.1 s meanwhile.
        deadline = time.monotonic() + 10
        while not idle and time.monotonic() < deadline:
            next(events)
        assert idle, "no idle call while the stream waited for the server"
    finally:
        reader.close()
    assert not read_ahead.receiving
    assert sock.fileno() == -1, "the replication socket stayed open after the reader closed"
