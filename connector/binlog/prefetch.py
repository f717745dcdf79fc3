"""Read-ahead for the replication connection (issue 31): the server's binlog bytes are received
by a thread of their own while the streaming thread decodes, so the server is not held up waiting
for our socket buffer to drain. (Skeleton: filled in by the following commits.)
"""

from __future__ import annotations
