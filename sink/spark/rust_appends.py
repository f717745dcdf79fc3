"""Changelog appends committed by delta-rs (``deltalake``) instead of a Spark job.

An append of a few rows to a changelog costs Spark a fixed few hundred milliseconds (planning, a
job, the Delta log), and a batch pays it for every table it touches. delta-rs writes the same
Parquet file and the same commit (the sink's ``userMetadata``, no transaction id, as the Spark
append) from the driver's Arrow rows in milliseconds.

It is used only where the result is the same Delta table a Spark append gives, and Spark writes
otherwise:

* the warehouse is a local path (``file:``): delta-rs has no Hadoop file systems;
* the table's schema is the rows' schema, field by field (a new column needs Spark's
  ``mergeSchema``), and the table uses no column mapping;
* ``sink.spark.changelog.appends`` is ``auto`` (``spark``: always Spark).

Every tenth version gets a checkpoint, as Spark's appends leave one, and so does every OPTIMIZE
delta-rs commits (``compact``), so a reader of a freshly compacted table replays no JSON commit.
After each checkpoint the log entries older than ``delta.logRetentionDuration`` (30 days by
default) are removed up to a checkpoint before them, as Spark does after its own checkpoints, unless
``delta.enableExpiredLogCleanup`` is false: without it, ``_delta_log`` would grow by every commit
for as long as the connector runs (Spark never checkpoints these tables, so never cleans them).

Spark reads a delta-rs commit like its own: its ``DeltaLog`` lists the log again before every
query, so the recovery (``commits.last_commit``), OPTIMIZE and reads see it.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, write_deltalake
from deltalake.exceptions import DeltaError, TableNotFoundError
from pyspark.sql.types import StructType

from sink.spark.commits import CommitMeta
from sink.spark.faults import kill_point

log = logging.getLogger(__name__)

SPARK_CHECKPOINT_INTERVAL = 10  # Delta Spark's default delta.checkpointInterval


def local_path(uri: str) -> str | None:
    """The file-system path of a ``file:`` URI (or a plain path); None for any other scheme."""
    parsed = urlparse(uri)
    if parsed.scheme == "":
        return uri
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return unquote(parsed.path)
    return None


def _fields(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """Each field's name and Delta type (as JSON text: struct and array types are objects)."""
    return [(f["name"], json.dumps(f["type"], sort_keys=True)) for f in schema["fields"]]


class RustAppender:
    """Appends Arrow rows to local Delta tables whose schema they match."""

    def __init__(self) -> None:
        self._tables: dict[str, DeltaTable] = {}

    def append(self, uri: str, rows: pa.Table, schema: StructType, meta: CommitMeta) -> bool:
        """Commit ``rows`` (in ``schema``) to the table at ``uri``; False, and nothing written,
        where Spark must write them."""
        path = local_path(uri)
        if path is None:
            return False
        table = self.table(path)
        order = None if table is None else self.column_order(table, schema)
        if table is None or order is None:
            return False
        rows = rows.select(order)
        properties = CommitProperties(custom_metadata={"userMetadata": meta.to_json()})
        try:
            write_deltalake(table, rows, mode="append", commit_properties=properties)
            table.update_incremental()
        except (DeltaError, pa.ArrowException, ValueError) as exc:
            # Raised before the commit (the commit is the write's last step): Spark appends the
            # rows; a Parquet file delta-rs may have left is in no commit, and VACUUM removes it.
            log.warning("%s: delta-rs could not append (%s); Spark appends", path, exc)
            self.forget(path)
            return False
        self.checkpoint(table)
        return True

    def compact(self, uri: str) -> bool:
        """OPTIMIZE by delta-rs: the table's small files rewritten into few, one commit that adds
        and removes no rows (``dataChange=false``), as Spark's OPTIMIZE commits it, in a fraction of
        its time (no Spark job), then a checkpoint of it. False, and nothing committed, where Spark
        must do it."""
        path = local_path(uri)
        table = None if path is None else self.table(path)
        if path is None or table is None:
            return False
        if _column_mapped(table):
            return False
        before = table.version()
        try:
            table.optimize.compact()
            table.update_incremental()
        except (DeltaError, pa.ArrowException, ValueError) as exc:
            log.warning("%s: delta-rs could not compact (%s); Spark compacts", path, exc)
            self.forget(path)
            return False
        kill_point("compact", path)
        if table.version() > before:  # (nothing to compact: no commit, nothing to checkpoint)
            self.checkpoint(table, now=True)
        return True

    def vacuum(self, uri: str, retention_hours: int, enforce_retention: bool) -> bool:
        """VACUUM by delta-rs: the files no version of the last ``retention_hours`` needs deleted
        (a full listing, as Spark's: files in no commit too), committed as Spark's ``VACUUM START``
        and ``VACUUM END``, in milliseconds where Spark's VACUUM runs several jobs (seconds, and
        minutes at Spark's default listing parallelism on few cores). ``enforce_retention`` is
        Spark's ``spark.databricks.delta.retentionDurationCheck.enabled``: delta-rs refuses less
        than ``delta.deletedFileRetentionDuration`` as Spark does. False, and nothing deleted,
        where Spark must do it (Spark then raises its own refusal)."""
        path = local_path(uri)
        table = None if path is None else self.table(path)
        if path is None or table is None or _column_mapped(table):
            return False
        try:
            table.vacuum(
                retention_hours, dry_run=False, enforce_retention_duration=enforce_retention, full=True
            )
            table.update_incremental()
        except (DeltaError, ValueError) as exc:
            log.warning("%s: delta-rs could not vacuum (%s); Spark vacuums", path, exc)
            self.forget(path)
            return False
        self.checkpoint(table)
        return True

    def forget(self, path: str) -> None:
        """Open the table at ``path`` afresh next time (a failed write may leave its state stale)."""
        self._tables.pop(path, None)

    @staticmethod
    def checkpoint(table: DeltaTable, now: bool = False) -> None:
        """A checkpoint at Spark's cadence (``delta.checkpointInterval``, 10 versions by default;
        delta-rs's own is 100), so readers replay as few log files as after Spark's appends, or
        ``now``; then the expired log entries removed (``delta.logRetentionDuration``).

        Each step only adds a file or removes expired ones: a crash between or during them leaves
        the table and every version within the retention readable (a reader falls back on the
        previous checkpoint and the JSON commits after it). So a failure is logged, not raised:
        the commit before it has landed, and only readers pay for a missing checkpoint."""
        configuration = table.metadata().configuration
        interval = int(configuration.get("delta.checkpointInterval") or SPARK_CHECKPOINT_INTERVAL)
        if not now and table.version() % interval != 0:
            return
        uri = table.table_uri.rstrip("/")
        try:
            table.create_checkpoint()
            kill_point("checkpoint", uri)
            if configuration.get("delta.enableExpiredLogCleanup", "true").strip().lower() != "false":
                table.cleanup_metadata()
        except (DeltaError, OSError) as exc:
            log.warning(
                "%s: delta-rs could not checkpoint version %d or clean its log (%s)",
                uri,
                table.version(),
                exc,
            )

    def table(self, path: str) -> DeltaTable | None:
        """The delta-rs table at ``path``, brought up to date; None where delta-rs cannot open it."""
        table = self._tables.get(path)
        try:
            if table is None:
                table = self._tables[path] = DeltaTable(path)
            else:
                table.update_incremental()  # Spark may have committed since (OPTIMIZE, evolution)
        except (TableNotFoundError, DeltaError) as exc:
            log.debug("%s: Spark appends (delta-rs cannot open it: %s)", path, exc)
            self._tables.pop(path, None)
            return None
        return table

    @staticmethod
    def column_order(table: DeltaTable, schema: StructType) -> list[str] | None:
        """The table's column names in its order, where they are ``schema``'s columns with the same
        types (a column Spark's ``mergeSchema`` added comes after the metadata columns); None where
        they are not, or the table maps its columns."""
        if table.metadata().configuration.get("delta.columnMapping.mode", "none") != "none":
            return None
        held = _fields(json.loads(table.schema().to_json()))
        wanted = _fields(schema.jsonValue())
        return [name for name, _ in held] if sorted(held) == sorted(wanted) else None


def _column_mapped(table: DeltaTable) -> bool:
    """Whether the table maps its columns to physical names (Spark maintains those tables)."""
    return table.metadata().configuration.get("delta.columnMapping.mode", "none") != "none"
