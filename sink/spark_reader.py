"""Debezium change events as typed Spark columns, read with Spark SQL.

Two ways in, one result:

* the Spark sink (``sink/spark/``) converts ``ChangeRecord`` payloads in Python
  (``sink.spark_mapping.row_converter``) and builds DataFrames with an explicit schema
  (``sink.spark_mapping.row_struct_type``);
* users whose events travel through Kafka or JSON-lines files call :func:`debezium_changelog` on a
  DataFrame of Debezium JSON values; it reads the Connect schema carried in each event and converts
  the payload with Spark SQL expressions only (no Python UDF, except for DECIMALs wider than Spark's
  38 digits).

Both produce the changelog layout of ``sink.spark_mapping``, with its Connect -> Spark type mapping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    LongType,
    StringType,
    StructField,
    StructType,
)

from mysql_cdc_base.debezium_schemas import SOURCE_SCHEMA
from sink.spark_mapping import (
    METADATA_FIELDS,
    METADATA_NAMES,
    SchemaLike,
    SchemaNode,
    field_mapping,
    merge_struct,
    row_schema_of,
    schema_node,
    spark_type,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# ------------------------------------------------------------------------------------------------
# Reading Debezium JSON with Spark
# ------------------------------------------------------------------------------------------------
# The source block as the JSON converter writes it, typed from its one Connect definition.
_SOURCE_JSON = StructType([StructField(f.name, spark_type(f.schema)) for f in SOURCE_SCHEMA.fields or ()])


def _payload_json_type(row_json: StructType) -> StructType:
    return StructType(
        [
            StructField("before", row_json),
            StructField("after", row_json),
            StructField("source", _SOURCE_JSON),
            StructField("op", StringType()),
            StructField("ts_ms", LongType()),
        ]
    )


def _is_envelope(node: SchemaNode) -> bool:
    names = {f.get("field") for f in node.get("fields") or ()}
    return node.get("type") == "struct" and {"before", "after", "source", "op"} <= names


def table_of_envelope(node: SchemaNode) -> str:
    """``<prefix>.<db>.<table>.Envelope`` → ``db.table`` (the names Debezium put in the topic)."""
    name = str(node.get("name") or "")
    base = name.removesuffix(".Envelope")
    parts = base.split(".")
    return ".".join(parts[-2:]) if len(parts) >= 2 else base


def _typed_part(
    frame: DataFrame, column: Column, envelope: SchemaNode, decimal_format: str, bare: bool
) -> tuple[DataFrame, StructType]:
    row = row_schema_of(envelope)
    members = [(f["field"], field_mapping(f, decimal_format)) for f in row.get("fields") or ()]
    row_json = StructType([StructField(n, m.json_type, True) for n, m in members])
    payload_type = _payload_json_type(row_json)
    wrapped = F.from_json(column, StructType([StructField("payload", payload_type)]))["payload"]
    payload = F.coalesce(wrapped, F.from_json(column, payload_type)) if bare else wrapped
    parsed = frame.select(payload.alias("p")).where(F.col("p").isNotNull() & F.col("p.op").isNotNull())
    image = F.when(F.col("p.op") == "d", F.col("p.before")).otherwise(F.col("p.after"))
    typed = [
        (m.to_column(image[n]) if m.to_column else image[n]).cast(m.spark_type).alias(n) for n, m in members
    ]
    meta = [
        F.col("p.op").alias("__op"),
        F.col("p.ts_ms").alias("__ts_ms"),
        F.col("p.source.ts_ms").alias("__source_ts_ms"),
        F.col("p.source.file").alias("__file"),
        F.col("p.source.pos").alias("__pos"),
        F.col("p.source.row").alias("__row"),
        F.col("p.source.gtid").alias("__gtid"),
        F.coalesce(F.col("p.source.snapshot"), F.lit("false")).alias("__snapshot"),
        (F.col("p.op") == "d").alias("__deleted"),
    ]
    row_type = StructType([StructField(n, m.spark_type, True) for n, m in members])
    return parsed.select(*typed, *meta), row_type


def _is_unwrapped_row(node: SchemaNode) -> bool:
    """A value schema written by ExtractNewRecordState: the row struct ``<topic>.Value`` itself."""
    return (
        node.get("type") == "struct"
        and str(node.get("name") or "").endswith(".Value")
        and not _is_envelope(node)
    )


def table_of_row(node: SchemaNode) -> str:
    """``<prefix>.<db>.<table>.Value`` → ``db.table``."""
    parts = str(node.get("name") or "").removesuffix(".Value").split(".")
    return ".".join(parts[-2:])


def _typed_unwrapped_part(
    frame: DataFrame, column: Column, node: SchemaNode, decimal_format: str
) -> tuple[DataFrame, StructType]:
    """Like ``_typed_part`` for unwrapped values (see ``unwrapped_envelope``): metadata from the
    ``add.fields`` named like the metadata columns, the operation from ``__op`` or ``__deleted``."""
    row = row_schema_of(node)
    members = [(f["field"], field_mapping(f, decimal_format)) for f in row.get("fields") or ()]
    present = {f.get("field") for f in node.get("fields") or ()}
    meta_types = {f.name: (StringType() if f.name == "__deleted" else f.dataType) for f in METADATA_FIELDS}
    meta_json = [StructField(name, meta_types[name], True) for name in METADATA_NAMES if name in present]
    payload_type = StructType([*(StructField(n, m.json_type, True) for n, m in members), *meta_json])
    payload = F.from_json(column, StructType([StructField("payload", payload_type)]))["payload"]
    parsed = frame.select(payload.alias("p")).where(F.col("p").isNotNull())

    def meta(name: str) -> Column:
        field = next(f for f in METADATA_FIELDS if f.name == name)
        return F.col(f"p.{name}") if name in present else F.lit(None).cast(field.dataType)

    deleted = F.lower(F.col("p.__deleted")) == "true" if "__deleted" in present else F.lit(False)
    op = F.coalesce(meta("__op"), F.when(deleted, F.lit("d")))
    typed = [
        (m.to_column(F.col("p")[n]) if m.to_column else F.col("p")[n]).cast(m.spark_type).alias(n)
        for n, m in members
    ]
    metadata = [
        op.alias("__op"),
        meta("__ts_ms").alias("__ts_ms"),
        meta("__source_ts_ms").alias("__source_ts_ms"),
        meta("__file").alias("__file"),
        meta("__pos").alias("__pos"),
        meta("__row").alias("__row"),
        meta("__gtid").alias("__gtid"),
        F.coalesce(meta("__snapshot"), F.lit("false")).alias("__snapshot"),
        F.coalesce(op == "d", F.lit(False)).alias("__deleted"),
    ]
    row_type = StructType([StructField(n, m.spark_type, True) for n, m in members])
    return parsed.select(*typed, *metadata), row_type


def conform(frame: DataFrame, row_type: StructType, target: StructType) -> DataFrame:
    present = {f.name.lower(): f for f in row_type.fields}
    columns = []
    for f in target.fields:
        source = present.get(f.name.lower())
        if source is None:
            columns.append(F.lit(None).cast(f.dataType).alias(f.name))
        else:
            columns.append(F.col(f"`{source.name}`").cast(f.dataType).alias(f.name))
    return frame.select(*columns, *METADATA_NAMES)


def debezium_changelog(
    frame: DataFrame,
    column: str = "value",
    *,
    value_schema: SchemaLike | str | None = None,
    decimal_format: str = "base64",
) -> dict[str, DataFrame]:
    """Typed changelog DataFrames, one per table, from a DataFrame of Debezium JSON values.

    ``frame[column]`` holds the value of each Kafka record / the ``value`` of each JSON line, as
    text or bytes: ``{"schema": ..., "payload": ...}`` as written with ``schemas.enable=true``.
    Events whose schema is not a change-event envelope (schema changes, heartbeats, transaction
    metadata) and tombstones are dropped. Values unwrapped by ExtractNewRecordState (schema
    ``<topic>.Value``) are read as rows: ``__op``/``__deleted`` and the other metadata-named fields its
    ``add.fields`` adds fill the metadata columns (null when not added; a delete shows only with
    ``delete.tombstone.handling.mode=rewrite``, as the other modes leave no row in the value). Each table's events may carry several schema versions;
    they are unioned by column name with widened types (a type that cannot be widened becomes
    STRING). Pass ``value_schema`` (Connect schema, JSON node or JSON text) for values written
    without schemas; ``decimal_format="numeric"`` when the converter wrote decimals as numbers.

    Keys are ``"db.table"``; each DataFrame has the table's columns then :data:`METADATA_NAMES`.
    Order rows by ``__file``, ``__pos``, ``__row`` for binlog order (snapshot rows share one
    position).
    """
    fmt = decimal_format.lower()
    source = frame.select(F.col(column).cast(StringType()).alias("__value")).where(
        F.col("__value").isNotNull()
    )
    raw = F.col("__value")
    parts: dict[str, list[tuple[DataFrame, StructType]]] = {}
    if value_schema is not None:
        node = orjson.loads(value_schema) if isinstance(value_schema, str) else schema_node(value_schema)
        part = _typed_part(source, raw, node, fmt, bare=True)
        parts.setdefault(table_of_envelope(node), []).append(part)
    else:
        schema_text = F.get_json_object(raw, "$.schema")
        keyed = source.withColumn("__schema_id", F.xxhash64(schema_text))
        distinct = keyed.groupBy("__schema_id").agg(F.first(schema_text).alias("schema")).collect()
        for row in distinct:
            if row["schema"] is None:
                continue
            node = orjson.loads(row["schema"])
            subset = keyed.where(F.col("__schema_id") == F.lit(row["__schema_id"]))
            if _is_envelope(node):
                part = _typed_part(subset, raw, node, fmt, bare=False)
                parts.setdefault(table_of_envelope(node), []).append(part)
            elif _is_unwrapped_row(node):
                part = _typed_unwrapped_part(subset, raw, node, fmt)
                parts.setdefault(table_of_row(node), []).append(part)
    return {table: _union_versions(versions) for table, versions in parts.items()}


def _union_versions(versions: list[tuple[DataFrame, StructType]]) -> DataFrame:
    target = versions[0][1]
    stringify: set[str] = set()
    for _, row_type in versions[1:]:
        target, conflicts = merge_struct(target, row_type)
        stringify.update(c.lower() for c in conflicts)
    if stringify:
        target = StructType(
            [
                StructField(f.name, StringType(), True) if f.name.lower() in stringify else f
                for f in target.fields
            ]
        )
    result: DataFrame | None = None
    for frame, row_type in versions:
        conformed = conform(frame, row_type, target)
        result = conformed if result is None else result.unionByName(conformed)
    assert result is not None
    return result


def read_jsonl_values(spark: SparkSession, path: str) -> DataFrame:
    """The ``value`` column of the ``jsonl`` sink's files, as JSON text (tombstones are null)."""
    lines = spark.read.text(path)
    return lines.select(F.get_json_object("value", "$.value").alias("value"))


def current_state_of_changelog(changelog: DataFrame, key: list[str] | tuple[str, ...]) -> DataFrame:
    """The rows MySQL held at the changelog's version, computed from the changelog alone: per key
    the last event in binlog order, deletes dropped, nothing before the last truncate. With the
    Spark sink's tables, this is the exact current state as of the changelog's newest commit, even
    while the current-state table is a batch behind (its commit of the same batch not yet made).

    ``key``: the table's primary key columns. Binlog order is ``__file`` (by length, then name:
    the number after a 999999th file has seven digits), ``__pos``, ``__row``, a key change's delete
    before its create."""
    order = [F.length("__file"), F.col("__file"), F.col("__pos"), F.col("__row"), F.col("__op") != "d"]
    truncates = (
        changelog.where(F.col("__op") == "t").select(*order[:4]).orderBy(*[o.desc() for o in order[:4]])
    )
    last = truncates.first()
    rows = changelog.where(F.col("__op") != "t")
    if last is not None:
        rows = rows.where(_after(order[:4], list(last)))
    newest = Window.partitionBy(*key).orderBy(*[o.desc() for o in order])
    columns = [c for c in changelog.columns if c not in METADATA_NAMES]
    return (
        rows.withColumn("__n", F.row_number().over(newest))
        .where((F.col("__n") == 1) & (F.col("__op") != "d"))
        .select(*columns)
    )


def _after(columns: list[Column], values: list[object]) -> Column:
    """``columns`` after ``values`` in lexicographic order."""
    head, value = columns[0], F.lit(values[0])
    if len(columns) == 1:
        return head > value
    return (head > value) | ((head == value) & _after(columns[1:], values[1:]))
