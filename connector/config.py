"""Connector configuration: Debezium's property names, read from a Java ``.properties`` file.

Every component declares its properties next to its code (``mysql_cdc_base.properties.Property``: name, kind,
default, doc, validation; the connector core's in ``connector.core_properties``); this module
assembles all of them into one table that drives parsing and validation (a bad value names the key
and the expected form), defaults, the ``--help`` reference, unknown-key warnings, refused Debezium
keys and secret redaction. Components read their own keys with ``get``/``get_int``/``get_bool``/
``subset``; the properties every part needs are exposed as typed attributes.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from connector.config_files import load_properties_file, unknown_key_message
from connector.core_properties import (
    CONNECTION_PROPERTIES,
    EVENT_PROPERTIES,
    RUNTIME_PROPERTIES,
    SINK_TYPE_PROPERTIES,
)
from connector.log_format import LOG_FORMAT_PROPERTIES
from connector.metrics import METRICS_PROPERTIES
from connector.notifications.properties import NOTIFICATION_PROPERTIES
from connector.post_processors.properties import POST_PROCESSOR_PROPERTIES
from connector.sources.properties import SIGNAL_PROPERTIES, STREAMING_PROPERTIES
from connector.stores.properties import STORE_PROPERTIES
from mysql_cdc_base.connect import CONVERTER_PROPERTIES, REPRESENTATION_PROPERTIES
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import (
    Property,
    PropertyReader,
    by_name,
    check_value,
    split_list,
)
from sink.jsonl import JSONL_PROPERTIES
from sink.kafka.properties import KAFKA_SINK_PROPERTIES
from sink.spark.properties import SPARK_SINK_PROPERTIES
from snapshot.settings import SNAPSHOT_PROPERTIES

log = logging.getLogger(__name__)

__all__ = ["ConfigError", "ConnectorConfig", "Property"]


# The whole table, in the order of --help.
PROPERTIES: tuple[Property, ...] = (
    *CONNECTION_PROPERTIES,
    *REPRESENTATION_PROPERTIES,
    *EVENT_PROPERTIES,
    *SNAPSHOT_PROPERTIES,
    *SIGNAL_PROPERTIES,
    *NOTIFICATION_PROPERTIES,
    *POST_PROCESSOR_PROPERTIES,
    *STREAMING_PROPERTIES,
    *STORE_PROPERTIES,
    *RUNTIME_PROPERTIES,
    *METRICS_PROPERTIES,
    *LOG_FORMAT_PROPERTIES,
    *SINK_TYPE_PROPERTIES,
    *JSONL_PROPERTIES,
    *CONVERTER_PROPERTIES,
    *KAFKA_SINK_PROPERTIES,
    *SPARK_SINK_PROPERTIES,
)

# Prefixes whose keys are passed through to a component (not individually declared).
PASSTHROUGH_PREFIXES: tuple[str, ...] = (
    "signal.consumer.",
    "sink.kafka.producer.",
    "sink.spark.conf.",
    "schema.history.internal.producer.",
    "schema.history.internal.consumer.",
    "schema.history.internal.kafka.",
    "offset.storage.kafka.",
    "snapshot.select.statement.overrides.",
    "snapshot.mode.configuration.based.",
    # Options of the snapshot.spi plugins (passed to their configure()).
    "snapshot.mode.custom.",
    "snapshot.query.mode.custom.",
    "snapshot.locking.mode.custom.",
    "column.mask.hash.",
    "column.mask.with.",
    "column.truncate.to.",
    "topic.creation.",
    "sink.spark.",
    "sink.kafka.",
    "driver.",
    "transforms.",  # validated by connector.transforms.build_chain
    "predicates.",
    "post.processors.",  # validated by connector.post_processors.build_post_processors
)

# Debezium properties that change what is emitted and are not implemented: start-up stops naming
# the key and the hint. A key matches its entry exactly or as ``entry.`` prefix (``transforms``
# covers ``transforms.unwrap.type``). Remove an entry when its feature is implemented.
REFUSED: Mapping[str, str] = {
    "sink.spark.current.buckets": "the Spark sink writes Delta tables now: Delta lays out the files "
    "(remove the key; OPTIMIZE/ZORDER the tables from Spark if needed)",
    "sink.spark.retain.ms": "the Spark sink writes Delta tables now: old versions stay readable by "
    "time travel until VACUUM (delta.deletedFileRetentionDuration); remove the key",
    "database.server.name": "renamed topic.prefix in Debezium 2.0",
    "database.history": "renamed schema.history.internal.* in Debezium 2.0",
}

# Debezium / Kafka Connect keys that configure the Java runtime and do not apply here: accepted
# without a warning (they change nothing a consumer sees).
NOT_APPLICABLE: frozenset[str] = frozenset(
    {
        "connector.class",
        "tasks.max",
        "key.converter",
        "value.converter",
        "header.converter",
        "database.jdbc.driver",
        "database.protocol",
        "connect.keep.alive",
        "errors.max.retries",
        "errors.retry.delay.initial.ms",
        "errors.retry.delay.max.ms",
        "errors.tolerance",
        "errors.log.enable",
        "errors.log.include.messages",
        "retriable.restart.connector.wait.ms",
        "statistics.metrics.enabled",
        "advanced.metrics.enable",
        "custom.metric.tags",
        "queue.provider.type",
        "executor.shutdown.timeout.ms",
        "offset.activity.monitor.interval.ms",
        "offset.flush.timeout.ms",
        "database.query.timeout.ms",
        "connection.validation.timeout.ms",
        "use.nongraceful.disconnect",
    }
)

# Converters whose output is what the connector writes (the JSON converter, schemas per
# *.converter.schemas.enable); any other converter class changes the format and is refused.
_JSON_CONVERTERS = frozenset(
    {
        "org.apache.kafka.connect.json.JsonConverter",
        "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        "org.apache.kafka.connect.storage.StringConverter",
    }
)
_CONVERTER_KEYS = ("key.converter", "value.converter", "header.converter")


def refused_hint(key: str) -> str | None:
    """The reason a Debezium key is refused, or None when it is not."""
    for entry, hint in REFUSED.items():
        if key == entry or key.startswith(entry + "."):
            return hint
    return None


_BY_NAME = by_name(PROPERTIES)
_SECRET_RE = re.compile(r"(password|secret|sasl\.jaas\.config|credential|token)", re.IGNORECASE)
_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TOPIC_PREFIX_RE = re.compile(r"^[A-Za-z0-9._-]+$")


def is_secret(key: str) -> bool:
    spec = _BY_NAME.get(key)
    return bool(spec and spec.secret) or bool(_SECRET_RE.search(key))


def redact(props: Mapping[str, str]) -> dict[str, str]:
    return {k: ("********" if is_secret(k) and v else v) for k, v in props.items()}


def substitute_env(value: str, key: str, environ: Mapping[str, str] | None = None) -> str:
    """Replace ``${VAR}`` / ``${VAR:-default}``; an unset variable without default is an error."""
    env = os.environ if environ is None else environ

    def repl(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ConfigError(key, f"environment variable {name} is not set (referenced as ${{{name}}})")

    return _ENV_RE.sub(repl, value)


def property_text(key: str, value: Any) -> str:
    """A property value given from Python as text: a class (a ``snapshot.spi`` plugin, for
    ``*.custom.name``) becomes its ``package.module:Class`` path; anything else ``str()``."""
    if not isinstance(value, type):
        return str(value)
    if "<locals>" in value.__qualname__:
        raise ConfigError(
            key,
            f"class {value.__qualname__} is defined inside a function; a plugin must be importable "
            "as package.module:Class (define it at module level)",
        )
    return f"{value.__module__}:{value.__qualname__}"


def property_texts(props: Mapping[str, Any]) -> dict[str, str]:
    return {k: property_text(k, v) for k, v in props.items()}


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError("--set", f"expected key=value, got {item!r}")
        out[key.strip()] = value
    return out


class ConnectorConfig(PropertyReader):
    """Validated connector properties, read through the whole property table."""

    declarations = _BY_NAME

    def __init__(self, props: Mapping[str, str], *, warn_unknown: bool = True) -> None:
        super().__init__({k: substitute_env(str(v), k) for k, v in props.items()})
        for key in sorted(self.raw):
            hint = refused_hint(key)
            if hint is not None:
                raise ConfigError(key, f"this Debezium property is not supported: {hint}")
        for key in _CONVERTER_KEYS:
            value = self.raw.get(key, "").strip()
            if value and value not in _JSON_CONVERTERS:
                raise ConfigError(
                    key,
                    f"{value} is not supported: events are written in the JSON converter's format "
                    "(org.apache.kafka.connect.json.JsonConverter; see *.converter.schemas.enable)",
                )
        missing = [p.name for p in PROPERTIES if p.required and not (self.raw.get(p.name) or "").strip()]
        if len(missing) > 1:
            raise ConfigError(", ".join(missing), "are required")
        for spec in PROPERTIES:
            self._validate(spec)
        if self.int_of("max.queue.size") <= self.int_of("max.batch.size"):
            raise ConfigError(
                "max.queue.size",
                f"must be larger than max.batch.size ({self.int_of('max.batch.size')}), "
                f"got {self.int_of('max.queue.size')}",
            )
        if self.raw.get("database.include.list") and self.raw.get("database.exclude.list"):
            raise ConfigError(
                "database.exclude.list", "set either database.include.list or database.exclude.list, not both"
            )
        if self.raw.get("table.include.list") and self.raw.get("table.exclude.list"):
            raise ConfigError(
                "table.exclude.list", "set either table.include.list or table.exclude.list, not both"
            )
        if self.raw.get("gtid.source.includes") and self.raw.get("gtid.source.excludes"):
            raise ConfigError(
                "gtid.source.excludes", "set either gtid.source.includes or gtid.source.excludes, not both"
            )
        if self.raw.get("column.include.list") and self.raw.get("column.exclude.list"):
            raise ConfigError(
                "column.exclude.list", "set either column.include.list or column.exclude.list, not both"
            )
        if not _TOPIC_PREFIX_RE.match(self.topic_prefix):
            raise ConfigError(
                "topic.prefix", f"{self.topic_prefix!r} may contain only letters, digits, '.', '_' and '-'"
            )
        if warn_unknown:
            for key in self.unknown_keys():
                log.warning("%s", unknown_key_message(key, _BY_NAME))

    @classmethod
    def from_mapping(cls, props: Mapping[str, Any], **kw: Any) -> ConnectorConfig:
        return cls(property_texts(props), **kw)

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], overrides: Mapping[str, str] | None = None, **kw: Any
    ) -> ConnectorConfig:
        props = load_properties_file(path)
        props.update(overrides or {})
        return cls(props, **kw)

    # -- validation -----------------------------------------------------------------------------
    def _validate(self, spec: Property) -> None:
        check_value(spec, self.raw.get(spec.name))

    def unknown_keys(self) -> list[str]:
        converters = tuple(f"{alias}." for alias in split_list(self.raw.get("converters")))
        return sorted(
            k
            for k in self.raw
            if k not in _BY_NAME
            and k not in NOT_APPLICABLE
            and not k.startswith(PASSTHROUGH_PREFIXES)
            and not k.startswith(converters)
        )

    def with_overrides(self, **overrides: str) -> ConnectorConfig:
        return ConnectorConfig({**self.raw, **overrides}, warn_unknown=False)

    def redacted(self) -> dict[str, str]:
        return redact(self.raw)

    def __repr__(self) -> str:
        return f"ConnectorConfig({self.redacted()!r})"
