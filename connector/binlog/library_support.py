"""MySQL 8.3+/9 binlog features mysql-replication 1.0.17 does not know, taught to the library.

Tagged GTID sets (MySQL 8.3+): the library's ``GtidSet`` cannot parse ``uuid:1-5:tag:1-3``, so a
GTID restart from such a set (COM_BINLOG_DUMP_GTID) would fail before asking the server. The dump
request's set is built by our ``encode_gtid_set`` instead when it has tags (MySQL's tagged binary
form, byte-identical to the tagged PREVIOUS_GTIDS a MySQL 9.6 server wrote); untagged sets keep the
library's own encoding.

``VECTOR`` (MySQL 9.0, column type 242) carries one metadata byte in TABLE_MAP, the size of the
value's length prefix (4), like a BLOB; the value is that many bytes of little-endian float32s. The
library reads no metadata for a type it does not know, so every later column's metadata, and the
optional metadata after them, would be read from the wrong bytes. ``teach_the_library`` wraps the
library's column-definition parser once (idempotent) so that it reads VECTOR's byte; the row images
are read by ``connector.binlog.row_decoder``'s generated reader, which has a VECTOR reader of its own.
"""

from __future__ import annotations

from typing import Any

from pymysqlreplication import binlogstream as library_stream
from pymysqlreplication import column as library_column
from pymysqlreplication import event as library_event
from pymysqlreplication import gtid as library_gtid
from pymysqlreplication import row_event as library_rows

from connector.binlog.gtid_events import decode_previous_gtids, encode_gtid_set
from connector.binlog.json.diff import read_length_encoded
from mysql_cdc_base.position import GtidSet

VECTOR = 242
_PARSER_NAME = "_Column__parse_column_definition"  # Column.__parse_column_definition, name-mangled


def teach_the_library() -> None:
    """Make mysql-replication's ``Column`` read the TABLE_MAP metadata of MySQL 9 types."""
    original = getattr(library_column.Column, _PARSER_NAME)
    if getattr(original, "mysql_cdc_vector", False):
        return

    def parse_column_definition(self: Any, column_type: int, packet: Any) -> None:
        original(self, column_type, packet)
        if column_type == VECTOR:
            self.length_size = packet.read_uint8()

    parse_column_definition.mysql_cdc_vector = True  # type: ignore[attr-defined]
    setattr(library_column.Column, _PARSER_NAME, parse_column_definition)
    library_stream.GtidSet = DumpGtidSet
    library_event.PreviousGtidsEvent.__init__ = _previous_gtids_init
    read_optional = library_rows.TableMapEvent._get_optional_meta_data

    def get_optional_meta_data(self: Any) -> Any:
        _drop_unknown_optional_metadata(self.packet)
        return read_optional(self)

    library_rows.TableMapEvent._get_optional_meta_data = get_optional_meta_data


# -- PREVIOUS_GTIDS: the library reads only the untagged encoding (a tagged one makes it read past
# the event). Ours reads both; the set's text is kept where the library keeps its own.
def _previous_gtids_init(
    self: Any, from_packet: Any, event_size: int, table_map: Any, ctl: Any, **kwargs: Any
) -> None:
    library_event.BinLogEvent.__init__(self, from_packet, event_size, table_map, ctl, **kwargs)
    gtids = decode_previous_gtids(bytes(self.packet.read(event_size)))
    self._previous_gtids = str(gtids)
    self._gtids = self._previous_gtids.split(",") if self._previous_gtids else []
    self._n_sid = len(gtids.mysql)


# -- TABLE_MAP optional metadata: a type-length-value list up to the event's 4-byte checksum. The
# library knows types 1-12 and, meeting a newer one (MySQL 9's 13, VECTOR_DIMENSIONALITY), fails;
# it could not skip one anyway (it reads each value by type). Newer entries are taken out of the
# packet's bytes before it reads them: the dimensions are in the DDL (VECTOR(n)).
_KNOWN_OPTIONAL_METADATA = frozenset(range(1, 13))
_CHECKSUM_LEN = 4


def _drop_unknown_optional_metadata(wrapper: Any) -> None:
    packet = wrapper.packet  # pymysql's MysqlPacket: the whole event, read up to _position
    data: bytes = packet._data
    start, end = packet._position, len(data) - _CHECKSUM_LEN
    kept = bytearray()
    pos = start
    while pos < end:
        entry_type = data[pos]
        length, value_start = read_length_encoded(data, pos + 1)
        if entry_type in _KNOWN_OPTIONAL_METADATA:
            kept += data[pos : value_start + length]
        pos = value_start + length
    if len(kept) != end - start:
        packet._data = data[:start] + bytes(kept) + data[end:]


class DumpGtidSet(library_gtid.GtidSet):
    """The set a COM_BINLOG_DUMP_GTID request sends: the library's, or ours for tagged sets."""

    def __init__(self, gtid_set: Any) -> None:
        self.tagged: bytes | None = None
        if isinstance(gtid_set, str) and has_tags(gtid_set):
            self.tagged = encode_gtid_set(GtidSet.parse(gtid_set))
            self.text = gtid_set
            super().__init__(None)
        else:
            super().__init__(gtid_set)

    @property
    def encoded_length(self) -> int:
        return len(self.tagged) if self.tagged is not None else int(super().encoded_length)

    def encoded(self) -> bytes:
        return self.tagged if self.tagged is not None else bytes(super().encoded())

    def __str__(self) -> str:
        return self.text if self.tagged is not None else str(super().__str__())


def has_tags(text: str) -> bool:
    """Does a MySQL GTID set's text name a tag (a part after the UUID that is not an interval)?"""
    return any(
        part.strip() and not part.strip()[0].isdigit()
        for element in text.split(",")
        for part in element.strip().split(":")[1:]
    )


teach_the_library()
