"""The SMTs' typed settings, parsed once from each transform's options (``transforms.<alias>.*``;
an error names the full key): ``PluginSettings`` (``type``), ``StepSettings`` (``predicate``,
``negate``), ``UnwrapSettings`` (``ExtractNewRecordState``),
``RouterSettings`` (``ByLogicalTableRouter``), and Kafka's ``RegexRouterSettings`` and
``ReplaceFieldSettings``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from connector.transforms.base import Options, java_replacement
from mysql_cdc_base.errors import ConfigError

UNWRAP_MODES = ("drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone")
DEFAULT_KEY_FIELD = "__dbz__physicalTableIdentifier"


class PluginSettings(NamedTuple):
    """``<alias>.type``: the class of a transform, predicate or converter (required)."""

    class_name: str

    @classmethod
    def from_options(cls, options: Options, kind: str, alias: str) -> PluginSettings:
        class_name = options.get("type")
        if not class_name:
            raise ConfigError(options.key("type"), f"is required: the class of {kind} {alias!r}")
        return cls(class_name)


class StepSettings(NamedTuple):
    """A transform's ``predicate`` (an alias listed in ``predicates``, or None) and ``negate``;
    ``negate`` without a predicate is refused."""

    predicate: str | None
    negate: bool

    @classmethod
    def from_options(cls, options: Options) -> StepSettings:
        predicate = options.get("predicate") or None
        if predicate is None and options.get("negate") is not None:
            raise ConfigError(options.key("negate"), "is set but the transform has no predicate")
        return cls(predicate, options.get_bool("negate", False))


class UnwrapSettings(NamedTuple):
    """``delete.tombstone.handling.mode``, ``route.by.field``, and the ``add.fields`` /
    ``add.headers`` references (unparsed) with their prefixes."""

    mode: str
    route_by: str | None
    add_fields: tuple[str, ...]
    fields_prefix: str
    add_headers: tuple[str, ...]
    headers_prefix: str

    @classmethod
    def from_options(cls, options: Options) -> UnwrapSettings:
        return cls(
            mode=options.get_choice("delete.tombstone.handling.mode", UNWRAP_MODES, "tombstone"),
            route_by=options.get("route.by.field") or None,
            add_fields=tuple(options.get_list("add.fields")),
            fields_prefix=options.get("add.fields.prefix", "__") or "",
            add_headers=tuple(options.get_list("add.headers")),
            headers_prefix=options.get("add.headers.prefix", "__") or "",
        )


class RouterSettings(NamedTuple):
    """``topic.regex`` / ``topic.replacement`` (Java groups translated), ``key.enforce.uniqueness``,
    ``key.field.name`` and ``key.field.regex`` / ``key.field.replacement``. Only
    ``schema.name.adjustment.mode=none`` is accepted (schema names are the new topic's)."""

    topic_regex: re.Pattern[str]
    topic_replacement: str
    enforce_key: bool
    key_field: str
    key_field_regex: re.Pattern[str] | None
    key_field_replacement: str

    @classmethod
    def from_options(cls, options: Options) -> RouterSettings:
        topic_regex = options.get_regex("topic.regex")
        assert topic_regex is not None
        topic_replacement = java_replacement(options.require("topic.replacement"))
        enforce_key = options.get_bool("key.enforce.uniqueness", True)
        key_field = options.get("key.field.name") or DEFAULT_KEY_FIELD
        key_field_regex = options.get_regex("key.field.regex", required=False)
        key_field_replacement = (
            java_replacement(options.require("key.field.replacement")) if key_field_regex is not None else ""
        )
        adjustment = (options.get("schema.name.adjustment.mode") or "none").lower()
        if adjustment != "none":
            raise ConfigError(
                options.key("schema.name.adjustment.mode"),
                f"only none is supported (schema names are the new topic's), got {adjustment!r}",
            )
        return cls(
            topic_regex, topic_replacement, enforce_key, key_field, key_field_regex, key_field_replacement
        )


class RegexRouterSettings(NamedTuple):
    """``regex`` (matching the whole topic) and ``replacement`` (Java groups translated)."""

    pattern: re.Pattern[str]
    replacement: str

    @classmethod
    def from_options(cls, options: Options) -> RegexRouterSettings:
        pattern = options.get_regex("regex")
        assert pattern is not None
        return cls(pattern, java_replacement(options.require("replacement")))


class ReplaceFieldSettings(NamedTuple):
    """``exclude`` (or Kafka's older ``blacklist``), ``include`` (or ``whitelist``) and ``renames``
    (``old:new`` pairs; a malformed pair is an error naming ``renames``)."""

    exclude: frozenset[str]
    include: frozenset[str]
    renames: Mapping[str, str]

    @classmethod
    def from_options(cls, options: Options) -> ReplaceFieldSettings:
        renames: dict[str, str] = {}
        for pair in options.get_list("renames"):
            old, colon, new = pair.partition(":")
            if not colon or not old.strip() or not new.strip():
                raise ConfigError(options.key("renames"), f"expected old:new pairs, got {pair!r}")
            renames[old.strip()] = new.strip()
        return cls(
            frozenset(options.get_list("exclude") or options.get_list("blacklist")),
            frozenset(options.get_list("include") or options.get_list("whitelist")),
            MappingProxyType(renames),
        )


def _insert_spec(options: Options, name: str) -> tuple[str, bool] | None:
    """``field`` (optional), ``field!`` (required) or ``field?`` (optional)."""
    text = options.get(name)
    if not text:
        return None
    if text.endswith("!"):
        return text[:-1], True
    return text.removesuffix("?"), False


class InsertFieldSettings(NamedTuple):
    """``topic.field``, ``partition.field`` and ``static.field`` as (name, required), and
    ``static.value``. ``offset.field`` and ``timestamp.field`` are refused (a source connector's
    record has neither)."""

    topic: tuple[str, bool] | None
    partition: tuple[str, bool] | None
    static: tuple[str, bool] | None
    static_value: str | None

    @classmethod
    def from_options(cls, options: Options) -> InsertFieldSettings:
        for unsupported in ("offset.field", "timestamp.field"):
            if options.get(unsupported):
                raise ConfigError(
                    options.key(unsupported),
                    "is not supported: a source connector's record has no Kafka offset or record timestamp",
                )
        return cls(
            _insert_spec(options, "topic.field"),
            _insert_spec(options, "partition.field"),
            _insert_spec(options, "static.field"),
            options.get("static.value"),
        )


def value_to_key_fields(options: Options) -> tuple[str, ...]:
    """``ValueToKey``'s ``fields`` (required)."""
    fields = tuple(options.get_list("fields"))
    if not fields:
        raise ConfigError(options.key("fields"), "is required: the value fields that make the key")
    return fields


def extract_field_name(options: Options) -> str:
    """``ExtractField``'s ``field`` (required); only ``field.syntax.version=V1`` (plain names)."""
    if (options.get("field.syntax.version") or "v1").lower() != "v1":
        raise ConfigError(options.key("field.syntax.version"), "only V1 (plain field names) is supported")
    return options.require("field")


def topic_pattern(options: Options) -> re.Pattern[str]:
    """``TopicNameMatches``' ``pattern`` (required; matches the whole topic)."""
    pattern = options.get_regex("pattern")
    assert pattern is not None
    return pattern
