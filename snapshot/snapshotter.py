"""The initial consistent snapshot, following Debezium's ``BinlogSnapshotChangeEventSource`` step by step.

Global-read-lock workflow (``snapshot.locking.mode=minimal``, the default)::

    SHOW DATABASES; SHOW FULL TABLES IN `db` where Table_Type = 'BASE TABLE'    (1 captured tables)
    SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ
    SET SESSION lock_wait_timeout=10; SET SESSION innodb_lock_wait_timeout=10
    FLUSH TABLES WITH READ LOCK                                                  (2 lock)
    SET TRANSACTION ISOLATION LEVEL REPEATABLE READ
    START TRANSACTION WITH CONSISTENT SNAPSHOT
    SHOW MASTER STATUS [+ SELECT @@global.gtid_binlog_pos]                       (3 position)
    SHOW VARIABLES ...charset...; SHOW VARIABLES ...sql_mode...; information_schema.schemata;
    SHOW CREATE TABLE `db`.`t` ...                                               (4 structure)
    UNLOCK TABLES                                                                (5 writes resume)
    USE `db`; SHOW TABLE STATUS LIKE 't' ...                                     (6 row estimates)
    SELECT UNIX_TIMESTAMP(); SELECT * FROM `db`.`t` ...                           (7 rows)
    ROLLBACK

Table-lock workflow (the global lock is refused: no RELOAD privilege, RDS, Aurora): after the refused
FLUSH the transaction is started as above, then ``SHOW GRANTS FOR CURRENT_USER`` (LOCK TABLES must be
granted), ``LOCK TABLES `db`.`t` READ, ...`` on the captured tables, position, structure of the
locked tables, rows, then ``COMMIT`` and only then ``UNLOCK TABLES`` (with autocommit off, unlocking
first would end the snapshot's consistency guarantee), then ``SHOW CREATE TABLE`` for the tables whose
structure could not be read under the table locks. Debezium itself uses ``FLUSH TABLES t1, t2 WITH
READ LOCK`` here, which needs RELOAD as well; ``LOCK TABLES ... READ`` blocks the same writes and
needs only LOCK TABLES, so it also works for the users that were refused the global lock.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

import pymysql

from ddl.model import SchemaModel
from ddl.parsing.parser import parser_for
from mysql_cdc_base.flavor import flavor_of
from mysql_cdc_base.position import BinlogPosition
from mysql_cdc_base.table_id import TableId
from snapshot.binlog_status import Connect, read_binlog_position
from snapshot.errors import SnapshotConfigError, SnapshotError
from snapshot.listener import SnapshotListener
from snapshot.policy.locking import LockingStrategy, LockState
from snapshot.policy.queries import SELECT_ALL, quote_identifier, quote_table
from snapshot.progress import ProgressReporter, auto_progress
from snapshot.rows.scan import SnapshotCancelled, TableJob, TableScan
from snapshot.server_sql import (
    abandon,
    create_database_statement,
    execute,
    execute_commit,
    has_privilege,
    optional_text,
    reraise_if_disconnected,
    server_time_zone,
    set_statement_for,
    show_create_table,
    sql_string,
    text_of,
)
from snapshot.settings import OVERRIDES_KEY, ROW_COUNT_ORDERS, PropertySource, SnapshotSettings

if TYPE_CHECKING:
    from snapshot.rows.chunked import ReaderPool

log = logging.getLogger(__name__)

BUILTIN_DATABASES = frozenset({"mysql", "performance_schema", "sys", "information_schema"})

__all__ = [
    "OVERRIDES_KEY",
    "ROW_COUNT_ORDERS",
    "Connect",
    "PropertySource",
    "SnapshotConfigError",
    "SnapshotCancelled",
    "SnapshotError",
    "SnapshotSettings",
    "SnapshotSummary",
    "Snapshotter",
    "quote_identifier",
    "quote_table",
    "set_statement_for",
]


def order_tables(
    tables: Iterable[TableId],
    include_patterns: Sequence[re.Pattern[str]],
    signal_patterns: Sequence[re.Pattern[str]] = (),
) -> list[TableId]:
    """Debezium's snapshot order: for each ``table.include.list`` pattern in turn (all tables when the
    list is empty), the matching tables sorted by name; then the signal table."""
    candidates = sorted(set(tables))
    patterns = list(include_patterns) or [re.compile(".*")]
    patterns += list(signal_patterns)
    ordered: dict[TableId, None] = {}
    for pattern in patterns:
        for table_id in candidates:
            if table_id not in ordered and pattern.fullmatch(str(table_id)):
                ordered[table_id] = None
    return list(ordered)


class SnapshotSummary(NamedTuple):
    position: BinlogPosition
    rows: Mapping[TableId, int]
    schema_statements: int
    locking: str  # "global" | "table" | "none"
    writes_blocked_seconds: float
    duration_seconds: float

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())


@dataclass
class _Plan:
    schema_tables: list[TableId]
    data_tables: list[TableId]


# -- the snapshotter ---------------------------------------------------------------------------------
class Snapshotter:
    """Runs one snapshot per ``run`` call and reports it to a ``SnapshotListener``.

    ``connect`` opens a new connection (called once, plus once per extra reader thread) with the value
    conversions and session time zone the listener expects;
    ``is_captured`` is the connector's table filter; ``flavor`` is ``mysql`` or ``mariadb`` (checked
    against the server's version string). ``is_database_captured`` (default: "has a captured table")
    serves ``store.only.captured.databases.ddl``; ``projection`` may return the column names to select
    for a table (column filters) or None for ``SELECT *``. The reader processes of a chunked
    snapshot (``snapshot.max.threads`` > 1 without ``legacy.snapshot.max.threads``) open their
    connections with ``reader_connect``, by default ``connect`` itself when it can be pickled (a
    module-level function or a ``functools.partial`` of one); when neither can, such a snapshot reads
    one table per thread, as ``legacy.snapshot.max.threads=true``.
    """

    def __init__(
        self,
        settings: SnapshotSettings,
        connect: Connect,
        is_captured: Callable[[TableId], bool],
        flavor: str,
        *,
        is_database_captured: Callable[[str], bool] | None = None,
        projection: Callable[[TableId], Sequence[str] | None] | None = None,
        progress: ProgressReporter | None = None,
        reader_connect: Connect | None = None,
    ) -> None:
        self.settings = settings
        self._given_reader_connect = reader_connect
        self._connect = connect
        self.is_captured = is_captured
        self.flavor = flavor
        self.is_database_captured = is_database_captured
        self.projection = projection
        self.progress = progress
        self._cancelled = threading.Event()
        # The tables whose rows this run reads, once planned (metrics: TotalTableCount).
        self.planned_tables: tuple[TableId, ...] = ()
        # Tables with invisible columns -> every column, in order (see _note_invisible_columns).
        self._named_columns: dict[TableId, tuple[str, ...]] = {}
        self.last_summary: SnapshotSummary | None = None

    def cancel(self) -> None:
        """Stop a running ``run`` at the next batch (it raises ``SnapshotCancelled``)."""
        self._cancelled.set()

    # -- public entry point ------------------------------------------------------------------------
    def run(
        self, listener: SnapshotListener, tables: Sequence[TableId] | None = None, *, data: bool = True
    ) -> BinlogPosition:
        """Snapshot schema and (unless ``data`` is False: no_data / recovery) rows.

        ``tables`` restricts the rows read to these captured tables (the schema snapshot stays
        complete). Returns the consistent position (also given to ``listener.on_position``).
        """
        self._cancelled.clear()
        started = time.monotonic()
        strategy = self.settings.strategy
        progress = self.progress or auto_progress()
        main = self._connect()
        connections = [main]
        state = LockState()
        pool: ReaderPool | None = None
        try:
            main.autocommit(False)
            version, flavor = self._server_flavor(main)
            cur = main.cursor()
            plan = self._plan(self._list_tables(cur), tables)
            self.planned_tables = tuple(plan.data_tables) if data else ()
            pool = self._open_readers(plan, data, connections)
            self._lock(cur, plan, state)

            # -- position --------------------------------------------------------------------------
            position = read_binlog_position(cur, flavor, version)
            log.info("Read binlog position %s", position)
            listener.on_position(position)
            if strategy.locking:
                self._pin_readers(connections[1:], pool)

            # -- structure -------------------------------------------------------------------------
            deferred = (
                [t for t in plan.schema_tables if t not in set(plan.data_tables)] if state.table_lock else []
            )
            statements = self._read_structure(cur, listener, plan, deferred, flavor)
            if state.global_lock and strategy.release_after_schema:
                self._unlock(cur, state)

            counts = self._read_rows(cur, connections, pool, plan, listener, progress) if data else {}
            statements += self._release(main, cur, state, deferred, listener)
            self.last_summary = SnapshotSummary(
                position,
                MappingProxyType(counts),
                statements,
                "global" if state.used_global else "table" if state.used_table else "none",
                state.blocked_seconds,
                time.monotonic() - started,
            )
            listener.on_complete()
            return position
        except BaseException:
            # Close without draining half-read results; the server releases locks and the transaction.
            for conn in connections:
                abandon(conn)
            raise
        finally:
            progress.close()
            if pool is not None:
                pool.close()
            for conn in connections:
                if conn.open:
                    with contextlib.suppress(Exception):
                        conn.close()

    # -- the run's steps ---------------------------------------------------------------------------
    def _server_flavor(self, main: pymysql.connections.Connection) -> tuple[str, str]:
        """The server's version and the flavor it shows (which wins over the configured one)."""
        version = main.get_server_info()
        if flavor_of(version) != self.flavor:
            log.warning("server version %r does not look like %s; using its own flavor", version, self.flavor)
        return version, flavor_of(version)

    def _open_readers(
        self, plan: _Plan, data: bool, connections: list[pymysql.connections.Connection]
    ) -> ReaderPool | None:
        """The chunked snapshot's reader processes, or the extra reader connections (appended to
        ``connections``); connected before the lock, so that the lock is not held while they start."""
        if data and plan.data_tables and self._chunked():
            assert self._reader_connect is not None
            # The chunked reading (reader processes: multiprocessing) is loaded only for a chunked
            # snapshot, not at every start (issue 41: time to the first event).
            from snapshot.rows.chunked import ReaderPool  # noqa: PLC0415

            pool = ReaderPool(self._reader_connect, self.settings.max_threads, self.settings.batch_rows)
            pool.start(self._cancelled)
            return pool
        readers = min(self.settings.max_threads, len(plan.data_tables)) if data else 1
        for _ in range(readers - 1):
            connections.append(self._open_reader())
        return None

    def _lock(self, cur: Any, plan: _Plan, state: LockState) -> None:
        """Isolation, lock timeouts, then the global read lock or the table locks (the locking mode's)."""
        strategy = self.settings.strategy
        execute(cur, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        seconds = self.settings.lock_timeout_ms // 1000
        execute(cur, f"SET SESSION lock_wait_timeout={seconds}")
        try:
            execute(cur, f"SET SESSION innodb_lock_wait_timeout={seconds}")
        except pymysql.MySQLError as exc:
            reraise_if_disconnected(exc)
            log.warning("Unable to set innodb_lock_wait_timeout: %s", exc)
        if strategy.global_lock_sql is None:
            return
        self._global_lock(cur, strategy, state)
        if strategy.reset_isolation_after_lock:
            execute(cur, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        if strategy.consistent_snapshot_transaction:
            try:
                execute(cur, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
            except pymysql.MySQLError:
                log.error(
                    "It's possible to receive duplicated events between snapshot and streaming. "
                    "It can be caused by an unsupported engine"
                )
                raise
        if not state.global_lock:
            if not strategy.table_lock_fallback:
                raise SnapshotError(
                    f"the global read lock was refused ({state.refusal}) and snapshot.locking.mode="
                    f"{strategy.mode} forbids table locks: grant RELOAD (and BACKUP_ADMIN) to the "
                    "connector user, or use snapshot.locking.mode=minimal"
                )
            self._table_lock(cur, plan.data_tables, state)

    def _pin_readers(
        self, readers: Sequence[pymysql.connections.Connection], pool: ReaderPool | None
    ) -> None:
        """Pin the extra readers' views while writes are still blocked: they see exactly the state at
        the position, like the main connection."""
        for conn in readers:
            with conn.cursor() as rc:
                execute(rc, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
        if pool is not None:
            pool.begin(self._cancelled)

    def _read_rows(
        self,
        cur: Any,
        connections: Sequence[pymysql.connections.Connection],
        pool: ReaderPool | None,
        plan: _Plan,
        listener: SnapshotListener,
        progress: ProgressReporter,
    ) -> dict[TableId, int]:
        """The planned tables' rows: in chunks on the reader processes, a table per connection, or
        one table after the other on the main connection. Returns the rows read per table."""
        if not plan.data_tables:
            return {}
        jobs = self._jobs(cur, plan.data_tables)
        self.planned_tables = tuple(job.table_id for job in jobs)
        progress.planned({job.table_id: job.estimated_rows for job in jobs})
        if pool is not None:
            from snapshot.rows.chunked import plan_chunks, scan_chunked  # noqa: PLC0415 - see _open_readers

            chunks = plan_chunks(
                cur,
                jobs,
                self.settings.max_threads,
                self.settings.max_threads_multiplier,
                lambda job: self._splittable(job.table_id),
            )
            return scan_chunked(connections[0], pool, chunks, listener, progress, self._cancelled)
        scan = TableScan(jobs, listener, progress, self.settings.batch_rows, self._cancelled)
        return scan.parallel(connections) if len(connections) > 1 else scan.serial(connections[0])

    def _release(
        self,
        main: pymysql.connections.Connection,
        cur: Any,
        state: LockState,
        deferred: Sequence[TableId],
        listener: SnapshotListener,
    ) -> int:
        """Locks released and the transaction ended; under table locks, then the structure of the
        ``deferred`` tables. Returns how many schema statements that added."""
        statements = 0
        if state.table_lock:
            # COMMIT first: UNLOCK TABLES would commit implicitly, but the locks must outlive the
            # transaction that read under them.
            execute_commit(main)
            self._unlock(cur, state)
            with server_time_zone(cur):
                for table_id in deferred:
                    ddl = show_create_table(cur, table_id)
                    if ddl is not None:
                        listener.on_schema_statement(ddl, table_id.database)
                        statements += 1
        elif state.global_lock:
            self._unlock(cur, state)
        main.rollback()
        return statements

    @functools.cached_property
    def _reader_connect(self) -> Connect | None:
        """``reader_connect``, else ``connect`` when it can be pickled: decided when a chunked
        snapshot first asks (pickle is loaded then, not at every start: issue 41)."""
        given = self._given_reader_connect
        return given or (self._connect if _picklable(self._connect) else None)

    # -- steps -------------------------------------------------------------------------------------
    def _chunked(self) -> bool:
        if not self.settings.chunked:
            return False
        if self._reader_connect is None:
            log.info(
                "snapshot.max.threads=%d: no connection settings for reader processes, reading one "
                "table per thread (as legacy.snapshot.max.threads=true)",
                self.settings.max_threads,
            )
            return False
        return True

    def _splittable(self, table_id: TableId) -> bool:
        """Only the plain ``select_all`` SELECT can be cut into key ranges; an override or a custom
        query is read whole (Debezium's chunked snapshot ignores overrides instead)."""
        return table_id not in self.settings.select_overrides and self.settings.query_mode == SELECT_ALL

    def _open_reader(self) -> pymysql.connections.Connection:
        conn = self._connect()
        conn.autocommit(False)
        with conn.cursor() as cur:
            execute(cur, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        return conn

    def _list_tables(self, cur: Any) -> list[TableId]:
        execute(cur, "SHOW DATABASES")
        databases = [text_of(row[0]) for row in cur.fetchall()]
        table_ids: list[TableId] = []
        for database in databases:
            try:
                execute(
                    cur, f"SHOW FULL TABLES IN {quote_identifier(database)} where Table_Type = 'BASE TABLE'"
                )
            except pymysql.MySQLError as exc:
                reraise_if_disconnected(exc)
                log.warning("Error while reading list of tables in database %s: %s", database, exc)
                continue
            table_ids.extend(TableId(database, text_of(row[0])) for row in cur.fetchall())
        return table_ids

    def _plan(self, all_tables: Sequence[TableId], only: Sequence[TableId] | None) -> _Plan:
        s = self.settings
        eligible = sorted(
            t for t in all_tables if not (s.ignore_builtin and t.database.lower() in BUILTIN_DATABASES)
        )
        captured = [t for t in eligible if self.is_captured(t)]
        wanted = [t for t in captured if s.snapshot_included(t)]
        if only is not None:
            requested = set(only)
            missing = sorted(requested - set(captured))
            if missing:
                raise SnapshotError(
                    "not captured or not found on the server: "
                    + ", ".join(map(str, missing))
                    + " (check the names and table.include.list / database.include.list)"
                )
            wanted = [t for t in wanted if t in requested] + sorted(requested - set(wanted))
        data_tables = order_tables(wanted, s.table_include_order, s.signal_patterns)
        if s.store_only_captured_tables_ddl:
            schema_tables = list(captured)
        elif s.store_only_captured_databases_ddl:
            captured_dbs = {t.database for t in captured}
            is_db: Callable[[str], bool] = self.is_database_captured or captured_dbs.__contains__
            schema_tables = [t for t in eligible if is_db(t.database)]
        else:
            schema_tables = eligible
        log.info(
            "Snapshot of %d table(s) (%d with schema): %s",
            len(data_tables),
            len(schema_tables),
            ", ".join(map(str, data_tables)) or "-",
        )
        return _Plan(schema_tables, data_tables)

    def _global_lock(self, cur: Any, strategy: LockingStrategy, state: LockState) -> None:
        assert strategy.global_lock_sql is not None
        log.info("Flush and obtain global read lock to prevent writes to database")
        try:
            execute(cur, strategy.global_lock_sql)
        except pymysql.MySQLError as exc:
            reraise_if_disconnected(exc)
            # How "not permitted" (no RELOAD, RDS, Aurora) is detected: the statement fails.
            state.refusal = str(exc)
            log.info(
                "Unable to flush and acquire global read lock, will use table read locks after reading "
                "table names (%s)",
                exc,
            )
            return
        state.lock_acquired("global")

    def _table_lock(self, cur: Any, tables: Sequence[TableId], state: LockState) -> None:
        if not has_privilege(cur, "LOCK TABLES"):
            raise SnapshotError(
                "User does not have the 'LOCK TABLES' privilege required to obtain a consistent snapshot by "
                f"preventing concurrent writes to tables (the global read lock was refused: {state.refusal}). "
                "GRANT LOCK TABLES (or RELOAD, for the global read lock) ON *.* to the connector user, or set "
                "snapshot.locking.mode=none to snapshot without locks (no consistency guarantee)"
            )
        log.info("Flush and obtain read lock for %d tables (preventing writes)", len(tables))
        if tables:
            execute(cur, "LOCK TABLES " + ", ".join(f"{quote_table(t)} READ" for t in tables))
        state.lock_acquired("table")

    def _unlock(self, cur: Any, state: LockState) -> None:
        log.info("Releasing %s read lock to enable MySQL writes", "global" if state.global_lock else "table")
        execute(cur, "UNLOCK TABLES")
        held = state.lock_released()
        log.info("Writes to MySQL tables prevented for a total of %.3f s", held)

    def _read_structure(
        self, cur: Any, listener: SnapshotListener, plan: _Plan, deferred: Sequence[TableId], flavor: str
    ) -> int:
        """Emit the schema statements in Debezium's order; returns how many were emitted."""
        count = 0

        def emit(ddl: str, database: str | None) -> None:
            nonlocal count
            listener.on_schema_statement(ddl, database)
            count += 1

        execute(cur, "SHOW VARIABLES WHERE Variable_name IN ('character_set_server','collation_server')")
        charset_vars = {text_of(name): text_of(value) for name, value in cur.fetchall()}
        emit(set_statement_for(charset_vars), "")
        execute(cur, "SHOW VARIABLES WHERE Variable_name = 'sql_mode'")
        row = cur.fetchone()
        sql_mode_hook = getattr(listener, "on_sql_mode", None)
        if row is not None and callable(sql_mode_hook):
            sql_mode_hook(text_of(row[1]))

        for table_id in plan.schema_tables:
            emit(f"DROP TABLE IF EXISTS {quote_table(table_id)}", table_id.database)
        execute(
            cur,
            "SELECT schema_name, default_character_set_name, default_collation_name "
            "FROM information_schema.schemata",
        )
        locales = {text_of(r[0]): (optional_text(r[1]), optional_text(r[2])) for r in cur.fetchall()}
        skip = set(deferred)
        by_database: dict[str, list[TableId]] = {}
        for table_id in plan.schema_tables:
            by_database.setdefault(table_id.database, []).append(table_id)
        vanished: set[TableId] = set()
        with server_time_zone(cur):
            for database, table_ids in by_database.items():
                log.info("Reading structure of database '%s'", database)
                emit(f"DROP DATABASE IF EXISTS {quote_identifier(database)}", database)
                charset, collation = locales.get(database, (None, None))
                emit(create_database_statement(database, charset, collation), database)
                emit(f"USE {quote_identifier(database)}", database)
                for table_id in table_ids:
                    if table_id in skip:
                        continue
                    ddl = show_create_table(cur, table_id)
                    if ddl is None:
                        vanished.add(table_id)
                        continue
                    self._note_invisible_columns(table_id, ddl)
                    emit(ddl, database)
        if vanished:
            # Dropped between listing and locking: nothing to read, streaming sees no rows for them.
            plan.data_tables = [t for t in plan.data_tables if t not in vanished]
        return count

    def _jobs(self, cur: Any, tables: Sequence[TableId]) -> list[TableJob]:
        selects = {t: self._select_for(t) for t in tables}
        ordered = [t for t in tables if selects[t] is not None]
        for table_id in (t for t in tables if selects[t] is None):
            log.warning("For table '%s' the select statement was not provided, skipping table", table_id)
        estimates = {t: self._estimate(cur, t) for t in ordered}
        if self.settings.order_by_row_count != "disabled":
            sign = 1 if self.settings.order_by_row_count == "ascending" else -1
            ordered.sort(key=lambda t: sign * (estimates[t] or 0))
        return [TableJob(t, selects[t] or "", estimates[t], i, len(ordered)) for i, t in enumerate(ordered)]

    def _estimate(self, cur: Any, table_id: TableId) -> int | None:
        if table_id in self.settings.select_overrides or self.settings.query_mode != SELECT_ALL:
            return None  # the statement may filter rows: the table's size says nothing
        try:
            execute(cur, f"USE {quote_identifier(table_id.database)}")
            execute(cur, f"SHOW TABLE STATUS LIKE {sql_string(table_id.table)}")
            rows = cur.fetchall()
        except pymysql.MySQLError as exc:
            reraise_if_disconnected(exc)
            log.debug("no row estimate for %s: %s", table_id, exc)
            return None
        # LIKE treats _ and % as wildcards: pick the row that is really this table.
        for row in rows:
            if text_of(row[0]) == table_id.table and row[4] is not None:
                estimate = int(row[4])
                log.info("Estimated row count for table %s is %d", table_id, estimate)
                return estimate
        return None

    def _note_invisible_columns(self, table_id: TableId, ddl: str) -> None:
        """A table with INVISIBLE columns (MySQL 8.0.23+, MariaDB 10.3+) is read with its columns
        named: ``SELECT *`` leaves invisible columns out, and the rows are matched to the table's
        columns by position. Only such tables' DDL is parsed here (the word is rare)."""
        if "INVISIBLE" not in ddl.upper():
            return
        model = parser_for(self.flavor).parse(ddl, SchemaModel(), table_id.database).model
        table = model.table(table_id)
        if table is not None and any(column.invisible for column in table.columns):
            self._named_columns[table_id] = tuple(column.name for column in table.columns)

    def _select_for(self, table_id: TableId) -> str | None:
        columns = self.projection(table_id) if self.projection is not None else None
        if columns is None:
            columns = self._named_columns.get(table_id)
        return self.settings.select_for(
            table_id, [quote_identifier(c) for c in columns] if columns else ["*"]
        )


def _picklable(value: object) -> bool:
    import pickle  # noqa: PLC0415 - see Snapshotter._reader_connect

    try:
        pickle.dumps(value)
    except Exception:  # closures, lambdas, bound methods of unpicklable objects: all mean "no"
        return False
    return True
