"""What every type family shares: the settings that change values, the converter a column gets,
and the mapping a family's builder returns (its Connect schema parts and its two conversions)."""

from __future__ import annotations

import base64
import datetime as dt
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ddl.model import Column
from mysql_cdc_base.connect import ConnectSchema, Field, ValueModes

Convert = Callable[[Any], Any]

UTC = dt.UTC


@dataclass(frozen=True)
class ConverterSettings(ValueModes):
    """The connector properties that change how values are represented (reference section 2.3):
    the value modes, and what the converters need besides."""

    enable_time_adjuster: bool = True
    # Time zone of the snapshot connection's session: TIMESTAMP text is in this zone.
    server_time_zone: dt.tzinfo = UTC
    propagate_source_type: tuple[str, ...] = ()
    datatype_propagate_source_type: tuple[str, ...] = ()
    include_schema_comments: bool = False
    # Custom converters (connector.records.custom_converters, property ``converters``), in order.
    custom: tuple[Any, ...] = ()
    # event.converting.failure.handling.mode: a custom converter that raises -> fail | warn | skip.
    converting_failure_mode: str = "warn"


@dataclass(frozen=True)
class ColumnConverter:
    schema: ConnectSchema
    from_binlog: Convert
    from_snapshot: Convert
    # Python codec the row decoder reads this column's text with (and the library's fallback decoder,
    # as its column's ``character_set_name``); None = not a text column.
    binlog_encoding: str | None = None


def identity(value: Any) -> Any:
    """The converter for values that are already payload-ready; readers may skip calling it."""
    return value


class NullRule(NamedTuple):
    """What a guarded converter (registry's ``_guard``) does, for code generated per table that
    inlines it instead of calling it: null in -> ``when_null``; else ``convert(value)``, and with
    ``may_invalidate`` a None from it (an invalid value) -> ``when_null`` too."""

    convert: Convert
    when_null: Any
    may_invalidate: bool


# The attribute a guarded converter carries its NullRule in. On the function object itself, so a
# converter wrapped or replaced later (column mappers, custom converters) carries none.
_NULL_RULE = "null_rule"


def with_null_rule(guarded: Convert, rule: NullRule) -> Convert:
    setattr(guarded, _NULL_RULE, rule)
    return guarded


def null_rule_of(convert: Convert) -> NullRule | None:
    """The NullRule ``convert`` applies, when it is exactly a guarded converter."""
    rule = getattr(convert, _NULL_RULE, None)
    return rule if isinstance(rule, NullRule) else None


# ------------------------------------------------------------------------------------------------
# What a type family contributes
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FamilyMapping:
    type: str
    binlog: Convert  # non-null binlog value -> payload (may return None for invalid values)
    snapshot: Convert  # non-null snapshot value -> payload (may return None for invalid values)
    name: str | None = None
    version: int | None = None
    parameters: Mapping[str, str] | None = None
    # Payload for a NOT NULL column whose value is null/invalid (zero dates) and has no default.
    fallback: Any = None
    # Literal DEFAULT text -> payload; None means "same as the snapshot converter".
    default: Convert | None = None
    doc: str | None = None
    binlog_encoding: str | None = None
    # True when binlog/snapshot may return None for a non-null input (then NOT NULL columns need
    # the fallback substituted after conversion, not only for null inputs).
    may_invalidate: bool = False
    fields: tuple[Field, ...] | None = None
    items: ConnectSchema | None = None  # an array's element schema


# A builder gets the column, the settings and the payload to use for invalid (zero) temporal
# values; it returns the family's mapping.
Builder = Callable[[Column, ConverterSettings, Any], FamilyMapping]


# -- payload encodings more than one family uses --
def base64_text(data: bytes) -> str:
    """Bytes as Connect's JSON form of a BYTES payload: standard base64 text."""
    return base64.b64encode(data).decode("ascii")


FLOAT32 = struct.Struct("<f")


def as_float32(value: float) -> float:
    """A double narrowed to the float32 it denotes (the value a Java float holds)."""
    return float(FLOAT32.unpack(FLOAT32.pack(value))[0])


def no_default(text: str) -> None:
    # Spatial and VECTOR columns take no literal defaults in MySQL (only expression defaults).
    return None
