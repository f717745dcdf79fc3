"""Binary JSON rendered as Debezium streams it, checked against mysql-binlog-connector-java itself.

Each document below is encoded to MySQL's binary JSON (tests/connector/binlog_json_support.py),
rendered by our ``render_binlog_json`` and by the client's ``JsonBinary.parseAsString`` (the jar
Debezium 3.6 ships, run by ``java/JsonBinaryRender.java``); the texts must be equal byte for byte.
"""

from __future__ import annotations

import math
import random
import struct
from pathlib import Path
from typing import Any

import pytest

from connector.binlog.json.binary import parse_mysql_json
from connector.binlog.json.render import render_binlog_json, render_json_document
from tests.connector.binlog_json_support import (
    INT32,
    INT64,
    MYSQL_BIT,
    MYSQL_BLOB,
    MYSQL_DATE,
    MYSQL_DATETIME,
    MYSQL_NEWDECIMAL,
    MYSQL_TIME,
    MYSQL_TIMESTAMP,
    MYSQL_VARCHAR,
    MYSQL_YEAR,
    UINT16,
    UINT32,
    UINT64,
    Large,
    Opaque,
    Typed,
    compile_json_render,
    decimal_payload,
    encode,
    java_render,
    packed_datetime,
    packed_time,
)


def _dt(*fields: int) -> Opaque:
    return Opaque(MYSQL_DATETIME, packed_datetime(*fields))


def _time(negative: bool, *fields: int) -> Opaque:
    return Opaque(MYSQL_TIME, packed_time(negative, *fields))


def _dec(text: str, precision: int, scale: int) -> Opaque:
    return Opaque(MYSQL_NEWDECIMAL, decimal_payload(text, precision, scale))


DOUBLES = [
    1e300,
    -1e300,
    0.1,
    -0.0,
    0.0,
    1.0,
    100.0,
    1e7,
    9999999.0,
    1e-3,
    0.002,
    9.99e-4,
    1e-4,
    5e-324,
    1.7976931348623157e308,
    123456.789,
    1e23,
    2e23,
    0.3,
    1 / 3,
    -2.5,
    1e16,
    4.35,
    1e-7,
]
INTEGERS = [
    0,
    1,
    -1,
    32767,
    -32768,
    32768,
    -32769,
    2**31 - 1,
    -(2**31),
    2**31,
    2**63 - 1,
    -(2**63),
    2**63,
    2**64 - 1,
    Typed(UINT16, 65535),
    Typed(UINT32, 0),
    Typed(UINT32, 2**31 - 1),
    Typed(UINT32, 2**31),
    Typed(UINT32, 2**32 - 1),
    Typed(INT32, 5),
    Typed(INT64, -7),
    Typed(UINT64, 0),
    Typed(UINT64, 2**63 + 5),
]
STRINGS = [
    "",
    "plain",
    'quote " here',
    "back\\slash",
    "slash / here",
    "é ü ß",
    "中文",
    "😀 emoji",
    "".join(map(chr, range(0x20))),
    "\x7f del",
    "\u2028\u2029",
    "tab\tnew\nline\r",
    "\ufeff",
]
OPAQUES = [
    _dec("1.50", 4, 2),
    _dec("-1.50", 4, 2),
    _dec("0.00", 4, 2),
    _dec("-0.5", 3, 1),
    _dec("7", 5, 0),
    _dec("12345678901234567890.123456789", 65, 30),
    _dec("-99999999999999999999999999999999999.5", 65, 1),
    _dec("0.000000001", 20, 10),
    Opaque(MYSQL_DATE, packed_datetime(2024, 2, 29)),
    Opaque(MYSQL_DATE, packed_datetime(0, 0, 0)),
    Opaque(MYSQL_DATE, packed_datetime(9999, 12, 31)),
    Opaque(MYSQL_DATE, packed_datetime(1, 1, 1)),
    _dt(2012, 3, 18, 11, 30, 45),
    _dt(2012, 3, 18, 11, 30, 45, 500000),
    _dt(2012, 3, 18, 11, 30, 45, 123456),
    _dt(2012, 3, 18, 11, 30, 45, 10),
    _dt(2012, 3, 18, 11, 30, 45, 999999),
    _dt(0, 0, 0),
    _dt(1970, 1, 1, 0, 0, 0, 100),
    Opaque(MYSQL_TIMESTAMP, packed_datetime(2038, 1, 19, 3, 14, 7, 1200)),
    _time(False, 0, 0, 0),
    _time(False, 838, 59, 59, 999999),
    _time(False, 12, 34, 56, 500000),
    _time(True, 0, 0, 1),
    _time(True, 838, 59, 59),
    _time(True, 1, 2, 3, 4),
    _time(True, 0, 0, 0, 500000),
    _time(True, 12, 0, 0),
    _time(False, 87, 31, 46),
    Opaque(MYSQL_VARCHAR, b"U"),
    Opaque(MYSQL_BLOB, bytes(range(256))),
    Opaque(MYSQL_BIT, b"\x01\x02"),
    Opaque(MYSQL_YEAR, b"\x07\xe8"),
    Opaque(MYSQL_BLOB, b""),
]
NESTED: list[Any] = [
    {},
    [],
    [[]],
    {"a": {}},
    [{}, [], None, True, False],
    {"a": 1, "b": [1, 2.5, "x", None], "c": {"d": {"e": [True, False]}}},
    {'key "q"\n': "v", "ключ": "значение", "😀": [1]},
    [[1, [2, [3, [4, [5, {"deep": "yes"}]]]]]],
    {"ints": [Typed(UINT16, 7), -5, 70000, Typed(UINT32, 3000000000)], "o": _dt(2020, 1, 2, 3, 4, 5, 60)},
]
LARGE: list[Any] = [
    {"big": "x" * 70000, "n": 1, "u": Typed(UINT16, 9), "t": True},
    ["y" * 66000, -3, Typed(INT32, -100000), 2**40, None],
    Large(
        [1, Typed(INT32, -123456), Typed(INT32, 2**31 - 1), Typed(UINT32, 5), Typed(UINT32, 2**32 - 1), False]
    ),
    Large({"a": Typed(UINT32, 17), "b": Typed(INT32, 17), "c": "s", "d": 1.5}),
    list(range(-20000, 20000, 7)),
    {f"k{i:05d}": [i, str(i) * 3, i / 7] for i in range(3000)},
]


def _random_doubles(count: int) -> list[float]:
    """Doubles of every exponent (random bit patterns) and of Double.toString's plain range."""
    rng = random.Random(29)
    doubles = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(count)]
    doubles += [rng.uniform(1e-3, 1e7) for _ in range(count)] + [
        round(rng.uniform(0, 1e3), rng.randint(0, 6)) for _ in range(count)
    ]
    return [d for d in doubles if math.isfinite(d)]  # MySQL's JSON has no NaN or infinity


DOCUMENTS: list[Any] = [
    None,
    True,
    False,
    *DOUBLES,
    *INTEGERS,
    *STRINGS,
    *OPAQUES,
    *NESTED,
    *LARGE,
    [*DOUBLES],
    {s: s for s in STRINGS},
    [*OPAQUES],
    [*INTEGERS],
]


@pytest.fixture(scope="module")
def java_texts(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    classes: Path = tmp_path_factory.mktemp("json-render-classes")
    compile_json_render(classes)
    return java_render(classes, [encode(document) for document in DOCUMENTS])


def test_every_document_renders_as_the_binlog_client_does(java_texts: list[str]) -> None:
    differences = [
        (index, java, ours)
        for index, (document, java) in enumerate(zip(DOCUMENTS, java_texts, strict=True))
        if (ours := render_binlog_json(encode(document))) != java
    ]
    assert not differences, "\n".join(
        f"#{i}: java {j[:300]!r}\n     ours {o[:300]!r}" for i, j, o in differences
    )
    assert len(java_texts) == len(DOCUMENTS) > 100


def test_the_client_quirks_are_kept(java_texts: list[str]) -> None:
    """The forms that differ from MySQL's text, as the jar gives them (not our own output)."""
    by_bytes = {encode(document): text for document, text in zip(DOCUMENTS, java_texts, strict=True)}

    def java(document: Any) -> str:
        return by_bytes[encode(document)]

    assert java(1e300).startswith("1000000000000000052504760255204420248704468581108")
    assert java(-0.0) == "-0.0"
    assert java(Typed(UINT32, 2**32 - 1)) == "-1"  # the client sign-extends UINT32
    assert java(_time(True, 0, 0, 1)) == '"01:0-1:0-1"'
    assert java(_dt(2012, 3, 18, 11, 30, 45, 500000)) == '"2012-03-18 11:30:45.5"'
    assert java(Opaque(MYSQL_VARCHAR, b"U")) == '"VQ=="'


ZERO_DATES = (packed_datetime(0, 0, 0),)
QUIRK_FREE = [
    *DOUBLES,
    *STRINGS,
    *NESTED[:8],
    LARGE[0],
    LARGE[1],
    LARGE[4],
    LARGE[5],
    *(
        o
        for o in OPAQUES
        if o.payload not in ZERO_DATES and (o.mysql_type != MYSQL_TIME or o.payload[7] < 0x80)
    ),
]


@pytest.mark.parametrize("position", range(len(QUIRK_FREE)))
def test_parsed_documents_render_as_their_bytes(position: int) -> None:
    """A partial update's result is a parsed document: without the byte-level quirks (UINT32,
    negative TIME, zero dates) it renders as the bytes it came from."""
    data = encode(QUIRK_FREE[position])
    assert render_json_document(parse_mysql_json(data)) == render_binlog_json(data)
