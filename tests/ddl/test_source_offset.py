"""``SourceOffset.with_``: a copy with some fields changed, serialised afresh."""

from __future__ import annotations

import dataclasses

import pytest

from mysql_cdc_base.position import GtidSet, SourceOffset


def test_with_changes_only_the_named_fields_and_serialises_the_copy_afresh() -> None:
    offset = SourceOffset("mysql-bin.000003", 154, GtidSet.parse("0-1-7"), event=2, row=1, server_id=1)
    assert offset.to_map()["row"] == 1  # serialised (and cached) before the copy

    copy = offset.with_(row=5, snapshot="INCREMENTAL", extra=(("k", "v"),))

    assert copy.to_map() == {**offset.to_map(), "row": 5, "snapshot": "INCREMENTAL", "k": "v"}
    assert offset.to_map()["row"] == 1 and "k" not in offset.to_map()
    assert copy.at_row(9)["row"] == 9 and copy["row"] == 5


def test_with_refuses_a_field_the_offset_does_not_have() -> None:
    with pytest.raises(TypeError, match="rows"):
        SourceOffset("mysql-bin.000003", 154).with_(rows=5)


def test_an_offset_built_in_the_stream_equals_the_dataclass_built_one_field_for_field():
    gtids = GtidSet.parse("0-1-5")
    fast = SourceOffset.in_stream("mysql-bin.000002", 881, gtids, 3, 1, 7, 1700000000)
    built = SourceOffset("mysql-bin.000002", 881, gtids, 3, 1, 7, 1700000000)
    # Every field set, none more (a field added to the dataclass must be added to in_stream too).
    assert dict(fast.__dict__) == {f.name: getattr(built, f.name) for f in dataclasses.fields(built)}
    assert fast.to_map() == built.to_map()


@pytest.mark.parametrize(
    "offset", [SourceOffset("", 0), SourceOffset("mysql-bin.000001", 4, snapshot="true")]
)
def test_an_offset_is_true_without_building_its_map(offset: SourceOffset) -> None:
    """``offset or last`` runs for every event a sink batches: an offset is true (its map always
    holds the file and position) and saying so builds no map."""
    assert offset and len(offset.to_map()) >= 2
    assert "_map" not in offset.__dict__
    assert (offset or None) is offset
