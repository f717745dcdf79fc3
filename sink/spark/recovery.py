"""The Spark sink's recovery: on start, the resume point and each table's state are read back from
the Delta tables' own commits (sink/spark/commits.py); an interrupted snapshot is rolled back."""

from __future__ import annotations

import logging
from dataclasses import replace

from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.table_id import TableId
from sink.base import SinkError
from sink.spark.batch import TableState
from sink.spark.commits import CommitMeta, last_commit
from sink.spark.settings import SparkSinkSettings
from sink.spark.writer import DeltaWriter

log = logging.getLogger(__name__)

LEGACY_MARKER = "_mysql_cdc/commits"


class Recovery:
    """The part of ``SparkSink`` that reads its state back from the warehouse."""

    settings: SparkSinkSettings
    _recovered: bool
    _batch_no: int
    _offset: SourceOffset | None
    _stable: SourceOffset | None
    _end: SourceOffset | None
    _replay_until: SourceOffset | None
    _recovered_commits: dict[str, tuple[CommitMeta | None, int]]
    _tables: dict[TableId, TableState]
    _exists: set[str]
    _registered: set[str]
    _unprepared: set[TableId]

    @property
    def spark(self) -> SparkSession:
        raise NotImplementedError

    @property
    def writer(self) -> DeltaWriter:
        raise NotImplementedError

    def _recover(self) -> None:
        if self._recovered:
            return
        writer, warehouse = self.writer, self.settings.warehouse
        if writer.exists(f"{warehouse}/{LEGACY_MARKER}"):
            raise SinkError(
                f"{warehouse} holds the Parquet warehouse of mysql-cdc before Delta Lake "
                f"({LEGACY_MARKER}); this version writes Delta tables and cannot continue it: set "
                "sink.spark.warehouse to a new location and snapshot again (a fresh offset store, or "
                "snapshot.mode=always), or delete the old warehouse"
            )
        commits = {path: last_commit(self.spark, path) for path in writer.table_paths(warehouse)}
        ours = [meta for meta, _ in commits.values() if meta is not None]
        if ours:
            latest = max(ours, key=lambda m: m.order)
            self._batch_no = latest.batch
            self._stable = latest.stable
            self._end = latest.batch_offset
            finished = sum(1 for m in ours if m.batch == latest.batch and m.final)
            # A snapshot is interrupted inside it, or between its last batch's table commits (some
            # tables would miss that batch's reads for good: a replay has only binlog events).
            interrupted = latest.in_snapshot or (latest.snapshot and finished < latest.of)
            if interrupted and not self.settings.kafka_input:
                commits = self._roll_back_snapshot(commits, latest)
                # Streaming resumes where it was before the snapshot; an initial snapshot's own
                # offset (or none) tells the engine to take it again.
                self._offset = latest.stable or (latest.batch_offset if latest.in_snapshot else latest.since)
                # Tables may hold events past it: changes a current state had not folded yet.
                held = [m for m, _ in commits.values() if m is not None]
                self._replay_until = _newest_held(held)
            else:
                if latest.snapshot and not latest.in_snapshot:
                    self._stable = latest.resume_at  # a completed snapshot's end
                # (the resume point stays before the events a current state has not folded yet)
                self._offset = latest.resume_at if finished >= latest.of else latest.since
                if self._offset is not None and self._offset.in_snapshot:
                    # The first batch after a finished snapshot: stream from the snapshot's
                    # position, never take the snapshot again.
                    self._offset = self._offset.with_(snapshot=None)
                self._replay_until = _newest_held(ours) or latest.batch_offset
            log.info(
                "Spark warehouse %s: %d Delta tables, resuming after batch %d (offset %s)",
                warehouse,
                len(commits),
                latest.batch,
                self._offset,
            )
        self._recovered_commits = commits
        self._exists = set(commits)
        self._recovered = True

    def _roll_back_snapshot(
        self, commits: dict[str, tuple[CommitMeta | None, int]], latest: CommitMeta
    ) -> dict[str, tuple[CommitMeta | None, int]]:
        """Undo an interrupted initial/blocking snapshot: it restarts from scratch. Only the tables
        it wrote are restored: a table's newest commit may be an earlier, completed snapshot's,
        when no batch since has written to it (a current state whose MERGEs are deferred, a table
        with no change since), and that snapshot stays."""
        # The newest batch outside the interrupted snapshot (a completed snapshot's last batch is
        # one; the interrupted one's, when it is ``latest``, is not).
        streamed = max(
            (
                m.batch
                for m, _ in commits.values()
                if m is not None and not m.in_snapshot and not (m.snapshot and m.batch == latest.batch)
            ),
            default=-1,
        )
        undo = {
            p: m
            for p, (m, _) in commits.items()
            if m is not None and m.takes_snapshot and m.base_version is not None and m.batch > streamed
        }
        self._batch_no += 1
        out = dict(commits)
        for seq, (path, meta) in enumerate(sorted(undo.items()), start=1):
            assert meta.base_version is not None
            restored = replace(
                meta,
                batch=self._batch_no,
                seq=seq,
                of=len(undo),
                offset=meta.base_offset,
                batch_offset=latest.stable,
                since=latest.stable,
                base_version=None,
                base_offset=None,
                final=True,
                resume=None,
                snapshot=False,
            )
            self.writer.restore(path, meta.base_version, restored)
            out[path] = (restored, meta.base_version)
        log.warning(
            "the connector stopped during a snapshot: %d Delta tables are restored to their versions "
            "before it, and the snapshot starts again",
            len(undo),
        )
        return out

    def _state_for(self, table_id: TableId) -> TableState:
        state = self._tables.get(table_id)
        if state is not None:
            return state
        settings = self.settings
        current_name, changelog_name = settings.names(table_id)
        state = TableState(
            table_id,
            current_name,
            changelog_name,
            settings.location(current_name),
            settings.location(changelog_name),
            inserts_are_new=settings.inserts_are_new,
        )
        for path, kind in ((state.current_path, "current"), (state.changelog_path, "changelog")):
            if path not in self._recovered_commits and not self.writer.is_table(path):
                continue
            meta, _ = self._recovered_commits.get(path) or last_commit(self.spark, path)
            self._exists.add(path)
            schema = self.writer.schema(path)
            if kind == "current":
                state.current_schema, state.current_offset = schema, meta.offset if meta else None
                self._unprepared.add(table_id)
            else:
                row_fields = [f for f in schema.fields if not f.name.startswith("__")]
                state.changelog_schema = StructType(row_fields)
                state.changelog_offset = meta.offset if meta else None
            if meta is not None and meta.key is not None:
                state.key = meta.key
            self._register(path, current_name if kind == "current" else changelog_name)
        self._tables[table_id] = state
        return state

    def _register(self, path: str, name: str) -> None:
        if name not in self._registered:
            self.writer.register(name, path)
            self._registered.add(name)


def _newest_held(metas: list[CommitMeta]) -> SourceOffset | None:
    """The newest streaming event any table holds. After a crash between a batch's table commits,
    a replay cut shorter than that batch may complete and be followed by another crash: the newest
    complete batch then ends before what some tables hold, and their events up to here must still
    be skipped table by table."""
    held = [
        m.offset for m in metas if m.offset is not None and m.offset.has_position and not m.offset.in_snapshot
    ]
    return max(held, key=lambda o: o.position_key, default=None)
