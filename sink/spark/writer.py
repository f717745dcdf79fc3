"""The Delta Lake operations of the sink: create and register tables, append changelog rows,
MERGE the net effect of a batch into current-state tables, evolve schemas, restore versions.

Every commit carries the sink's :class:`CommitMeta` (``userMetadata``), the offset of the last event
the table holds; current-state MERGEs also carry a Delta transaction identifier
(``txnAppId``/``txnVersion``): a write Delta has already recorded is skipped by Delta itself.
Nothing here touches table files through a local file-system API: paths are Hadoop URIs, so the
same code writes to ``file:``, ``hdfs:``, ``s3a:`` or ``abfss:``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
)

from sink.base import SinkError
from sink.spark.batch import ChangelogPart, EvolveStep, RowsStep
from sink.spark.commits import CommitMeta
from sink.spark.evolution import literal
from sink.spark.faults import kill_point
from sink.spark.rust_appends import RustAppender
from sink.spark.rust_merges import RustMerger
from sink.spark_mapping import changelog_struct_type, widen
from sink.spark_reader import conform

log = logging.getLogger(__name__)

_DELETE_FLAG = "__mysql_cdc_delete"
_META_CONF = "spark.databricks.delta.commitInfo.userMetadata"
_TXN_APP_CONF = "spark.databricks.delta.write.txnAppId"
_TXN_VERSION_CONF = "spark.databricks.delta.write.txnVersion"


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def qualified(name: str) -> str:
    database, dot, table = name.partition(".")
    return f"{quote(database)}.{quote(table)}" if dot else quote(name)


def _path_ref(path: str) -> str:
    return f"delta.{quote(path)}"


def txn_version(meta: CommitMeta) -> int:
    return meta.batch * 100_000 + meta.seq


def arrow_of(rows: Sequence[tuple[Any, ...]], schema: StructType) -> pa.Table | None:
    """Python rows as Arrow columns of ``schema``'s types; None where Arrow cannot take a value as
    it is."""
    try:
        arrow_schema = to_arrow_schema(schema)
        columns = list(zip(*rows, strict=True)) if rows else [() for _ in schema.fields]
        return pa.Table.from_arrays(
            [pa.array(column, type=f.type) for column, f in zip(columns, arrow_schema, strict=True)],
            schema=arrow_schema,
        )
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        log.debug("rows are not Arrow columns as they are (%s)", exc)
        return None


def frame_of(spark: SparkSession, rows: Sequence[tuple[Any, ...]], schema: StructType) -> DataFrame:
    """A DataFrame of Python rows, handed to the JVM as Arrow columns (about twice as fast as
    Spark's row-by-row path); values Arrow cannot take as they are go the row-by-row way."""
    table = arrow_of(rows, schema)
    if table is None:
        return spark.createDataFrame(rows, schema, verifySchema=False)
    return spark.createDataFrame(table, schema)


class DeltaWriter:
    def __init__(
        self,
        spark: SparkSession,
        app_id: str,
        evolution: str,
        appender: RustAppender | None = None,
        merger: RustMerger | None = None,
    ) -> None:
        self.spark = spark
        self.app_id = app_id
        self.column_mapping = evolution == "column-mapping"
        self.appender = appender  # commits changelog appends without a Spark job where it can
        self.merger = merger  # and current-state MERGEs and appends (rust_merges.py)
        self._session_class: Any = None

    def activate(self) -> None:
        """Make this writer's session the active one of the calling thread's JVM thread: Delta
        reads commit settings (userMetadata, txnAppId) from the active session."""
        if self._session_class is None:
            # py4j resolves a class name a package at a time, a JVM round trip each (0.5 ms in
            # all); a batch activates a writer twice per table it commits.
            jvm: Any = self.spark._jvm
            self._session_class = jvm.org.apache.spark.sql.SparkSession
        self._session_class.setActiveSession(self.spark._jsparkSession)

    # -- storage -------------------------------------------------------------------------------
    def _fs(self, uri: str) -> tuple[Any, Any]:
        jvm: Any = self.spark._jvm
        path = jvm.org.apache.hadoop.fs.Path(uri)
        jsc: Any = self.spark._jsc
        return path.getFileSystem(jsc.hadoopConfiguration()), path

    def exists(self, uri: str) -> bool:
        fs, path = self._fs(uri)
        return bool(fs.exists(path))

    def table_paths(self, warehouse: str) -> list[str]:
        """Every Delta table two levels under ``warehouse`` (``<database>/<table>``). A
        ``_delta_log`` without a committed version is no table (Delta's own view): it is what a
        create stopped before its commit 0 leaves, and ``create`` makes that table again."""
        fs, root = self._fs(warehouse)
        jvm: Any = self.spark._jvm
        if not fs.exists(root):
            return []
        found = []
        for database in fs.listStatus(root):
            if not database.isDirectory():
                continue
            for table in fs.listStatus(database.getPath()):
                if table.isDirectory() and fs.exists(
                    jvm.org.apache.hadoop.fs.Path(table.getPath(), "_delta_log")
                ):
                    path = f"{warehouse}/{database.getPath().getName()}/{table.getPath().getName()}"
                    if self.is_table(path):
                        found.append(path)
                    else:
                        log.info("%s: a Delta log without a committed version; no table yet", path)
        return sorted(found)

    def is_table(self, path: str) -> bool:
        return bool(DeltaTable.isDeltaTable(self.spark, path))

    def is_empty(self, path: str) -> bool:
        """Does the table's current version hold no data file (a metadata query, no scan)?"""
        detail = DeltaTable.forPath(self.spark, path).detail().select("numFiles").first()
        return detail is not None and int(detail[0] or 0) == 0

    def prepare_state(self, path: str) -> None:
        """Build the table's state at its newest version now: the file list with statistics and
        the version's aggregates. A MERGE needs it and Delta builds it once per version (Spark
        jobs over the log, seconds here); built ahead, the MERGE finds it ready. The ``DeltaLog``
        and its snapshots are shared by the process's sessions. Reads only."""
        jvm: Any = self.spark._jvm
        delta_log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(self.spark._jsparkSession, path)
        snapshot = delta_log.unsafeVolatileSnapshot()
        if snapshot is not None:
            snapshot.numOfFiles()
            snapshot.allFiles().count()

    def schema(self, path: str) -> StructType:
        return self.spark.read.format("delta").load(path).schema

    # -- tables --------------------------------------------------------------------------------
    def create(self, path: str, schema: StructType, change_data_feed: bool) -> None:
        if not self.is_table(path):
            self._clear_uncommitted_log(path)
        kill_point("create", path, lambda: _make_log_dirs(self.spark, path))
        builder = DeltaTable.createIfNotExists(self.spark).location(path).addColumns(schema)
        if change_data_feed:
            builder = builder.property("delta.enableChangeDataFeed", "true")
        if self.column_mapping:
            builder = builder.property("delta.columnMapping.mode", "name").property(
                "delta.enableTypeWidening", "true"
            )
        builder.execute()

    def _clear_uncommitted_log(self, path: str) -> None:
        """Remove the ``_delta_log`` a create stopped before its commit 0 left at ``path``: Delta
        refuses to create a table over it (DELTA_TABLE_NOT_FOUND), so one crash would stop every
        restart. Called only when Delta sees no committed version there; and the log goes only
        when no file in it is one Delta reads as part of a log (a commit, staged commit,
        checkpoint, checksum), so nothing anyone committed is ever removed. Only the log goes (a
        create writes no data file)."""
        fs, log_dir = self._fs(f"{path}/_delta_log")
        if not fs.exists(log_dir):
            return
        jvm: Any = self.spark._jvm
        names = jvm.org.apache.spark.sql.delta.util.FileNames
        files = fs.listFiles(log_dir, True)
        while files.hasNext():
            found = files.next().getPath()
            if names.getFileVersionOpt(found).isDefined():
                raise SinkError(
                    f"{path}: Delta sees no committed version, yet its log holds {found}; the "
                    "sink does not create a table over it: look at the table and move it away"
                )
        log.warning(
            "%s: the creation of this Delta table never committed (the connector stopped during "
            "it); its leftover log is removed and the table created again",
            path,
        )
        fs.delete(log_dir, True)
        # The process's cached DeltaLog of the path was read from the leftover.
        jvm.org.apache.spark.sql.delta.DeltaLog.invalidateCache(
            self.spark._jsparkSession, log_dir.getParent()
        )

    def register(self, name: str, path: str) -> None:
        """Make ``name`` the catalog name of the table at ``path`` (its schema is Delta's)."""
        database, dot, _ = name.partition(".")
        if dot:
            self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(database)}")
        if self.spark.catalog.tableExists(name):
            location = self.spark.sql(f"DESCRIBE DETAIL {qualified(name)}").first()
            if location is not None and _same_path(str(location["location"]), path):
                return
            # The name points elsewhere (another warehouse): an external table, so only the
            # catalog entry goes.
            self.spark.sql(f"DROP TABLE {qualified(name)}")
        self.spark.sql(f"CREATE TABLE {qualified(name)} USING delta LOCATION {_sql(path)}")

    @contextmanager
    def _commit(self, meta: CommitMeta, txn: bool) -> Iterator[None]:
        """Session settings that put ``meta`` (and the transaction identifier) on the next commit
        (DML and DDL take them only from the session)."""
        conf = self.spark.conf
        conf.set(_META_CONF, meta.to_json())
        if txn:
            conf.set(_TXN_APP_CONF, self.app_id)
            conf.set(_TXN_VERSION_CONF, str(txn_version(meta)))
        try:
            yield
        finally:
            for key in (_META_CONF, _TXN_APP_CONF, _TXN_VERSION_CONF):
                conf.unset(key)

    def _write(
        self, frame: DataFrame, path: str, meta: CommitMeta, mode: str, txn: bool = True, **options: str
    ) -> None:
        """``txn``: a data commit, identified to Delta by the batch and seq (schema rewrites are
        not: they are recognised by the schema they reach, and may share a data commit's seq)."""
        writer = frame.write.format("delta").mode(mode).option("userMetadata", meta.to_json())
        if txn:
            writer = writer.option("txnAppId", self.app_id).option("txnVersion", str(txn_version(meta)))
        for key, value in options.items():
            writer = writer.option(key, value)
        writer.save(path)

    # -- changelog -----------------------------------------------------------------------------
    def append_changelog(self, path: str, part: ChangelogPart, meta: CommitMeta) -> None:
        row_type = changelog_struct_type(part.row_type)
        if self._append_without_spark(path, part, row_type, meta):
            kill_point("commit", path)
            return
        frame = frame_of(self.spark, part.rows, row_type)
        frame = conform(frame, part.row_type, part.table_schema)
        # No transaction id: looking it up makes Delta rebuild the table state, which costs an
        # append most of its time; the offset in the commit already tells a replay apart.
        self._write(frame, path, meta, "append", txn=False, mergeSchema="true")
        kill_point("commit", path)

    def _append_without_spark(
        self, path: str, part: ChangelogPart, row_type: StructType, meta: CommitMeta
    ) -> bool:
        """delta-rs commits the rows where they need no cast nor new column (rust_appends.py)."""
        if self.appender is None or not _same_columns(row_type, changelog_struct_type(part.table_schema)):
            return False
        rows = arrow_of(part.rows, row_type)
        return rows is not None and self.appender.append(path, rows, row_type, meta)

    def evolve_changelog(self, path: str, target: StructType, meta: CommitMeta) -> None:
        """Bring the changelog's existing columns to ``target``'s types (new columns arrive with
        the next append)."""
        current = self.schema(path)
        wanted = {f.name.lower(): f.dataType for f in target.fields}
        changed = [
            f for f in current.fields if f.name.lower() in wanted and f.dataType != wanted[f.name.lower()]
        ]
        if not changed:
            return
        if self.column_mapping and all(_widening(f.dataType, wanted[f.name.lower()]) for f in changed):
            with self._commit(meta, txn=False):
                for f in changed:
                    self._change_type(path, f.name, wanted[f.name.lower()])
            return
        frame = self.spark.read.format("delta").load(path)
        columns = [
            (
                F.col(quote(f.name)).cast(wanted[f.name.lower()]) if f in changed else F.col(quote(f.name))
            ).alias(f.name)
            for f in current.fields
        ]
        log.info("changelog %s: column type(s) of %s change; the table is rewritten", path, _names(changed))
        self._write(frame.select(*columns), path, meta, "overwrite", txn=False, overwriteSchema="true")

    # -- current state -------------------------------------------------------------------------
    def apply_rows(self, path: str, step: RowsStep, meta: CommitMeta, append: bool = False) -> None:
        """MERGE the step's net effect into the table; ``append``: the table holds none of the
        step's keys (see ``RowsStep.inserts_only``), so its rows are appended, a fraction of a
        MERGE's cost (no join with the table, no file rewritten)."""
        if not (meta.in_snapshot or step.snapshot_rows):
            kill_point("merge", path)
        schema = step.schema
        if not step.truncated and self._apply_without_spark(path, step, meta, append):
            kill_point("commit", path)
            return
        if step.truncated or append:
            upserts = [row for row in step.net.values() if row is not None]
            frame = frame_of(self.spark, upserts, schema)
            # No transaction id, as for changelog appends: its look-up rebuilds the table state,
            # 4-5x the append's own cost; the offset in the commit tells a replay apart. (A MERGE
            # builds that state anyway to find its files, so there the id costs nothing.)
            self._write(frame, path, meta, "overwrite" if step.truncated else "append", txn=False)
            kill_point("commit", path)
            return
        source = frame_of(self.spark, _flagged_rows(step), _flagged(schema))
        key_names = _field_names(schema, step.key)
        matches = " AND ".join(f"t.{quote(k)} <=> s.{quote(k)}" for k in key_names)
        key_range = _key_range(schema, key_names, step.net)
        condition: str | Column = matches if key_range is None else key_range & F.expr(matches)
        values_map: dict[str, str | Column] = {quote(f.name): f"s.{quote(f.name)}" for f in schema.fields}
        target = DeltaTable.forPath(self.spark, path)
        with self._commit(meta, txn=True):
            (
                target.alias("t")
                .merge(source.alias("s"), condition)
                .whenMatchedDelete(condition=f"s.{_DELETE_FLAG}")
                .whenMatchedUpdate(set=values_map)
                .whenNotMatchedInsert(condition=f"NOT s.{_DELETE_FLAG}", values=values_map)
                .execute()
            )
        kill_point("commit", path)

    def _apply_without_spark(self, path: str, step: RowsStep, meta: CommitMeta, append: bool) -> bool:
        """delta-rs commits the step where the rows need no cast (rust_merges.py)."""
        if self.merger is None:
            return False
        if append:
            rows = arrow_of([row for row in step.net.values() if row is not None], step.schema)
            return rows is not None and self.merger.appender.append(path, rows, step.schema, meta)
        rows = arrow_of(_flagged_rows(step), _flagged(step.schema))
        return rows is not None and self.merger.merge(
            path,
            rows,
            step.schema,
            _field_names(step.schema, step.key),
            _DELETE_FLAG,
            meta,
            (self.app_id, txn_version(meta)),
        )

    def evolve_current(self, path: str, step: EvolveStep, meta: CommitMeta) -> None:
        """Make the current-state table's columns ``step.new`` (MySQL's columns after the DDL)."""
        current = self.schema(path)
        if _same_columns(current, step.new):
            return
        plan = _plan(current, step)
        if self.column_mapping:
            with self._commit(meta, txn=False):
                self._evolve_in_place(path, current, step, plan)
            return
        if plan.only_adds_nulls:
            with self._commit(meta, txn=False):
                self._add_columns(path, step.new, plan.added)
            return
        frame = self.spark.read.format("delta").load(path)
        log.info("current-state table %s: %s; the table is rewritten", path, plan.describe())
        self._write(
            frame.select(*_evolved_columns(current, step)),
            path,
            meta,
            "overwrite",
            txn=False,
            overwriteSchema="true",
        )

    def _evolve_in_place(self, path: str, current: StructType, step: EvolveStep, plan: _Plan) -> None:
        for old, new in plan.renamed:
            self.spark.sql(f"ALTER TABLE {_path_ref(path)} RENAME COLUMN {quote(old)} TO {quote(new)}")
        if plan.dropped:
            names = ", ".join(quote(n) for n in plan.dropped)
            self.spark.sql(f"ALTER TABLE {_path_ref(path)} DROP COLUMNS ({names})")
        for name, data_type in plan.retyped:
            self._change_type(path, name, data_type)
        self._add_columns(path, step.new, plan.added)
        for name in plan.added:
            fill = step.fills.get(name)
            if fill is not None:
                value = literal(fill, step.new[name].dataType)
                DeltaTable.forPath(self.spark, path).update(set={quote(name): value})

    def _change_type(self, path: str, name: str, data_type: DataType) -> None:
        self.spark.sql(
            f"ALTER TABLE {_path_ref(path)} CHANGE COLUMN {quote(name)} TYPE {data_type.simpleString()}"
        )

    def _add_columns(self, path: str, schema: StructType, names: Sequence[str]) -> None:
        if names:
            columns = ", ".join(f"{quote(n)} {schema[n].dataType.simpleString()}" for n in names)
            self.spark.sql(f"ALTER TABLE {_path_ref(path)} ADD COLUMNS ({columns})")

    # -- maintenance (sink/spark/maintenance.py) --------------------------------------------------
    def compact(self, path: str) -> None:
        """OPTIMIZE: the table's small files rewritten into few, one commit that changes no data
        (by delta-rs where it writes the table, then a checkpoint of it: rust_appends.py)."""
        rust = self.appender or (self.merger.appender if self.merger is not None else None)
        if rust is None or not rust.compact(path):
            DeltaTable.forPath(self.spark, path).optimize().executeCompaction()
            kill_point("compact", path)

    def vacuum(self, path: str, retention_hours: int) -> None:
        """VACUUM: files no version within ``retention_hours`` needs deleted (by delta-rs where it
        writes the table, under Spark's retention check: rust_appends.py)."""
        rust = self.appender or (self.merger.appender if self.merger is not None else None)
        check = self.spark.conf.get(_RETENTION_CHECK, "true") or "true"
        if rust is None or not rust.vacuum(path, retention_hours, check.lower() != "false"):
            DeltaTable.forPath(self.spark, path).vacuum(float(retention_hours))

    # -- recovery ------------------------------------------------------------------------------
    def restore(self, path: str, version: int, meta: CommitMeta) -> None:
        with self._commit(meta, txn=False):
            DeltaTable.forPath(self.spark, path).restoreToVersion(version)


def _make_log_dirs(spark: SparkSession, path: str) -> None:
    """The first step of Delta's own create: the log directories (``_delta_log/_staged_commits``),
    made right before commit 0 (the ``create`` kill point dies between the two)."""
    jvm: Any = spark._jvm
    jvm.org.apache.spark.sql.delta.DeltaLog.forTable(
        spark._jsparkSession, path
    ).createLogDirectoriesIfNotExists()


# Spark's switch for VACUUM's refusal of a retention shorter than the table's own.
_RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"

# Key types whose order is the same in Python and in Spark (a range of them bounds the keys).
_RANGE_TYPES = (ByteType, ShortType, IntegerType, LongType, StringType, DecimalType, DateType)


def _flagged(schema: StructType) -> StructType:
    """``schema`` and the MERGE source's delete flag."""
    return StructType([*schema.fields, StructField(_DELETE_FLAG, BooleanType(), False)])


def _flagged_rows(step: RowsStep) -> list[tuple[Any, ...]]:
    """The step's net rows for a MERGE: each row and False, or a deleted key (its other columns
    null) and True."""
    schema = step.schema
    index = [schema.fieldNames().index(k) for k in _field_names(schema, step.key)]
    width = len(schema.fields)
    rows = []
    for key, row in step.net.items():
        if row is None:
            values: list[Any] = [None] * width
            for i, value in zip(index, key, strict=True):
                values[i] = value
            rows.append((*values, True))
        else:
            rows.append((*row, False))
    return rows


def _key_range(
    schema: StructType, key_names: Sequence[str], net: dict[tuple[Any, ...], Any]
) -> Column | None:
    """``t.key BETWEEN min AND max`` over the step's keys, for a one-column key of an ordered type:
    a MERGE condition on the target alone lets Delta skip the files whose key statistics lie
    outside it (rows land in files by arrival, so recent keys share few files), instead of joining
    every file of the table with the batch."""
    if len(key_names) != 1 or not net or not isinstance(schema[key_names[0]].dataType, _RANGE_TYPES):
        return None
    values = [key[0] for key in net]
    if any(v is None for v in values):
        return None
    column = F.col(f"t.{quote(key_names[0])}")
    return column.between(F.lit(min(values)), F.lit(max(values)))


def _same_path(a: str, b: str) -> bool:
    def norm(p: str) -> str:
        return p.replace("file:///", "file:/").rstrip("/")

    return norm(a) == norm(b)


def _sql(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _names(fields: Sequence[StructField]) -> str:
    return ", ".join(f.name for f in fields)


def _field_names(schema: StructType, names: Sequence[str]) -> list[str]:
    by_lower = {f.name.lower(): f.name for f in schema.fields}
    return [by_lower[n.lower()] for n in names]


def _same_columns(a: StructType, b: StructType) -> bool:
    return [(f.name, f.dataType) for f in a.fields] == [(f.name, f.dataType) for f in b.fields]


def _widening(old: DataType, new: DataType) -> bool:
    return widen(old, new) == new


class _Plan:
    """How the current-state columns change: renamed, dropped, retyped, added."""

    def __init__(self) -> None:
        self.renamed: list[tuple[str, str]] = []
        self.dropped: list[str] = []
        self.retyped: list[tuple[str, DataType]] = []
        self.added: list[str] = []
        self.fills: dict[str, Any] = {}

    @property
    def only_adds_nulls(self) -> bool:
        return not (self.renamed or self.dropped or self.retyped) and all(
            self.fills.get(n) is None for n in self.added
        )

    def describe(self) -> str:
        parts = [f"{o} renamed to {n}" for o, n in self.renamed]
        parts += [f"{n} dropped" for n in self.dropped]
        parts += [f"{n} becomes {t.simpleString()}" for n, t in self.retyped]
        parts += [f"{n} added" for n in self.added]
        return ", ".join(parts) or "column order changes"


def _plan(current: StructType, step: EvolveStep) -> _Plan:
    plan = _Plan()
    existing = {f.name.lower(): f for f in current.fields}
    used = set()
    for f in step.new.fields:
        source = step.sources.get(f.name)
        if source is None or source.lower() not in existing:
            plan.added.append(f.name)
            plan.fills[f.name] = step.fills.get(f.name)
            continue
        used.add(source.lower())
        old = existing[source.lower()]
        if old.name != f.name:
            plan.renamed.append((old.name, f.name))
        if old.dataType != f.dataType:
            plan.retyped.append((f.name, f.dataType))
    plan.dropped = [f.name for f in current.fields if f.name.lower() not in used]
    return plan


def _evolved_columns(current: StructType, step: EvolveStep) -> list[Column]:
    existing = {f.name.lower(): f for f in current.fields}
    columns = []
    for f in step.new.fields:
        source = step.sources.get(f.name)
        old = existing.get(source.lower()) if source is not None else None
        if old is not None:
            value = F.col(quote(old.name))
            if old.dataType != f.dataType:
                if not _widening(old.dataType, f.dataType):
                    log.warning(
                        "column %s changes type %s -> %s; existing values are converted by Spark "
                        "(as MySQL converted them; null where they do not convert)",
                        f.name,
                        old.dataType.simpleString(),
                        f.dataType.simpleString(),
                    )
                value = F.try_cast(value, f.dataType) if hasattr(F, "try_cast") else value.cast(f.dataType)
        else:
            value = literal(step.fills.get(f.name), f.dataType)
        columns.append(value.alias(f.name))
    return columns
