"""Component factories: the configuration picks the sinks, the offset store and the schema history
(name → constructor tables), the converter settings every event builder uses, and the server probe
(whose row-image check depends on the post-processors configured)."""

from __future__ import annotations

import importlib
from typing import Any

from connector.config import ConfigError, ConnectorConfig
from connector.post_processors.properties import reselects
from connector.records.conversion import ConverterSettings
from connector.records.custom_converters import build_converters
from connector.server.connection import ServerProbe
from connector.server.settings import session_time_zone
from connector.stores.offsets import FileOffsetStore, MemoryOffsetStore, OffsetStore
from ddl.history.store import FileSchemaHistory, MemorySchemaHistory, SchemaHistory
from mysql_cdc_base.connect import ValueModes
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
    kind = config.get_choice("offset.storage")
    if kind == "memory":
        return MemoryOffsetStore()
    if kind == "kafka":
        store: OffsetStore = load_factory(KAFKA_OFFSET_STORE)(config)
        return store
    return FileOffsetStore(
        config.path_or_default("offset.storage.file.filename", "offsets.json"),
        config.connector_name,
        config.topic_prefix,
    )


def build_schema_history(config: ConnectorConfig) -> SchemaHistory:
    kind = config.get_choice("schema.history.internal")
    if kind == "memory":
        return MemorySchemaHistory()
    if kind == "kafka":
        history: SchemaHistory = load_factory(KAFKA_SCHEMA_HISTORY)(config)
        return history
    return FileSchemaHistory(
        config.path_or_default("schema.history.internal.file.filename", "schema-history.jsonl")
    )


def converter_settings(config: ConnectorConfig) -> ConverterSettings:
    # Snapshot connections run in database.connectionTimeZone (UTC unless a fixed offset is set).
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


def build_server_probe(config: ConnectorConfig) -> ServerProbe:
    """The start-up checks for ``config``: ``binlog_row_image=NOBLOB`` passes when the reselect
    post-processor re-reads what such images leave out."""
    return ServerProbe(config, noblob_reselected=reselects(config.raw))
