"""Read-ahead for the replication connection: the server's bytes are received on a thread of their
own while the streaming thread decodes.

pymysql reads every packet through ``Connection._rfile.read(n)`` (``_read_bytes``): a buffered
file over the socket, read on the thread that decodes, so while that thread decodes nothing takes
the bytes out of the kernel, and each read of a packet is a ``recv`` of at most 8 KB on the
decoding thread. ``ReadAhead`` takes the place of ``_rfile`` once the binlog dump has been asked
for (``connector.binlog.server_stream``): a thread receives into large chunks (``recv`` releases
the GIL), up to ``limit`` bytes ahead, and ``read(n)`` hands out exactly the bytes the server sent,
in order. A socket error (a reset, the keep-alive read timeout) or the end of the stream is handed
to the reader at the point where the bytes stop: ``read`` raises the ``OSError`` (pymysql turns it
into its lost-connection error, and the streaming source reconnects from its own position), or
returns fewer bytes than asked at the end of the stream, as a file does.

While ``read`` waits for bytes that have not come yet it calls ``on_idle`` every ``idle_s``
seconds, so that the streaming thread hands a partial batch to the sinks ``poll.interval.ms`` after
the last, as Debezium's queue returns from ``poll`` then, rather than at the server's next
heartbeat.

Only plain TCP or Unix sockets are read ahead: a TLS socket's reads and the ``COM_QUIT`` written
when the connection closes would use one OpenSSL connection from two threads.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import threading
from collections import deque
from collections.abc import Callable

log = logging.getLogger(__name__)

CHUNK = 256 * 1024  # bytes asked of one recv
# Bytes received ahead of the reader at most (memory stays flat); more only while a read waits for
# a larger packet.
LIMIT = 8 * 1024 * 1024
JOIN_S = 5.0


def can_read_ahead(sock: object) -> bool:
    """Whether ``sock`` may be read by a thread of its own (not a TLS socket)."""
    return isinstance(sock, socket.socket) and not isinstance(sock, ssl.SSLSocket)


class ReadAhead:
    """Receives ``sock``'s bytes on a daemon thread; ``read(n)`` returns them in order (a file's
    ``read``: fewer than ``n`` only at the end of the stream)."""

    def __init__(
        self,
        sock: socket.socket,
        read_timeout: float | None,
        idle_s: float | None = None,
        on_idle: Callable[[], None] | None = None,
        chunk: int = CHUNK,
        limit: int = LIMIT,
    ) -> None:
        self._sock = sock
        self._idle_s = idle_s if on_idle is not None else None
        self._on_idle = on_idle
        self._chunk = chunk
        self._limit = limit
        self._chunks: deque[bytes] = deque()
        self._first = 0  # bytes of _chunks[0] already handed out
        self._buffered = 0  # bytes received and not yet handed out
        self._wanted = 0  # bytes a waiting read asks for (a packet larger than the limit)
        self._ended = False  # the server closed the stream, or close() was called
        self._error: OSError | None = None
        self._closing = False
        self._changed = threading.Condition(threading.Lock())
        self.received = 0  # bytes received from the socket in all
        self.handed_out = 0  # bytes returned by read in all
        self.most_buffered = 0  # the most bytes ever received ahead of the reader
        # The keep-alive: a recv that waits longer means the connection is dead (pymysql sets the
        # same before each read, but the thread's first recv starts before its next read).
        sock.settimeout(read_timeout)
        self._thread = threading.Thread(target=self._receive, name="mysql-cdc-binlog-read-ahead", daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        return self._closing

    @property
    def receiving(self) -> bool:
        """Whether the receiving thread still runs."""
        return self._thread.is_alive()

    def _receive(self) -> None:
        sock, changed = self._sock, self._changed
        # One buffer received into, and bytes of what came copied out: a recv of a fresh buffer of
        # the chunk's size would allocate it whole each time, however little arrived.
        buffer = bytearray(self._chunk)
        view = memoryview(buffer)
        while True:
            with changed:
                while self._buffered >= max(self._limit, self._wanted) and not self._closing:
                    changed.wait()
                if self._closing:
                    return
            try:
                count = sock.recv_into(buffer)
            except OSError as exc:  # socket.timeout (the keep-alive read timeout) included
                with changed:
                    if not self._closing:
                        self._error = exc
                    self._ended = True
                    changed.notify_all()
                return
            with changed:
                if not count:
                    self._ended = True
                    changed.notify_all()
                    return
                data = bytes(view[:count])
                self.received += count
                self._chunks.append(data)
                self._buffered += count
                self.most_buffered = max(self.most_buffered, self._buffered)
                changed.notify_all()

    def read(self, size: int) -> bytes:
        changed = self._changed
        with changed:
            if self._buffered < size:
                self._wanted = size
                changed.notify_all()  # a receiver held at the limit goes on up to this size
            while self._buffered < size and not self._ended:
                if self._idle_s is None:
                    changed.wait()
                elif not changed.wait(self._idle_s) and self._buffered < size and not self._ended:
                    changed.release()  # the callback may take long (a flush): not under the lock
                    try:
                        assert self._on_idle is not None
                        self._on_idle()
                    finally:
                        changed.acquire()
            if self._buffered < size and self._error is not None:
                raise self._error  # after every byte that came before it was handed out
            self._wanted = 0
            data = self._take(min(size, self._buffered))
            self.handed_out += len(data)
            if self._buffered < self._limit:
                changed.notify_all()
            return data

    def _take(self, size: int) -> bytes:
        """``size`` buffered bytes, from the front (the caller holds the lock)."""
        if not size:
            return b""  # the end of the stream, with every byte handed out
        chunks = self._chunks
        first = chunks[0] if chunks else b""
        end = self._first + size
        if end <= len(first):  # the usual case: within one received chunk
            data = first[self._first : end]
            if end == len(first):
                chunks.popleft()
                self._first = 0
            else:
                self._first = end
            self._buffered -= size
            return data
        parts = []
        wanted = size
        while wanted:
            head = chunks[0]
            piece = head[self._first : self._first + wanted]
            parts.append(piece)
            wanted -= len(piece)
            if self._first + len(piece) == len(head):
                chunks.popleft()
                self._first = 0
            else:
                self._first += len(piece)
        self._buffered -= size
        return b"".join(parts)

    def close(self) -> None:
        """Stop receiving (pymysql calls this before it closes the socket): the thread is woken by
        shutting the socket's reading side and ends."""
        with self._changed:
            if self._closing:
                return
            self._closing = True
            self._ended = True
            self._changed.notify_all()
        # Already closed or reset: the receiving thread has ended or is ending.
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RD)
        if threading.current_thread() is not self._thread:
            self._thread.join(JOIN_S)
            if self._thread.is_alive():
                log.warning("the binlog read-ahead thread did not end within %.0f s of close", JOIN_S)
