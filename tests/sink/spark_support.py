"""Helpers shared by the Spark sink tests (no tests here).

Records are built the way the connector builds them: table models from ``ddl.model``, per-column
converters from ``connector.records.conversion`` fed with the values a snapshot ``SELECT`` returns, and the
connector's own ``EventBuilder`` for envelopes, keys, headers and key-change splitting.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from connector.config import ConnectorConfig
from connector.records.builder import EventBuilder, SourcePosition, TableSchema
from connector.records.conversion import ConverterSettings
from ddl.history.serialize import table_change_to_schema_change_payload
from ddl.model import ChangeType, Column, Table, TableChange
from mysql_cdc_base.records import ChangeRecord
from mysql_cdc_base.table_id import TableId
from sink.spark import SparkSink, SparkSinkSettings

BASE_PROPS = {
    "database.hostname": "127.0.0.1",
    "database.user": "cdc",
    "database.server.id": "5400",
    "topic.prefix": "srv",
    "skipped.operations": "none",
}


def spark_for_tests(warehouse_root: Path) -> SparkSession:
    """The one local SparkSession of the test process (2 cores: keep it small)."""
    from sink.spark import spark_session
    from sink.spark.session import delta_jars, jars_dir, kafka_source_jars

    # Tests never download: .ci/setup puts the Delta jars into the cache beforehand.
    assert delta_jars(), f"the Delta Lake jars are not in {jars_dir()}: run bash .ci/setup"

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    conf = {"spark.sql.shuffle.partitions": "2"}
    if kafka_source_jars():
        # Spark's Kafka source too, so spark-apply's job can run in the tests' one session.
        conf["spark.jars"] = ",".join(delta_jars() + kafka_source_jars())
    return spark_session("local[2]", conf, str(warehouse_root))


def col(name: str, data_type: str, jdbc: int, **kw: Any) -> Column:
    return Column(name=name, position=0, data_type=data_type, jdbc_type=jdbc, **kw)


def make_table(
    database: str,
    name: str,
    columns: Sequence[Column],
    primary_key: Sequence[str] = (),
    charset: str = "utf8mb4",
) -> Table:
    numbered = tuple(c.with_(position=i + 1) for i, c in enumerate(columns))
    return Table(TableId(database, name), numbered, tuple(primary_key), default_charset=charset)


class Emitter:
    """Builds change records with realistic, strictly increasing binlog offsets.

    Each ``change`` is one row of its own rows event inside the current transaction; the record's
    offset is Debezium's in-transaction offset (transaction BEGIN position, events and rows done).
    """

    def __init__(
        self, builder: EventBuilder | None = None, file: str = "mysql-bin.000001", pos: int = 4
    ) -> None:
        self.builder = builder or EventBuilder(
            ConnectorConfig.from_mapping(BASE_PROPS), converter_settings=ConverterSettings()
        )
        self.file = file
        self.pos = pos
        self._begin = pos
        self._events = 0
        self.snapshot_marker: str | None = None

    def schema(self, table: Table) -> TableSchema:
        return self.builder.table_schema(table)

    def row(self, table: Table, values: Sequence[Any]) -> dict[str, Any]:
        """A row image from values as a snapshot SELECT returns them."""
        return self.schema(table).value_from_snapshot(values)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self._begin = self.pos
        self._events = 1
        self.pos += 60
        yield
        self.pos += 40  # XID

    def _where(self) -> tuple[SourcePosition, dict[str, Any]]:
        self._events += 2  # TABLE_MAP + rows event
        rows_pos = self.pos
        self.pos += 50
        where = SourcePosition(
            file=self.file,
            pos=rows_pos,
            server_id=1,
            ts_ms=1_700_000_000_000 + rows_pos,
            snapshot=self.snapshot_marker,
        )
        offset = {"file": self.file, "pos": self._begin, "event": self._events - 1, "row": 1, "server_id": 1}
        return where, offset

    def change(
        self, table: Table, op: str, before: Sequence[Any] | None = None, after: Sequence[Any] | None = None
    ) -> list[ChangeRecord]:
        ts = self.schema(table)
        where, offset = self._where()
        b = ts.value_from_snapshot(before) if before is not None else None
        a = ts.value_from_snapshot(after) if after is not None else None
        return self.builder.change_records(ts, op, b, a, where, offset)

    def insert(self, table: Table, *rows: Sequence[Any]) -> list[ChangeRecord]:
        out: list[ChangeRecord] = []
        with self.transaction():
            for values in rows:
                out += self.change(table, "c", after=values)
        return out

    def update(self, table: Table, before: Sequence[Any], after: Sequence[Any]) -> list[ChangeRecord]:
        with self.transaction():
            return self.change(table, "u", before=before, after=after)

    def delete(self, table: Table, before: Sequence[Any]) -> list[ChangeRecord]:
        with self.transaction():
            return self.change(table, "d", before=before)

    def truncate(self, table: Table) -> list[ChangeRecord]:
        with self.transaction():
            where, offset = self._where()
            return self.builder.truncate_record(self.schema(table), where, offset)

    def ddl(self, table: Table, statement: str, change: ChangeType = ChangeType.ALTER) -> list[ChangeRecord]:
        """The schema change record of a DDL statement that left ``table`` as given."""
        from connector.records.builder import schema_change_record

        with self.transaction():
            where, offset = self._where()
        source = self.builder.source(table.id, where)
        payload = table_change_to_schema_change_payload(TableChange(change, table.id, table))
        return [
            schema_change_record(
                self.builder, table.id.database, statement, [payload], source, offset, where.ts_ms
            )
        ]

    def snapshot_rows(
        self, table: Table, rows: Sequence[Sequence[Any]], last: bool = False
    ) -> list[ChangeRecord]:
        """Snapshot reads: all at one position, offsets flagged ``snapshot: INITIAL`` (the very last
        row of the snapshot carries the completed offset, as the engine emits it)."""
        ts = self.schema(table)
        out: list[ChangeRecord] = []
        for i, values in enumerate(rows):
            final = last and i == len(rows) - 1
            marker = "last" if final else ("first_in_data_collection" if i == 0 else "true")
            where = SourcePosition(file=self.file, pos=self.pos, ts_ms=1_700_000_000_000, snapshot=marker)
            offset: dict[str, Any] = {"file": self.file, "pos": self.pos}
            if not final:
                offset["snapshot"] = "INITIAL"
            out += self.builder.change_records(ts, "r", None, ts.value_from_snapshot(values), where, offset)
        return out


def new_sink(warehouse: Path, **changes: Any) -> SparkSink:
    """A started Spark sink writing to ``warehouse`` on the tests' local Spark."""
    settings = SparkSinkSettings(
        str(warehouse), master="local[2]", converter_settings=ConverterSettings(), **changes
    )
    sink = SparkSink(settings)
    sink.start()
    return sink


def utc(value: dt.datetime) -> dt.datetime:
    """A TIMESTAMP value collected from Spark (naive, process-local) as an aware UTC datetime."""
    return value.astimezone(dt.UTC) if value.tzinfo is None else value
