"""The Spark sink's property declarations (``sink.spark.*``), apart from its settings
(``sink.spark.settings``): the property table (``connector.config``) loads these on every run, the
settings only a run with ``sink.type=spark`` needs (issue 41: time to the first event)."""

from __future__ import annotations

from mysql_cdc_base.properties import Property, prop

# How schema changes that Delta cannot apply as plain metadata reach existing tables:
# rewrite: the table is rewritten in one commit (every Delta reader, delta-rs included, reads it);
# column-mapping: Delta's column mapping and type widening table features (metadata-only commits,
# but readers must support those features).
EVOLUTION_MODES = ("rewrite", "column-mapping")

# sink.type=spark: sink.spark.conf.* passes through to the Spark session.
SPARK_SINK_PROPERTIES: tuple[Property, ...] = (
    prop(
        "sink.spark.warehouse",
        doc="Where the Delta tables of sink.type=spark live: a path or a Hadoop URI (file:, hdfs:, s3a:, abfss:).",
    ),
    prop("sink.spark.master", "local[*]", "Spark master URL."),
    prop(
        "sink.spark.log.level",
        doc="Spark's own log level (SparkContext.setLogLevel). Unset: error for a session the sink "
        "creates, with Spark's start-up banners off (set warn or info to see them again); an "
        "application's existing session is left alone.",
        kind="choice",
        choices=("all", "trace", "debug", "info", "warn", "error", "fatal", "off"),
    ),
    prop(
        "sink.spark.batch.max.events",
        "50000",
        "Events per Spark batch at most (a batch also ends after sink.spark.batch.max.interval.ms).",
        kind="int",
        minimum=1,
    ),
    prop(
        "sink.spark.batch.max.interval.ms",
        "5000",
        "Longest time a Spark batch stays open.",
        kind="int",
        minimum=1,
    ),
    prop(
        "sink.spark.merge.interval.ms",
        "60000",
        "How long a table's current state may lag its changelog: the changelog is appended every "
        "batch, the current-state MERGE folds the changes it has not taken yet at most this long "
        "after the first of them (also at every schema change, snapshot and shutdown); 0: MERGE "
        "every batch. See docs/guides/delta-freshness.md.",
        kind="int",
        minimum=0,
    ),
    prop(
        "sink.spark.merge.max.rows",
        "100000",
        "A table's deferred current-state MERGE is due as soon as it holds this many keys (the "
        "memory bound of sink.spark.merge.interval.ms).",
        kind="int",
        minimum=1,
    ),
    prop(
        "sink.spark.changelog.appends",
        "auto",
        "Who commits the changelog appends. auto: delta-rs (deltalake), in milliseconds, where the "
        "warehouse is a local path and the rows need no new column nor cast (the same Parquet file "
        "and commit metadata as a Spark append); Spark otherwise. spark: always a Spark job. "
        "See docs/guides/delta-freshness.md.",
        kind="choice",
        choices=("auto", "spark"),
    ),
    prop(
        "sink.spark.current.commits",
        "auto",
        "Who commits the current-state tables' MERGEs and insert-only appends. auto: delta-rs "
        "(deltalake), in milliseconds, where sink.spark.changelog.appends would (a local warehouse, "
        "no cast, no column mapping), with the same rows, commit metadata, transaction identifier "
        "and change data feed as Spark's MERGE; Spark otherwise, and for truncates. spark: always a "
        "Spark job. See docs/guides/delta-freshness.md.",
        kind="choice",
        choices=("auto", "spark"),
    ),
    prop(
        "sink.spark.optimize.interval.commits",
        "10",
        "Compact a Delta table (OPTIMIZE) after this many of the sink's commits to it, so its files "
        "stay bounded; 0: never.",
        kind="int",
        minimum=0,
    ),
    prop(
        "sink.spark.vacuum.interval.ms",
        "86400000",
        "How often each Delta table is vacuumed (files no version within "
        "sink.spark.vacuum.retention.hours needs are deleted); 0: never.",
        kind="int",
        minimum=0,
    ),
    prop(
        "sink.spark.vacuum.retention.hours",
        "168",
        "The history VACUUM keeps (time travel, and the restore of an interrupted snapshot); Delta "
        "refuses less than 168 unless spark.databricks.delta.retentionDurationCheck.enabled=false.",
        kind="int",
        minimum=0,
    ),
    prop("sink.spark.table.name.format", "{database}.{table}", "Catalog name of current-state tables."),
    prop(
        "sink.spark.changelog.name.format",
        "{database}.{table}_changelog",
        "Catalog name of changelog tables.",
    ),
    prop(
        "sink.spark.schema.evolution",
        "rewrite",
        "How drops, renames and type changes reach existing Delta tables: rewrite (one atomic "
        "rewrite; every Delta reader, delta-rs included, reads the tables) or column-mapping (Delta "
        "column mapping and type widening: metadata-only, readers need those table features).",
        kind="choice",
        choices=("rewrite", "column-mapping"),
    ),
)
