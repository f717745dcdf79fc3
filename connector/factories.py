"""Component factories: the configuration picks the sinks, the offset store and the schema history
(name → constructor tables), and the converter settings every event builder uses."""

from __future__ import annotations

from collections.abc import Callable

from connector.config import ConfigError, ConnectorConfig
from connector.converters import ConverterSettings
from connector.offsets import FileOffsetStore, MemoryOffsetStore, OffsetStore
from ddl.history import SchemaHistory
from sink.base import Sink


# -- component factories (name → constructor), so config picks implementations ------------------
def _kafka_sink(config: ConnectorConfig) -> Sink:
    from sink.kafka import KafkaSink

    return KafkaSink.from_config(config)


def _spark_sink(config: ConnectorConfig) -> Sink:
    from sink.spark import SparkSink

    return SparkSink.from_config(config)


def _jsonl_sink(config: ConnectorConfig) -> Sink:
    from sink.jsonl import JsonlSink

    return JsonlSink.from_config(config)


def _stdout_sink(config: ConnectorConfig) -> Sink:
    from sink.jsonl import StdoutSink

    return StdoutSink.from_config(config)


def _memory_sink(config: ConnectorConfig) -> Sink:
    from sink.memory import MemorySink

    return MemorySink()


SINK_FACTORIES: dict[str, Callable[[ConnectorConfig], Sink]] = {
    "jsonl": _jsonl_sink,
    "stdout": _stdout_sink,
    "memory": _memory_sink,
    "kafka": _kafka_sink,
    "spark": _spark_sink,
}


def build_sinks(config: ConnectorConfig) -> list[Sink]:
    names = config.sink_types or ["jsonl"]
    sinks = []
    for name in names:
        factory = SINK_FACTORIES.get(name.lower())
        if factory is None:
            raise ConfigError(
                "sink.type",
                f"unknown sink {name!r}; expected a comma-separated list of {', '.join(SINK_FACTORIES)}",
            )
        sinks.append(factory(config))
    return sinks


def build_offset_store(config: ConnectorConfig) -> OffsetStore:
    kind = config.get_choice("offset.storage")
    if kind == "memory":
        return MemoryOffsetStore()
    if kind == "kafka":
        from connector.kafka_offsets import KafkaOffsetStore

        return KafkaOffsetStore.from_config(config)
    return FileOffsetStore(
        config.path_or_default("offset.storage.file.filename", "offsets.json"),
        config.connector_name,
        config.topic_prefix,
    )


def build_schema_history(config: ConnectorConfig) -> SchemaHistory:
    kind = config.get_choice("schema.history.internal")
    if kind == "memory":
        from ddl.history import MemorySchemaHistory

        return MemorySchemaHistory()
    if kind == "kafka":
        from ddl.kafka_history import KafkaSchemaHistory

        return KafkaSchemaHistory.from_config(config)
    from ddl.history import FileSchemaHistory

    return FileSchemaHistory(
        config.path_or_default("schema.history.internal.file.filename", "schema-history.jsonl")
    )


def converter_settings(config: ConnectorConfig) -> ConverterSettings:
    # Snapshot connections run with time_zone='+00:00', so TIMESTAMP text is already UTC.
    return ConverterSettings(
        decimal_handling_mode=config.get_choice("decimal.handling.mode"),
        time_precision_mode=config.get_choice("time.precision.mode"),
        bigint_unsigned_handling_mode=config.get_choice("bigint.unsigned.handling.mode"),
        binary_handling_mode=config.get_choice("binary.handling.mode"),
        enable_time_adjuster=config.get_bool("enable.time.adjuster", True),
        propagate_source_type=tuple(config.get_list("column.propagate.source.type")),
        datatype_propagate_source_type=tuple(config.get_list("datatype.propagate.source.type")),
        include_schema_comments=config.get_bool("include.schema.comments"),
    )
