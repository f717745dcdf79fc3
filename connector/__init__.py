"""mysql-cdc: MySQL change data capture with Debezium-compatible events."""

# typing.TYPE_CHECKING without importing typing: a plain ``import connector`` (the launcher of
# ``mysql-cdc run``, before it re-executes itself) stays at the interpreter's own modules.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from connector.embedded.api import EmbeddedEngine, start_engine
    from connector.errors import (
        ConfigError,
        DdlError,
        MysqlCdcError,
        OffsetError,
        PrerequisiteError,
        ReplicationError,
        SchemaHistoryError,
        SinkError,
        SnapshotError,
    )
    from connector.records.custom_converters import register_converter
    from connector.testing.fake import FakeConnector
    from connector.transforms import register_transform
    from connector.version import __version__

__all__ = [
    "ConfigError",
    "DdlError",
    "EmbeddedEngine",
    "FakeConnector",
    "MysqlCdcError",
    "OffsetError",
    "PrerequisiteError",
    "ReplicationError",
    "SchemaHistoryError",
    "SinkError",
    "SnapshotError",
    "__version__",
    "register_converter",
    "register_transform",
    "start_engine",
]

# The public API, importable as ``from connector import EmbeddedEngine`` without making a plain
# ``import connector`` (the pytest plugin, the CLI) load the engine.
_ERRORS = tuple(name for name in __all__ if name.endswith("Error"))  # from connector.errors
_EMBEDDED_API = {
    **dict.fromkeys(_ERRORS, "connector.errors"),
    "__version__": "connector.version",
    "EmbeddedEngine": "connector.embedded.api",
    "start_engine": "connector.embedded.api",
    "FakeConnector": "connector.testing.fake",
    "register_converter": "connector.records.custom_converters",
    "register_transform": "connector.transforms",
}


def __getattr__(name: str) -> object:
    module = _EMBEDDED_API.get(name)
    if module is None:
        raise AttributeError(f"module 'connector' has no attribute {name!r}")
    # __import__, not importlib.import_module: importing importlib would cost the launcher.
    return getattr(__import__(module, fromlist=[name]), name)
