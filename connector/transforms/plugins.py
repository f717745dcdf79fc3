"""Plugins named by class: a transform, predicate or custom converter is built from the factory
its ``type`` option names (Debezium's and Kafka's Java class names, or a registered Python one).

The built-in factories are registered by name (``PluginRegistry``): a factory's module is imported
the first time a configuration names its class, so that a run without transforms loads none of
them (issue 41: time to the first event)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import TypeVar

from connector.transforms.base import Options
from connector.transforms.settings import PluginSettings
from mysql_cdc_base.errors import ConfigError

_Plugin = TypeVar("_Plugin")


class PluginRegistry(MutableMapping[str, Callable[[Options], _Plugin]]):
    """Factories by class name. A built-in one is given as ``"module:attribute.path"`` and imported
    when it is first looked up; ``registry[name] = factory`` adds a Python one."""

    def __init__(self, built_in: Mapping[str, str]) -> None:
        self._entries: dict[str, Callable[[Options], _Plugin] | str] = dict(built_in)

    def __getitem__(self, name: str) -> Callable[[Options], _Plugin]:
        entry = self._entries[name]
        if isinstance(entry, str):
            module, _, path = entry.partition(":")
            found: object = importlib.import_module(module)
            for attribute in path.split("."):
                found = getattr(found, attribute)
            entry = self._entries[name] = found  # type: ignore[assignment]
        return entry  # type: ignore[return-value]

    def __setitem__(self, name: str, factory: Callable[[Options], _Plugin]) -> None:
        self._entries[name] = factory

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


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
