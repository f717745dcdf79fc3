"""MySQL 8.3+/8.4 GTID sets with tags (``uuid:1-5:tag:1-3``), in the server's text form.

The samples follow the GTID set syntax of the MySQL 8.4 reference manual ("GTID Format and
Storage": a tag, up to 32 letters, digits and underscores not starting with a digit, applies to the
intervals after it; tags compare case-insensitively) and the form ``gtid_executed`` prints (tags in
lower case, sorted, after the untagged intervals of their server).
"""

from __future__ import annotations

import pytest

from mysql_cdc_base.position import GtidSet, InvalidGtidSetError, SourceOffset

A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
B = "4e11fa47-71ca-11e1-9e33-c80aa9429562"


def test_tagged_intervals_belong_to_their_tag() -> None:
    gtids = GtidSet.parse(f"{A.upper()}:1-5:Beta:4:alpha:1-3:7,\n{B}:tag_x:7")
    assert gtids.mysql == {
        A: ((1, 5),),
        f"{A}:beta": ((4, 4),),
        f"{A}:alpha": ((1, 3), (7, 7)),
        f"{B}:tag_x": ((7, 7),),
    }
    # The server's form: untagged intervals first, then tags in order, lower case.
    assert str(gtids) == f"{A}:1-5:alpha:1-3:7:beta:4,{B}:tag_x:7"
    assert GtidSet.parse(str(gtids)) == gtids


def test_a_tagged_transaction_extends_only_its_tag() -> None:
    gtids = GtidSet.parse(f"{A}:1-5:alpha:1-3").add(f"{A}:alpha:4").add(f"{A}:6")
    assert str(gtids) == f"{A}:1-6:alpha:1-4"
    assert gtids.contains(GtidSet.parse(f"{A}:alpha:2-4"))
    assert not gtids.contains(GtidSet.parse(f"{A}:beta:1"))
    assert not GtidSet.parse(f"{A}:1-6").contains(GtidSet.parse(f"{A}:alpha:1"))
    assert GtidSet.parse(f"{A}:1-3").count_missing(GtidSet.parse(f"{A}:1-5:alpha:1-2")) == 4


def test_source_filters_match_the_server_uuid_of_tagged_gtids() -> None:
    # gtid.source.includes/excludes match the UUID, tagged or not (Debezium takes the text before
    # the first ':').
    assert GtidSet.source_of(f"{A}:alpha:9") == A
    gtids = GtidSet.parse(f"{A}:1-5:alpha:1-3,{B}:1-9:beta:2")
    assert str(gtids.retain(lambda uuid: uuid == B)) == f"{B}:1-9:beta:2"
    executed = GtidSet.parse(f"{A}:1-8:alpha:1-6,{B}:1-12:beta:1-3")
    restart = gtids.with_sources_of(executed, lambda uuid: uuid == B)
    assert str(restart) == f"{B}:1-9:beta:2,{A}:1-8:alpha:1-6"


def test_offsets_with_tagged_gtids_round_trip() -> None:
    stored = {"file": "binlog.000003", "pos": 4711, "gtids": f"{A}:1-5:alpha:1-3", "event": 2, "row": 1}
    offset = SourceOffset.from_map(stored)
    assert offset.gtids == GtidSet.parse(f"{A}:1-5:alpha:1-3")
    assert offset.to_map() == stored | {"gtids": f"{A}:1-5:alpha:1-3"}


@pytest.mark.parametrize(
    "text",
    [f"{A}:1-5:9tag:1", f"{A}:alpha", f"{A}:{'t' * 33}:1", f"{A}:1-5:al-pha:1"],
)
def test_malformed_tagged_sets_are_refused(text: str) -> None:
    with pytest.raises(InvalidGtidSetError):
        GtidSet.parse(text)
