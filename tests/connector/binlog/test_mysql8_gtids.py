"""Tagged GTIDs as real MySQL servers write them (``shared/mysql8-binlogs``).

``binlog_transaction_with_GTID_TAG.000001`` was written by MySQL 9.6 after transactions 1-13 of
its server and 1-2 of tag ``mytag`` (its PREVIOUS_GTIDS), then one transaction with
``gtid_next='AUTOMATIC:mytag'`` (the sample's README lists the tag, the gno 3, and the intervals).
"""

from __future__ import annotations

import uuid

import pytest

from connector.binlog.gtid_events import (
    GTID_TAGGED_LOG_EVENT,
    PREVIOUS_GTIDS_EVENT,
    GtidEventError,
    decode_previous_gtids,
    decode_tagged_gtid,
    encode_gtid_set,
    encode_varlen_uint,
    read_varlen_int,
    read_varlen_uint,
)
from connector.binlog.guard import HARMLESS_EVENT_TYPES, UNREADABLE_DATA_EVENTS
from mysql_cdc_base.position import GtidSet, SourceOffset
from tests.connector.mysql8_support import bodies, events

TAGGED = "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001"
SERVER = "55778904-0299-11f1-b1b8-4ef0c4956feb"


def test_the_tagged_gtid_event_of_mysql_9_decodes_to_uuid_tag_gno() -> None:
    (body,) = bodies(TAGGED, GTID_TAGGED_LOG_EVENT)
    tagged = decode_tagged_gtid(body)
    assert tagged.gtid == f"{SERVER}:mytag:3"
    # The transaction length counts the GTID event through the XID event: the file's own offsets.
    offsets = [event.offset for event in events(TAGGED)]
    start = next(e.offset for e in events(TAGGED) if e.event_type == GTID_TAGGED_LOG_EVENT)
    xid_end = next(e.offset for e in events(TAGGED) if e.event_type == 0x04)  # the rotate after XID
    assert start in offsets and tagged.transaction_length == xid_end - start


def test_the_tagged_previous_gtids_encoding_decodes_to_the_servers_set() -> None:
    (body,) = bodies(TAGGED, PREVIOUS_GTIDS_EVENT)
    previous = decode_previous_gtids(body)
    assert str(previous) == f"{SERVER}:1-13:mytag:1-2"
    # After the tagged transaction commits, the offset's set holds it: mytag:1-3.
    after = previous.add(decode_tagged_gtid(bodies(TAGGED, GTID_TAGGED_LOG_EVENT)[0]).gtid)
    assert str(after) == f"{SERVER}:1-13:mytag:1-3"
    stored = SourceOffset.from_map({"file": "binlog.000004", "pos": 541, "gtids": str(after)})
    assert SourceOffset.from_map(stored.to_map()).gtids == after
    # A restart from the set before the transaction reads it again; from the set after, not.
    assert not previous.contains(GtidSet.parse(f"{SERVER}:mytag:3"))
    assert after.contains(GtidSet.parse(f"{SERVER}:mytag:3"))


@pytest.mark.parametrize(
    "name",
    [
        "percona-operator/binlog.000003",
        "rust_mysql_common/binlog-invisible-columns.000001",
        "rust_mysql_common/mysql_type_bit.000001",
    ],
)
def test_the_untagged_previous_gtids_encoding_still_decodes(name: str) -> None:
    """The file's first GTID event (``GTID_LOG_EVENT``: flags, 16-byte uuid, 8-byte gno) continues
    the set the PREVIOUS_GTIDS event announces (a server numbers its transactions without gaps)."""
    (body,) = bodies(name, PREVIOUS_GTIDS_EVENT)
    previous = decode_previous_gtids(body)
    first = bodies(name, 0x21)[0]
    source, gno = str(uuid.UUID(bytes=first[1:17])), int.from_bytes(first[17:25], "little")
    assert str(previous.retain(lambda s: s == source)) == (f"{source}:1-{gno - 1}" if gno > 1 else "")


def test_the_next_files_previous_gtids_end_at_the_last_transaction_of_the_file_before() -> None:
    # zongji: the head of binlog 2 follows the slice of binlog 1 captured from the same server.
    (body,) = bodies("zongji/zongji-mysql84-head.000002.bin", PREVIOUS_GTIDS_EVENT)
    last = bodies("zongji/zongji-mysql84-part.000001.bin", 0x21)[-1]
    source, gno = str(uuid.UUID(bytes=last[1:17])), int.from_bytes(last[17:25], "little")
    assert str(decode_previous_gtids(body)) == f"{source}:1-{gno}"


def test_varlen_integers_follow_the_trailing_ones_rule() -> None:
    # 1 byte: value << 1; 2 bytes: value << 2 | 0b01; 9 bytes: 0xFF then 8 bytes little-endian.
    assert read_varlen_uint(bytes([60 << 1]), 0) == (60, 1)
    assert read_varlen_uint(((0x89 << 2) | 1).to_bytes(2, "little"), 0) == (0x89, 2)
    assert read_varlen_uint(b"\xff" + (2**64 - 1).to_bytes(8, "little"), 0) == (2**64 - 1, 9)
    assert read_varlen_int(bytes([3 << 1]), 0) == (-2, 1)  # zig-zag: 3 -> -2
    assert read_varlen_int(bytes([6 << 1]), 0) == (3, 1)


def test_a_truncated_or_newer_tagged_event_is_refused_with_the_byte_offset() -> None:
    (body,) = bodies(TAGGED, GTID_TAGGED_LOG_EVENT)
    with pytest.raises(GtidEventError, match="byte"):
        decode_tagged_gtid(body[:20])
    with pytest.raises(GtidEventError, match="serialization version 3"):
        decode_tagged_gtid(b"\x03" + body[1:])


def test_the_guard_no_longer_refuses_tagged_gtid_events() -> None:
    # Streaming decodes them now (connector.sources.streaming._on_tagged_gtid); the guard would call an
    # undecoded 0x2A "unknown", never pass it silently.
    assert GTID_TAGGED_LOG_EVENT not in UNREADABLE_DATA_EVENTS
    assert GTID_TAGGED_LOG_EVENT not in HARMLESS_EVENT_TYPES


@pytest.mark.parametrize(
    "name",
    [
        TAGGED,
        "rust_mysql_common/binlog_transaction_previous_GTID_no_tag.000001",
        "percona-operator/binlog.000003",
        "rust_mysql_common/binlog-invisible-columns.000001",
    ],
)
def test_gtid_sets_encode_byte_for_byte_as_mysql_writes_them(name: str) -> None:
    # PREVIOUS_GTIDS holds Gtid_set::encode's output, the same form COM_BINLOG_DUMP_GTID sends.
    (body,) = bodies(name, PREVIOUS_GTIDS_EVENT)
    assert encode_gtid_set(decode_previous_gtids(body)) == body


def test_a_gtid_restart_from_a_tagged_set_sends_the_tagged_encoding() -> None:
    """mysql-replication builds the dump request's set with ``binlogstream.GtidSet(text)``; its own
    class cannot parse tags. Taught (connector.binlog.library_support), a tagged text gives MySQL's tagged
    encoding and an untagged one the library's own."""
    from pymysqlreplication import binlogstream

    from connector.binlog.library_support import DumpGtidSet

    (body,) = bodies(TAGGED, PREVIOUS_GTIDS_EVENT)
    dump = binlogstream.GtidSet(f"{SERVER}:1-13:mytag:1-2")
    assert isinstance(dump, DumpGtidSet)
    assert dump.encoded() == body and dump.encoded_length == len(body)
    untagged = binlogstream.GtidSet(f"{SERVER}:1-13")
    assert untagged.encoded() == encode_gtid_set(GtidSet.parse(f"{SERVER}:1-13"))


def test_varlen_encoding_round_trips() -> None:
    for value in (0, 1, 127, 128, 300, 2**20, 2**56 - 1, 2**56, 2**63, 2**64 - 1):
        encoded = encode_varlen_uint(value)
        assert read_varlen_uint(encoded, 0) == (value, len(encoded))
