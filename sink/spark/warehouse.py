"""Reading what the sink committed: the captured tables, their keys and offsets (``mysql-cdc
verify`` and tests use it; any Delta reader needs none of it)."""

from __future__ import annotations

from dataclasses import dataclass

from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession

from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.table_id import TableId
from sink.spark.commits import CommitMeta, last_commit
from sink.spark.settings import SparkSinkSettings
from sink.spark.writer import DeltaWriter


@dataclass(frozen=True)
class CommittedTable:
    table_id: TableId
    kind: str  # current or changelog
    path: str
    key: tuple[str, ...]
    offset: SourceOffset | None


class Warehouse:
    def __init__(self, spark: SparkSession, settings: SparkSinkSettings) -> None:
        self.spark = spark
        self.settings = settings

    def commits(self) -> dict[str, CommitMeta]:
        """The sink's newest commit of every Delta table in the warehouse, by path."""
        writer = DeltaWriter(self.spark, self.settings.app_id, self.settings.evolution)
        out = {}
        for path in writer.table_paths(self.settings.warehouse):
            meta, _ = last_commit(self.spark, path)
            if meta is not None:
                out[path] = meta
        return out

    def tables(self) -> list[CommittedTable]:
        return [
            CommittedTable(TableId(*meta.table), meta.kind, path, meta.key or (), meta.offset)
            for path, meta in sorted(self.commits().items())
            if meta.table is not None
        ]

    def keyed_tables(self) -> list[TableId]:
        return sorted({t.table_id for t in self.tables() if t.kind == "current" and t.key})

    def current_state(self, table_id: TableId) -> tuple[DataFrame, tuple[str, ...], CommitMeta | None] | None:
        """The current-state table of ``table_id``, its key and the sink's newest commit of it
        (None when it has none)."""
        path = self.settings.location(self.settings.names(table_id)[0])
        if not DeltaTable.isDeltaTable(self.spark, path):
            return None
        meta, _ = last_commit(self.spark, path)
        frame = self.spark.read.format("delta").load(path)
        return frame, (meta.key or ()) if meta else (), meta


def describe_commit(meta: CommitMeta | None) -> str:
    """A sink commit as ``verify`` names it: its batch and the offset the batch ends at."""
    return "no commit" if meta is None else f"batch {meta.batch}, offset {meta.batch_offset}"


def read_current_state(
    spark: SparkSession, settings: SparkSinkSettings, table_id: TableId
) -> DataFrame | None:
    """The current-state Delta table of ``table_id`` (None when it has none)."""
    found = Warehouse(spark, settings).current_state(table_id)
    return found[0] if found is not None else None
