"""The offset context of a snapshot: the rows' offsets restart the snapshot until it completes, then
streaming starts at the snapshot's binlog position; the ``source`` block carries the marker."""

from __future__ import annotations

from connector.sources.incremental import INCREMENTAL_OFFSET
from connector.sources.offset_context import BinlogOffsetContext
from mysql_cdc_base.position import SNAPSHOT_INITIAL, BinlogPosition, GtidSet, SourceOffset

_UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
_POSITION = BinlogPosition("mysql-bin.000003", 1570, f"{_UUID}:1-42")


def test_snapshot_rows_restart_the_snapshot_until_it_completes() -> None:
    context = BinlogOffsetContext.at_snapshot(_POSITION)
    row_offset = context.snapshot_offset(SNAPSHOT_INITIAL)
    assert row_offset.in_snapshot
    stored = SourceOffset.from_map(row_offset.to_map())
    assert (stored.file, stored.pos, stored.snapshot) == ("mysql-bin.000003", 1570, SNAPSHOT_INITIAL)
    assert stored.gtids == GtidSet.parse(f"{_UUID}:1-42")


def test_completed_snapshot_offset_is_where_streaming_starts() -> None:
    context = BinlogOffsetContext.at_snapshot(_POSITION)
    completed = context.snapshot_offset(None)
    assert not completed.in_snapshot
    assert "snapshot" not in completed.to_map()
    # Streaming from the stored completed offset starts reading at the snapshot's position.
    streaming = BinlogOffsetContext(SourceOffset.from_map(completed.to_map()))
    assert streaming.restart_point() == ("mysql-bin.000003", 1570)
    assert streaming.gtids == GtidSet.parse(f"{_UUID}:1-42")


def test_snapshot_without_gtids_and_incremental_kind() -> None:
    context = BinlogOffsetContext.at_snapshot(BinlogPosition("mysql-bin.000001", 4, None))
    offset = context.snapshot_offset(INCREMENTAL_OFFSET)
    assert offset.gtids is None
    assert not offset.in_snapshot  # an incremental snapshot does not restart from scratch
    assert offset.to_map()["snapshot"] == INCREMENTAL_OFFSET


def test_snapshot_source_position_carries_the_marker() -> None:
    context = BinlogOffsetContext.at_snapshot(_POSITION)
    where = context.snapshot_position("first_in_data_collection", 1_700_000_000_123)
    assert (where.file, where.pos, where.snapshot, where.ts_ms) == (
        "mysql-bin.000003",
        1570,
        "first_in_data_collection",
        1_700_000_000_123,
    )
    assert where.gtid is None and where.row == 0  # a snapshot row is in no binlog transaction
