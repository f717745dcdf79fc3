"""Structured values: JSON, spatial types and MySQL 9's VECTOR."""

from __future__ import annotations

import struct
from typing import Any

import orjson

from connector.binlog.json.binary import BinaryJson
from connector.binlog.json.render import render_binlog_json, render_json_document
from connector.records.charsets import binlog_encoding
from connector.records.conversion import family
from connector.records.conversion.family import FLOAT32, Builder, ConverterSettings, FamilyMapping, no_default
from ddl.model import GEOMETRY_TYPES, Column
from mysql_cdc_base.connect import ConnectSchema, Field


# ------------------------------------------------------------------------------------------------
# JSON (4.8)
# ------------------------------------------------------------------------------------------------
def _json(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    return FamilyMapping(
        "string",
        _json_from_binlog,
        family.identity,
        name="io.debezium.data.Json",
        version=1,
        fallback="{}",
        default=family.identity,
        binlog_encoding=binlog_encoding("utf8mb4"),
    )


def _json_from_binlog(value: Any) -> Any:
    # MariaDB stores JSON as LONGTEXT: the binlog carries the very text the snapshot SELECT returns.
    if isinstance(value, str):
        return value
    # MySQL binary JSON: Debezium streams it as its binlog client renders it (compact, its own
    # number and date forms; connector.binlog.json.render), while its snapshot reads MySQL's text. A
    # partial update's diff reaches this point only through the library's fallback decoder
    # (images without every column), which cannot rebuild the document (connector.binlog.row_decoder
    # does, from a full before image, and gives the parsed document rendered here).
    if isinstance(value, BinaryJson):
        return render_binlog_json(value.data)
    if type(value).__name__ == "JsonDiff":
        raise ValueError(
            "a JSON partial update (binlog_row_value_options=PARTIAL_JSON) without the whole "
            "before image cannot be rebuilt: set binlog_row_image=FULL, or "
            "binlog_row_value_options='' on the server"
        )
    return render_json_document(value)


# ------------------------------------------------------------------------------------------------
# VECTOR (4.9, MySQL 9)
# ------------------------------------------------------------------------------------------------
_FLOAT_VECTOR_NAME = "io.debezium.data.FloatVector"


def _vector_value(value: Any) -> list[float]:
    # The binlog image and the snapshot result carry the same bytes (little-endian float32s); a
    # text rendering ('[1.1,2.2]', VECTOR_TO_STRING in an overridden select) is read as a list.
    if isinstance(value, bytes | bytearray):
        if len(value) % 4:
            raise ValueError(f"a VECTOR value of {len(value)} bytes is not a whole number of float32s")
        return [element for (element,) in FLOAT32.iter_unpack(value)]
    if isinstance(value, str):
        return [family.as_float32(float(v)) for v in orjson.loads(value)]
    return [family.as_float32(float(v)) for v in value]


def _vector(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    # Debezium maps MySQL's VECTOR to ARRAY<FLOAT32> io.debezium.data.FloatVector v1; its elements
    # are Java floats (connector.sink's JSON writer prints them as Java does).
    return FamilyMapping(
        "array",
        _vector_value,
        _vector_value,
        name=_FLOAT_VECTOR_NAME,
        version=1,
        items=ConnectSchema("float32"),
        default=no_default,
    )


# ------------------------------------------------------------------------------------------------
# Spatial types (4.9): Geometry v1 {wkb, srid} (3.6.1.Final), POINT as Point {x, y, wkb, srid}
# ------------------------------------------------------------------------------------------------
_SRID = struct.Struct("<I")
_WKB_POINT = struct.Struct("<dd")
_GEOMETRY_NAME = "io.debezium.data.geometry.Geometry"
_POINT_NAME = "io.debezium.data.geometry.Point"
_EMPTY_COLLECTION_WKB = bytes.fromhex("010700000000000000")


def _split_srid(data: bytes) -> tuple[bytes, int | None]:
    # MySQL's internal geometry value: 4-byte little-endian SRID, then WKB. SRID 0 -> null.
    srid = _SRID.unpack_from(data)[0]
    return data[4:], (srid or None)


def _geometry_value(data: bytes) -> dict[str, Any]:
    wkb, srid = _split_srid(data)
    return {"wkb": family.base64_text(wkb), "srid": srid}


def _point_value(data: bytes) -> dict[str, Any]:
    wkb, srid = _split_srid(data)
    if len(wkb) != 21:
        raise ValueError(f"a POINT column holds a non-point geometry ({len(wkb)} WKB bytes)")
    order = "<" if wkb[0] else ">"
    x, y = struct.unpack_from(order + "dd", wkb, 5)
    return {"x": x, "y": y, "wkb": family.base64_text(wkb), "srid": srid}


def _geometry(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    fields = (Field("wkb", ConnectSchema("bytes")), Field("srid", ConnectSchema("int32", optional=True)))
    return FamilyMapping(
        "struct",
        _geometry_value,
        _geometry_value,
        name=_GEOMETRY_NAME,
        version=1,
        doc="Geometry",
        fields=fields,
        fallback={"wkb": family.base64_text(_EMPTY_COLLECTION_WKB), "srid": None},
        default=no_default,
    )


def _point(column: Column, settings: ConverterSettings, on_zero: Any) -> FamilyMapping:
    fields = (
        Field("x", ConnectSchema("float64")),
        Field("y", ConnectSchema("float64")),
        Field("wkb", ConnectSchema("bytes", optional=True)),
        Field("srid", ConnectSchema("int32", optional=True)),
    )
    return FamilyMapping(
        "struct",
        _point_value,
        _point_value,
        name=_POINT_NAME,
        version=1,
        doc="Geometry (POINT)",
        fields=fields,
        default=no_default,
    )


BUILDERS: dict[str, Builder] = {
    "JSON": _json,
    **dict.fromkeys(GEOMETRY_TYPES, _geometry),
    "POINT": _point,
    "VECTOR": _vector,
}
