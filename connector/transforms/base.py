"""What every transform and predicate shares: the protocols, their options, Java regex helpers.

A transform is Kafka Connect's ``Transformation``: one record in, one record (a new frozen
``ChangeRecord``) or ``None`` (dropped) out. A predicate is Kafka Connect's ``Predicate``.
Both are configured from the keys under their alias (``transforms.<alias>.`` /
``predicates.<alias>.``), given to them as ``Options``, so every error names the full key.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import NamedTuple, Protocol

from mysql_cdc_base.connect import ConnectSchema, Field
from mysql_cdc_base.errors import ConfigError, MysqlCdcError
from mysql_cdc_base.properties import parse_bool, split_list
from mysql_cdc_base.records import ChangeRecord

log = logging.getLogger(__name__)


class TransformError(MysqlCdcError, RuntimeError):
    """A transform cannot process a record (a field it needs is missing, a value has the wrong type);
    like Kafka Connect's ``DataException`` it stops the connector, naming the transform and topic."""


class Transformation(Protocol):
    def apply(self, record: ChangeRecord) -> ChangeRecord | None: ...


class Predicate(Protocol):
    def test(self, record: ChangeRecord) -> bool: ...


class Options(NamedTuple):
    """The options of one transform or predicate: ``values`` are the keys under ``prefix``."""

    prefix: str  # "transforms.unwrap."
    values: Mapping[str, str]

    def key(self, name: str) -> str:
        return self.prefix + name

    def get(self, name: str, default: str | None = None) -> str | None:
        value = self.values.get(name)
        return default if value is None else value.strip()

    def require(self, name: str) -> str:
        value = self.get(name)
        if not value:
            raise ConfigError(self.key(name), "is required")
        return value

    def get_bool(self, name: str, default: bool) -> bool:
        value = self.get(name)
        if value is None or value == "":
            return default
        return parse_bool(self.key(name), value)

    def get_list(self, name: str) -> list[str]:
        return split_list(self.get(name))

    def get_choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        value = (self.get(name) or default).lower()
        if value not in choices:
            raise ConfigError(self.key(name), f"expected one of {', '.join(choices)}, got {value!r}")
        return value

    def get_regex(self, name: str, required: bool = True) -> re.Pattern[str] | None:
        text = self.require(name) if required else self.get(name)
        if not text:
            return None
        try:
            return re.compile(text)
        except re.error as exc:
            raise ConfigError(self.key(name), f"is not a valid regular expression: {exc}") from None

    def check_options(self, known: frozenset[str]) -> None:
        """Warns about unknown options (as for unknown connector keys) and refuses the known ones
        this implementation does not do."""
        for name in sorted(set(self.values) - known - {"type", "predicate", "negate"}):
            log.warning("unknown transform option %s is ignored (check its spelling)", self.key(name))
        replace_null = self.get("replace.null.with.default", "true") or "true"
        if "replace.null.with.default" in known and replace_null.lower() != "true":
            # Kafka's default (true) is what the JSON converter writes here: a null with a schema
            # default becomes the default. Keeping nulls (false) is not implemented.
            raise ConfigError(self.key("replace.null.with.default"), "only true (the default) is implemented")


_JAVA_GROUP = re.compile(r"\\(.)|\$(\d+|\{[A-Za-z][A-Za-z0-9]*\})")


def java_replacement(text: str) -> str:
    """A ``java.util.regex.Matcher`` replacement (``$1``, ``${name}``, ``\\$``) as Python's ``re.sub`` form."""

    def convert(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return "\\\\" if match.group(1) == "\\" else match.group(1)
        group = match.group(2).strip("{}")
        return f"\\g<{group}>"

    return _JAVA_GROUP.sub(convert, text.replace("\\\\", "\0")).replace("\0", "\\\\")


def replace_first(pattern: re.Pattern[str], replacement: str, text: str) -> str | None:
    """Java's ``matcher.matches() ? matcher.replaceFirst(replacement) : null``."""
    if pattern.fullmatch(text) is None:
        return None
    return pattern.sub(replacement, text, count=1)


def struct_like(
    schema: ConnectSchema, fields: tuple[Field, ...], *, optional: bool | None = None
) -> ConnectSchema:
    """Kafka's ``SchemaUtil.copySchemaBasics`` (name, version, doc, parameters) with new fields;
    ``optional`` as given (copySchemaBasics itself does not copy it: the copy is required)."""
    return ConnectSchema(
        "struct",
        optional=bool(optional),
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        parameters=schema.parameters,
        fields=fields,
    )


def options_under(props: Mapping[str, str], prefix: str) -> Options:
    """The options of the keys under ``prefix`` (``transforms.unwrap.``, ``boolean.``)."""
    return Options(prefix, {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)})
