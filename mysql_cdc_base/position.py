"""Positions in a server's binlog: GTID sets, binlog coordinates and the connector's source offset.

These types live in the lowest layer because every layer speaks about positions: the schema history
records each DDL with the offset it was applied at and replays up to a stored offset, the snapshot
reads the binlog position it starts from, sinks that commit offsets with their data (Spark) compare
them, and the connector stores them. This module is the only place that knows the offset's keys.

* ``GtidSet``: one immutable type for MySQL GTID sets (``uuid:1-5:7,uuid2:1-3``) and MariaDB GTID
  positions (``0-1-100,1-2-7``, one ``domain-server-sequence`` per replication domain).
* ``BinlogPosition``: a binlog coordinate (file, position, GTID set text).
* ``SourceOffset``: Debezium's MySQL offset map (docs/guides/positions.md) as an immutable value, with its
  ordering (``position_key``), Debezium's history comparator (``is_at_or_before``), "is a snapshot
  running" (``in_snapshot``) and its exact serialisation (``to_map``/``from_map``). It is also a
  read-only ``Mapping`` of that serialisation, for code that inspects stored offsets.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

from mysql_cdc_base.errors import InvalidGtidSetError, OffsetError

# -- binlog file names ----------------------------------------------------------------------------


def binlog_file_key(name: str) -> tuple[str, int]:
    """``mysql-bin.000042`` → ``("mysql-bin", 42)``: binlog files of one server order by the number;
    a different base name means a different (rebuilt or renamed) server log."""
    base, _, extension = name.rpartition(".")
    return (base, int(extension)) if extension.isdigit() else (name, 0)


# -- GTID sets --------------------------------------------------------------------------------------

# MySQL: ``uuid:1-5:7`` and, since 8.3, tagged GTIDs: ``uuid:1-5:tag1:1-3`` (a tag applies to the
# intervals after it; tags are case-insensitive and kept in lower case).
_MYSQL_GTID_ELEMENT = re.compile(
    r"^\s*([0-9A-Fa-f-]{36})((?::(?:[A-Za-z_][A-Za-z0-9_]{0,31}:)?\d+(?:-\d+)?)+)\s*$"
)
_MARIADB_GTID_ELEMENT = re.compile(r"^\s*(\d+)-(\d+)-(\d+)\s*$")


@dataclass(frozen=True)
class GtidSet:
    """A MySQL GTID set or a MariaDB GTID position, in either flavour's own notation.

    MySQL: ``mysql`` maps each server UUID (in the order first seen, as the server lists them), or
    ``uuid:tag`` for MySQL 8.4's tagged GTIDs, to its merged intervals. MariaDB: ``mariadb`` maps each replication domain to ``(server_id, sequence)``
    of its newest transaction. ``str()`` gives the flavour's text form.
    """

    mysql: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    mariadb_positions: Mapping[int, tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> GtidSet:
        mysql: dict[str, list[tuple[int, int]]] = {}
        mariadb: dict[int, tuple[int, int]] = {}
        for element in text.replace("\n", "").split(","):
            if not element.strip():
                continue
            match = _MYSQL_GTID_ELEMENT.match(element)
            if match:
                uuid = match.group(1).lower()
                intervals = mysql.setdefault(uuid, [])
                for part in match.group(2).strip(":").split(":"):
                    if not part[0].isdigit():  # a tag: the intervals after it are uuid:tag's
                        intervals = mysql.setdefault(f"{uuid}:{part.lower()}", [])
                        continue
                    low, _, high = part.partition("-")
                    intervals.append((int(low), int(high or low)))
                continue
            match = _MARIADB_GTID_ELEMENT.match(element)
            if match:
                domain, server, sequence = (int(g) for g in match.groups())
                if sequence >= mariadb.get(domain, (0, -1))[1]:
                    mariadb[domain] = (server, sequence)
                continue
            raise InvalidGtidSetError(f"invalid GTID set {text!r}")
        return cls({key: _merge(intervals) for key, intervals in mysql.items() if intervals}, mariadb)

    @property
    def mariadb(self) -> dict[int, int]:
        """MariaDB: replication domain → newest sequence number."""
        return {domain: seq for domain, (_, seq) in self.mariadb_positions.items()}

    def add(self, gtid: str) -> GtidSet:
        """This set with one more transaction (``uuid:n`` or ``domain-server-seq``)."""
        quick = self._add_next(gtid)
        if quick is not None:
            return quick
        other = GtidSet.parse(gtid)
        if other.mariadb_positions:
            return GtidSet(self.mysql, {**self.mariadb_positions, **other.mariadb_positions})
        mysql = dict(self.mysql)
        for uuid, intervals in other.mysql.items():
            mysql[uuid] = _merge([*mysql.get(uuid, ()), *intervals])
        return GtidSet(mysql, self.mariadb_positions)

    def _add_next(self, gtid: str) -> GtidSet | None:
        """``add`` of the commonest GTIDs without parsing a set (once per streamed transaction):
        a MariaDB ``domain-server-seq``, or a MySQL ``uuid:n`` right after the UUID's last
        interval. None for anything else (``add`` parses it)."""
        parts = gtid.split("-")
        if len(parts) == 3 and all(part.isdigit() for part in parts):
            domain, server, sequence = (int(part) for part in parts)
            return GtidSet(self.mysql, {**self.mariadb_positions, domain: (server, sequence)})
        uuid, colon, number = gtid.partition(":")
        if not colon or len(uuid) != 36 or not number.isdigit():
            return None
        uuid = uuid.lower()
        intervals = self.mysql.get(uuid)
        if not intervals or intervals[-1][1] + 1 != int(number) or not _MYSQL_GTID_ELEMENT.match(gtid):
            return None
        mysql = dict(self.mysql)
        mysql[uuid] = (*intervals[:-1], (intervals[-1][0], int(number)))
        return GtidSet(mysql, self.mariadb_positions)

    def contains(self, other: GtidSet) -> bool:
        """Is every transaction of ``other`` also in this set (Debezium's subset test)? MariaDB
        positions compare per replication domain by sequence number."""
        for uuid, intervals in other.mysql.items():
            mine = self.mysql.get(uuid, ())
            if not all(any(lo <= a and b <= hi for lo, hi in mine) for a, b in intervals):
                return False
        mine_seq = self.mariadb
        return all(mine_seq.get(domain, -1) >= seq for domain, seq in other.mariadb.items())

    def count_missing(self, other: GtidSet) -> int:
        """How many transactions of ``other`` this set lacks (a connector's lag in transactions
        behind the server's executed set). MySQL counts the GTIDs of ``other``'s intervals outside
        this set's; MariaDB counts, per replication domain, the sequence numbers ``other`` is ahead."""
        missing = 0
        for uuid, intervals in other.mysql.items():
            mine = self.mysql.get(uuid, ())
            for low, high in intervals:
                covered = sum(max(0, min(high, hi) - max(low, lo) + 1) for lo, hi in mine)
                missing += high - low + 1 - covered
        mine_seq = self.mariadb
        for domain, seq in other.mariadb.items():
            missing += max(0, seq - mine_seq.get(domain, 0))
        return missing

    @staticmethod
    def source_of(gtid: str) -> str:
        """The source a GTID's transaction comes from, as ``gtid.source.includes/excludes`` match it:
        MySQL the server UUID (``uuid:n`` → ``uuid``), MariaDB ``domain-server``."""
        text = gtid.strip()
        if ":" in text:
            return text.partition(":")[0].lower()
        return text.rpartition("-")[0]

    def retain(self, source_filter: Callable[[str], bool]) -> GtidSet:
        """Only the sources ``source_filter`` accepts (Debezium's ``retainAll``): MySQL server UUIDs,
        MariaDB ``domain-server`` streams."""
        return GtidSet(
            {key: iv for key, iv in self.mysql.items() if source_filter(key.partition(":")[0])},
            {d: (s, q) for d, (s, q) in self.mariadb_positions.items() if source_filter(f"{d}-{s}")},
        )

    def with_sources_of(self, other: GtidSet, source_filter: Callable[[str], bool]) -> GtidSet:
        """The GTID set to restart from: this (filtered) set for the sources ``source_filter``
        accepts, and ``other`` (the server's executed set) for the sources it rejects, whose
        transactions the connector never needs to read again (Debezium's merged restart set)."""
        mine = self.retain(source_filter)
        theirs = other.retain(lambda source: not source_filter(source))
        mariadb = {**theirs.mariadb_positions, **mine.mariadb_positions}
        return GtidSet({**mine.mysql, **theirs.mysql}, mariadb)

    @cached_property
    def text(self) -> str:
        # MySQL's form: per server UUID its untagged intervals, then each tag (sorted) and its own.
        by_uuid: dict[str, dict[str, tuple[tuple[int, int], ...]]] = {}
        for key, intervals in self.mysql.items():
            uuid, _, tag = key.partition(":")
            by_uuid.setdefault(uuid, {})[tag] = intervals
        mysql = ",".join(
            uuid
            + "".join(
                (f":{tag}" if tag else "") + "".join(f":{lo}" if lo == hi else f":{lo}-{hi}" for lo, hi in iv)
                for tag, iv in sorted(tags.items())
            )
            for uuid, tags in by_uuid.items()
        )
        mariadb = ",".join(
            f"{domain}-{server}-{seq}" for domain, (server, seq) in sorted(self.mariadb_positions.items())
        )
        return ",".join(part for part in (mysql, mariadb) if part)

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return bool(self.mysql or self.mariadb_positions)


def _merge(intervals: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(intervals):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)


# -- binlog coordinates -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class BinlogPosition:
    """A binlog coordinate: file name, byte position, and the executed GTID set at that point.

    ``gtids`` is the server's own text form: MySQL ``uuid:1-5,uuid2:1-3`` (newlines removed) or
    MariaDB ``domain-server-seq[,...]``; None when GTIDs are off.
    """

    file: str
    pos: int
    gtids: str | None = None

    @property
    def file_number(self) -> int:
        """The numeric extension (``mysql-bin.000042`` → 42), used to order positions."""
        return binlog_file_key(self.file)[1]

    @property
    def key(self) -> tuple[int, int]:
        """Orders positions of one server's binlog: (file number, position)."""
        return (binlog_file_key(self.file)[1], self.pos)

    def __str__(self) -> str:
        text = f"{self.file}:{self.pos}"
        return f"{text} (gtids {self.gtids})" if self.gtids else text


# -- the source offset ------------------------------------------------------------------------------

# Debezium's offset keys (BinlogOffsetContext / BinlogSourceInfo / TransactionContext).
_TS_SEC, _FILE, _POS, _GTIDS, _EVENT, _ROW = "ts_sec", "file", "pos", "gtids", "event", "row"
_SERVER_ID, _SNAPSHOT, _TRANSACTION_ID = "server_id", "snapshot", "transaction_id"
_COLLECTION_ORDER_PREFIX = "transaction_data_collection_order_"
_KNOWN = frozenset({_TS_SEC, _FILE, _POS, _GTIDS, _EVENT, _ROW, _SERVER_ID, _SNAPSHOT, _TRANSACTION_ID})
# Snapshot kinds that restart from scratch when interrupted; "true" is the pre-2.x marker.
_RESTARTED_SNAPSHOTS = frozenset({"INITIAL", "BLOCKING", "TRUE"})
SNAPSHOT_INITIAL = "INITIAL"
BLOCKING_SNAPSHOT = "BLOCKING"


@dataclass(frozen=True, eq=False)
class SourceOffset(Mapping[str, Any]):
    """Where the connector has safely delivered up to, as Debezium stores it.

    Outside a transaction ``file``/``pos`` is the end of the last committed event; inside one it is
    the transaction's first event, ``event`` the events of it already processed and ``row`` the rows
    of the current rows event already emitted. ``None`` fields are absent from the stored map.
    """

    file: str
    pos: int
    gtids: GtidSet | None = None
    event: int = 0
    row: int = 0
    server_id: int | None = None
    ts_sec: int | None = None
    snapshot: str | bool | None = None
    transaction_id: str | None = None
    # (db.table, events so far) of the current transaction, in first-seen order.
    collection_orders: tuple[tuple[str, int], ...] = ()
    # Keys this connector does not interpret, kept as stored.
    extra: tuple[tuple[str, Any], ...] = ()

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_map(cls, data: Mapping[str, Any]) -> SourceOffset:
        """The offset a stored map describes (a map without a binlog file gives ``file=""``: see
        ``has_position``); raises ``OffsetError`` for a position that is not a number."""
        if isinstance(data, SourceOffset):
            return data
        try:
            file, pos = str(data.get(_FILE) or ""), int(data.get(_POS) or 0)
        except (TypeError, ValueError) as exc:
            raise OffsetError(f"stored offset {dict(data)} has an invalid binlog position") from exc
        gtids = data.get(_GTIDS)
        orders = tuple(
            (key[len(_COLLECTION_ORDER_PREFIX) :], int(value))
            for key, value in data.items()
            if key.startswith(_COLLECTION_ORDER_PREFIX)
        )
        txn = data.get(_TRANSACTION_ID)
        return cls(
            file=file,
            pos=pos,
            gtids=GtidSet.parse(str(gtids)) if gtids else None,
            event=_int(data.get(_EVENT)),
            row=_int(data.get(_ROW)),
            server_id=_opt_int(data.get(_SERVER_ID)),
            ts_sec=_opt_int(data.get(_TS_SEC)),
            snapshot=data.get(_SNAPSHOT),
            transaction_id=str(txn) if txn else None,
            collection_orders=orders,
            extra=tuple(
                (k, v)
                for k, v in data.items()
                if k not in _KNOWN and not k.startswith(_COLLECTION_ORDER_PREFIX)
            ),
        )

    @classmethod
    def coerce(cls, data: Mapping[str, Any] | None) -> SourceOffset | None:
        """``data`` as an offset (None stays None)."""
        return None if data is None else cls.from_map(data)

    @classmethod
    def at(cls, position: BinlogPosition, *, snapshot: str | None = None) -> SourceOffset:
        """The offset at a binlog position read from the server (snapshot start, earliest file)."""
        gtids = GtidSet.parse(position.gtids) if position.gtids else None
        return cls(position.file, position.pos, gtids, snapshot=snapshot)

    @classmethod
    def in_stream(
        cls,
        file: str,
        pos: int,
        gtids: GtidSet | None,
        event: int,
        row: int,
        server_id: int | None,
        ts_sec: int | None,
    ) -> SourceOffset:
        """``SourceOffset(file, pos, gtids, event, row, server_id, ts_sec)`` without the frozen
        dataclass's per-field ``object.__setattr__`` (built for every streamed event, issue 41)."""
        offset = object.__new__(cls)
        offset.__dict__.update(
            file=file,
            pos=pos,
            gtids=gtids,
            event=event,
            row=row,
            server_id=server_id,
            ts_sec=ts_sec,
            snapshot=None,
            transaction_id=None,
            collection_orders=(),
            extra=(),
        )
        return offset

    def with_(self, **changes: Any) -> SourceOffset:
        """This offset with ``changes``: ``dataclasses.replace`` without its cost (it matters once
        per streamed or incrementally snapshotted row); the fields have no derived state but the
        cached serialisation, which the clone drops."""
        unknown = changes.keys() - _FIELDS
        if unknown:
            raise TypeError(f"SourceOffset has no field(s) {sorted(unknown)}")
        return self._copy(changes)

    def at_row(self, row: int) -> SourceOffset:
        """This offset with ``row`` rows of the current rows event done (once per streamed row: no
        field-name check)."""
        return self._copy({"row": row})

    def at_rows(self, rows: range) -> list[SourceOffset]:
        """``at_row`` of each of ``rows`` (the offsets of one rows event's records), the fields
        read once."""
        state = dict(self.__dict__)
        state.pop("_map", None)
        new = object.__new__
        out = []
        for row in rows:
            clone = new(SourceOffset)
            clone_state = clone.__dict__
            clone_state.update(state)
            clone_state["row"] = row
            out.append(clone)
        return out

    def _copy(self, changes: Mapping[str, Any]) -> SourceOffset:
        clone = object.__new__(SourceOffset)
        state = clone.__dict__
        state.update(self.__dict__)
        state.pop("_map", None)
        state.update(changes)
        return clone

    # -- meaning --------------------------------------------------------------------------------
    @property
    def has_position(self) -> bool:
        """False for a stored map that names no binlog file (nothing to stream from)."""
        return bool(self.file)

    @property
    def in_snapshot(self) -> bool:
        """True while an initial/blocking snapshot runs (such a snapshot restarts from scratch)."""
        marker = self.snapshot
        if isinstance(marker, bool):
            return marker
        return isinstance(marker, str) and marker.upper() in _RESTARTED_SNAPSHOTS

    @property
    def gtids_text(self) -> str | None:
        return self.gtids.text or None if self.gtids is not None else None

    @property
    def binlog_position(self) -> BinlogPosition:
        return BinlogPosition(self.file, self.pos, self.gtids_text)

    @property
    def position_key(self) -> tuple[str, int, int, int, int]:
        """A total order of streaming offsets of one server's binlog: (base name, file number,
        transaction position, events done, rows done). In-transaction offsets keep the transaction's
        first position and count events and rows, so the key grows with every record."""
        base, number = binlog_file_key(self.file)
        return (base, number, self.pos, self.event, self.row)

    def describe(self) -> str:
        text = f"binlog file '{self.file}', pos={self.pos}"
        return f"GTIDs {self.gtids_text} and {text}" if self.gtids_text else text

    def is_at_or_before(self, desired: SourceOffset) -> bool:
        """Debezium's binlog history record comparator: is this (recorded) position at or before
        ``desired``?"""
        if desired.gtids:
            if not self.gtids:
                return True  # GTIDs are enabled later, never disabled: a position without them is older
            if self.gtids.mysql == desired.gtids.mysql and self.gtids.mariadb == desired.gtids.mariadb:
                if not self.in_snapshot_marked and desired.in_snapshot_marked:
                    return False
                return self.event <= desired.event
            return desired.gtids.contains(self.gtids)
        if self.gtids:
            return False
        if (self.server_id or 0) != (desired.server_id or 0):
            return (self.ts_sec or 0) <= (desired.ts_sec or 0)
        mine, theirs = self.position_key, desired.position_key
        if mine[0] != theirs[0]:
            return True  # binlog base name changed (server rebuilt/renamed): the recorded DDL is older
        return mine[1:] <= theirs[1:]

    @property
    def in_snapshot_marked(self) -> bool:
        """Any snapshot marker other than false (the comparator's test)."""
        marker = self.snapshot
        if isinstance(marker, str):
            return marker.lower() not in ("", "false")
        return bool(marker)

    # -- serialisation --------------------------------------------------------------------------
    def to_map(self) -> dict[str, Any]:
        """Debezium's offset map, keys in the order Debezium writes them."""
        out: dict[str, Any] = {}
        if self.ts_sec is not None:
            out[_TS_SEC] = self.ts_sec
        out[_FILE] = self.file
        out[_POS] = self.pos
        gtids = self.gtids_text
        if gtids:
            out[_GTIDS] = gtids
        if self.event:
            out[_EVENT] = self.event
        if self.row:
            out[_ROW] = self.row
        if self.server_id is not None:
            out[_SERVER_ID] = self.server_id
        if self.snapshot is not None:
            out[_SNAPSHOT] = self.snapshot
        out.update(self.transaction_map())
        out.update(self.extra)
        return out

    def transaction_map(self) -> dict[str, Any]:
        """Only the transaction context's entries of ``to_map()``."""
        out: dict[str, Any] = {}
        if self.transaction_id is not None:
            out[_TRANSACTION_ID] = self.transaction_id
        for name, count in self.collection_orders:
            out[_COLLECTION_ORDER_PREFIX + name] = count
        return out

    @cached_property
    def _map(self) -> dict[str, Any]:
        return self.to_map()

    def __getitem__(self, key: str) -> Any:
        return self._map[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __bool__(self) -> bool:
        # Always true (the map always holds the file and position), and without building the map
        # as ``__len__`` would: ``offset or last`` runs for every event a sink batches (issue 40).
        return True

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SourceOffset):
            return self._map == other._map
        if isinstance(other, Mapping):
            return self._map == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return self.describe()


_FIELDS = frozenset(f.name for f in fields(SourceOffset))


def _int(value: Any) -> int:
    try:
        return int(value) if value is not None else 0
    except (TypeError, ValueError):
        return 0


def _opt_int(value: Any) -> int | None:
    return None if value is None else _int(value)
