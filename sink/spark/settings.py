"""The Spark sink's settings: ``sink.spark.*`` and the value modes that decide column types."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from mysql_cdc_base.connect import REPRESENTATION_PROPERTIES, ValueModes
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import (
    by_name,
    choice_of,
    compile_regex_list,
    included_by,
    int_of,
    split_list,
    text_of,
)
from mysql_cdc_base.table_id import TableId
from sink.spark.properties import EVOLUTION_MODES, SPARK_SINK_PROPERTIES

ColumnFilter = Callable[[TableId, str], bool]

_DECLARED = by_name(SPARK_SINK_PROPERTIES)
_REPRESENTATION = by_name(REPRESENTATION_PROPERTIES)


def _default(key: str) -> str:
    """A declared default (the one place it is written)."""
    return (_DECLARED.get(key) or _REPRESENTATION[key]).default or ""


class SparkSinkConfig(Protocol):
    """What the sink reads from the connector's configuration (``ConnectorConfig`` has these)."""

    def get(self, key: str, default: str | None = None) -> str | None: ...

    def get_int(self, key: str, default: int | None = None) -> int | None: ...

    def subset(self, prefix: str) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class SparkSinkSettings:
    warehouse: str  # a Hadoop file system URI (file:, hdfs:, s3a:, abfss: ...), no trailing slash
    master: str = _default("sink.spark.master")
    conf: Mapping[str, str] = field(default_factory=dict)
    log_level: str | None = None
    batch_max_events: int = int(_default("sink.spark.batch.max.events"))
    batch_max_interval_ms: int = int(_default("sink.spark.batch.max.interval.ms"))
    merge_interval_ms: int = int(_default("sink.spark.merge.interval.ms"))
    merge_max_rows: int = int(_default("sink.spark.merge.max.rows"))
    changelog_appends: str = _default("sink.spark.changelog.appends")
    current_commits: str = _default("sink.spark.current.commits")
    optimize_interval_commits: int = int(_default("sink.spark.optimize.interval.commits"))
    vacuum_interval_ms: int = int(_default("sink.spark.vacuum.interval.ms"))
    vacuum_retention_hours: int = int(_default("sink.spark.vacuum.retention.hours"))
    table_name_format: str = _default("sink.spark.table.name.format")
    changelog_name_format: str = _default("sink.spark.changelog.name.format")
    evolution: str = _default("sink.spark.schema.evolution")
    # Names the sink's Delta transactions (txnAppId); one writer per warehouse and name.
    app_id: str = "mysql-cdc"
    # Lets schema change events evolve the tables before the table's next change event arrives
    # (the events' value representation modes). None: tables follow the change events only.
    converter_settings: ValueModes | None = None
    # The columns the change events carry, when the connector leaves some out.
    column_filter: ColumnFilter | None = None
    # Events arrive through Kafka (``mysql-cdc spark-apply``), not from this process's connector:
    # an event may arrive again at any time (an at-least-once producer's retries, the stream's
    # replay of an unfinished micro-batch), so every event at or before a table's committed offset
    # is skipped, not only on start; and the stream itself resumes an interrupted snapshot, so it
    # is never rolled back.
    kafka_input: bool = False
    # Change event keys are the tables' primary keys (no ``message.key.columns``): an insert event's
    # key is absent from a current-state table that is in step with MySQL, so batches of new keys
    # are appended instead of merged. Never with ``kafka_input`` (the stream may repeat an event).
    keys_are_primary: bool = True
    # ``snapshot.include.collection.list`` (``mysql-cdc snapshot --table``): a snapshot's schema
    # change of a table it does not read creates no Delta tables; they come with the table's first
    # streamed change. Empty: the snapshot reads every captured table.
    snapshot_tables: tuple[re.Pattern[str], ...] = ()
    # ``skipped.operations`` includes ``t``: TRUNCATE events never reach the sink.
    truncates_skipped: bool = False

    @property
    def inserts_are_new(self) -> bool:
        return self.keys_are_primary and not self.kafka_input

    def __post_init__(self) -> None:
        object.__setattr__(self, "warehouse", warehouse_uri(str(self.warehouse)))

    def snapshot_reads(self, table_id: TableId) -> bool:
        """Does a snapshot read ``table_id``'s rows (``snapshot.include.collection.list``)?"""
        return included_by(self.snapshot_tables, table_id)

    def names(self, table_id: TableId) -> tuple[str, str]:
        """The catalog names of ``table_id``'s current-state and changelog tables."""
        fmt = {"database": table_id.database, "table": table_id.table}
        return self.table_name_format.format(**fmt), self.changelog_name_format.format(**fmt)

    def location(self, name: str) -> str:
        """Where the Delta table of catalog name ``name`` lives: ``<warehouse>/<database>/<table>``."""
        database, dot, table = name.partition(".")
        if not dot:
            database, table = "default", name
        return f"{self.warehouse}/{_safe(database)}/{_safe(table)}"


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_UNSAFE = re.compile(r"[^A-Za-z0-9_$.-]")


def _safe(name: str) -> str:
    return _UNSAFE.sub(lambda m: f"@{ord(m.group()):04x}", name) or "@"


def warehouse_uri(text: str) -> str:
    """``sink.spark.warehouse`` as a Hadoop URI: a URI stays as it is, a path becomes an absolute
    ``file:`` URI (the form Delta compares locations in)."""
    text = text.strip()
    if text.startswith("file:"):  # Hadoop's own spelling of local paths: file:/abs/path
        return "file:" + str(Path("/" + text[5:].lstrip("/")))
    if _SCHEME.match(text) and not re.match(r"^[A-Za-z]:[\\/]", text):
        return text.rstrip("/") or text
    return "file:" + str(Path(text).expanduser().resolve())


def check_name_format(key: str, text: str) -> str:
    try:
        probe = text.format(database="db", table="t")
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError(
            key,
            f"{text!r} is not a valid name format ({exc}); use the placeholders "
            "{database} and {table}, e.g. {database}.{table}_changelog",
        ) from None
    if "{table}" not in text or not probe.strip():
        raise ConfigError(key, f"{text!r} must contain {{table}} so that every table gets its own name")
    return text


def settings_from_config(config: SparkSinkConfig) -> SparkSinkSettings:
    warehouse = config.get("sink.spark.warehouse")
    if not warehouse:
        raise ConfigError(
            "sink.spark.warehouse",
            "is required for sink.type=spark: set it to the directory or URI (file:, hdfs:, s3a:, "
            "abfss:) where the Delta tables are kept",
        )

    def positive(key: str) -> int:
        value = int_of(config, _DECLARED[key])
        if value is None or value < 1:
            raise ConfigError(key, f"must be a positive integer, got {value!r}")
        return int(value)

    def non_negative(key: str) -> int:
        value = int_of(config, _DECLARED[key])
        if value is None or value < 0:
            raise ConfigError(key, f"must be 0 or a positive integer, got {value!r}")
        return int(value)

    def text(key: str) -> str:
        return text_of(config, _DECLARED[key]) or ""

    evolution = text("sink.spark.schema.evolution").strip().lower()
    if evolution not in EVOLUTION_MODES:
        raise ConfigError("sink.spark.schema.evolution", f"must be one of {', '.join(EVOLUTION_MODES)}")
    # Schema change events describe every column, change events only the captured ones: with a
    # column filter the tables follow the change events alone. So they do when field names are
    # adjusted (field.name.adjustment.mode): tableChanges keep the columns' own names.
    filtered = bool(config.get("column.include.list") or config.get("column.exclude.list"))
    filtered = filtered or (config.get("field.name.adjustment.mode") or "none") != "none"
    name_formats = {
        key: check_name_format(key, text(key))
        for key in ("sink.spark.table.name.format", "sink.spark.changelog.name.format")
    }
    return SparkSinkSettings(
        warehouse=warehouse,
        master=text("sink.spark.master"),
        conf=dict(config.subset("sink.spark.conf.")),
        log_level=config.get("sink.spark.log.level") or None,
        batch_max_events=positive("sink.spark.batch.max.events"),
        batch_max_interval_ms=positive("sink.spark.batch.max.interval.ms"),
        merge_interval_ms=non_negative("sink.spark.merge.interval.ms"),
        merge_max_rows=positive("sink.spark.merge.max.rows"),
        changelog_appends=choice_of(config, _DECLARED["sink.spark.changelog.appends"]),
        current_commits=choice_of(config, _DECLARED["sink.spark.current.commits"]),
        optimize_interval_commits=non_negative("sink.spark.optimize.interval.commits"),
        vacuum_interval_ms=non_negative("sink.spark.vacuum.interval.ms"),
        vacuum_retention_hours=non_negative("sink.spark.vacuum.retention.hours"),
        table_name_format=name_formats["sink.spark.table.name.format"],
        changelog_name_format=name_formats["sink.spark.changelog.name.format"],
        evolution=evolution,
        app_id=f"mysql-cdc:{config.get('name') or config.get('topic.prefix') or 'connector'}",
        converter_settings=None if filtered else ValueModes.from_config(config),
        keys_are_primary=not (config.get("message.key.columns") or "").strip(),
        snapshot_tables=compile_regex_list(
            "snapshot.include.collection.list", config.get("snapshot.include.collection.list")
        ),
        truncates_skipped="t" in {s.lower() for s in split_list(config.get("skipped.operations") or "t")},
    )
