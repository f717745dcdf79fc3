"""mysql-cdc: MySQL change data capture with Debezium-compatible events."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mysql-cdc")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from connector.embedded import EmbeddedEngine, start_engine
    from connector.fake import FakeConnector

__all__ = ["EmbeddedEngine", "FakeConnector", "__version__", "start_engine"]

# The embedded API, importable as ``from connector import EmbeddedEngine`` without making a plain
# ``import connector`` (the pytest plugin, the CLI) load the engine.
_EMBEDDED_API = {
    "EmbeddedEngine": "connector.embedded",
    "start_engine": "connector.embedded",
    "FakeConnector": "connector.fake",
}


def __getattr__(name: str) -> object:
    module = _EMBEDDED_API.get(name)
    if module is None:
        raise AttributeError(f"module 'connector' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
