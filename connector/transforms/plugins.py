"""Plugins named by class: a transform, predicate or custom converter is built from the factory
its ``type`` option names (Debezium's and Kafka's Java class names, or a registered Python one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from connector.transforms.base import Options
from connector.transforms.settings import PluginSettings
from mysql_cdc_base.errors import ConfigError

_Plugin = TypeVar("_Plugin")


def build_plugin(
    options: Options, kind: str, alias: str, factories: Mapping[str, Callable[[Options], _Plugin]]
) -> _Plugin:
    """The plugin whose class ``options`` names, looked up in ``factories``; an unknown class is a
    ConfigError naming the key (a missing one is refused by ``PluginSettings``)."""
    class_name = PluginSettings.from_options(options, kind, alias).class_name
    factory = factories.get(class_name)
    if factory is None:
        raise ConfigError(
            options.key("type"),
            f"unknown {kind} class {class_name}; supported: {', '.join(sorted(factories))}",
        )
    return factory(options)
