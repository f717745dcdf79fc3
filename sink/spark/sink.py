"""The Spark sink (``sink.type=spark``): change events land in Delta Lake tables.

For every captured MySQL table the sink keeps two Delta tables under ``sink.spark.warehouse``
(``<warehouse>/<database>/<table>``), registered in the session's catalog under their names:

* **current state** ``<database>.<table>`` (``sink.spark.table.name.format``): exactly the rows the
  MySQL table holds as of the last event it has folded, with one MERGE on the key (net effect per
  key: deletes remove, truncate empties, key changes move the row), deferred on its own cadence
  (``sink.spark.merge.interval.ms``, sink/spark/deferred.py; docs/guides/delta-freshness.md). Change
  Data Feed is on. Tables without a primary key (and no ``message.key.columns``) get none.
* **changelog** ``<database>.<table>_changelog`` (``sink.spark.changelog.name.format``):
  append-only, one row per change event: the typed row image (``after``, or ``before`` for
  deletes; all null for a truncate) followed by ``__op, __ts_ms, __source_ts_ms, __file, __pos,
  __row, __gtid, __snapshot, __deleted`` (the layout ``sink/spark_reader.py`` reads from JSON).

Exactly once: every commit carries the source offset of the last event the table holds (see
``sink/spark/commits.py``). On start the sink reads those offsets back from the tables' Delta
logs: the resume point is the last batch every table completed (never past a change a current
state has not folded), and replayed events a table already holds are skipped, table by table.
An interrupted initial or blocking snapshot is undone with Delta's RESTORE (to the versions
before it) and runs again, so no changelog holds a snapshot row twice. Record handlers are in
sink/spark/handlers.py, recovery in sink/spark/recovery.py.

Batching (``sink/spark/cadence.py``): ``send`` buffers; a batch is applied when
``sink.spark.batch.max.events`` events are buffered (extended to the end of the transaction in
progress), when the oldest buffered event is ``sink.spark.batch.max.interval.ms`` old (not while
the connector reads events older than that: batches grow while it is behind), and at every
``flush``. Batches are committed on a worker thread while the connector reads on. The sink commits
offsets with its data (``commits_offsets``), so the engine's periodic offset flush does not force a
commit: the batch size and interval alone decide how often Delta commits.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from mysql_cdc_base.connect import ConnectSchema
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord
from mysql_cdc_base.table_id import TableId
from sink.base import Sink, SinkError
from sink.spark.batch import NOT_WHOLE_SNAPSHOT, ChangelogPart, EvolveStep, RowsStep, SchemaInfo, TableState
from sink.spark.cadence import BatchCadence
from sink.spark.commits import CommitMeta, is_replay, last_commit
from sink.spark.deferred import DeferredMerges
from sink.spark.faults import commits_in_turn, kill_point
from sink.spark.handlers import RecordHandlers, Work
from sink.spark.maintenance import MaintenancePlan
from sink.spark.recovery import Recovery
from sink.spark.rust_appends import RustAppender, local_path
from sink.spark.rust_merges import RustMerger
from sink.spark.session import spark_session
from sink.spark.settings import SparkSinkConfig, SparkSinkSettings, settings_from_config
from sink.spark.writer import DeltaWriter
from sink.spark_mapping import changelog_struct_type

log = logging.getLogger(__name__)

# Delta tables of a batch written side by side (each commit is mostly fixed latency).
TABLE_WRITERS = 4

Operation = tuple[str, TableState, ChangelogPart | RowsStep | EvolveStep]  # kind, table, what


class SparkSink(Recovery, RecordHandlers, Sink):
    """Writes change events to changelog and current-state Delta tables, exactly once."""

    name = "spark"
    commits_offsets = True

    def __init__(self, settings: SparkSinkSettings, spark: SparkSession | None = None) -> None:
        self.settings = settings
        self._spark: SparkSession | None = spark
        self._writer: DeltaWriter | None = None
        self._writer_pool: queue.SimpleQueue[DeltaWriter] = queue.SimpleQueue()
        self._lock = threading.RLock()
        self._recovered = False
        self._failed: BaseException | None = None
        self._batch_no = 0
        self._offset: SourceOffset | None = None  # where the engine resumes (every table holds it)
        self._stable: SourceOffset | None = None  # the last resume point outside a snapshot
        self._end: SourceOffset | None = None  # the last batch's last event
        self._replay_until: SourceOffset | None = None  # the newest event any table held on start
        self._recovered_commits: dict[str, tuple[CommitMeta | None, int]] = {}
        self._tables: dict[TableId, TableState] = {}
        self._exists: set[str] = set()
        self._registered: set[str] = set()
        self._cadence = BatchCadence(self._apply, settings.batch_max_events, settings.batch_max_interval_ms)
        self._schema_cache: dict[int, tuple[ConnectSchema, SchemaInfo]] = {}
        # Tables whose records arrive unwrapped (ExtractNewRecordState): their tombstones are deletes.
        self._unwrapped: set[TableId] = set()
        self._unwrapped_row_schema: dict[TableId, ConnectSchema] = {}
        self.commits_written = 0
        self.events_applied = 0
        self.events_skipped = 0
        # Per Delta table (its catalog name), the replayed events it already held and was not
        # given again; each batch that skips some logs them.
        self.replay_skipped: Counter[str] = Counter()
        self._batch_skipped: Counter[str] = Counter()
        # Wall time spent in the batches' Delta operations (DataFrames, commits), for benchmarks:
        # what a batch costs beyond the connector's own work.
        self.delta_seconds = 0.0
        # Current-state tables whose newest version has no state built yet, and those that have
        # had updates or deletes (their next batch likely MERGEs too): see _prepare_merges.
        self._unprepared: set[TableId] = set()
        self._updated: set[TableId] = set()
        self._preparer: ThreadPoolExecutor | None = None
        self._prepare_lock = threading.Lock()  # the reading thread and the batch worker prepare
        self._prepared: Future[None] | None = None
        self.states_prepared = 0
        self._maintenance = MaintenancePlan(
            settings.optimize_interval_commits, settings.vacuum_interval_ms / 1000
        )
        self.tables_compacted = 0
        # Events from Kafka may repeat any time (spark-apply): their current state is merged every
        # batch, as the job's own offsets expect.
        interval = 0 if settings.kafka_input else settings.merge_interval_ms
        self._merges = DeferredMerges(interval, settings.merge_max_rows)
        # Changelog appends without a Spark job, where delta-rs can commit them (rust_appends.py).
        local = local_path(settings.warehouse) is not None
        self._appender = RustAppender() if local and settings.changelog_appends == "auto" else None
        # And current-state MERGEs and appends (rust_merges.py).
        self._merger = RustMerger(RustAppender()) if local and settings.current_commits == "auto" else None

    @classmethod
    def from_config(cls, config: SparkSinkConfig) -> SparkSink:
        settings = settings_from_config(config)
        if settings.truncates_skipped:
            log.warning(
                "skipped.operations includes 't': TRUNCATE is not delivered, so a truncated "
                "table's current-state Delta table keeps its rows; set skipped.operations=none"
            )
        return cls(settings)

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            s = self.settings
            self._spark = spark_session(s.master, s.conf, s.warehouse, s.log_level)
        return self._spark

    @property
    def writer(self) -> DeltaWriter:
        if self._writer is None:
            self._writer = DeltaWriter(
                self.spark, self.settings.app_id, self.settings.evolution, self._appender, self._merger
            )
        return self._writer

    def start(self) -> None:
        with self._lock:
            self._recover()
            for meta, _ in self._recovered_commits.values():
                if meta is not None and meta.table is not None:
                    self._state_for(TableId(*meta.table))

    def committed_offset(self) -> SourceOffset | None:
        with self._lock:
            self._recover()
            return self._offset

    def send(self, records: Sequence[ChangeRecord]) -> None:
        with self._lock:
            self._check_usable()
            if not records:
                return
            if self._unprepared:
                self._prepare_merges(records)
            self._cadence.add(records)

    def apply_now(self, records: Sequence[ChangeRecord]) -> None:
        """Apply ``records`` as one batch in the calling thread, committed when this returns (the
        ``spark-apply`` job's micro-batches: the same apply path as ``send``/``flush``)."""
        with self._lock:
            self._check_usable()
            self._cadence.drain()
            if records:
                self._apply(list(records))

    def current_columns(self, table_id: TableId) -> frozenset[str] | None:
        """The columns (lower case) of the table's current-state Delta table as this sink last
        brought it; None when the table has none (yet)."""
        with self._lock:
            self._recover()
            schema = self._state_for(table_id).current_schema
            return None if schema is None else frozenset(f.name.lower() for f in schema.fields)

    def current_offset(self, table_id: TableId) -> SourceOffset | None:
        """The offset of the last event the table's current-state Delta table holds (events at or
        before it are replays: ``commits.is_replay``)."""
        with self._lock:
            self._recover()
            return self._state_for(table_id).current_offset

    def holds(self, table_id: TableId, offset: SourceOffset | None, current_only: bool = False) -> bool:
        """Does the table's current-state Delta table (and, unless ``current_only``, its changelog)
        hold the event at ``offset`` already (a replay)?"""
        with self._lock:
            self._recover()
            state = self._state_for(table_id)
            current = is_replay(offset, state.current_offset)
            if current_only:
                return current
            return is_replay(offset, state.changelog_offset) and (current or not state.keyed)

    def commit_due(self) -> None:
        with self._lock:
            self._check_usable()
            self._cadence.tick()
            cadence = self._cadence
            if self._merges and not cadence.pending and not cadence.busy and self._merges.due():
                cadence.run([])  # deferred MERGEs due while no event comes

    def flush(self) -> None:
        """Apply everything buffered and every deferred MERGE: the current state is exact."""
        with self._lock:
            self._check_usable()
            self._cadence.drain()
            self._apply_merges()

    def close(self) -> None:
        with self._lock:
            try:
                self._cadence.close(drain=self._failed is None)
                if self._failed is None:
                    self._apply_merges()
            finally:
                if self._preparer is not None:
                    self._preparer.shutdown(wait=True)
                    self._preparer = None

    def _apply_merges(self) -> None:
        if self._merges:
            self._apply([], merge_all=True)

    def _prepare_merges(self, records: Sequence[ChangeRecord]) -> None:
        """An update or delete makes its table's batch a MERGE, and a MERGE first builds the state
        of the table's newest version (Spark jobs over the Delta log, seconds): that starts now,
        in the background, while the connector reads on. A table that has had updates or deletes
        gets it right after each of its commits (see _apply_batch). Insert-only streams append,
        which needs no state, so they start nothing."""
        waiting = self._unprepared
        for record in records:
            value = record.value
            if record.table_id in waiting and isinstance(value, dict) and value.get("op") in ("u", "d"):
                self._updated.add(record.table_id)
                self._prepare(record.table_id)
                if not waiting:
                    return

    def _prepare(self, table_id: TableId) -> None:
        with self._prepare_lock:
            self._unprepared.discard(table_id)
            if self._merger is not None and self.settings.evolution != "column-mapping":
                # delta-rs MERGEs the table (rust_merges.py) from its own reading of the log: a
                # state built by Spark would cost the JVM seconds of jobs per commit for nothing
                # (a MERGE Spark must still do, e.g. with a cast, builds it itself).
                return
            if self._preparer is None:
                self._preparer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="delta-state")
            path = self._tables[table_id].current_path
            self._prepared = self._preparer.submit(self._prepare_state, path)

    def _prepare_state(self, path: str) -> None:
        try:
            self.writer.prepare_state(path)
        except Exception as exc:  # the MERGE builds the state itself: slower, never wrong
            log.warning("Delta table %s: its state could not be built ahead of the MERGE: %s", path, exc)
        else:
            self.states_prepared += 1

    def _check_usable(self) -> None:
        if self._failed is not None:
            raise SinkError(
                f"the Spark sink stopped after an earlier failure ({self._failed}); restart "
                "the connector: it resumes from what the Delta tables have committed"
            ) from self._failed

    # -- applying a batch ----------------------------------------------------------------------
    def _apply(self, batch: list[ChangeRecord], merge_all: bool = False) -> None:
        """Apply a batch (an empty one: the deferred MERGEs that are due, or all), then maintenance."""
        try:
            if not batch:
                self._merge_pending(merge_all)
            else:
                if self._merges and _in_snapshot(batch):
                    self._merge_pending(everything=True)  # a snapshot's rollback keeps them
                self._apply_batch(batch)
            self._maintain()
        except Exception as exc:
            self._failed = exc
            if isinstance(exc, SinkError):
                raise
            raise SinkError(
                f"Spark sink: writing a batch of {len(batch)} events to {self.settings.warehouse} failed: {exc}"
            ) from exc

    def _apply_batch(self, batch: list[ChangeRecord]) -> None:
        self._recover()
        work: Work = {}
        last: SourceOffset | None = None
        for record in batch:
            if record.offset is not None:
                last = SourceOffset.coerce(record.offset)
            if self._replay_until is not None:
                if is_replay(last, self._replay_until):
                    self.events_skipped += 1  # (tables that miss it still get it below)
                else:
                    self._replay_until = None
            self.handle(record, last, work)
        if self._batch_skipped:
            log.info(
                "replayed events skipped, the Delta tables already hold them: %s",
                ", ".join(f"{name}={n}" for name, n in sorted(self._batch_skipped.items())),
            )
            self.replay_skipped.update(self._batch_skipped)
            self._batch_skipped.clear()
        if last is None:
            return
        for tb in work.values():
            tb.finish()
        self._batch_no += 1
        self._defer(work, last)
        resume = self._merges.resume_point(last)
        snapshot = last.in_snapshot or _holds_snapshot_reads(batch)
        self._commit_work(work, last, self._stable if snapshot else resume, resume, snapshot)
        self.events_applied += sum(tb.events for tb in work.values())

    def _defer(self, work: Work, last: SourceOffset) -> None:
        """Fold the batch's current-state rows steps into the tables' pending steps (outside
        snapshots), and take the pending steps that are due into the batch."""
        merges = self._merges
        if not merges.enabled or last.in_snapshot or self._offset is None:
            return
        for table_id, tb in work.items():
            if tb.state.keyed and tb.steps:
                tb.steps = merges.defer(table_id, tb.steps, self._offset, self._batch_no)
        for table_id in merges.due():
            step = merges.take(table_id)
            if step is not None:
                self._batch_of(table_id, work).steps.insert(0, step)

    def _merge_pending(self, everything: bool = False) -> None:
        """A batch of deferred MERGEs only (those due, or ``everything``): it ends where the last
        batch did."""
        due = self._merges.due(everything)
        if not due:
            return
        work: Work = {}
        for table_id in due:
            step = self._merges.take(table_id)
            if step is not None:
                self._batch_of(table_id, work).steps.append(step)
        self._batch_no += 1
        resume = self._merges.resume_point(self._end)
        self._commit_work(work, self._end, resume, resume)
        log.debug("Spark batch %d: deferred MERGEs of %d tables", self._batch_no, len(work))

    def _commit_work(
        self,
        work: Work,
        last: SourceOffset | None,
        stable: SourceOffset | None,
        resume: SourceOffset | None,
        snapshot: bool = False,
    ) -> None:
        """Commit a batch's operations, the tables side by side; ``resume``: where the engine
        resumes once they are all committed; ``snapshot``: the batch holds snapshot reads."""
        ops = self._operations(work)
        chains: dict[str, list[tuple[Operation, CommitMeta]]] = {}
        for seq, (kind, state, item) in enumerate(ops, start=1):
            meta = CommitMeta(
                batch=self._batch_no,
                seq=seq,
                of=0,
                offset=item.offset,
                batch_offset=last,
                since=self._offset,
                stable=stable,
                key=state.key,
                table=(state.table_id.database, state.table_id.table),
                kind=kind,
                resume=resume,
                snapshot=snapshot,
            )
            chains.setdefault(_path_of(kind, state), []).append(((kind, state, item), meta))
        tasks = [
            [
                (op, replace(meta, of=len(chains), final=i == len(chain) - 1))
                for i, (op, meta) in enumerate(chain)
            ]
            for chain in chains.values()
        ]
        started = time.perf_counter()
        if len(tasks) == 1 or commits_in_turn():
            for task in tasks:
                self._run_chain(task, self.writer)
        elif tasks:
            # A commit is mostly fixed latency (planning, the Delta log, small jobs): the tables
            # of a batch are written side by side, each by its own session (its commit settings).
            try:
                with ThreadPoolExecutor(
                    max_workers=min(TABLE_WRITERS, len(tasks)), thread_name_prefix="delta"
                ) as pool:
                    list(pool.map(self._run_pooled_chain, tasks))
            finally:
                # PySpark makes the last session that created a DataFrame the process's active one
                # (a class attribute): the application's session is that again, not a child.
                SparkSession._activeSession = self.spark
        self.delta_seconds += time.perf_counter() - started
        kill_point("batch", self.settings.warehouse)
        for table_id in {state.table_id for kind, state, _ in ops if kind == "current"}:
            if table_id in self._updated:
                self._prepare(table_id)
            else:
                with self._prepare_lock:
                    self._unprepared.add(table_id)
        # (a snapshot's last batch records the offset before the snapshot as its stable one; once
        # it is complete, its end is)
        self._offset, self._end = resume, last
        self._stable = stable if last is None or last.in_snapshot else resume
        if last is not None and not last.in_snapshot:
            for state in self._tables.values():
                state.snapshot_base.clear()
                state.snapshot_empty.clear()
        self.commits_written += len(ops)
        for path, chain in chains.items():
            self._maintenance.committed(path, len(chain))
        log.debug("Spark batch %d: %d commits, offset %s", self._batch_no, len(ops), last)

    def _maintain(self) -> None:
        """Compact and vacuum the tables that are due (sink/spark/maintenance.py), after a batch's
        commits, on the thread that applies batches: never during a snapshot, whose interruption
        restores the versions before it."""
        if self._offset is not None and self._offset.in_snapshot:
            return
        settings = self.settings
        for path, compact, vacuum in self._maintenance.due():
            started = time.perf_counter()
            if compact:
                self.writer.compact(path)
                self.tables_compacted += 1
            if vacuum:
                self.writer.vacuum(path, settings.vacuum_retention_hours)
            self._maintenance.done(path, compact, vacuum)
            self.delta_seconds += time.perf_counter() - started
            log.debug("Delta table %s: compacted %s, vacuumed %s", path, compact, vacuum)

    def _operations(self, work: Work) -> list[Operation]:
        ops: list[Operation] = []
        for tb in work.values():
            state = tb.state
            if state.changelog_schema is not None:
                first = tb.parts[0].table_schema if tb.parts else state.changelog_schema
                self._ensure(state.changelog_path, state.changelog_name, changelog_struct_type(first), False)
            if state.keyed and state.current_schema is not None:
                step = tb.steps[0] if tb.steps else None
                first = (
                    (step.old if isinstance(step, EvolveStep) else step.schema)
                    if step
                    else state.current_schema
                )
                self._ensure(state.current_path, state.current_name, first, True)
            ops += [("changelog", state, part) for part in tb.parts]
            ops += [("current", state, step) for step in tb.steps]
        return ops

    def _ensure(self, path: str, name: str, schema: StructType, change_data_feed: bool) -> None:
        if path not in self._exists:
            self.writer.create(path, schema, change_data_feed)
            self._exists.add(path)
        self._register(path, name)

    def _run_pooled_chain(self, chain: list[tuple[Operation, CommitMeta]]) -> None:
        try:
            writer = self._writer_pool.get_nowait()
        except queue.Empty:
            writer = DeltaWriter(
                self.spark.newSession(),
                self.settings.app_id,
                self.settings.evolution,
                self._appender,
                self._merger,
            )
        try:
            self._run_chain(chain, writer)
        finally:
            # py4j hands this JVM thread to other Python threads later: they find the sink's
            # own session active there, not this child.
            self.writer.activate()
            self._writer_pool.put(writer)

    def _run_chain(self, chain: list[tuple[Operation, CommitMeta]], writer: DeltaWriter) -> None:
        """One Delta table's commits of a batch, in order."""
        writer.activate()
        for (kind, state, item), meta in chain:
            self._commit(kind, state, item, meta, writer)

    def _commit(
        self,
        kind: str,
        state: TableState,
        item: ChangelogPart | RowsStep | EvolveStep,
        meta: CommitMeta,
        writer: DeltaWriter,
    ) -> None:
        path = _path_of(kind, state)
        if meta.takes_snapshot:
            if path not in state.snapshot_base:
                # The version to restore if this snapshot is interrupted, and what it held then.
                _, version = last_commit(writer.spark, path)
                held = state.changelog_offset if kind == "changelog" else state.current_offset
                state.snapshot_base[path] = (version, held)
            version, held = state.snapshot_base[path]
            meta = replace(meta, base_version=version, base_offset=held)
        if isinstance(item, ChangelogPart):
            # A type change first: that commit holds no new event (the table's offset, not final).
            target = changelog_struct_type(item.table_schema)
            if target != state.changelog_checked:
                prep = replace(meta, final=False, offset=state.changelog_offset)
                writer.evolve_changelog(path, target, prep)
            writer.append_changelog(path, item, meta)
            state.changelog_checked = target
            state.changelog_offset = item.offset or state.changelog_offset
        elif isinstance(item, RowsStep):
            append = item.inserts_only and (
                not item.snapshot_rows or _empty_before_snapshot(state, path, writer)
            )
            writer.apply_rows(path, item, meta, append)
            state.current_offset = item.offset or state.current_offset
        else:
            writer.evolve_current(path, item, replace(meta, offset=item.offset or state.current_offset))


def _empty_before_snapshot(state: TableState, path: str, writer: DeltaWriter) -> bool:
    """Did the table hold no row when the snapshot whose rows are committed now began? Asked at
    its first rows commit (a snapshot rolled back on restart begins again)."""
    empty = state.snapshot_empty.get(path)
    if empty is None:
        empty = state.snapshot_empty[path] = writer.is_empty(path)
    return empty


def _in_snapshot(batch: list[ChangeRecord]) -> bool:
    """Is the batch a snapshot's (its commits restored if the snapshot is interrupted)? As for its
    commits' ``in_snapshot``, its last event decides."""
    for record in reversed(batch):
        if record.offset is not None:
            offset = SourceOffset.coerce(record.offset)
            return offset is not None and offset.in_snapshot
    return False


def _holds_snapshot_reads(batch: list[ChangeRecord]) -> bool:
    """Does the batch hold reads of an initial/blocking snapshot (its last read included, whose
    offset is the completed snapshot's, outside it)? Their ``source.snapshot`` marker says so."""
    for record in batch:
        value = record.value
        source = value.get("source") if isinstance(value, dict) else None
        if isinstance(source, dict) and source.get("snapshot") not in NOT_WHOLE_SNAPSHOT:
            return True
    return False


def _path_of(kind: str, state: TableState) -> str:
    return state.changelog_path if kind == "changelog" else state.current_path
