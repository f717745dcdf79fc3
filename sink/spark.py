"""Spark sink (``sink.type=spark``): change events land as Parquet tables in a Spark warehouse.

For every captured MySQL table the sink keeps two Spark tables:

* **changelog** ``<database>.<table>_changelog`` (``sink.spark.changelog.name.format``): append-only,
  one row per change event — the typed row image (``after``, or ``before`` for deletes; all
  columns null for a truncate) followed by ``__op, __ts_ms, __source_ts_ms, __file, __pos, __row,
  __gtid, __snapshot, __deleted`` (see ``sink/spark_reader.py``, which produces the same layout
  from Debezium JSON).
* **current state** ``<database>.<table>`` (``sink.spark.table.name.format``): exactly the rows the
  MySQL table holds as of the last committed event. Inserts add, updates replace by key, deletes
  remove, truncate empties, key changes move the row. Tables without a primary key (and no
  ``message.key.columns``) only get a changelog: without a key a row cannot be found again.

Design: exactly-once commits with plain Parquet
-----------------------------------------------
Warehouse layout (``sink.spark.warehouse``)::

    _mysql_cdc/commits/<N>.json          the commit log; the highest N is the committed state
    _mysql_cdc/staging/<N>/              files of the batch being written (wiped on start)
    <db>.db/<table>/current/v<N>/        one full version of the current-state table
    <db>.db/<table>/changelog/g<G>/      changelog files of table generation G

One batch of events becomes one commit ``N``:

1. Events are converted in Python and grouped per table. Per table the batch is reduced to its
   net effect per primary key (last image wins, deletes remember the key, truncate clears).
2. The current state is stored in ``sink.spark.current.buckets`` hash buckets of the key (crc32 of
   the key values). Only the buckets the batch touches are rewritten, by one Spark job: read those
   buckets' files, drop the batch's keys (broadcast anti-join), add the new images, write one file
   per bucket. The new version directory ``v<N>`` hard-links the untouched buckets' files from the
   previous version, so it is a complete table that costs only what changed. Changelog rows are
   written as one Parquet file per table into staging.
3. All new files are fsynced, then ``commits/<N>.json`` is written to a temporary name, fsynced and
   atomically renamed. It holds the source **offset** of the batch's last event, every table's
   schema, key, current version and bucket files, and the list of staged changelog files with their
   final names. That rename *is* the commit: before it, nothing of the batch is visible anywhere;
   after it, the batch is durable together with its offset.
4. The staged changelog files are renamed into their generation directories (each rename is
   atomic and the list is in the commit, so a crash here is finished by the next start), and the
   Spark catalog entries are pointed at the new versions.

``committed_offset()`` returns the offset of the last commit; the engine resumes there. Events
replayed after a crash (the engine's own offset store may lag behind the commit) have a binlog
position at or before the committed one and are skipped, so every change is applied exactly once.
A snapshot that committed rows and was then interrupted is undone on restart: its commits are
rolled back to the last commit made outside a snapshot and the offset returned tells the engine to
snapshot again (as Debezium restarts an unfinished snapshot), so the changelog never holds a
snapshot row twice. Commits that only recorded table structures are kept.

Batching: ``send`` buffers; a batch is committed when ``sink.spark.batch.max.events`` events are
buffered (extended to the end of the transaction in progress, so a reader never sees part of a
MySQL transaction), when the oldest buffered event is ``sink.spark.batch.max.interval.ms`` old, and
at every ``flush`` — the engine flushes every ``offset.flush.interval.ms`` and on shutdown. Larger
batches amortise Spark's fixed cost per job (raise ``offset.flush.interval.ms`` and
``max.batch.size`` with them). The SparkSession (``sink.spark.master``, ``sink.spark.conf.*``) is
created once per process and reused; a session that already exists is used as it is.

Readers never see half a batch: a current-state table is a directory that is complete before the
commit points at it, and earlier versions are kept for ``sink.spark.retain.ms`` so running queries
can finish. Another Spark application registers the committed tables with
:func:`register_warehouse`.

Schema evolution
----------------
The sink consumes the records as any Debezium consumer would: the Connect schema each change event
carries (its ``after`` struct) decides the table's Spark columns, through the one Connect → Spark
mapping of ``sink/spark_reader.py``. Schema change events (their ``tableChanges``) evolve the tables
at once when every column's Spark type is certain from the column description (Debezium's type
mapping with the ``*.handling.mode`` properties; not with a column filter), and otherwise leave the
evolution to the table's next change event. New columns are added as nullable columns (existing
current-state rows get the column's default, or the type's zero value for NOT NULL columns, as
MySQL fills them); dropped columns are kept and null-filled; renames seen in the DDL
(``RENAME COLUMN``/``CHANGE``) carry values over (kept in the commit until applied); type changes
widen (INT→BIGINT, FLOAT→DOUBLE, wider DECIMAL ...). The current-state table is rewritten with the
new types (values cast as MySQL does). The changelog keeps its history: its files are read with
the widened types, and a change that cannot be read that way (e.g. INT→VARCHAR) starts a new
generation ``g<G+1>`` — the previous one stays queryable as ``<changelog name>_g<G>`` — and is
logged as a warning.

Limits
------
* Replays are recognised by binlog file and position, so the connector must keep reading the same
  server's binlog (after a fail-over to another server, re-snapshot into a new warehouse).
* A table captured without a key stays changelog-only even if it gets a key later; DROP TABLE and
  RENAME TABLE leave the existing Spark tables as they are.
* Each table's changelog gains a batch atomically (one file per table and batch); across tables a
  reader listing the directories may briefly see one table's batch before another's. Current-state
  tables registered together by :func:`register_warehouse` always come from one commit.
* ``skipped.operations`` must not contain ``t`` (Debezium's default does) for truncates to reach
  the current-state tables; the sink warns at start-up.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import shutil
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import orjson
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    IntegerType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    _parse_datatype_json_string,
)

from ddl.errors import ConfigError, SchemaHistoryError
from ddl.model import BINARY_TYPES, CHARACTER_TYPES, Table, TableId
from ddl.model import Column as MysqlColumn
from ddl.position import SourceOffset
from ddl.serialize import table_from_history
from sink.base import Sink, SinkError
from sink.connect import ConnectSchema
from sink.records import ChangeRecord, RecordKind
from sink.spark_reader import (
    RowConvert,
    changelog_struct_type,
    field_mapping,
    merge_struct,
    metadata_values,
    row_converter,
    row_schema_of,
    row_struct_type,
    unwrapped_envelope,
    widen,
)

log = logging.getLogger(__name__)

_SESSION_LOCK = threading.Lock()

# Settings for a session the sink creates itself; a session that already exists in the process
# (an application embedding the connector) is used as it is.
SESSION_DEFAULTS: dict[str, str] = {
    "spark.app.name": "mysql-cdc",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",  # no progress bars in the connector's output
    "spark.driver.host": "127.0.0.1",  # loopback unless sink.spark.conf.* says otherwise
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}


# Spark's own log level for a session the sink creates (sink.spark.log.level overrides it).
DEFAULT_LOG_LEVEL = "WARN"


def session_settings(
    conf: Mapping[str, str] | None = None, warehouse: str | os.PathLike[str] | None = None
) -> dict[str, str]:
    """The settings of a session the sink creates: ``SESSION_DEFAULTS``, then the user's ``conf``."""
    settings = dict(SESSION_DEFAULTS)
    if warehouse is not None:
        settings["spark.sql.warehouse.dir"] = str(Path(warehouse).resolve())
    settings.update(conf or {})
    return settings


def spark_session(
    master: str = "local[*]",
    conf: Mapping[str, str] | None = None,
    warehouse: str | os.PathLike[str] | None = None,
    log_level: str | None = None,
) -> SparkSession:
    """The process's SparkSession: created once (with ``master`` and ``conf``), then reused.

    Spark's log level is ``log_level``, or WARN for a session created here; an existing session
    keeps its level unless ``log_level`` is given."""
    with _SESSION_LOCK:
        active = SparkSession.getActiveSession()
        if active is not None:
            for key, value in (conf or {}).items():
                if active.conf.isModifiable(key):
                    active.conf.set(key, value)
            if log_level:
                active.sparkContext.setLogLevel(log_level.upper())
            return active
        builder = SparkSession.builder.master(master)
        for key, value in session_settings(conf, warehouse).items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel((log_level or DEFAULT_LOG_LEVEL).upper())
        return session


# ------------------------------------------------------------------------------------------------
# Offsets
# ------------------------------------------------------------------------------------------------
def in_snapshot(offset: Mapping[str, Any] | None) -> bool:
    """True for an offset (or a stored offset map) taken while an initial/blocking snapshot runs
    (such a snapshot restarts from scratch)."""
    typed = SourceOffset.coerce(offset)
    return typed is not None and typed.in_snapshot


def _replay_limit(committed: SourceOffset | None) -> SourceOffset | None:
    """The committed offset events are compared with after a restart (None: nothing to skip)."""
    if committed is None or committed.in_snapshot or not committed.has_position:
        return None
    return committed


def is_replay(offset: SourceOffset | None, committed: SourceOffset | None) -> bool:
    """Is ``offset`` at or before ``committed`` in the same server's binlog (already applied)?"""
    if committed is None or offset is None or offset.in_snapshot or not offset.has_position:
        return False
    mine, theirs = offset.position_key, committed.position_key
    return mine[0] == theirs[0] and mine[1:] <= theirs[1:]


# ------------------------------------------------------------------------------------------------
# Settings
# ------------------------------------------------------------------------------------------------
ColumnFilter = Callable[[TableId, str], bool]


class SparkSinkConfig(Protocol):
    """What :meth:`SparkSink.from_config` reads from the connector's configuration: plain
    properties (``connector.config.ConnectorConfig`` has these methods)."""

    def get(self, key: str, default: str | None = None) -> str | None: ...

    def get_int(self, key: str, default: int | None = None) -> int | None: ...

    def subset(self, prefix: str) -> dict[str, str]: ...


class RepresentationModes(Protocol):
    """The value representation properties that decide a column's Connect type (the connector's
    ``ConverterSettings`` has these attributes, as has :class:`ValueModes`)."""

    @property
    def decimal_handling_mode(self) -> str: ...

    @property
    def bigint_unsigned_handling_mode(self) -> str: ...

    @property
    def binary_handling_mode(self) -> str: ...


@dataclass(frozen=True)
class ValueModes:
    """``decimal.handling.mode``, ``bigint.unsigned.handling.mode`` and ``binary.handling.mode``."""

    decimal_handling_mode: str = "precise"
    bigint_unsigned_handling_mode: str = "long"
    binary_handling_mode: str = "bytes"

    @classmethod
    def from_config(cls, config: SparkSinkConfig) -> ValueModes:
        def mode(key: str, default: str) -> str:
            return (config.get(key) or default).strip().lower()

        return cls(
            mode("decimal.handling.mode", "precise"),
            mode("bigint.unsigned.handling.mode", "long"),
            mode("binary.handling.mode", "bytes"),
        )


@dataclass(frozen=True)
class SparkSinkSettings:
    warehouse: Path
    master: str = "local[*]"
    conf: Mapping[str, str] = field(default_factory=dict)
    log_level: str | None = None
    batch_max_events: int = 10000
    batch_max_interval_ms: int = 5000
    table_name_format: str = "{database}.{table}"
    changelog_name_format: str = "{database}.{table}_changelog"
    buckets: int = 8
    retain_ms: int = 300_000
    # Lets schema change events evolve the tables before the table's next change event arrives
    # (the events' value representation modes). None: tables follow the change events only.
    converter_settings: RepresentationModes | None = None
    # The columns the change events carry, when the connector leaves some out.
    column_filter: ColumnFilter | None = None


def _check_name_format(key: str, text: str) -> str:
    try:
        probe = text.format(database="db", table="t")
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError(
            key,
            f"{text!r} is not a valid name format ({exc}); use the placeholders "
            "{database} and {table}, e.g. {database}.{table}_changelog",
        ) from None
    if "{table}" not in text or not probe.strip():
        raise ConfigError(key, f"{text!r} must contain {{table}} so that every table gets its own name")
    return text


# ------------------------------------------------------------------------------------------------
# Warehouse layout and commit log
# ------------------------------------------------------------------------------------------------
_UNSAFE = re.compile(r"[^A-Za-z0-9_$.-]")


def _safe(name: str) -> str:
    return _UNSAFE.sub(lambda m: f"@{ord(m.group()):04x}", name) or "@"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


class Warehouse:
    """Paths and the commit log of one warehouse directory."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()
        self.meta = self.root / "_mysql_cdc"
        self.commits = self.meta / "commits"
        self.staging = self.meta / "staging"

    def table_dir(self, table_id: TableId) -> Path:
        return self.root / f"{_safe(table_id.database)}.db" / _safe(table_id.table)

    def current_dir(self, table_id: TableId, version: str) -> Path:
        return self.table_dir(table_id) / "current" / version

    def changelog_dir(self, table_id: TableId, generation: int) -> Path:
        return self.table_dir(table_id) / "changelog" / f"g{generation:04d}"

    def commit_numbers(self) -> list[int]:
        if not self.commits.is_dir():
            return []
        return sorted(int(p.stem) for p in self.commits.glob("*.json") if p.stem.isdigit())

    def read_commit(self, number: int) -> dict[str, Any]:
        return dict(orjson.loads((self.commits / f"{number:020d}.json").read_bytes()))

    def latest_commit(self) -> dict[str, Any] | None:
        numbers = self.commit_numbers()
        return self.read_commit(numbers[-1]) if numbers else None

    def write_commit(self, document: Mapping[str, Any]) -> None:
        self.commits.mkdir(parents=True, exist_ok=True)
        number = int(document["commit"])
        tmp = self.commits / f".tmp-{number:020d}-{uuid.uuid4().hex}"
        with open(tmp, "wb") as fh:
            fh.write(orjson.dumps(document, option=orjson.OPT_INDENT_2))
            fh.flush()
            os.fsync(fh.fileno())
        os.rename(tmp, self.commits / f"{number:020d}.json")
        _fsync_dir(self.commits)


# ------------------------------------------------------------------------------------------------
# Per-table state, persisted in every commit
# ------------------------------------------------------------------------------------------------
@dataclass
class TableState:
    table_id: TableId
    current_name: str
    changelog_name: str
    buckets: int
    key: tuple[str, ...] | None = None  # None: not known yet; (): no key (changelog only)
    current_schema: StructType | None = None
    current_version: str | None = None
    current_files: dict[int, list[str]] = field(default_factory=dict)
    changelog_generation: int = 1
    changelog_schema: StructType | None = None
    old_generations: list[tuple[int, StructType]] = field(default_factory=list)
    # The row type (JSON) of the last schema applied, to notice when events change it.
    row_type_json: str | None = None
    # Column renames (old, new) of DDL not applied yet: the table's next change event applies them.
    pending_renames: list[tuple[str, str]] = field(default_factory=list)

    @property
    def keyed(self) -> bool:
        return bool(self.key)

    def to_json(self) -> dict[str, Any]:
        return {
            "database": self.table_id.database,
            "table": self.table_id.table,
            "current_name": self.current_name,
            "changelog_name": self.changelog_name,
            "buckets": self.buckets,
            "key": list(self.key) if self.key is not None else None,
            "current_schema": self.current_schema.jsonValue() if self.current_schema else None,
            "current_version": self.current_version,
            "current_files": {str(b): files for b, files in sorted(self.current_files.items())},
            "changelog_generation": self.changelog_generation,
            "changelog_schema": self.changelog_schema.jsonValue() if self.changelog_schema else None,
            "old_generations": [[g, s.jsonValue()] for g, s in self.old_generations],
            "row_type_json": self.row_type_json,
            **({"pending_renames": [list(r) for r in self.pending_renames]} if self.pending_renames else {}),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TableState:
        def struct_of(value: Any) -> StructType | None:
            if value is None:
                return None
            parsed = _parse_datatype_json_string(orjson.dumps(value).decode())
            assert isinstance(parsed, StructType)
            return parsed

        return cls(
            table_id=TableId(doc["database"], doc["table"]),
            current_name=doc["current_name"],
            changelog_name=doc["changelog_name"],
            buckets=int(doc["buckets"]),
            key=tuple(doc["key"]) if doc.get("key") is not None else None,
            current_schema=struct_of(doc.get("current_schema")),
            current_version=doc.get("current_version"),
            current_files={int(b): list(f) for b, f in (doc.get("current_files") or {}).items()},
            changelog_generation=int(doc.get("changelog_generation") or 1),
            changelog_schema=struct_of(doc.get("changelog_schema")),
            old_generations=[
                (int(g), s) for g, v in doc.get("old_generations") or () if (s := struct_of(v)) is not None
            ],
            row_type_json=doc.get("row_type_json"),
            pending_renames=[(str(o), str(n)) for o, n in doc.get("pending_renames") or ()],
        )

    def copy(self) -> TableState:
        return replace(
            self,
            current_files={b: list(f) for b, f in self.current_files.items()},
            old_generations=list(self.old_generations),
            pending_renames=list(self.pending_renames),
        )


# ------------------------------------------------------------------------------------------------
# Keys and buckets
# ------------------------------------------------------------------------------------------------
def _canonical(value: Any) -> Any:
    # One text form per key value, whether it comes from a converted event or from Spark.
    if isinstance(value, bytes | bytearray):
        return "b:" + bytes(value).hex()
    if isinstance(value, Decimal):
        return "d:" + str(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return "z:" + value.astimezone(dt.UTC).replace(tzinfo=None).isoformat()
        return "t:" + value.isoformat()
    if isinstance(value, dt.date):
        return "a:" + value.isoformat()
    if isinstance(value, dt.timedelta):
        return "i:" + str(value // dt.timedelta(microseconds=1))
    if isinstance(value, float):
        return "f:" + repr(value)
    if isinstance(value, tuple | list):
        return [_canonical(v) for v in value]
    return value


def bucket_of(key: tuple[Any, ...], buckets: int) -> int:
    return zlib.crc32(orjson.dumps([_canonical(v) for v in key])) % buckets


# ------------------------------------------------------------------------------------------------
# Building a table's row type from a schema change event
# ------------------------------------------------------------------------------------------------
_IDENT = r"(?:`((?:[^`]|``)+)`|([A-Za-z0-9_$\u0080-\uffff]+))"
_RENAME_PATTERNS = (
    re.compile(rf"\bRENAME\s+COLUMN\s+{_IDENT}\s+TO\s+{_IDENT}", re.IGNORECASE),
    re.compile(rf"\bCHANGE\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?{_IDENT}\s+{_IDENT}", re.IGNORECASE),
)


def renames_in_ddl(ddl: str) -> list[tuple[str, str]]:
    """Column renames an ALTER TABLE statement performs (``RENAME COLUMN a TO b``, ``CHANGE a b``)."""
    found: list[tuple[int, str, str]] = []
    for pattern in _RENAME_PATTERNS:
        for match in pattern.finditer(ddl or ""):
            quoted_old, plain_old, quoted_new, plain_new = match.groups()
            old = (quoted_old or "").replace("``", "`") or plain_old
            new = (quoted_new or "").replace("``", "`") or plain_new
            if old.lower() != new.lower():
                found.append((match.start(), old, new))
    return [(old, new) for _, old, new in sorted(found)]


def add_renames(
    pending: Sequence[tuple[str, str]], renames: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """``pending`` followed by ``renames``; a column renamed twice keeps its first name
    (``a→b`` then ``b→c`` is ``a→c``)."""
    out = list(pending)
    for old, new in renames:
        for i, (first, last) in enumerate(out):
            if last.lower() == old.lower():
                out[i] = (first, new)
                break
        else:
            out.append((old, new))
    return [(old, new) for old, new in out if old.lower() != new.lower()]


# The Connect schemas Debezium gives MySQL column types (reference section 4), for the types whose
# Spark column is certain from the ``tableChanges`` column alone. A schema change event evolves the
# Spark tables at once only when every column is covered; otherwise the table follows its next
# change event, whose Connect schema is authoritative. Temporal types differ between
# ``time.precision.mode`` values only in ways the Spark column does not show.
_INT_TYPES: dict[str, tuple[str, str | None]] = {  # MySQL type -> (signed, unsigned) Connect type
    **dict.fromkeys(("TINYINT", "INT1"), ("int16", "int16")),
    **dict.fromkeys(("SMALLINT", "INT2"), ("int16", "int32")),
    **dict.fromkeys(("MEDIUMINT", "MIDDLEINT", "INT3"), ("int32", "int32")),
    **dict.fromkeys(("INT", "INTEGER", "INT4"), ("int32", "int64")),
    **dict.fromkeys(("BIGINT", "INT8"), ("int64", None)),  # unsigned: bigint.unsigned.handling.mode
}
_STRING_TYPES = CHARACTER_TYPES | {"SET"}
_TEMPORAL_TYPES: dict[str, dict[str, Any]] = {
    "DATE": {"type": "int32", "name": "io.debezium.time.Date"},
    "DATETIME": {"type": "int64", "name": "io.debezium.time.MicroTimestamp"},
    "TIMESTAMP": {"type": "string", "name": "io.debezium.time.ZonedTimestamp"},
    "TIME": {"type": "int64", "name": "io.debezium.time.MicroTime"},
    "YEAR": {"type": "int32", "name": "io.debezium.time.Year"},
}
_DECIMAL_TYPES = frozenset({"DECIMAL", "DEC", "NUMERIC", "FIXED"})
_INTEGER_LITERAL = re.compile(r"[+-]?\d+")


def _decimal_node(precision: int, scale: int) -> dict[str, Any]:
    return {
        "type": "bytes",
        "name": "org.apache.kafka.connect.data.Decimal",
        "parameters": {"scale": str(scale), "connect.decimal.precision": str(precision)},
    }


def _column_type_node(column: MysqlColumn, modes: RepresentationModes) -> dict[str, Any] | None:
    """The Connect type of a column's values (without name, optionality and default); None when it
    is not certain from the column alone."""
    kind = column.data_type.upper()
    if kind in _INT_TYPES:
        signed, unsigned = _INT_TYPES[kind]
        if not column.unsigned:
            return {"type": signed}
        if unsigned is not None:
            return {"type": unsigned}
        return {
            "long": {"type": "int64"},
            "precise": _decimal_node(20, 0),
        }.get(modes.bigint_unsigned_handling_mode)
    if kind in _STRING_TYPES or kind == "JSON":
        return {"type": "string"}
    if kind in ("BOOL", "BOOLEAN") or (kind == "BIT" and (column.length or 1) == 1):
        return {"type": "boolean"}
    if kind == "BIT":
        return {"type": "bytes", "name": "io.debezium.data.Bits"}
    if kind in ("FLOAT", "REAL", "DOUBLE", "DOUBLE PRECISION"):
        single = kind == "REAL" or (
            kind == "FLOAT" and column.scale is None and (column.length is None or column.length <= 24)
        )
        return {"type": "float" if single else "double"}
    if kind in _DECIMAL_TYPES:
        precision = column.length if column.length is not None else 10
        scale = column.scale if column.scale is not None else 0
        return {
            "precise": _decimal_node(precision, scale),
            "double": {"type": "double"},
            "string": {"type": "string"},
        }.get(modes.decimal_handling_mode)
    if kind in BINARY_TYPES:
        binary = {"bytes": "bytes", "base64": "string", "base64-url-safe": "string", "hex": "string"}
        mode = binary.get(modes.binary_handling_mode)
        return {"type": mode} if mode is not None else None
    return dict(_TEMPORAL_TYPES[kind]) if kind in _TEMPORAL_TYPES else None


def _default_literal(text: str) -> str:
    # A charset introducer (_utf8mb4'x') is not part of the value.
    if text.startswith("_") and "'" in text:
        head, _, rest = text.partition("'")
        if head[1:].isidentifier() and rest.endswith("'"):
            return rest[:-1].replace("''", "'")
    return text


_NO_DEFAULT = object()


def _column_default(column: MysqlColumn, node: Mapping[str, Any]) -> Any:
    """The Connect default of a column: ``_NO_DEFAULT`` when it has none, None when it is not
    certain from the column alone."""
    literal = column.default_expression
    if literal is None or column.generated or (literal.startswith("(") and literal.endswith(")")):
        return _NO_DEFAULT
    kind = column.data_type.upper()
    if kind in _INT_TYPES:
        if kind in ("BIGINT", "INT8") and column.unsigned:  # wrapped or a decimal: not certain here
            return None
        return int(literal) if _INTEGER_LITERAL.fullmatch(literal.strip()) else None
    if kind in _STRING_TYPES:
        return _default_literal(literal)
    return None


def field_of_column(
    column: MysqlColumn, modes: RepresentationModes, with_default: bool
) -> dict[str, Any] | None:
    """The Connect field (JSON layout) a change event carries for ``column``, as far as its Spark
    column shows; ``with_default``: the default matters (the column is new and fills old rows).
    None when that is not certain from the ``tableChanges`` column alone."""
    node = _column_type_node(column, modes)
    if node is None:
        return None
    node = {**node, "optional": column.optional, "field": column.name}
    if with_default:
        default = _column_default(column, node)
        if default is None:
            return None
        if default is not _NO_DEFAULT:
            node["default"] = default
    return node


# ------------------------------------------------------------------------------------------------
# Literals for filling columns
# ------------------------------------------------------------------------------------------------
_ZERO: dict[type[DataType], Any] = {
    StringType: "",
    BinaryType: b"",
    BooleanType: False,
    DateType: dt.date(1970, 1, 1),
    TimestampNTZType: dt.datetime(1970, 1, 1),
    TimestampType: dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
    DayTimeIntervalType: dt.timedelta(0),
}


def _literal(value: Any, data_type: DataType) -> Column:
    """A literal of ``data_type``. Temporal values go through text so no time zone applies."""
    if value is None:
        return F.lit(None).cast(data_type)
    if isinstance(value, dt.datetime):
        text = (value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value).isoformat()
        if isinstance(data_type, TimestampType):
            return F.lit(text + "Z").cast(TimestampType())
        return F.lit(text).cast(TimestampNTZType()).cast(data_type)
    if isinstance(value, dt.date):
        return F.lit(value.isoformat()).cast(DateType()).cast(data_type)
    if isinstance(value, tuple) and isinstance(data_type, StructType):
        return F.struct(
            *[_literal(v, f.dataType).alias(f.name) for v, f in zip(value, data_type.fields, strict=True)]
        )
    return F.lit(value).cast(data_type)


def _fill_value(node: Mapping[str, Any], data_type: DataType) -> Any:
    """What MySQL puts into existing rows for a new column: its default, else for NOT NULL columns
    the type's zero value (Debezium's fallback), else null."""
    if "default" in node:
        mapping = field_mapping(node)
        value = node["default"]
        return value if mapping.to_python is None or value is None else mapping.to_python(value)
    if node.get("optional", True):
        return None
    if isinstance(data_type, DecimalType):
        return Decimal(0)
    zero = _ZERO.get(type(data_type))
    return zero if zero is not None else (None if isinstance(data_type, StructType) else 0)


# ------------------------------------------------------------------------------------------------
# One table's share of a batch
# ------------------------------------------------------------------------------------------------
_DELETED: Any = None  # a key whose row the batch removes


@dataclass
class _SchemaInfo:
    row_type: StructType
    row_type_json: str
    node: Mapping[str, Any]
    convert: RowConvert


@dataclass
class _RowsStep:
    schema: StructType  # the current-state schema the rows are in
    key: tuple[str, ...]
    net: dict[tuple[Any, ...], tuple[Any, ...] | None]
    truncated: bool


@dataclass
class _EvolveStep:
    old: StructType
    new: StructType
    sources: dict[str, str]  # new column -> old column it takes its values from
    fills: dict[str, Any]  # new column -> fill value for existing rows
    rebucket: bool  # the key changed
    key: tuple[str, ...] = ()


@dataclass
class _ChangelogPart:
    generation: int
    row_type: StructType
    rows: list[tuple[Any, ...]]


class _TableBatch:
    """Collects one table's events of a batch: changelog rows and the net effect per key."""

    def __init__(self, state: TableState) -> None:
        self.state = state
        self.steps: list[_RowsStep | _EvolveStep] = []
        self.parts: list[_ChangelogPart] = []
        self.events = 0
        self._info: _SchemaInfo | None = None
        self._rows: list[tuple[Any, ...]] = []
        self._net: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}
        self._truncated = False
        self._key_index: tuple[int, ...] = ()
        self._width = 0

    # -- events ------------------------------------------------------------------------------
    def add(self, record: ChangeRecord, info: _SchemaInfo, key: tuple[str, ...] | None) -> None:
        """``key``: the event's key columns; None when the event does not say (truncate)."""
        if (
            self._info is None
            or info.row_type_json != self.state.row_type_json
            or (key is not None and key != self.state.key)
        ):
            self.evolve(info, key)
        assert self._info is not None
        value = record.value
        op = value.get("op")
        image = value.get("before") if op == "d" else value.get("after")
        row = info.convert(image) if image is not None else (None,) * len(info.row_type.fields)
        self._rows.append((*row, *metadata_values(value)))
        self.events += 1
        if not self.state.keyed:
            return
        if op == "t":
            self._net.clear()
            self._truncated = True
            return
        if image is None:
            return
        row_key = tuple(row[i] for i in self._key_index)
        if op == "d":
            self._net[row_key] = _DELETED
            return
        if op == "u":
            before = value.get("before")
            if before is not None:
                old = info.convert(before)
                old_key = tuple(old[i] for i in self._key_index)
                if old_key != row_key:  # a key change the event builder did not split
                    self._net[old_key] = _DELETED
        self._net[row_key] = row + (None,) * (self._width - len(row))

    def evolve(self, info: _SchemaInfo, key: tuple[str, ...] | None) -> None:
        """Make ``info`` the table's schema from here on (segments before it keep theirs)."""
        self._close_segment()
        state = self.state
        new_row = info.row_type
        if key is None:  # not known yet (a truncate as first event): no current state so far
            key = state.key
        elif state.key is not None and key != state.key:
            if not state.key:
                log.warning(
                    "table %s got a key (%s) but was captured without one: it stays a "
                    "changelog-only table (re-snapshot to build its current state)",
                    state.table_id,
                    ", ".join(key),
                )
                key = ()
            else:
                log.info(
                    "table %s: key changes from (%s) to (%s)",
                    state.table_id,
                    ", ".join(state.key),
                    ", ".join(key) or "none",
                )
                if not key:
                    log.warning(
                        "table %s lost its key: its current-state table %s is no longer updated",
                        state.table_id,
                        state.current_name,
                    )
        # -- current state
        if key:
            old = state.current_schema
            live = {f.name.lower() for f in new_row.fields}
            if old is None:
                target = StructType(list(new_row.fields))
                state.current_schema = target
            else:
                dropped = [
                    StructField(f.name, f.dataType, True) for f in old.fields if f.name.lower() not in live
                ]
                target = StructType([*new_row.fields, *dropped])
                old_names = {f.name.lower(): f.name for f in old.fields}
                renames = {
                    n.lower(): o
                    for o, n in state.pending_renames
                    if o.lower() in old_names and o.lower() not in live and n.lower() not in old_names
                }
                sources: dict[str, str] = {}
                fills: dict[str, Any] = {}
                nodes = {f["field"].lower(): f for f in info.node.get("fields") or ()}
                for f in new_row.fields:
                    name = f.name.lower()
                    if name in old_names:
                        sources[f.name] = old_names[name]
                    elif name in renames:
                        sources[f.name] = old_names[renames[name].lower()]
                        log.info("table %s: column %s renamed to %s", state.table_id, renames[name], f.name)
                    else:
                        fills[f.name] = _fill_value(nodes.get(name, {}), f.dataType)
                rebucket = bool(state.key) and key != state.key
                if (
                    target != old
                    or rebucket
                    or any(old[src].dataType != target[dst].dataType for dst, src in sources.items())
                ):
                    self.steps.append(_EvolveStep(old, target, sources, fills, rebucket, key))
                state.current_schema = target
            names = [f.name.lower() for f in new_row.fields]
            self._key_index = tuple(names.index(k.lower()) for k in key)
            self._width = len(target.fields)
        state.key = key
        # -- changelog
        if state.changelog_schema is None:
            state.changelog_schema = StructType(list(new_row.fields))
        else:
            merged, conflicts = merge_struct(state.changelog_schema, new_row)
            if conflicts:
                state.old_generations.append((state.changelog_generation, state.changelog_schema))
                state.changelog_generation += 1
                merged = StructType(list(new_row.fields))
                log.warning(
                    "table %s: column(s) %s changed type incompatibly; the changelog continues "
                    "in a new table version %d (%s); the previous one stays readable as %s_g%d",
                    state.table_id,
                    ", ".join(conflicts),
                    state.changelog_generation,
                    state.changelog_name,
                    state.changelog_name,
                    state.changelog_generation - 1,
                )
            state.changelog_schema = merged
        state.row_type_json = info.row_type_json
        state.pending_renames = []
        self._info = info

    def _close_segment(self) -> None:
        if self._rows and self._info is not None:
            self.parts.append(
                _ChangelogPart(self.state.changelog_generation, self._info.row_type, self._rows)
            )
        if self.state.keyed and (self._net or self._truncated):
            assert self.state.current_schema is not None and self.state.key
            self.steps.append(
                _RowsStep(self.state.current_schema, self.state.key, self._net, self._truncated)
            )
        self._rows, self._net, self._truncated = [], {}, False

    def finish(self) -> None:
        self._close_segment()


# ------------------------------------------------------------------------------------------------
# The sink
# ------------------------------------------------------------------------------------------------
def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _qualified(name: str) -> tuple[str | None, str, str]:
    """``db.table`` → (database, table, quoted). A name without a dot uses the current database."""
    database, dot, table = name.partition(".")
    if not dot:
        return None, name, _quote(name)
    return database, table, f"{_quote(database)}.{_quote(table)}"


_BUCKET_COLUMN = "__bucket"
_FILE_BUCKET = re.compile(r"^b(\d+)-")
_SINGLE_TASK_BYTES = 128 << 20


def _size(paths: Iterable[Path]) -> int:
    return sum(p.stat().st_size for p in paths)


class SparkSink(Sink):
    """Writes change events to changelog and current-state Parquet tables, exactly once."""

    name = "spark"

    def __init__(self, settings: SparkSinkSettings) -> None:
        if settings.buckets < 1:
            raise ValueError("buckets must be at least 1")
        self.settings = settings
        self.warehouse = Warehouse(settings.warehouse)
        self._spark: SparkSession | None = None
        self._lock = threading.RLock()
        self._recovered = False
        self._failed: BaseException | None = None
        self._commit_no = 0
        self._offset: SourceOffset | None = None
        self._tables: dict[TableId, TableState] = {}
        # catalog name -> (location, schema JSON) registered in our session
        self._registered: dict[str, tuple[Path, str]] = {}
        self._replay_until: SourceOffset | None = None
        self._pending: list[ChangeRecord] = []
        self._pending_since = 0.0
        self._schema_cache: dict[int, tuple[ConnectSchema, _SchemaInfo]] = {}
        # Tables whose records arrive unwrapped (ExtractNewRecordState): their tombstones are deletes.
        self._unwrapped: set[TableId] = set()
        self._unwrapped_row_schema: dict[TableId, ConnectSchema] = {}
        self.commits_written = 0
        self.events_applied = 0
        self.events_skipped = 0

    @classmethod
    def from_config(cls, config: SparkSinkConfig) -> SparkSink:
        warehouse = config.get("sink.spark.warehouse")
        if not warehouse:
            raise ConfigError(
                "sink.spark.warehouse",
                "is required for sink.type=spark: set it to the "
                "directory (local path or mounted share) where the Spark tables are kept",
            )

        def positive(key: str, default: int) -> int:
            value = config.get_int(key, default)
            if value is None or value < 1:
                raise ConfigError(key, f"must be a positive integer, got {value!r}")
            return int(value)

        # Schema change events describe every column, change events only the captured ones: with
        # a column filter the tables follow the change events alone.
        filtered = bool(config.get("column.include.list") or config.get("column.exclude.list"))
        modes = None if filtered else ValueModes.from_config(config)
        skipped = {s.strip().lower() for s in (config.get("skipped.operations") or "t").split(",")}
        if "t" in skipped:
            log.warning(
                "skipped.operations includes 't': TRUNCATE is not delivered, so a truncated "
                "table's current-state Spark table keeps its rows; set skipped.operations=none"
            )
        settings = SparkSinkSettings(
            warehouse=Path(warehouse),
            master=config.get("sink.spark.master") or "local[*]",
            conf=config.subset("sink.spark.conf."),
            log_level=config.get("sink.spark.log.level") or None,
            batch_max_events=positive("sink.spark.batch.max.events", 10000),
            batch_max_interval_ms=positive("sink.spark.batch.max.interval.ms", 5000),
            table_name_format=_check_name_format(
                "sink.spark.table.name.format",
                config.get("sink.spark.table.name.format") or "{database}.{table}",
            ),
            changelog_name_format=_check_name_format(
                "sink.spark.changelog.name.format",
                config.get("sink.spark.changelog.name.format") or "{database}.{table}_changelog",
            ),
            buckets=positive("sink.spark.current.buckets", 8),
            retain_ms=positive("sink.spark.retain.ms", 300_000),
            converter_settings=modes,
        )
        return cls(settings)

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = spark_session(
                self.settings.master, self.settings.conf, self.settings.warehouse, self.settings.log_level
            )
        return self._spark

    def start(self) -> None:
        with self._lock:
            self._recover()
            for state in self._tables.values():
                self._register(state)

    def committed_offset(self) -> SourceOffset | None:
        with self._lock:
            self._recover()
            return self._offset

    def send(self, records: Sequence[ChangeRecord]) -> None:
        with self._lock:
            self._check_usable()
            if not records:
                return
            if not self._pending:
                self._pending_since = time.monotonic()
            self._pending.extend(records)
            limit = self.settings.batch_max_events
            while len(self._pending) >= limit:
                cut = self._batch_end(limit)
                batch, self._pending = self._pending[:cut], self._pending[cut:]
                self._apply(batch)
                self._pending_since = time.monotonic()
            if (
                self._pending
                and (time.monotonic() - self._pending_since) * 1000 >= self.settings.batch_max_interval_ms
            ):
                batch, self._pending = self._pending, []
                self._apply(batch)

    def flush(self) -> None:
        with self._lock:
            self._check_usable()
            if self._pending:
                batch, self._pending = self._pending, []
                self._apply(batch)

    def close(self) -> None:
        with self._lock:
            if self._pending and self._failed is None:
                self.flush()

    # -- batching ------------------------------------------------------------------------------
    def _batch_end(self, limit: int) -> int:
        """Where a full batch ends: after ``limit`` events, extended to the end of the transaction
        in progress (at most to twice the limit) so a reader never sees part of a transaction."""
        pending = self._pending
        last = SourceOffset.coerce(pending[limit - 1].offset)
        if last is None or last.in_snapshot or not last.event:
            return limit
        cut = limit
        while cut < len(pending) and cut < 2 * limit:
            offset = SourceOffset.coerce(pending[cut].offset)
            if offset is not None and (offset.file, offset.pos) != (last.file, last.pos):
                break
            cut += 1
        return cut

    def _check_usable(self) -> None:
        if self._failed is not None:
            raise SinkError(
                f"the Spark sink stopped after an earlier failure ({self._failed}); restart "
                "the connector: it resumes from the last committed batch"
            ) from self._failed

    # -- recovery ------------------------------------------------------------------------------
    def _recover(self) -> None:
        if self._recovered:
            return
        wh = self.warehouse
        latest = wh.latest_commit()
        resume_offset: SourceOffset | None = None
        if latest is not None:
            self._finish_moves(latest)
            resume_offset = _commit_offset(latest)
            if resume_offset is not None and resume_offset.in_snapshot and "rolled_back_from" not in latest:
                base = self._last_stable_commit()
                base_no = int(base["commit"]) if base is not None else 0
                if self._snapshot_rows_since(base_no):
                    latest = self._roll_back(latest, base)
                    resume_offset = _commit_offset(latest)
                else:
                    # Only table structures were committed during the snapshot (its rows were
                    # none, or it never reached them): nothing to undo. The resume point is the
                    # last one outside the snapshot; None lets the engine use its own offsets,
                    # which know whether the snapshot finished.
                    resume_offset = _commit_offset(base) if base is not None else None
        shutil.rmtree(wh.staging, ignore_errors=True)
        if latest is not None:
            self._commit_no = int(latest["commit"])
            self._offset = resume_offset
            self._tables = {
                s.table_id: s for s in (TableState.from_json(t) for t in latest["tables"].values())
            }
            self._collect_garbage()
        self._replay_until = _replay_limit(self._offset)
        self._recovered = True
        if latest is not None:
            log.info(
                "Spark warehouse %s: resuming after commit %d (offset %s, %d tables)",
                wh.root,
                self._commit_no,
                self._offset,
                len(self._tables),
            )

    def _finish_moves(self, commit: Mapping[str, Any]) -> None:
        dirs: set[Path] = set()
        for src, dst in commit.get("moves") or ():
            source, target = Path(src), Path(dst)
            if source.exists() and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(source, target)
                dirs.add(target.parent)
        for d in dirs:
            _fsync_dir(d)

    def _last_stable_commit(self) -> dict[str, Any] | None:
        """The last commit made outside a snapshot."""
        wh = self.warehouse
        for number in reversed(wh.commit_numbers()):
            doc = wh.read_commit(number)
            if not _in_snapshot_commit(doc):
                return doc
        return None

    def _snapshot_rows_since(self, base_no: int) -> bool:
        wh = self.warehouse
        return any(
            int(wh.read_commit(n).get("data_events", 1)) > 0 for n in wh.commit_numbers() if n > base_no
        )

    def _roll_back(self, latest: dict[str, Any], base: dict[str, Any] | None) -> dict[str, Any]:
        """Undo the commits of an unfinished snapshot: it restarts from scratch."""
        wh = self.warehouse
        base_no = int(base["commit"]) if base is not None else 0
        base_tables = dict(base["tables"]) if base is not None else {}
        for key in latest["tables"]:
            state = TableState.from_json(latest["tables"][key])
            if key not in base_tables:
                shutil.rmtree(wh.table_dir(state.table_id), ignore_errors=True)
                continue
            changelog_root = wh.table_dir(state.table_id) / "changelog"
            for path in changelog_root.glob("g*/c*.parquet"):
                written_by = path.name[1:].split("-", 1)[0]
                if written_by.isdigit() and int(written_by) > base_no:
                    path.unlink()
        document: dict[str, Any] = {
            "commit": int(latest["commit"]) + 1,
            "offset": base["offset"] if base is not None else latest.get("offset"),
            "committed_at": int(time.time() * 1000),
            "tables": base_tables,
            "moves": [],
            "rolled_back_from": int(latest["commit"]),
        }
        wh.write_commit(document)
        log.warning(
            "the connector stopped during a snapshot: Spark commits %d..%d are rolled back and "
            "the snapshot starts again",
            base_no + 1,
            int(latest["commit"]),
        )
        return document

    def _collect_garbage(self) -> None:
        """Drop commits and current-state versions no reader can still use."""
        wh = self.warehouse
        numbers = wh.commit_numbers()
        if not numbers:
            return
        now_ms = time.time() * 1000
        keep: list[dict[str, Any]] = []
        stable_kept = False
        for number in reversed(numbers):
            doc = wh.read_commit(number)
            recent = len(keep) < 2 or now_ms - int(doc.get("committed_at") or 0) < self.settings.retain_ms
            stable = not _in_snapshot_commit(doc)
            if recent or (stable and not stable_kept):
                keep.append(doc)
                stable_kept = stable_kept or stable
            elif stable_kept:
                (wh.commits / f"{number:020d}.json").unlink(missing_ok=True)
        referenced: dict[Path, set[str]] = {}
        for doc in keep:
            for t in doc["tables"].values():
                table_dir = wh.table_dir(TableId(t["database"], t["table"]))
                referenced.setdefault(table_dir, set())
                if t.get("current_version"):
                    referenced[table_dir].add(t["current_version"])
        for table_dir, versions in referenced.items():
            current = table_dir / "current"
            if not current.is_dir():
                continue
            for version_dir in current.iterdir():
                if version_dir.name not in versions:
                    shutil.rmtree(version_dir, ignore_errors=True)

    # -- applying a batch ----------------------------------------------------------------------
    def _schema_info(self, value_schema: ConnectSchema) -> _SchemaInfo:
        cached = self._schema_cache.get(id(value_schema))
        if cached is not None and cached[0] is value_schema:
            return cached[1]
        node = row_schema_of(value_schema)
        row_type = row_struct_type(node)
        info = _SchemaInfo(row_type, row_type.json(), node, row_converter(node))
        self._schema_cache[id(value_schema)] = (value_schema, info)
        return info

    def _state_for(self, table_id: TableId, tables: dict[TableId, TableState]) -> TableState:
        state = tables.get(table_id)
        if state is None:
            fmt = {"database": table_id.database, "table": table_id.table}
            state = TableState(
                table_id,
                self.settings.table_name_format.format(**fmt),
                self.settings.changelog_name_format.format(**fmt),
                self.settings.buckets,
            )
            tables[table_id] = state
        return state

    def _apply(self, batch: list[ChangeRecord]) -> None:
        try:
            self._apply_batch(batch)
        except Exception as exc:
            self._failed = exc
            if isinstance(exc, SinkError):
                raise
            raise SinkError(
                f"Spark sink: writing a batch of {len(batch)} events to {self.warehouse.root} failed: {exc}"
            ) from exc

    def _apply_batch(self, batch: list[ChangeRecord]) -> None:
        self._recover()
        tables = {tid: s.copy() for tid, s in self._tables.items()}
        work: dict[TableId, _TableBatch] = {}
        offset = self._offset
        raw_offset: Mapping[str, Any] | None = None  # the last record's, as it came
        last_offset: SourceOffset | None = None
        applied = data_events = 0
        for record in batch:
            if self._replay_until is not None:
                if record.offset is not None:
                    last_offset = SourceOffset.coerce(record.offset)
                if is_replay(last_offset, self._replay_until):
                    self.events_skipped += 1
                    continue
                self._replay_until = None
            if record.offset is not None:
                raw_offset = record.offset
            handler = _HANDLERS.get(record.kind)
            if handler is not None:
                handler(self, record, tables, work)
            applied += 1
            data_events += record.kind is RecordKind.DATA
        if not applied:
            return
        if raw_offset is not None:
            offset = SourceOffset.coerce(raw_offset)
        for tb in work.values():
            tb.finish()
        number = self._commit_no + 1
        staging = self.warehouse.staging / f"{number:020d}"
        staging.mkdir(parents=True, exist_ok=True)
        moves: list[tuple[Path, Path]] = []
        new_files: list[Path] = []

        # Spark jobs of a small batch are mostly fixed latency: the changelog and current-state jobs
        # of every table run side by side (each writer has its own staging directory).
        tasks: list[Callable[[], _WriteResult]] = []
        for index, tb in enumerate(work.values()):
            changelog_writer = _TableWriter(self, tb.state, number, staging / f"c{index:05d}")
            tasks.append(partial(_write_changelog, changelog_writer, tb.parts))
            if tb.steps or (tb.state.keyed and tb.state.current_version is None):  # (new: empty version)
                current_writer = _TableWriter(self, tb.state, number, staging / f"s{index:05d}")
                tasks.append(partial(_write_current, current_writer, tb.steps))
        if len(tasks) == 1:
            results = [tasks[0]()]
        else:
            with ThreadPoolExecutor(max_workers=min(4, len(tasks)), thread_name_prefix="spark-sink") as pool:
                results = list(pool.map(lambda task: task(), tasks))
        for table_moves, files in results:
            moves += table_moves
            new_files += files
        for path in [*new_files, *(src for src, _ in moves)]:
            _fsync_file(path)
        for d in {p.parent for p in new_files}:
            _fsync_dir(d)
        document = {
            "commit": number,
            "offset": offset.to_map() if offset is not None else None,
            "committed_at": int(time.time() * 1000),
            "tables": {str(tid): s.to_json() for tid, s in sorted(tables.items())},
            "moves": [[str(src), str(dst)] for src, dst in moves],
            "events": applied,
            "data_events": data_events,
        }
        self.warehouse.write_commit(document)
        # -- committed: publish
        self._commit_no, self._offset, self._tables = number, offset, tables
        self._finish_moves(document)
        shutil.rmtree(staging, ignore_errors=True)
        for tid in work:
            self._register(tables[tid])
        self.commits_written += 1
        self.events_applied += applied
        if self.commits_written % 20 == 0:
            self._collect_garbage()
        log.debug("Spark commit %d: %d events, %d tables, offset %s", number, applied, len(work), offset)

    # -- record handlers (dispatch table below) --------------------------------------------------
    def _on_data(
        self, record: ChangeRecord, tables: dict[TableId, TableState], work: dict[TableId, _TableBatch]
    ) -> None:
        value_schema = record.value_schema
        if value_schema is None:
            return
        if not (value_schema.name or "").endswith(".Envelope"):
            # Unwrapped by ExtractNewRecordState (transforms): the row is the value itself.
            view = unwrapped_envelope(record.value, record.key)
            if view is None or record.table_id is None:
                return
            self._unwrapped.add(record.table_id)
            self._unwrapped_row_schema[record.table_id] = value_schema
            record = replace(record, value=view)
        elif not isinstance(record.value, dict):
            return
        table_id = record.table_id or _table_of(record.value)
        if table_id is None:
            return
        tb = work.get(table_id)
        if tb is None:
            tb = work[table_id] = _TableBatch(self._state_for(table_id, tables))
        key: tuple[str, ...] | None = ()
        if record.key_schema is not None:
            key = tuple(f.name for f in record.key_schema.fields or ())
        if record.value.get("op") == "t":
            key = None  # truncate events carry no key
        tb.add(record, self._schema_info(value_schema), key)

    def _on_schema_change(
        self, record: ChangeRecord, tables: dict[TableId, TableState], work: dict[TableId, _TableBatch]
    ) -> None:
        value = record.value if isinstance(record.value, dict) else {}
        renames = renames_in_ddl(str(value.get("ddl") or ""))
        for change in value.get("tableChanges") or ():
            if change.get("type") == "DROP":
                # (Snapshots drop and re-create every table in the history; a real DROP TABLE
                # leaves the Spark tables as they were.)
                log.debug("schema change drops table %s; its Spark tables are kept", change.get("id"))
                continue
            try:
                table = table_from_history(change)
            except SchemaHistoryError as exc:
                log.warning("schema change: %s; the Spark tables follow the table's next change event", exc)
                continue
            if change.get("previousId"):
                log.info(
                    "table %s is renamed to %s: its Spark tables are kept, %s gets its own",
                    change["previousId"],
                    table.id,
                    table.id,
                )
            tb = work.get(table.id)
            state = tb.state if tb is not None else tables.get(table.id)
            derived = self._schema_from_table(table, state)
            if derived is None:
                # The table's next change event carries its columns; it applies the renames then.
                if renames and state is not None:
                    state.pending_renames = add_renames(state.pending_renames, renames)
                continue
            if tb is None:
                tb = work[table.id] = _TableBatch(self._state_for(table.id, tables))
            tb.state.pending_renames = add_renames(tb.state.pending_renames, renames)
            info, key = derived
            # Events may use a custom key (message.key.columns): keep it while its columns exist.
            known = tb.state.key
            live = {f.name.lower() for f in info.row_type.fields}
            if known and all(k.lower() in live for k in known):
                key = known
            if info.row_type_json != tb.state.row_type_json or key != tb.state.key:
                tb.evolve(info, key)

    def _schema_from_table(
        self, table: Table, state: TableState | None
    ) -> tuple[_SchemaInfo, tuple[str, ...]] | None:
        """The row schema change events of ``table`` will carry, when the table structure alone
        makes its Spark columns certain (else None)."""
        modes = self.settings.converter_settings
        if modes is None:
            return None
        column_filter = self.settings.column_filter
        captured = [c for c in table.columns if column_filter is None or column_filter(table.id, c.name)]
        existing = (
            {f.name.lower() for f in state.current_schema.fields}
            if state is not None and state.current_schema is not None
            else None
        )
        fields = []
        for column in captured:
            new = existing is not None and column.name.lower() not in existing
            node = field_of_column(column, modes, with_default=new)
            if node is None:
                log.debug(
                    "schema change of %s: column %s (%s) is applied with the table's next change event",
                    table.id,
                    column.name,
                    column.type_name,
                )
                return None
            fields.append(node)
        row = {"type": "struct", "optional": True, "fields": fields, "field": "after"}
        envelope = {"type": "struct", "optional": False, "fields": [row]}
        row_type = row_struct_type(envelope)
        names = {c.name.lower() for c in captured}
        key = tuple(k for k in table.primary_key if k.lower() in names)
        return _SchemaInfo(row_type, row_type.json(), row, row_converter(envelope)), key

    # -- catalog -------------------------------------------------------------------------------
    def _register(self, state: TableState) -> None:
        spark = self.spark
        entries: list[tuple[str, Path, StructType | None]] = []  # name, location, schema
        if state.changelog_schema is not None:
            entries.append(
                (
                    state.changelog_name,
                    self.warehouse.changelog_dir(state.table_id, state.changelog_generation),
                    changelog_struct_type(state.changelog_schema),
                )
            )
            for generation, old_schema in state.old_generations:
                entries.append(
                    (
                        f"{state.changelog_name}_g{generation}",
                        self.warehouse.changelog_dir(state.table_id, generation),
                        changelog_struct_type(old_schema),
                    )
                )
        if state.keyed and state.current_version is not None:
            entries.append(
                (
                    state.current_name,
                    self.warehouse.current_dir(state.table_id, state.current_version),
                    state.current_schema,
                )
            )
        for name, location, table_schema in entries:
            schema_json = table_schema.json() if table_schema else ""
            previous = self._registered.get(name)
            quoted = _qualified(name)[2]
            if previous is None or previous[1] != schema_json:
                register_table(spark, name, location, table_schema)
            elif previous[0] != location:
                location.mkdir(parents=True, exist_ok=True)
                spark.sql(f"ALTER TABLE {quoted} SET LOCATION {_sql_string(str(location))}")
            else:  # same directory, new files (changelog)
                spark.catalog.refreshTable(quoted)
            self._registered[name] = (location, schema_json)


_WriteResult = tuple[list[tuple[Path, Path]], list[Path]]  # changelog moves, current-state files


def _write_changelog(writer: _TableWriter, parts: Sequence[_ChangelogPart]) -> _WriteResult:
    return writer.write_changelog(parts), []


def _write_current(writer: _TableWriter, steps: Sequence[_RowsStep | _EvolveStep]) -> _WriteResult:
    return [], writer.write_current(steps)


def _commit_offset(document: Mapping[str, Any]) -> SourceOffset | None:
    return SourceOffset.coerce(document.get("offset"))


def _in_snapshot_commit(document: Mapping[str, Any]) -> bool:
    offset = _commit_offset(document)
    return offset is not None and offset.in_snapshot


def _table_of(value: Mapping[str, Any]) -> TableId | None:
    source = value.get("source") or {}
    if source.get("db") and source.get("table"):
        return TableId(str(source["db"]), str(source["table"]))
    return None


def _ignore(
    sink: SparkSink, record: ChangeRecord, tables: dict[TableId, TableState], work: dict[TableId, _TableBatch]
) -> None:
    """Tombstones, heartbeats and transaction markers only move the offset."""


def _on_tombstone(
    sink: SparkSink, record: ChangeRecord, tables: dict[TableId, TableState], work: dict[TableId, _TableBatch]
) -> None:
    """After a delete event a tombstone only moves the offset; for a table whose records arrive
    unwrapped (``delete.tombstone.handling.mode=delete-to-tombstone``) it is the delete, of the row
    whose key it carries."""
    if record.table_id in sink._unwrapped and record.key_schema is not None:
        schema = sink._unwrapped_row_schema.get(record.table_id)
        if schema is not None:
            sink._on_data(replace(record, value_schema=schema), tables, work)


_HANDLERS: dict[
    RecordKind,
    Callable[[SparkSink, ChangeRecord, dict[TableId, TableState], dict[TableId, _TableBatch]], None],
] = {
    RecordKind.DATA: SparkSink._on_data,
    RecordKind.SCHEMA_CHANGE: SparkSink._on_schema_change,
    RecordKind.TOMBSTONE: _on_tombstone,
    RecordKind.TRANSACTION: _ignore,
    RecordKind.HEARTBEAT: _ignore,
}


# ------------------------------------------------------------------------------------------------
# Spark jobs of one table in one batch
# ------------------------------------------------------------------------------------------------
class _TableWriter:
    def __init__(self, sink: SparkSink, state: TableState, commit: int, staging: Path) -> None:
        self.sink = sink
        self.spark = sink.spark
        self.state = state
        self.commit = commit
        self.staging = staging
        self.files_dir = staging / "files"
        self._jobs = 0

    def write_changelog(self, parts: Sequence[_ChangelogPart]) -> list[tuple[Path, Path]]:
        moves = []
        for index, part in enumerate(parts):
            frame = self.spark.createDataFrame(
                part.rows, changelog_struct_type(part.row_type), verifySchema=False
            )
            out = self._job_dir("changelog")
            frame.coalesce(1).write.parquet(str(out))
            written = sorted(out.glob("part-*.parquet"))
            for i, path in enumerate(written):
                name = f"c{self.commit:020d}-{index:04d}-{i:02d}.parquet"
                staged = self.files_dir / name
                staged.parent.mkdir(parents=True, exist_ok=True)
                os.rename(path, staged)
                moves.append(
                    (staged, self.sink.warehouse.changelog_dir(self.state.table_id, part.generation) / name)
                )
        return moves

    def write_current(self, steps: Sequence[_RowsStep | _EvolveStep]) -> list[Path]:
        """Apply the steps to the committed version; returns the files of the new version."""
        state = self.state
        assert state.current_schema is not None
        wh = self.sink.warehouse
        previous = wh.current_dir(state.table_id, state.current_version) if state.current_version else None
        files: dict[int, list[Path]] = (
            {b: [previous / name for name in names] for b, names in state.current_files.items()}
            if previous is not None
            else {}
        )
        for step in steps:
            if isinstance(step, _RowsStep):
                files = self._apply_rows(files, step)
            else:
                files = self._evolve(files, step)
        version = f"v{self.commit:020d}"
        target = wh.current_dir(state.table_id, version)
        if target.exists():  # left by a crash before this commit number was written
            shutil.rmtree(target)
        target.mkdir(parents=True)
        linked: list[Path] = []
        current_files: dict[int, list[str]] = {}
        for bucket, paths in sorted(files.items()):
            for path in paths:
                destination = target / path.name
                try:
                    os.link(path, destination)
                except OSError:
                    shutil.copy2(path, destination)
                linked.append(destination)
                current_files.setdefault(bucket, []).append(path.name)
        state.current_version = version
        state.current_files = current_files
        return linked

    # -- steps ---------------------------------------------------------------------------------
    def _read(self, paths: Iterable[Path], schema: StructType) -> DataFrame:
        frame = self.spark.read.schema(schema).parquet(*[str(p) for p in paths])
        bucket = F.regexp_extract(F.col("_metadata.file_name"), _FILE_BUCKET.pattern, 1).cast(IntegerType())
        return frame.withColumn(_BUCKET_COLUMN, bucket)

    def _apply_rows(self, files: dict[int, list[Path]], step: _RowsStep) -> dict[int, list[Path]]:
        state = self.state
        schema = step.schema
        buckets = state.buckets
        key_fields = [schema[k] for k in step.key]
        touched = set(range(buckets)) if step.truncated else set()
        keys: list[tuple[Any, ...]] = []
        upserts: list[tuple[Any, ...]] = []
        for key, row in step.net.items():
            bucket = bucket_of(key, buckets)
            touched.add(bucket)
            keys.append(key)
            if row is not None:
                upserts.append((*row, bucket))
        frames: list[DataFrame] = []
        existing = [] if step.truncated else [p for b in sorted(touched) for p in files.get(b, [])]
        if existing:
            current = self._read(existing, schema)
            if keys:
                aliases = [f"__k{i}" for i in range(len(key_fields))]
                key_frame = self.spark.createDataFrame(
                    keys,
                    StructType(
                        [StructField(a, f.dataType, True) for a, f in zip(aliases, key_fields, strict=True)]
                    ),
                    verifySchema=False,
                )
                condition = [
                    current[_quote(f.name)] == key_frame[a] for a, f in zip(aliases, key_fields, strict=True)
                ]
                current = current.join(F.broadcast(key_frame), condition, "left_anti")
            frames.append(current)
        if upserts:
            with_bucket = StructType([*schema.fields, StructField(_BUCKET_COLUMN, IntegerType(), False)])
            frames.append(self.spark.createDataFrame(upserts, with_bucket, verifySchema=False))
        kept = {b: paths for b, paths in files.items() if b not in touched}
        if not frames:
            return kept
        combined = frames[0]
        for frame in frames[1:]:
            combined = combined.unionByName(frame)
        kept.update(self._write_buckets(combined, _size(existing)))
        return kept

    def _evolve(self, files: dict[int, list[Path]], step: _EvolveStep) -> dict[int, list[Path]]:
        paths = [p for ps in files.values() for p in ps]
        if not paths:
            return {}
        frame = self._read(paths, step.old)
        old_types = {f.name: f.dataType for f in step.old.fields}
        columns = []
        for f in step.new.fields:
            source = step.sources.get(f.name)
            if source is not None:
                value = F.col(_quote(source))
                if old_types[source] != f.dataType:
                    if widen(old_types[source], f.dataType) == f.dataType:
                        value = value.cast(f.dataType)
                    else:
                        log.warning(
                            "table %s: column %s changes type %s -> %s; existing values are "
                            "converted by Spark (null where they do not convert)",
                            self.state.table_id,
                            f.name,
                            old_types[source].simpleString(),
                            f.dataType.simpleString(),
                        )
                        value = (
                            F.try_cast(value, f.dataType)
                            if hasattr(F, "try_cast")
                            else value.try_cast(f.dataType)
                        )
            elif f.name in step.fills:
                value = _literal(step.fills[f.name], f.dataType)
            else:  # dropped in MySQL: kept, null-filled
                value = F.lit(None).cast(f.dataType)
            columns.append(value.alias(f.name))
        if step.rebucket:
            return self._rebucket(frame.select(*columns), step.new, _size(paths), step.key)
        return self._write_buckets(frame.select(*columns, F.col(_BUCKET_COLUMN)), _size(paths))

    def _rebucket(
        self, frame: DataFrame, schema: StructType, size: int, key: tuple[str, ...]
    ) -> dict[int, list[Path]]:
        """The key changed: every row moves to the bucket of its new key (a rare, whole-table pass
        through Python, because bucket numbers are computed in Python)."""
        index = [schema.fieldNames().index(k) for k in key]
        zone_fix = [isinstance(schema.fields[i].dataType, TimestampType) for i in index]
        rows = []
        for row in frame.toLocalIterator():
            values = tuple(row)
            key_values = tuple(
                (v.astimezone(dt.UTC) if fix and isinstance(v, dt.datetime) else v)
                for v, fix in zip((values[i] for i in index), zone_fix, strict=True)
            )
            rows.append((*values, bucket_of(key_values, self.state.buckets)))
        with_bucket = StructType([*schema.fields, StructField(_BUCKET_COLUMN, IntegerType(), False)])
        return self._write_buckets(self.spark.createDataFrame(rows, with_bucket, verifySchema=False), size)

    def _write_buckets(self, frame: DataFrame, input_bytes: int) -> dict[int, list[Path]]:
        out = self._job_dir("current")
        # Small inputs: one task writes every bucket (no shuffle); large ones: one task per bucket.
        frame = frame.coalesce(1) if input_bytes < _SINGLE_TASK_BYTES else frame.repartition(_BUCKET_COLUMN)
        frame.write.partitionBy(_BUCKET_COLUMN).parquet(str(out))
        result: dict[int, list[Path]] = {}
        self.files_dir.mkdir(parents=True, exist_ok=True)
        for sub in sorted(out.glob(f"{_BUCKET_COLUMN}=*")):
            bucket = int(sub.name.split("=", 1)[1])
            for path in sorted(sub.glob("part-*.parquet")):
                name = f"b{bucket:05d}-{self.commit:020d}-{uuid.uuid4().hex[:12]}.parquet"
                staged = self.files_dir / name
                os.rename(path, staged)
                result.setdefault(bucket, []).append(staged)
        return result

    def _job_dir(self, kind: str) -> Path:
        self._jobs += 1
        return self.staging / f"{kind}-{self._jobs:04d}"


# ------------------------------------------------------------------------------------------------
# Reading a warehouse from any Spark application
# ------------------------------------------------------------------------------------------------
def register_table(spark: SparkSession, name: str, location: Path, schema: StructType | None) -> None:
    """(Re)point catalog table ``name`` at a Parquet directory."""
    database, _, quoted = _qualified(name)
    location.mkdir(parents=True, exist_ok=True)
    if database is not None:
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {_quote(database)}")
    spark.sql(f"DROP TABLE IF EXISTS {quoted}")
    spark.catalog.createTable(quoted, path=str(location), source="parquet", schema=schema)


def committed_tables(warehouse: str | os.PathLike[str]) -> dict[TableId, TableState]:
    """The tables of the warehouse's last commit."""
    latest = Warehouse(warehouse).latest_commit()
    if latest is None:
        return {}
    return {s.table_id: s for s in (TableState.from_json(t) for t in latest["tables"].values())}


def register_warehouse(spark: SparkSession, warehouse: str | os.PathLike[str]) -> list[str]:
    """Register every committed table of ``warehouse`` in ``spark``'s catalog (as of the last
    commit); returns the registered names. Call again to move to a newer commit."""
    wh = Warehouse(warehouse)
    names: list[str] = []
    for state in committed_tables(warehouse).values():
        if state.changelog_schema is not None:
            register_table(
                spark,
                state.changelog_name,
                wh.changelog_dir(state.table_id, state.changelog_generation),
                changelog_struct_type(state.changelog_schema),
            )
            names.append(state.changelog_name)
            for generation, schema in state.old_generations:
                register_table(
                    spark,
                    f"{state.changelog_name}_g{generation}",
                    wh.changelog_dir(state.table_id, generation),
                    changelog_struct_type(schema),
                )
                names.append(f"{state.changelog_name}_g{generation}")
        if state.keyed and state.current_version is not None and state.current_schema is not None:
            register_table(
                spark,
                state.current_name,
                wh.current_dir(state.table_id, state.current_version),
                state.current_schema,
            )
            names.append(state.current_name)
    return names


def read_current_state(
    spark: SparkSession, warehouse: str | os.PathLike[str], table_id: TableId
) -> tuple[DataFrame, TableState] | None:
    """The committed current-state table of ``table_id`` (None when it has none)."""
    state = committed_tables(warehouse).get(table_id)
    if state is None or not state.keyed or state.current_version is None or state.current_schema is None:
        return None
    location = Warehouse(warehouse).current_dir(table_id, state.current_version)
    files = [str(location / n) for names in state.current_files.values() for n in names]
    if not files:
        return spark.createDataFrame([], state.current_schema), state
    return spark.read.schema(state.current_schema).parquet(*files), state
