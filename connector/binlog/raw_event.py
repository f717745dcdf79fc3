"""``RawEvent``: a binlog event with its coordinates, as every event source yields it (the server's
``connector.binlog.server_stream``, whose packet loop ``connector.binlog.direct_reads`` builds them,
and the files' ``connector.binlog.files``)."""

from __future__ import annotations

from typing import Any, NamedTuple


class RawEvent(NamedTuple):
    """A binlog event with the coordinates the library does not expose directly. A named tuple
    rather than a frozen dataclass: one is built per event, at half the cost (issue 41)."""

    event: Any
    file: str
    start_pos: int  # where the event starts (Debezium's source.pos)
    end_pos: int  # where the next event starts
    timestamp: int
    server_id: int
    event_type: int


# Where an event ``connector.binlog.fast_events`` built holds its row images (a rows event's body
# after the column bitmaps), until its library fields are made.
ROWS_BODY = "_mysql_cdc_rows_body"
