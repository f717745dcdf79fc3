"""Each component declares its properties next to its code; ``connector.config`` assembles them, and
the components read their defaults from their declarations (one place for each default)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from connector.config import PROPERTIES, ConnectorConfig
from connector.log_format import LOG_FORMAT_PROPERTIES
from connector.metrics import METRICS_PROPERTIES
from connector.records.filters import TableFilter
from connector.sources.properties import SIGNAL_PROPERTIES
from connector.stores.properties import STORE_PROPERTIES
from ddl.kafka.client import client_kwargs
from mysql_cdc_base.connect import CONVERTER_PROPERTIES, REPRESENTATION_PROPERTIES, ValueModes
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import MappingSource, by_name
from mysql_cdc_base.table_id import TableId
from sink.jsonl import JSONL_PROPERTIES
from sink.kafka.properties import KAFKA_SINK_PROPERTIES
from sink.spark.properties import SPARK_SINK_PROPERTIES
from sink.spark.settings import settings_from_config
from snapshot.errors import SnapshotConfigError
from snapshot.settings import SNAPSHOT_PROPERTIES, SnapshotSettings

BASE = {
    "database.hostname": "127.0.0.1",
    "database.user": "cdc",
    "database.server.id": "5400",
    "topic.prefix": "shop",
}

COMPONENT_TABLES = (
    REPRESENTATION_PROPERTIES,
    CONVERTER_PROPERTIES,
    JSONL_PROPERTIES,
    KAFKA_SINK_PROPERTIES,
    SPARK_SINK_PROPERTIES,
    SNAPSHOT_PROPERTIES,
    SIGNAL_PROPERTIES,
    STORE_PROPERTIES,
    METRICS_PROPERTIES,
    LOG_FORMAT_PROPERTIES,
)


def test_the_table_holds_every_component_declaration_once():
    assembled = by_name(PROPERTIES)  # raises when a name is declared twice
    assert len(assembled) == len(PROPERTIES)
    for table in COMPONENT_TABLES:
        for spec in table:
            assert assembled[spec.name] is spec


def test_snapshot_defaults_are_its_declarations():
    declared = by_name(SNAPSHOT_PROPERTIES)
    settings = SnapshotSettings.from_config(MappingSource({}))
    assert settings.mode == declared["snapshot.mode"].default
    assert settings.locking_mode == declared["snapshot.locking.mode"].default
    assert settings.query_mode == declared["snapshot.query.mode"].default
    assert settings.order_by_row_count == declared["snapshot.tables.order.by.row.count"].default
    assert str(settings.lock_timeout_ms) == declared["snapshot.lock.timeout.ms"].default
    assert str(settings.max_threads) == declared["snapshot.max.threads"].default
    assert str(settings.max_threads_multiplier) == declared["snapshot.max.threads.multiplier"].default
    assert str(settings.legacy_max_threads).lower() == declared["legacy.snapshot.max.threads"].default
    # ... and they agree with the dataclass's own defaults (SnapshotSettings() built in code).
    assert settings == SnapshotSettings()


def test_snapshot_reports_its_own_error_class_naming_the_key():
    with pytest.raises(
        SnapshotConfigError, match=r"^snapshot.lock.timeout.ms: expected an integer, got 'soon'"
    ):
        SnapshotSettings.from_config(MappingSource({"snapshot.lock.timeout.ms": "soon"}))
    with pytest.raises(SnapshotConfigError, match=r"^snapshot.include.collection.list: '\(' is not a valid"):
        SnapshotSettings.from_config(MappingSource({"snapshot.include.collection.list": "("}))
    with pytest.raises(
        SnapshotConfigError, match=r"^snapshot.mode.configuration.based.snapshot.data: expected"
    ):
        SnapshotSettings.from_config(
            MappingSource({"snapshot.mode.configuration.based.snapshot.data": "Yes"})
        )


def test_spark_defaults_are_its_declarations(tmp_path: Path):
    declared = by_name(SPARK_SINK_PROPERTIES)
    settings = settings_from_config(MappingSource({"sink.spark.warehouse": str(tmp_path)}))
    assert settings.master == declared["sink.spark.master"].default
    assert str(settings.batch_max_events) == declared["sink.spark.batch.max.events"].default
    assert str(settings.batch_max_interval_ms) == declared["sink.spark.batch.max.interval.ms"].default
    assert settings.table_name_format == declared["sink.spark.table.name.format"].default
    assert settings.changelog_name_format == declared["sink.spark.changelog.name.format"].default
    assert settings.evolution == declared["sink.spark.schema.evolution"].default
    representation = by_name(REPRESENTATION_PROPERTIES)
    assert settings.converter_settings == ValueModes(
        **{key.replace(".", "_"): spec.default or "" for key, spec in representation.items()}
    )


def test_a_regex_list_carries_an_escaped_comma_like_debeziums():
    config = ConnectorConfig({**BASE, "table.include.list": r"shop\.a{1\,2}"}, warn_unknown=False)
    captured = TableFilter.from_config(config)
    assert captured.table_captured(TableId("shop", "aa"))
    assert not captured.table_captured(TableId("shop", "aaa"))


def test_kafka_client_settings_use_the_same_typed_parsers():
    with pytest.raises(ConfigError, match=r"^sink.kafka.producer.linger.ms: expected an integer, got 'soon'"):
        client_kwargs({"linger.ms": "soon"}, "sink.kafka.producer.")
    with pytest.raises(ConfigError, match=r"^sink.kafka.producer.enable.idempotence: expected true or false"):
        client_kwargs({"enable.idempotence": "maybe"}, "sink.kafka.producer.")


def test_reading_the_configuration_does_not_load_spark():
    # The Spark sink declares its properties in sink.spark.settings; the configuration imports them
    # without loading pyspark (the package loads its heavy modules on first use).
    probe = "import sys, connector.config, connector.cli.commands; print('pyspark' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "False"
