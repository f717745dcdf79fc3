"""Property declarations and the one machinery every component reads its settings with.

Each component declares its own properties (name, kind, default, doc, validation) as ``Property``
values next to its code; ``connector.config`` assembles the declarations into the connector's
property table. Every list-valued setting is split by ``split_list`` (the one list parser: commas
separate, ``\\,`` is a literal comma, items are stripped, empty items dropped, as Debezium's
``RegExSplitter``), and every typed value is read by the parsers here, so a default is written
once (in its declaration) and an error message is worded once.

It lives in the base layer because the sinks and the snapshot declare properties too, and because
the connector's components read theirs through ``PropertyReader`` (the typed getters, which
``connector.config.ConnectorConfig`` subclasses): none of them imports ``connector.config``, which
imports their declarations.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal, Protocol

from mysql_cdc_base.errors import ConfigError

Kind = Literal["string", "int", "bool", "list", "choice", "choice-list", "regex-list"]


@dataclass(frozen=True)
class Property:
    """One declared property. ``default`` is the text a missing or blank value reads as."""

    name: str
    default: str | None = None
    kind: Kind = "string"
    choices: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)  # deprecated choice → current
    required: bool = False
    secret: bool = False
    doc: str = ""
    minimum: int | None = None
    # The reference group (``connector.reference``); blank: derived from the name, then the module.
    group: str = ""
    # The module that declared it (``prop`` records it): the group's last fallback.
    module: str = field(default="", compare=False)

    def canonical(self, value: str) -> str:
        """A choice as the connector uses it: aliases resolved, lower case."""
        return self.aliases.get(value, self.aliases.get(value.lower(), value.lower()))


def prop(
    name: str,
    default: str | None = None,
    doc: str = "",
    *,
    kind: Kind = "string",
    choices: tuple[str, ...] = (),
    aliases: Mapping[str, str] | None = None,
    required: bool = False,
    secret: bool = False,
    minimum: int | None = None,
    group: str = "",
) -> Property:
    """A ``Property`` declaration in the short form the component tables use; it records the
    declaring module (where a blank ``group`` falls back to)."""
    module = sys._getframe(1).f_globals.get("__name__", "")
    return Property(
        name, default, kind, choices, dict(aliases or {}), required, secret, doc, minimum, group, module
    )


class PropertySource(Protocol):
    """Where a component reads its properties (``ConnectorConfig`` and ``MappingSource`` have these):
    ``get`` answers a stripped value or None for a missing or blank key."""

    def get(self, key: str, default: str | None = None) -> str | None: ...

    def subset(self, prefix: str) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class MappingSource:
    """Plain ``key → text`` properties as a ``PropertySource`` (for components used without a
    ``ConnectorConfig``: the Spark job, tests)."""

    values: Mapping[str, str]

    def get(self, key: str, default: str | None = None) -> str | None:
        value = self.values.get(key)
        return value.strip() if value is not None and value.strip() else default

    def subset(self, prefix: str) -> dict[str, str]:
        return {k[len(prefix) :]: v for k, v in self.values.items() if k.startswith(prefix)}


# -- the one list parser --------------------------------------------------------------------------
def split_list(text: str | None) -> list[str]:
    """A comma-separated list: items stripped, empty items dropped; ``\\,`` is a literal comma
    inside an item (how a regular expression in a list carries a comma)."""
    items: list[str] = []
    current: list[str] = []
    index = 0
    value = text or ""
    while index < len(value):
        char = value[index]
        if char == "\\" and value[index + 1 : index + 2] == ",":
            current.append(",")
            index += 2
            continue
        if char == ",":
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        index += 1
    items.append("".join(current).strip())
    return [item for item in items if item]


def compile_regex_list(
    key: str,
    text: str | None,
    *,
    flags: int = re.IGNORECASE,
    error: type[ConfigError] = ConfigError,
) -> tuple[re.Pattern[str], ...]:
    """The regular expressions of a list property. Debezium matches a whole identifier
    (``Pattern.matches``), case-insensitively: callers ``fullmatch``."""
    patterns = []
    for part in split_list(text):
        try:
            patterns.append(re.compile(part, flags))
        except re.error as exc:
            raise error(key, f"{part!r} is not a valid regular expression ({exc})") from None
    return tuple(patterns)


def included_by(patterns: Sequence[re.Pattern[str]], name: object) -> bool:
    """Does an include list (compiled by :func:`compile_regex_list`) take ``name``? An empty
    list takes every name, as Debezium's unset ``*.include.list``."""
    text = str(name)
    return not patterns or any(p.fullmatch(text) for p in patterns)


# -- typed parsers: one wording of each error -----------------------------------------------------
def parse_int(key: str, text: str, *, error: type[ConfigError] = ConfigError) -> int:
    """An integer setting; the error names ``key`` and the text as given."""
    try:
        return int(text.strip())
    except ValueError:
        raise error(key, f"expected an integer, got {text!r}") from None


def parse_bool(key: str, text: str, *, error: type[ConfigError] = ConfigError) -> bool:
    """``true`` or ``false`` in any case; the error names ``key`` and the text as given."""
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise error(key, f"expected true or false, got {text!r}")
    return value == "true"


def check_minimum(key: str, number: int, minimum: int | None) -> int:
    if minimum is not None and number < minimum:
        raise ConfigError(key, f"must be at least {minimum}, got {number}")
    return number


def _check_int(spec: Property, value: str) -> None:
    check_minimum(spec.name, parse_int(spec.name, value), spec.minimum)


def _check_bool(spec: Property, value: str) -> None:
    parse_bool(spec.name, value)


def _check_choice(spec: Property, value: str) -> None:
    if spec.canonical(value) not in spec.choices:
        raise ConfigError(spec.name, f"expected one of {', '.join(spec.choices)}, got {value!r}")


def _check_choice_list(spec: Property, value: str) -> None:
    for item in split_list(value):
        if item.lower() not in spec.choices:
            raise ConfigError(
                spec.name,
                f"unknown value {item!r}; expected a comma-separated list of {', '.join(spec.choices)}",
            )


def _check_regex_list(spec: Property, value: str) -> None:
    compile_regex_list(spec.name, value)


def _check_nothing(spec: Property, value: str) -> None:
    return None


_CHECKS: Mapping[str, Callable[[Property, str], None]] = {
    "string": _check_nothing,
    "list": _check_nothing,
    "int": _check_int,
    "bool": _check_bool,
    "choice": _check_choice,
    "choice-list": _check_choice_list,
    "regex-list": _check_regex_list,
}


def check_value(spec: Property, value: str | None) -> None:
    """Validate one property's text (None/blank: only a required property fails)."""
    if value is None or value.strip() == "":
        if spec.required:
            raise ConfigError(spec.name, f"is required ({spec.doc})")
        return
    _CHECKS[spec.kind](spec, value.strip())


# -- typed reads of a declared property ------------------------------------------------------------
def text_of(source: PropertySource, spec: Property) -> str | None:
    """The property's text, or its declared default."""
    return source.get(spec.name) or spec.default


def int_of(source: PropertySource, spec: Property, *, error: type[ConfigError] = ConfigError) -> int | None:
    text = text_of(source, spec)
    return None if text is None else parse_int(spec.name, text, error=error)


def bool_of(source: PropertySource, spec: Property, *, error: type[ConfigError] = ConfigError) -> bool:
    return parse_bool(spec.name, text_of(source, spec) or "false", error=error)


def choice_of(source: PropertySource, spec: Property) -> str:
    return spec.canonical(text_of(source, spec) or "")


def list_of(source: PropertySource, spec: Property) -> list[str]:
    return split_list(text_of(source, spec))


def by_name(*tables: Sequence[Property]) -> dict[str, Property]:
    """The declarations of several tables keyed by name; a name declared twice is a bug."""
    out: dict[str, Property] = {}
    for table in tables:
        for spec in table:
            if spec.name in out:
                raise ValueError(f"property {spec.name} is declared twice")
            out[spec.name] = spec
    return out


class PropertyReader:
    """Properties read through their declarations: the typed getters every component reads with.

    ``connector.config.ConnectorConfig`` subclasses it (it assembles the whole table, validates, and
    sets ``declarations``); the components type their ``config`` parameter as a ``PropertyReader``,
    so none of them imports ``connector.config`` (which imports their declarations)."""

    declarations: ClassVar[Mapping[str, Property]] = {}

    def __init__(self, raw: Mapping[str, str]) -> None:
        self.raw: dict[str, str] = dict(raw)

    # -- generic access -------------------------------------------------------------------------
    def get(self, key: str, default: str | None = None) -> str | None:
        value = self.raw.get(key)
        if value is None or value.strip() == "":
            spec = self.declarations.get(key)
            return (
                spec.default if spec is not None and spec.default is not None and default is None else default
            )
        return value.strip()

    def get_int(self, key: str, default: int | None = None) -> int | None:
        value = self.get(key)
        if value is None:
            return default
        return parse_int(key, value)

    def int_of(self, key: str) -> int:
        """An integer property's value, or its default from the property table."""
        value = self.get_int(key)
        if value is None:
            raise ConfigError(key, "is required (an integer)")
        return value

    def get_bool(self, key: str, default: bool = False) -> bool:
        value = self.get(key)
        if value is None:
            return default
        return parse_bool(key, value)

    def get_choice(self, key: str) -> str:
        return self.declarations[key].canonical(self.get(key) or "")

    def get_list(self, key: str) -> list[str]:
        return split_list(self.get(key))

    def subset(self, prefix: str) -> dict[str, str]:
        return {k[len(prefix) :]: v for k, v in self.raw.items() if k.startswith(prefix)}

    # -- typed views of the common keys -------------------------------------------------------------
    @property
    def connector_name(self) -> str:
        return self.get("name") or ""  # blank: the declared default

    @property
    def topic_prefix(self) -> str:
        return self.get("topic.prefix") or ""

    @property
    def hostname(self) -> str:
        return self.get("database.hostname") or ""

    @property
    def port(self) -> int:
        return self.int_of("database.port")

    @property
    def user(self) -> str:
        return self.get("database.user") or ""

    @property
    def password(self) -> str:
        return self.raw.get("database.password", "")

    @property
    def server_id(self) -> int:
        return self.int_of("database.server.id")

    @property
    def data_dir(self) -> Path:
        return Path(self.get("data.dir") or "")  # blank: the declared default

    @property
    def sink_types(self) -> list[str]:
        return self.get_list("sink.type")

    def path_or_default(self, key: str, filename: str) -> Path:
        value = self.get(key)
        return Path(value) if value else self.data_dir / filename
