"""Component factories: the configuration picks the sinks, the offset store and the schema history
(name → constructor tables), and the server probe
(whose row-image check depends on the post-processors configured)."""

from __future__ import annotations

import importlib
from typing import Any

from connector.config import ConfigError, ConnectorConfig
from connector.post_processors.properties import reselects
from connector.server.connection import ServerProbe
from connector.stores.offsets import FileOffsetStore, MemoryOffsetStore, OffsetStore
from connector.stores.settings import StoreSettings
from ddl.history.store import FileSchemaHistory, MemorySchemaHistory, SchemaHistory
from sink.base import Sink

# -- component factories (name → "module:callable"), so config picks implementations -------------
# Imported on first use: the Kafka and Spark implementations need kafka-python / pyspark, which a
# connector that does not use them (and `mysql-cdc --help`) must not load.
SINK_FACTORIES: dict[str, str] = {
    "jsonl": "sink.jsonl:JsonlSink.from_config",
    "stdout": "sink.jsonl:StdoutSink.from_config",
    "memory": "sink.memory:MemorySink.from_config",
    "kafka": "sink.kafka.sink:kafka_sink",
    "spark": "sink.spark:SparkSink.from_config",
}
KAFKA_OFFSET_STORE = "connector.stores.kafka_offsets:KafkaOffsetStore.from_config"
KAFKA_SCHEMA_HISTORY = "ddl.history.kafka.config:kafka_schema_history_from_config"


def load_factory(spec: str) -> Any:
    """The callable a ``"module:attribute.path"`` names, importing its module."""
    module_name, _, path = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    for name in path.split("."):
        target = getattr(target, name)
    return target


def build_sinks(config: ConnectorConfig) -> list[Sink]:
    names = config.sink_types or ["jsonl"]
    sinks = []
    for name in names:
        spec = SINK_FACTORIES.get(name.lower())
        if spec is None:
            raise ConfigError(
                "sink.type",
                f"unknown sink {name!r}; expected a comma-separated list of {', '.join(SINK_FACTORIES)}",
            )
        sinks.append(load_factory(spec)(config))
    return sinks


def build_offset_store(config: ConnectorConfig) -> OffsetStore:
    settings = StoreSettings.from_config(config)
    kind = settings.offset_storage
    if kind == "memory":
        return MemoryOffsetStore()
    if kind == "kafka":
        store: OffsetStore = load_factory(KAFKA_OFFSET_STORE)(config)
        return store
    return FileOffsetStore(
        settings.offset_file,
        config.connector_name,
        config.topic_prefix,
    )


def build_schema_history(config: ConnectorConfig) -> SchemaHistory:
    settings = StoreSettings.from_config(config)
    kind = settings.schema_history
    if kind == "memory":
        return MemorySchemaHistory()
    if kind == "kafka":
        history: SchemaHistory = load_factory(KAFKA_SCHEMA_HISTORY)(config)
        return history
    return FileSchemaHistory(settings.history_file)


def build_server_probe(config: ConnectorConfig) -> ServerProbe:
    """The start-up checks for ``config``: ``binlog_row_image=NOBLOB`` passes when the reselect
    post-processor re-reads what such images leave out."""
    return ServerProbe(config, noblob_reselected=reselects(config.raw))
