"""Partial JSON updates (``binlog_row_value_options=PARTIAL_JSON``): MySQL's diff lists, decoded from
a real MySQL 8.0.22 binlog and applied to the documents the rows held.

``rust_mysql_common/json.binlog.000001``: table ``t(id INT PRIMARY KEY, json_col JSON, name
VARCHAR(100) AS (json_col->>'$.name'), age INT AS (json_col->'$.age'))``; six rows written, one
full-image UPDATE, then one PARTIAL_UPDATE_ROWS event written with ``binlog_row_image=MINIMAL`` (the
before images hold only ``id``; the after images the changed columns: ``json_col`` as diffs and the
two generated columns). MySQL computed those generated columns from the document it stored, so they
tell, independently of our decoding, what the new document holds.
"""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from pymysqlreplication.constants import FIELD_TYPE
from pymysqlreplication.row_event import PartialUpdateRowsEvent

from connector.binlog.guard import EventGuard, UnsafeEventError, incomplete_image
from connector.binlog.image_reader import compile_image_reader
from connector.binlog.json.binary import BinaryJson
from connector.binlog.json.diff import (
    INSERT,
    REMOVE,
    REPLACE,
    JsonDiff,
    PartialJsonError,
    apply_json_diffs,
    decode_json_diffs,
    parse_path,
    read_length_encoded,
)
from connector.binlog.row_decoder import read_partial_update_rows
from mysql_cdc_base.table_id import TableId
from tests.connector.mysql8_support import bodies, rows_event_parts

SAMPLE = "rust_mysql_common/json.binlog.000001"
WRITE_ROWS, UPDATE_ROWS, PARTIAL_UPDATE_ROWS = 0x1E, 0x1F, 0x27
# The table map's columns (types 3, 245, 15, 3; JSON length 4 bytes; VARCHAR(100) utf8mb4 = 400).
ID = SimpleNamespace(type=FIELD_TYPE.LONG, unsigned=False)
DOC = SimpleNamespace(type=FIELD_TYPE.JSON, length_size=4)
NAME = SimpleNamespace(type=FIELD_TYPE.VARCHAR, max_length=400, character_set_name="utf8mb4")
AGE = SimpleNamespace(type=FIELD_TYPE.LONG, unsigned=False)
UTF8 = {2: "utf-8"}


def documents_after_the_full_update() -> dict[int, Any]:
    """id -> document, from the full-image UPDATE that precedes the partial one."""
    reader = compile_image_reader([ID, DOC, NAME, AGE], UTF8)
    (body,) = bodies(SAMPLE, UPDATE_ROWS)
    rows = rows_event_parts(body, update=True).rows
    out, p = {}, 0
    while p < len(rows):
        _before, p = reader(rows, p)
        after, p = reader(rows, p)
        out[after[0]] = after[1].document()
    return out


def partial_rows() -> list[tuple[int, bytes, str, int]]:
    """(id, json_col diff bytes, name, age) of the partial update's rows, read by our decoder's
    raw-JSON reader over the columns each image holds."""
    (body,) = bodies(SAMPLE, PARTIAL_UPDATE_ROWS)
    parts = rows_event_parts(body, update=True)
    assert parts.before_bitmap == 0b0001 and parts.after_bitmap == 0b1110  # MINIMAL images
    before_reader = compile_image_reader([ID], {})
    after_reader = compile_image_reader([DOC, NAME, AGE], {1: "utf-8"}, raw_json=True)
    data, p, out = parts.rows, 0, []
    while p < len(data):
        before, p = before_reader(data, p)
        options, p = read_length_encoded(data, p)
        assert options == 1  # PARTIAL_JSON
        partial_bits = data[p]
        p += 1
        assert partial_bits == 1  # the one JSON column holds diffs
        after, p = after_reader(data, p)
        out.append((before[0], after[0], after[1], after[2]))
    return out


def test_the_sample_diffs_rebuild_the_documents_mysql_holds() -> None:
    known = documents_after_the_full_update()
    rows = partial_rows()
    assert [row[0] for row in rows] == sorted(known)  # every row of the table changed
    for row_id, diff_bytes, name, age in rows:
        diffs = decode_json_diffs(diff_bytes)
        assert [(d.operation, d.path) for d in diffs] == [(REPLACE, "$.age")]
        rebuilt = apply_json_diffs(known[row_id], diffs)
        # MySQL's generated columns over the stored document: name = ->>'$.name', age = ->'$.age'.
        assert rebuilt[b"age"] == age and rebuilt[b"name"].decode() == name
        # Nothing else changed; the input document is left as it was (a pure function).
        assert {k: v for k, v in rebuilt.items() if k != b"age"} == {
            k: v for k, v in known[row_id].items() if k != b"age"
        }
        assert known[row_id][b"age"] == age - 1


def test_a_full_image_partial_update_rebuilds_the_after_image() -> None:
    """binlog_row_image=FULL with PARTIAL_JSON: the before image holds the document. The event is
    built from the sample's own images: the full UPDATE's after image of row 1 as the before image,
    and an after image holding row 1's id and the sample's diff, name and age columns."""
    full_reader = compile_image_reader([ID, DOC, NAME, AGE], UTF8)
    (update_body,) = bodies(SAMPLE, UPDATE_ROWS)
    update_rows = rows_event_parts(update_body, update=True).rows
    _, p = full_reader(update_rows, 0)
    start = p
    before, end = full_reader(update_rows, p)  # the after image of row 1 = its current state
    before_image = update_rows[start:end]
    row_id, diff_bytes, name, age = partial_rows()[0]
    assert row_id == before[0] == 1
    encoded_name = name.encode()
    after_image = (
        b"\x00"  # null bitmap: no NULLs
        + row_id.to_bytes(4, "little")
        + len(diff_bytes).to_bytes(4, "little")
        + diff_bytes
        + len(encoded_name).to_bytes(2, "little")  # VARCHAR of 400 bytes: 2-byte length
        + encoded_name
        + age.to_bytes(4, "little", signed=True)
    )
    body = before_image + b"\x01\x01" + after_image  # value options PARTIAL_JSON, partial bitmap
    raw_reader = compile_image_reader([ID, DOC, NAME, AGE], UTF8, raw_json=True)
    ((old, new),) = read_partial_update_rows(full_reader, raw_reader, [1], body)
    assert old == before
    assert new == [1, {**before[1].document(), b"age": age}, name, age]


def test_a_json_column_without_the_partial_bit_is_a_whole_document() -> None:
    full_reader = compile_image_reader([ID, DOC], {})
    raw_reader = compile_image_reader([ID, DOC], {}, raw_json=True)
    document = b"\x05\x07\x00"  # binary JSON int16 7
    image = b"\x00" + (1).to_bytes(4, "little") + len(document).to_bytes(4, "little") + document
    ((old, new),) = read_partial_update_rows(full_reader, raw_reader, [1], image + b"\x01\x00" + image)
    assert old == new == [1, BinaryJson(document)]
    # Without PARTIAL_JSON in the value options there is no partial bitmap at all.
    ((_, new),) = read_partial_update_rows(full_reader, raw_reader, [1], image + b"\x00" + image)
    assert new == [1, BinaryJson(document)] and new[1].document() == 7


# -- MySQL's path and operation semantics -----------------------------------------------------------
# Expected documents follow the MySQL 8.0 reference manual's JSON_REPLACE / JSON_SET / JSON_INSERT /
# JSON_ARRAY_INSERT / JSON_ARRAY_APPEND / JSON_REMOVE examples; objects keep MySQL's member order
# (shorter keys first, then bytewise), the order its binary JSON stores and prints.

DOC_A = {b"a": 1, b"b": [2, 3]}


@pytest.mark.parametrize(
    ("diff", "expected"),
    [
        # SELECT JSON_REPLACE('{"a": 1, "b": [2, 3]}', '$.a', 10) -> {"a": 10, "b": [2, 3]}
        (JsonDiff(REPLACE, "$.a", 10), {b"a": 10, b"b": [2, 3]}),
        # JSON_SET(..., '$.c', '[true, false]') on a new member: logged as INSERT
        (JsonDiff(INSERT, "$.c", [True, False]), {b"a": 1, b"b": [2, 3], b"c": [True, False]}),
        # JSON_ARRAY_INSERT('["a", {"b": [1, 2]}, [3, 4]]'-like): '$.b[0]' puts the value first
        (JsonDiff(INSERT, "$.b[0]", 1), {b"a": 1, b"b": [1, 2, 3]}),
        # JSON_ARRAY_APPEND / JSON_SET past the end: appended
        (JsonDiff(INSERT, "$.b[2]", 4), {b"a": 1, b"b": [2, 3, 4]}),
        # JSON_REMOVE('[1, [2, 3]]'-like): '$.b[0]' removes the element, later ones move down
        (JsonDiff(REMOVE, "$.b[0]"), {b"a": 1, b"b": [3]}),
        (JsonDiff(REMOVE, "$.a"), {b"b": [2, 3]}),
        (JsonDiff(REPLACE, "$.b[1]", {b"x": None}), {b"a": 1, b"b": [2, {b"x": None}]}),
    ],
)
def test_operations_follow_mysqls_json_functions(diff: JsonDiff, expected: Any) -> None:
    assert apply_json_diffs(DOC_A, [diff]) == expected
    assert list(apply_json_diffs(DOC_A, [diff])) == list(expected)  # member order too
    assert DOC_A == {b"a": 1, b"b": [2, 3]}


def test_an_inserted_member_takes_mysqls_key_order() -> None:
    document = {b"b": 1, b"aa": 2}
    assert list(apply_json_diffs(document, [JsonDiff(INSERT, "$.c", 3)])) == [b"b", b"c", b"aa"]
    assert list(apply_json_diffs(document, [JsonDiff(INSERT, "$.a", 3)])) == [b"a", b"b", b"aa"]


def test_paths_as_mysql_prints_them() -> None:
    assert parse_path("$") == ()
    assert parse_path('$.a."b c"[2].d') == (b"a", b"b c", 2, b"d")
    assert parse_path('$."k\\"q"') == (b'k"q',)
    assert parse_path("$[0][1]") == (0, 1)


@pytest.mark.parametrize(
    ("document", "diff"),
    [
        (DOC_A, JsonDiff(REPLACE, "$.missing", 1)),
        (DOC_A, JsonDiff(REMOVE, "$.b[5]")),
        (DOC_A, JsonDiff(INSERT, "$.a", 2)),  # the member exists: not an INSERT
        (DOC_A, JsonDiff(REPLACE, "$.a[0]", 2)),
        (None, JsonDiff(REPLACE, "$.a", 2)),  # no document to apply to
        (DOC_A, JsonDiff(REPLACE, "$.*", 2)),
    ],
)
def test_a_diff_that_does_not_fit_the_document_is_refused_naming_the_path(
    document: Any, diff: JsonDiff
) -> None:
    with pytest.raises(PartialJsonError, match=r"\$"):
        apply_json_diffs(document, [diff])


def test_truncated_diff_bytes_are_refused_with_the_byte_offset() -> None:
    ((_, diff_bytes, _, _), *_) = partial_rows()
    with pytest.raises(PartialJsonError, match="byte"):
        decode_json_diffs(diff_bytes[:-1])
    with pytest.raises(PartialJsonError, match="unknown operation 7"):
        decode_json_diffs(b"\x07" + diff_bytes[1:])


# -- the MINIMAL before image: stop (fail) or pass with a warning (warn) ----------------------------


def _sample_partial_event() -> PartialUpdateRowsEvent:
    """The library's event object with the sample event's column count and bitmaps (as the
    library's constructor sets them from the same bytes)."""
    (body,) = bodies(SAMPLE, PARTIAL_UPDATE_ROWS)
    parts = rows_event_parts(body, update=True)
    event = object.__new__(PartialUpdateRowsEvent)
    event.number_of_columns = parts.columns
    event.columns_present_bitmap = parts.before_bitmap.to_bytes(1, "little")
    event.columns_present_bitmap2 = parts.after_bitmap.to_bytes(1, "little") if parts.after_bitmap else None
    return event


def test_the_minimal_before_image_stops_naming_both_settings_and_the_offset() -> None:
    problem = incomplete_image(_sample_partial_event(), TableId("mysql", "t"))
    assert problem is not None
    assert "binlog_row_image=FULL" in problem and "binlog_row_value_options=''" in problem
    assert "before image has 1 of 4 columns" in problem
    with pytest.raises(UnsafeEventError, match=r"json\.binlog\.000001:3750 .*binlog_row_image"):
        EventGuard("fail").reject(problem, "json.binlog.000001:3750")


def test_warn_passes_the_minimal_partial_update_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    problem = incomplete_image(_sample_partial_event(), TableId("mysql", "t"))
    assert problem is not None
    with caplog.at_level(logging.WARNING, logger="connector.binlog.guard"):
        EventGuard("warn").reject(problem, "json.binlog.000001:3750")
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert "json.binlog.000001:3750" in record.getMessage() and "NOT emitted" in record.getMessage()


def test_nested_paths_change_only_their_branch() -> None:
    # JSON_SET(doc, '$.o.list[1].k', 5) / JSON_INSERT(doc, '$.o.new', 'n') / JSON_REMOVE(doc, '$.o.list[0]')
    document = {b"o": {b"list": [{b"k": 1}, {b"k": 2}]}, b"z": 0}
    diffs = [
        JsonDiff(REPLACE, "$.o.list[1].k", 5),
        JsonDiff(INSERT, "$.o.new", b"n"),
        JsonDiff(REMOVE, "$.o.list[0]"),
    ]
    assert apply_json_diffs(document, diffs) == {b"o": {b"new": b"n", b"list": [{b"k": 5}]}, b"z": 0}
    assert list(apply_json_diffs(document, diffs)[b"o"]) == [b"new", b"list"]  # 3-byte key first
    assert document == {b"o": {b"list": [{b"k": 1}, {b"k": 2}]}, b"z": 0}
