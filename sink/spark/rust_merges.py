"""Current-state commits by delta-rs (``deltalake``) instead of a Spark job.

A batch commits, for every table it touches, the net effect of its events on the current-state
table: a MERGE by key (upserts and deletes), or an append where every key is new. Spark pays a
fixed second or so for each (planning, a job or two, the Delta log), which made a batch's cost grow
with the number of tables it touched. delta-rs runs the same MERGE in the driver, in milliseconds,
and commits what a Spark MERGE commits:

* the same rows (null-safe key equality where a key column may be null);
* the sink's ``userMetadata`` (``commits.last_commit`` reads it for the recovery);
* the same transaction identifier (``txnAppId``/``txnVersion``, a ``txn`` action in the log), so a
  replayed MERGE is recognised by Delta itself, whichever engine wrote it;
* the change data feed's files where the table enables it, which Spark's
  ``readChangeFeed`` reads as it reads its own.

It is used where ``RustAppender`` is (a local warehouse, a table without column mapping whose
columns are the rows' columns), with ``sink.spark.current.commits=auto``; Spark writes otherwise,
and truncates (an overwrite) stay Spark's.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pyarrow as pa
from deltalake import CommitProperties, Transaction
from deltalake.exceptions import DeltaError
from pyspark.sql.types import StructType

from sink.spark.commits import CommitMeta
from sink.spark.rust_appends import RustAppender, local_path

log = logging.getLogger(__name__)


def _name(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


def key_predicate(key: Sequence[str], nullable: set[str]) -> str:
    """The MERGE condition matching target ``t`` and source ``s`` rows by ``key``: null-safe for
    the ``nullable`` columns. Each comparison is parenthesised: delta-rs's SQL parser binds
    ``IS NOT DISTINCT FROM`` more loosely than ``AND``, so ``a IS NOT DISTINCT FROM b AND c = d``
    would compare ``a`` with ``b AND c = d``."""
    return " AND ".join(
        f"(t.{_name(k)} IS NOT DISTINCT FROM s.{_name(k)})"
        if k in nullable
        else f"(t.{_name(k)} = s.{_name(k)})"
        for k in key
    )


class RustMerger:
    """MERGEs rows into local current-state Delta tables, through ``RustAppender``'s tables."""

    def __init__(self, appender: RustAppender) -> None:
        self.appender = appender

    def merge(
        self,
        uri: str,
        rows: pa.Table,
        schema: StructType,
        key: Sequence[str],
        flag: str,
        meta: CommitMeta,
        transaction: tuple[str, int],
    ) -> bool:
        """MERGE ``rows`` (``schema``'s columns and the boolean ``flag``: delete the key) into the
        table at ``uri`` by ``key``; False, and nothing committed, where Spark must do it."""
        path = local_path(uri)
        table = None if path is None else self.appender.table(path)
        order = None if table is None else self.appender.column_order(table, schema)
        if path is None or table is None or order is None:
            return False
        predicate = key_predicate(key, {f.name for f in schema.fields if f.nullable})
        values = {_name(c): f"s.{_name(c)}" for c in order}
        app_id, version = transaction
        properties = CommitProperties(
            custom_metadata={"userMetadata": meta.to_json()},
            app_transactions=[Transaction(app_id=app_id, version=version)],
        )
        try:
            (
                table.merge(rows, predicate, source_alias="s", target_alias="t", commit_properties=properties)
                .when_matched_delete(predicate=f"s.{_name(flag)}")
                .when_matched_update(updates=values)
                .when_not_matched_insert(updates=values, predicate=f"NOT s.{_name(flag)}")
                .execute()
            )
            table.update_incremental()
        except (DeltaError, pa.ArrowException, ValueError) as exc:
            # Raised before the commit (the commit is the MERGE's last step), or after it, where
            # Spark's MERGE with the same transaction identifier is then skipped by Delta.
            log.warning("%s: delta-rs could not MERGE (%s); Spark merges", path, exc)
            self.appender.forget(path)
            return False
        self.appender.checkpoint(table)
        return True
