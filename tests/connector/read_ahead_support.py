"""Loopback TCP peers for the read-ahead tests, and the library internals the read-ahead relies on."""

from __future__ import annotations

import random
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from connector.binlog.prefetch import ReadAhead
from connector.binlog.server_stream import BinlogReader


@contextmanager
def connected_pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """(client, server) ends of a TCP connection on 127.0.0.1."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    try:
        yield client, server
    finally:
        client.close()
        server.close()


def send_in_random_pieces(sock: socket.socket, payload: bytes, seed: int) -> threading.Thread:
    """Send ``payload`` from a thread, in pieces of 1 byte to 100 KB."""
    pieces = random.Random(seed)

    def send() -> None:
        at = 0
        while at < len(payload):
            size = pieces.choice((1, 3, 4, 17, 8150, 65536, 100_000))
            sock.sendall(payload[at : at + size])
            at += size

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def read_in_packets(reader: ReadAhead, total: int, seed: int) -> bytes:
    """Read ``total`` bytes as pymysql does: a 4-byte header, then a body, of random sizes."""
    sizes = random.Random(seed)
    parts = []
    got = 0
    while got < total:
        size = min(total - got, sizes.choice((4, 4, 1, 8150, 70_000, 300_000)))
        part = reader.read(size)
        assert len(part) == size, f"read({size}) returned {len(part)} bytes before the end"
        parts.append(part)
        got += size
    return b"".join(parts)


def reset(sock: socket.socket) -> None:
    """Close ``sock`` with a reset (SO_LINGER 0), as a crashed server's kernel does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def stream_file_of(reader: BinlogReader) -> Any:
    """What pymysql reads the open replication stream's bytes from (``Connection._rfile``, which
    ``_read_bytes`` reads): the read-ahead relies on taking its place."""
    stream = reader._stream
    assert stream is not None, "the reader has no open stream"
    return stream._stream_connection._rfile


def stream_socket_of(reader: BinlogReader) -> socket.socket:
    """The open replication stream's socket (pymysql's ``Connection._sock``)."""
    stream = reader._stream
    assert stream is not None, "the reader has no open stream"
    sock: socket.socket = stream._stream_connection._sock
    return sock
