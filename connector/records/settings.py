"""The records stage's typed settings, read once from the properties (through their declarations,
where the defaults are written once).

``RecordSettings``: what the event builder emits (``topic.delimiter``, ``tombstones.on.delete``,
``skipped.operations``, ``extended.headers.enabled``, ``message.key.columns``).
``CaptureSettings``: what the table filter and the GTID source filter read besides the include and
exclude lists (``table.ignore.builtin``, ``signal.data.collection``, ``gtid.source.*``).
``topic_naming_name``: ``topic.naming.strategy``. ``converter_settings``: the converters'
``ConverterSettings`` (the value modes, ``ValueModes``, and what the converters need besides)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from connector.records.conversion import ConverterSettings
from connector.records.custom_converters import build_converters
from connector.server.settings import session_time_zone
from mysql_cdc_base.connect import ValueModes
from mysql_cdc_base.properties import PropertyReader, compile_regex_list

TOPIC_NAMING_KEY = "topic.naming.strategy"
SIGNAL_COLLECTION_KEY = "signal.data.collection"
CAPTURE_LISTS = tuple(
    f"{kind}.{side}.list" for kind in ("database", "table", "column") for side in ("include", "exclude")
)


class RecordSettings(NamedTuple):
    """The event builder's settings; ``skipped_operations`` is empty for ``none``."""

    delimiter: str
    tombstones: bool
    skipped_operations: frozenset[str]
    extended_headers: bool
    message_key_columns: str | None

    @classmethod
    def from_config(cls, config: PropertyReader) -> RecordSettings:
        skipped = {s.lower() for s in config.get_list("skipped.operations")}
        return cls(
            delimiter=config.get("topic.delimiter") or ".",
            tombstones=config.get_bool("tombstones.on.delete"),
            skipped_operations=frozenset() if skipped == {"none"} else frozenset(skipped),
            extended_headers=config.get_bool("extended.headers.enabled"),
            message_key_columns=config.get("message.key.columns"),
        )


class CaptureSettings(NamedTuple):
    """The table filter's include and exclude lists and built-in-database switch, the signal table's name, and the GTID source
    patterns (compiled; a bad pattern is a ``ConfigError`` naming its key)."""

    lists: Mapping[str, tuple[re.Pattern[str], ...]]  # CAPTURE_LISTS, by key
    ignore_builtin: bool
    signal_collection: str | None
    gtid_includes: tuple[re.Pattern[str], ...]
    gtid_excludes: tuple[re.Pattern[str], ...]

    @classmethod
    def from_config(cls, config: PropertyReader) -> CaptureSettings:
        return cls(
            lists=MappingProxyType({key: compile_regex_list(key, config.get(key)) for key in CAPTURE_LISTS}),
            ignore_builtin=config.get_bool("table.ignore.builtin"),
            signal_collection=config.get(SIGNAL_COLLECTION_KEY),
            gtid_includes=compile_regex_list("gtid.source.includes", config.get("gtid.source.includes")),
            gtid_excludes=compile_regex_list("gtid.source.excludes", config.get("gtid.source.excludes")),
        )


def topic_naming_name(config: PropertyReader) -> str:
    """``topic.naming.strategy``: a built-in name, a plugin, or ``default``."""
    return (config.get(TOPIC_NAMING_KEY) or "").strip() or "default"


def converter_settings(config: PropertyReader) -> ConverterSettings:
    """The converters' settings; snapshot connections run in database.connectionTimeZone (UTC unless
    a fixed offset is set)."""
    return ConverterSettings(
        server_time_zone=session_time_zone(config)[1],
        **ValueModes.read(config),
        enable_time_adjuster=config.get_bool("enable.time.adjuster"),
        propagate_source_type=tuple(config.get_list("column.propagate.source.type")),
        datatype_propagate_source_type=tuple(config.get_list("datatype.propagate.source.type")),
        include_schema_comments=config.get_bool("include.schema.comments"),
        custom=build_converters(config.raw),
        converting_failure_mode=config.get_choice("event.converting.failure.handling.mode"),
    )
