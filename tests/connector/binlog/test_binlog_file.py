"""The binlog file source's own parts on files real MySQL 8 servers wrote (and damaged copies of
them): framing, checksums, positions, compressed transactions, structures from FULL metadata."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from pymysqlreplication.row_event import TableMapEvent

from connector.binlog.files import (
    FORMAT_DESCRIPTION_EVENT,
    BinlogFileError,
    BinlogFileReader,
    read_file_events,
)
from connector.binlog.packets import (
    COMPRESSION_ZSTD,
    HEADER_LEN,
    TRANSACTION_PAYLOAD_EVENT,
    ControlStandIn,
    PayloadError,
    payload_events,
    payload_header,
)
from connector.binlog.table_map_ddl import create_table_statement
from connector.errors import ReplicationError
from ddl.model import SchemaModel
from ddl.parsing.parser import parser_for
from mysql_cdc_base.table_id import TableId
from tests.connector.binlog_file_support import sample

QUERY_BIGGER = sample("rust-us/8.0_02_query_bigger.binlog.000733")
COMPRESSED = sample("rust_mysql_common/transaction_compression.000001")
ZONGJI_PART = sample("zongji/zongji-mysql84-part.000001.bin")
ZONGJI_FULL = sample("zongji/zongji-mysql84-fullmeta-part.000002.bin")


def all_events(path: Path) -> list:
    return list(BinlogFileReader([path], "", 0).events())


def test_positions_are_the_servers_and_follow_each_other():
    events = all_events(QUERY_BIGGER)
    offsets = [e.offset for e in read_file_events(QUERY_BIGGER)]
    # A file the server wrote from its start: every event starts where the file holds it.
    assert [e.start_pos for e in events] == offsets
    assert all(a.end_pos == b.start_pos for a, b in zip(events, events[1:], strict=False))
    assert events[-1].end_pos == QUERY_BIGGER.stat().st_size
    assert {e.file for e in events} == {QUERY_BIGGER.name}


def test_a_dump_slice_keeps_the_server_positions_not_the_file_offsets():
    events = all_events(ZONGJI_PART)
    fde, first = events[0], events[1]
    assert fde.event_type == FORMAT_DESCRIPTION_EVENT
    assert (fde.start_pos, fde.end_pos) == (0, 0)  # the FDE a dump starts with: log_pos 0
    # The README: a byte-exact slice of the server's file from offset 3359.
    assert first.start_pos == 3359
    framed = list(read_file_events(ZONGJI_PART))
    assert first.start_pos != framed[1].offset
    assert all(a.end_pos == b.start_pos for a, b in zip(events[1:], events[2:], strict=False))


def test_the_fde_checksum_is_computed_with_the_in_use_flag_cleared():
    fde = next(iter(read_file_events(QUERY_BIGGER)))
    flags = struct.unpack_from("<H", fde.data, 17)[0]
    assert flags & 0x1  # the server still had this file open when it was copied
    stored = struct.unpack_from("<I", fde.data, len(fde.data) - 4)[0]
    assert zlib.crc32(fde.data[:-4]) != stored
    assert all_events(QUERY_BIGGER)[0].event_type == FORMAT_DESCRIPTION_EVENT  # accepted


def _damaged(tmp_path: Path, source: Path, offset: int) -> Path:
    data = bytearray(source.read_bytes())
    data[offset] ^= 0x40
    target = tmp_path / source.name
    target.write_bytes(bytes(data))
    return target


@pytest.mark.parametrize("index", [0, 3, -2])
def test_a_flipped_byte_stops_naming_the_file_and_the_events_offset(tmp_path, index):
    event = list(read_file_events(QUERY_BIGGER))[index]
    damaged = _damaged(tmp_path, QUERY_BIGGER, event.offset + HEADER_LEN + 1)
    with pytest.raises(BinlogFileError) as caught:
        all_events(damaged)
    message = str(caught.value)
    assert str(damaged) in message
    assert f"byte offset {event.offset} " in message and "CRC32" in message


def test_a_file_truncated_inside_an_event_stops_naming_the_offset(tmp_path):
    last = list(read_file_events(QUERY_BIGGER))[-1]
    cut = tmp_path / QUERY_BIGGER.name
    cut.write_bytes(QUERY_BIGGER.read_bytes()[: last.offset + 30])
    with pytest.raises(BinlogFileError, match=rf"truncated: the event at byte offset {last.offset} "):
        all_events(cut)
    header_cut = tmp_path / "header-cut.000001"
    header_cut.write_bytes(QUERY_BIGGER.read_bytes()[: last.offset + 7])
    with pytest.raises(BinlogFileError, match=rf"byte offset {last.offset} has 7 of the 19 header bytes"):
        all_events(header_cut)


def test_a_file_that_is_not_a_binlog_stops_at_offset_zero(tmp_path):
    wrong = tmp_path / "notes.000001"
    wrong.write_bytes(b"SELECT 1;\n" * 10)
    with pytest.raises(BinlogFileError, match=r"notes.000001 is not a binlog file: .* byte offset 0"):
        all_events(wrong)


def _payload_body(path: Path) -> bytes:
    event = next(e for e in read_file_events(path) if e.event_type == TRANSACTION_PAYLOAD_EVENT)
    return event.data[HEADER_LEN:-4]


def test_payload_header_fields_and_inner_events():
    body = _payload_body(COMPRESSED)
    header = payload_header(body)
    assert header.compression_type == COMPRESSION_ZSTD
    assert header.header_len + header.payload_size == len(body)
    inner = payload_events(body, "x:1")
    assert sum(len(e) for e in inner) == header.uncompressed_size
    # QUERY (BEGIN), TABLE_MAP, WRITE_ROWS_V2, XID - as the sample's README lists them.
    assert [e[4] for e in inner] == [0x02, 0x13, 0x1E, 0x10]


def test_payload_positions_are_the_payload_events_own():
    payload = next(e for e in read_file_events(COMPRESSED) if e.event_type == TRANSACTION_PAYLOAD_EVENT)
    inner = [e for e in all_events(COMPRESSED) if e.start_pos == payload.offset]
    assert [e.event_type for e in inner] == [0x02, 0x13, 0x1E, 0x10]
    assert {e.end_pos for e in inner} == {payload.offset + len(payload.data)}


def test_a_compression_other_than_zstd_stops_naming_the_event():
    body = _payload_body(COMPRESSED)
    assert body[:3] == bytes([2, 1, COMPRESSION_ZSTD])  # field 2 (compression type), 1 byte
    lz4 = bytes([2, 1, 1]) + body[3:]
    with pytest.raises(PayloadError, match=r"at binlog\.000009:1234 is compressed with unknown type 1"):
        payload_events(lz4, "binlog.000009:1234")


def test_a_damaged_payload_stops_naming_the_event():
    body = bytearray(_payload_body(COMPRESSED))
    header = payload_header(bytes(body))
    body[header.header_len + 8] ^= 0xFF
    with pytest.raises(PayloadError, match=r"TRANSACTION_PAYLOAD event at f:9 "):
        payload_events(bytes(body), "f:9")


def test_no_decoding_step_can_query_a_server():
    with pytest.raises(ReplicationError, match="tried to query a server"):
        ControlStandIn("mysql").cursor()


def _structures(path: Path) -> tuple[object, object]:
    """(the table from the file's CREATE TABLE, the table from its TABLE_MAP's FULL metadata)."""
    parser = parser_for("mysql")
    events = all_events(path)
    create = next(
        e.event for e in events if type(e.event).__name__ == "QueryEvent" and "CREATE TABLE" in e.event.query
    )
    table_map = next(e.event for e in events if isinstance(e.event, TableMapEvent))
    table_id = TableId(str(table_map.schema), str(table_map.table))
    from_ddl = parser.parse(create.query, SchemaModel(), table_id.database).model.table(table_id)
    statement = create_table_statement(table_map)
    assert statement is not None
    from_map = parser.parse(statement, SchemaModel(), table_id.database).model.table(table_id)
    return from_ddl, from_map


@pytest.mark.parametrize("path", [ZONGJI_FULL, sample("rust_mysql_common/mysql-enum-string-set.000001")])
def test_full_row_metadata_describes_the_table_as_its_create_table_does(path):
    from_ddl, from_map = _structures(path)
    assert from_map.column_names == from_ddl.column_names
    assert from_map.primary_key == from_ddl.primary_key
    for ddl_column in from_ddl.columns:
        map_column = from_map.column(ddl_column.name)
        described = (ddl_column.jdbc_type, ddl_column.enum_values, ddl_column.optional, ddl_column.unsigned)
        assert (map_column.jdbc_type, map_column.enum_values, map_column.optional, map_column.unsigned) == (
            described
        ), ddl_column.name
        if ddl_column.charset is not None:
            assert map_column.charset == ddl_column.charset, ddl_column.name
        if ddl_column.data_type.upper() not in (
            "INT",
            "BIGINT",
            "INTEGER",
            "TINYINT",
            "SMALLINT",
            "MEDIUMINT",
        ):
            assert (map_column.length, map_column.scale) == (ddl_column.length, ddl_column.scale), (
                ddl_column.name
            )


def test_minimal_metadata_gives_no_statement():
    table_map = next(
        e.event
        for e in all_events(sample("rust_mysql_common/minimal_row_metadata.000001"))
        if isinstance(e.event, TableMapEvent)
    )
    assert create_table_statement(table_map) is None


def test_server_streaming_expands_a_payload_with_the_same_code():
    """Server streaming gets a payload as mysql-replication's NotImplementedEvent (it has no class
    for 0x28); ``server_payload`` expands that object. Built here by the library's own parser from
    the sample's bytes, as a server would send them (the event with its CRC32)."""
    from pymysqlreplication.event import NotImplementedEvent

    from connector.binlog.files import format_description
    from connector.binlog.packets import ParserState, parse_event, server_payload
    from connector.binlog.server_stream import RawEvent

    framed = list(read_file_events(COMPRESSED))
    fde = format_description(framed[0], COMPRESSED)
    state = ParserState(ControlStandIn("mysql"), fde.version_tuple, fde.post_header_lengths)
    payload = next(e for e in framed if e.event_type == TRANSACTION_PAYLOAD_EVENT)
    event = parse_event(state, payload.data, has_checksum=True)
    assert isinstance(event, NotImplementedEvent)
    raw = RawEvent(event, COMPRESSED.name, payload.offset, payload.log_pos, payload.timestamp, 1, 0x28)
    from_server = [
        (type(e.event).__name__, e.start_pos, e.end_pos, e.event_type) for e in server_payload(raw)
    ]
    from_file = [
        (type(e.event).__name__, e.start_pos, e.end_pos, e.event_type)
        for e in all_events(COMPRESSED)
        if e.start_pos == payload.offset
    ]
    assert from_server == from_file
    assert [name for name, *_ in from_server] == ["QueryEvent", "TableMapEvent", "WriteRowsEvent", "XidEvent"]
    assert state.table_map  # the stream's table map learnt the inner TABLE_MAP


def test_an_event_the_parser_cannot_read_stops_naming_the_file_and_offset(tmp_path):
    """A TABLE_MAP whose column count is damaged (its CRC32 made to match again): the parser fails,
    and the error names the file and the event, never a bare parser exception."""
    from tests.connector.binlog_file_support import with_crc

    source = sample("rust_mysql_common/mysql_type_bit.000001")
    table_map = next(e for e in read_file_events(source) if e.event_type == 0x13)
    body = bytearray(table_map.data[:-4])
    # Post-header: table id (6) and flags (2); then schema (length, name, NUL), table (length, name,
    # NUL), then the column count: set it far beyond the event.
    at = HEADER_LEN + 8
    at += 1 + body[at] + 1
    at += 1 + body[at] + 1
    body[at] = 250
    damaged = tmp_path / source.name
    data = source.read_bytes()
    start = table_map.offset
    damaged.write_bytes(data[:start] + with_crc(bytes(body)) + data[start + len(table_map.data) :])
    with pytest.raises(
        BinlogFileError, match=rf"{source.name}: the event at byte offset {start} \(type 0x13"
    ):
        all_events(damaged)
