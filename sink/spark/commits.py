"""What each of the sink's Delta commits records, and reading it back.

Every commit the sink makes carries, in Delta's ``userMetadata``, the batch it belongs to and the
source offset of the last event the table holds after it. That offset is committed atomically with
the data, so after a crash each table says exactly which events it has: replayed events at or
before it are skipped per table, however the replay is cut into batches. A batch's commits are made
one after another and numbered ``seq`` of ``of``: the last one present says the batch is complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from pyspark.sql import SparkSession

from mysql_cdc_base.position import SourceOffset

MARKER = "mysql_cdc"
HISTORY_DEPTH = 50  # commits searched for the sink's own (others: OPTIMIZE, VACUUM ... by users)


@dataclass(frozen=True)
class CommitMeta:
    batch: int
    seq: int  # the commit's number in its batch (unique: it names the Delta transaction)
    of: int  # the Delta tables the batch writes to
    offset: SourceOffset | None  # the last event this table holds
    batch_offset: SourceOffset | None  # the whole batch's last event
    since: SourceOffset | None  # the previous batch's last event (every table holds it)
    stable: SourceOffset | None  # the last offset outside a snapshot (where a rolled-back one resumes)
    key: tuple[str, ...] | None
    table: tuple[str, str] | None = None  # the MySQL table (database, table)
    kind: str = ""  # current or changelog
    final: bool = True  # the table's last commit of the batch
    base_version: int | None = None  # the version before the snapshot in progress
    base_offset: SourceOffset | None = None  # the table's offset at that version
    version: int = -1  # the Delta version that holds this commit (read back)
    # Where the engine resumes once the batch is complete: its end, or before the oldest event a
    # current-state table has not folded yet (sink/spark/deferred.py); None: batch_offset.
    resume: SourceOffset | None = None
    # The batch holds reads of an initial/blocking snapshot: every batch of one, the last (whose
    # end is the completed snapshot's offset, outside it) included. Its ``stable`` is the offset
    # before the snapshot, and each table records ``base_version``: a kill between that last
    # batch's table commits rolls the whole snapshot back, as one inside it.
    snapshot: bool = False

    @property
    def in_snapshot(self) -> bool:
        return self.batch_offset is not None and self.batch_offset.in_snapshot

    @property
    def takes_snapshot(self) -> bool:
        """Does the batch hold snapshot reads (restored if the snapshot is interrupted)?"""
        return self.snapshot or self.in_snapshot

    def to_json(self) -> str:
        def offset(value: SourceOffset | None) -> Any:
            return value.to_map() if value is not None else None

        doc = {
            "batch": self.batch,
            "seq": self.seq,
            "of": self.of,
            "offset": offset(self.offset),
            "batch_offset": offset(self.batch_offset),
            "since": offset(self.since),
            "stable": offset(self.stable),
            "key": list(self.key) if self.key is not None else None,
            "table": list(self.table) if self.table else None,
            "kind": self.kind,
            "final": self.final,
        }
        if self.resume is not None and self.resume != self.batch_offset:
            doc["resume"] = offset(self.resume)
        if self.snapshot:
            doc["snapshot"] = True
        if self.base_version is not None:
            doc["base_version"] = self.base_version
            doc["base_offset"] = offset(self.base_offset)
        return orjson.dumps({MARKER: doc}).decode()

    @classmethod
    def from_json(cls, text: str | None, version: int) -> CommitMeta | None:
        if not text or MARKER not in text:
            return None
        try:
            doc = orjson.loads(text)[MARKER]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return None
        coerce = SourceOffset.coerce
        return cls(
            batch=int(doc["batch"]),
            seq=int(doc["seq"]),
            of=int(doc["of"]),
            offset=coerce(doc.get("offset")),
            batch_offset=coerce(doc.get("batch_offset")),
            since=coerce(doc.get("since")),
            stable=coerce(doc.get("stable")),
            key=tuple(doc["key"]) if doc.get("key") is not None else None,
            table=(str(doc["table"][0]), str(doc["table"][1])) if doc.get("table") else None,
            kind=str(doc.get("kind") or ""),
            final=bool(doc.get("final", True)),
            base_version=doc.get("base_version"),
            base_offset=coerce(doc.get("base_offset")),
            version=version,
            resume=coerce(doc.get("resume")),
            snapshot=bool(doc.get("snapshot", False)),
        )

    @property
    def resume_at(self) -> SourceOffset | None:
        """Where the engine resumes once this commit's batch is complete."""
        return self.resume or self.batch_offset

    @property
    def order(self) -> tuple[int, int]:
        return (self.batch, self.seq)


def last_commit(spark: SparkSession, path: str) -> tuple[CommitMeta | None, int]:
    """The sink's newest commit in the table at ``path`` and the table's version."""
    from delta.tables import DeltaTable

    rows = DeltaTable.forPath(spark, path).history(HISTORY_DEPTH).select("version", "userMetadata").collect()
    latest = max((int(r["version"]) for r in rows), default=-1)
    for row in sorted(rows, key=lambda r: -int(r["version"])):
        meta = CommitMeta.from_json(row["userMetadata"], int(row["version"]))
        if meta is not None:
            return meta, latest
    return None, latest


def is_replay(offset: SourceOffset | None, committed: SourceOffset | None) -> bool:
    """Is ``offset`` at or before ``committed`` in the same server's binlog (already applied)?"""
    if committed is None or offset is None or offset.in_snapshot or not offset.has_position:
        return False
    if committed.in_snapshot or not committed.has_position:
        return False
    mine, theirs = offset.position_key, committed.position_key
    return mine[0] == theirs[0] and mine[1:] <= theirs[1:]


def in_snapshot(offset: Mapping[str, Any] | None) -> bool:
    """True for an offset (or a stored offset map) taken while an initial/blocking snapshot runs
    (such a snapshot restarts from scratch)."""
    typed = SourceOffset.coerce(offset)
    return typed is not None and typed.in_snapshot
