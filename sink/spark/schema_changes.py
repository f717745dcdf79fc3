"""A connector's schema change events for ``mysql-cdc spark-apply``: put before each table's change
events in binlog order, whichever micro-batch they arrive in.

A column rename shows in a table's change events only as one column gone and one new: the schema
change event (topic ``<topic.prefix>``, its ``ddl`` and ``tableChanges``) is what tells a rename
from a drop and an add, and the sink then carries the values over (``SparkSink._on_schema_change``).
Spark's Kafka source does not keep the topics in step: with ``maxOffsetsPerTrigger`` it shares a
micro-batch's records among the topics in proportion to what each has waiting, so a table's events
after an ``ALTER TABLE`` may arrive micro-batches before the schema change topic's record of it
(the schema change topic is every table's, so it lags), and a job restarted from its checkpoint
never sees again the schema changes of micro-batches it finished. Hence:

* every schema change record is kept here, per table (its ``tableChanges`` element), until the
  table's Delta tables hold a later event;
* before a micro-batch is applied, each table's kept schema changes the Delta tables do not hold
  yet, up to the table's last event of the micro-batch, are put before its events, in binlog order;
* a keyed table whose events lose a column of its current-state table (a rename, or a drop) needs
  every schema change before them: the schema change topic is read up to its end first (a bounded
  Kafka read), and if no schema change of the table says what became of the column (the topic is
  not subscribed, or the connector writes none: ``include.schema.changes=false``), the job stops,
  naming the table, the columns and the setting, rather than null a column MySQL still holds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ddl.history.serialize import parse_quoted_table_id
from mysql_cdc_base.connect import ConnectSchema
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import RecordKind
from mysql_cdc_base.table_id import TableId
from sink.spark.commits import is_replay
from sink.spark.kafka_records import BadRecordError, KafkaRow, RecordReader, SourceRecord
from sink.spark.sink import SparkSink
from sink.spark_mapping import row_schema_of

log = logging.getLogger(__name__)

# Reads a topic from the given next offset per partition (None: from the beginning) to its end.
TopicReader = Callable[[str, dict[int, int] | None], list[KafkaRow]]


@dataclass(frozen=True)
class _Loss:
    """A table's event whose columns lack some of the current-state table's."""

    at: SourceRecord
    after: tuple[Any, ...] | None  # the order of the table's event before it in the micro-batch
    gone: tuple[str, ...]
    new: tuple[str, ...]


class SchemaChanges:
    """One connector's schema change events (``source.name`` ``prefix``), kept per table."""

    def __init__(self, prefix: str, subscribed: bool, reader: RecordReader, read_topic: TopicReader) -> None:
        self.prefix = prefix
        self.subscribed = subscribed  # is the schema change topic among the job's topics?
        self._reader = reader
        self._read_topic = read_topic
        self._kept: dict[TableId, dict[tuple[Any, ...], SourceRecord]] = {}
        self._next: dict[int, int] | None = None  # where the next read of the topic starts
        self._read_in: int | None = None  # the micro-batch that last read the topic to its end
        self._columns: dict[int, tuple[ConnectSchema, frozenset[str]]] = {}

    @property
    def topic(self) -> str:
        return self.prefix  # the connector's schema change topic is its topic.prefix

    def add(self, found: SourceRecord) -> None:
        """Keep a schema change record: one copy per table it changes, with that table's
        ``tableChanges`` element alone (each table gets the event once, in its own place)."""
        value = found.record.value if isinstance(found.record.value, dict) else {}
        for change in value.get("tableChanges") or ():
            try:
                table_id = parse_quoted_table_id(str(change.get("id")))
            except ValueError:
                log.warning("schema change at %s names no table (%r); ignored", found.order, change.get("id"))
                continue
            mine = replace(found.record, value={**value, "tableChanges": [change]}, table_id=table_id)
            self._kept.setdefault(table_id, {})[found.order] = replace(found, record=mine)

    def place(self, records: list[SourceRecord], sink: SparkSink, batch_id: int) -> list[SourceRecord]:
        """``records`` (one connector's change events, in binlog order) with the schema changes
        their tables need put before them."""
        losses = self._losses(records, sink)
        if losses and self.subscribed and self._read_in != batch_id:
            self._read_to_end()
            self._read_in = batch_id
        last: dict[TableId, tuple[Any, ...]] = {}
        for s in records:
            if s.record.table_id is not None:
                last[s.record.table_id] = s.order
        placed: list[SourceRecord] = []
        for table_id, until in last.items():
            kept = self._kept.get(table_id)
            if not kept:
                continue
            for order in sorted(kept):
                if sink.holds(table_id, kept[order].record.offset):
                    del kept[order]  # the table's Delta tables have a later event: done with it
                elif order <= until:
                    placed.append(kept[order])
        for loss in losses:
            if not any(
                s.record.table_id == loss.at.record.table_id
                and s.order < loss.at.order
                and (loss.after is None or s.order > loss.after)
                for s in placed
            ):
                raise self._unknown(loss)
        if not placed:
            return records
        log.info("%d schema change event(s) put before their tables' change events", len(placed))
        return sorted([*records, *placed], key=lambda s: s.order)

    # -- columns lost --------------------------------------------------------------------------------
    def _losses(self, records: Sequence[SourceRecord], sink: SparkSink) -> list[_Loss]:
        """The events that lack columns of their table's current-state table (as it stands after
        the events before them); events the table already holds (replays) do not count."""
        columns: dict[TableId, frozenset[str] | None] = {}
        held: dict[TableId, SourceOffset | None] = {}  # looked up once per table, not per event
        previous: dict[TableId, tuple[Any, ...]] = {}
        out = []
        for s in records:
            record, table_id = s.record, s.record.table_id
            if record.kind is not RecordKind.DATA or table_id is None or record.value_schema is None:
                continue
            if table_id not in columns:
                columns[table_id] = sink.current_columns(table_id)
                held[table_id] = sink.current_offset(table_id)
            if is_replay(record.offset, held[table_id]):
                continue
            mine = self._columns_of(record.value_schema)
            known = columns[table_id]
            if known is not None and not known <= mine:
                out.append(
                    _Loss(s, previous.get(table_id), tuple(sorted(known - mine)), tuple(sorted(mine - known)))
                )
            columns[table_id] = mine
            previous[table_id] = s.order
        return out

    def _columns_of(self, schema: ConnectSchema) -> frozenset[str]:
        cached = self._columns.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1]
        names = frozenset(str(f["field"]).lower() for f in row_schema_of(schema).get("fields") or ())
        self._columns[id(schema)] = (schema, names)
        return names

    def _unknown(self, loss: _Loss) -> BadRecordError:
        at = loss.at
        record = at.record
        topic, partition, offset = at.order[-3:]
        problem = (
            f"table {record.table_id}: column(s) {', '.join(loss.gone)} of its current-state table are "
            f"not in its change events from here on (new: {', '.join(loss.new) or 'none'}), and no schema "
            "change event says whether they were renamed or dropped (applying the event would null "
            "values MySQL holds)"
        )
        if not self.subscribed:
            fix = (
                f"add the schema change topic {self.topic} to topics/topics.regex: its schema change "
                "events name the renames"
            )
        else:
            fix = (
                f"the schema change topic {self.topic} holds no schema change of {record.table_id} "
                "before this event: set include.schema.changes=true on the connector (and keep that "
                "topic's records longer than the table topics')"
            )
        return BadRecordError(KafkaRow(str(topic), int(partition), int(offset), None, None), problem, fix)

    # -- reading the topic ---------------------------------------------------------------------------
    def _read_to_end(self) -> None:
        rows = self._read_topic(self.topic, self._next)
        nxt = dict(self._next or {})
        count = 0
        for row in rows:
            nxt[row.partition] = max(nxt.get(row.partition, 0), row.offset + 1)
            found = self._reader.read(row)
            if (
                found is not None
                and found.source == self.prefix
                and found.record.kind is RecordKind.SCHEMA_CHANGE
            ):
                self.add(found)
                count += 1
        self._next = nxt or None
        log.info("schema change topic %s read to its end: %d schema change event(s)", self.topic, count)
