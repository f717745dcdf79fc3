"""``mysql-cdc snapshot --config FILE [--table db.t ...]``: one initial snapshot into the configured
sinks, then exit, leaving the offsets (and schema history) that ``mysql-cdc run`` continues from.

It is the engine's start-up with ``snapshot.mode=initial_only``: snapshot when no snapshot completed
yet (none, or one that was interrupted), never stream. ``--table`` limits the rows read to those
captured tables (``snapshot.include.collection.list``); the other captured tables are streamed from
the snapshot's position on, exactly as Debezium does with that property.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from connector.config import ConfigError, ConnectorConfig
from connector.engine import Engine
from connector.records.filters import TableFilter
from connector.server.connection import connect
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.records import ChangeRecord
from mysql_cdc_base.table_id import TableId


def _parse_tables(tables: Sequence[str]) -> list[TableId]:
    parsed = []
    for text in tables:
        try:
            parsed.append(TableId.parse(text.strip()))
        except ValueError:
            raise ConfigError("--table", f"expected database.table, got {text!r}") from None
    return parsed


def _check_tables(config: ConnectorConfig, tables: Sequence[TableId]) -> None:
    table_filter = TableFilter.from_config(config)
    for table_id in tables:
        if not table_filter.table_captured(table_id):
            raise ConfigError(
                "--table",
                f"{table_id} is not captured: it must match database.include.list / "
                "table.include.list (and not their exclude lists)",
            )
    with connect(config) as conn, conn.cursor() as cur:
        for table_id in tables:
            cur.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s "
                "AND table_type = 'BASE TABLE'",
                (table_id.database, table_id.table),
            )
            if cur.fetchone() is None:
                raise ConfigError("--table", f"table {table_id} does not exist on the server")


def snapshot_command(
    config: ConnectorConfig, tables: Sequence[str] = (), *, out: TextIO | None = None
) -> int:
    """Run the one-off snapshot; returns the process exit status."""
    out = out or sys.stdout
    table_ids = _parse_tables(tables)
    overrides = {"snapshot.mode": "initial_only"}
    if table_ids:
        _check_tables(config, table_ids)
        overrides["snapshot.include.collection.list"] = ",".join(re.escape(str(t)) for t in table_ids)
    effective = config.with_overrides(**overrides)

    rows: Counter[TableId] = Counter()

    def count(records: Sequence[ChangeRecord]) -> None:
        for record in records:
            if record.table_id is not None and record.op == "r":
                rows[record.table_id] += 1

    engine = Engine(effective, on_delivered=count)
    stored = SourceOffset.coerce(engine.offsets.load())
    if stored is not None and not stored.in_snapshot:
        engine.offsets.close()
        print(
            f"mysql-cdc: a snapshot already completed; `mysql-cdc run` continues from "
            f"{stored.describe()}. To take a new snapshot, delete the stored offsets and schema "
            "history (offset.storage.file.filename, schema.history.internal.file.filename) first.",
            file=sys.stderr,
        )
        return 1
    started = time.monotonic()
    try:
        engine.prepare()
        position = SourceOffset.coerce(engine.offsets.load())
    finally:
        engine.close()
    elapsed = time.monotonic() - started
    out.write(f"snapshot complete: {len(rows)} table(s), {sum(rows.values())} row(s) in {elapsed:.1f} s\n")
    for table_id in sorted(rows):
        out.write(f"  {table_id}: {rows[table_id]} row(s)\n")
    where = position.describe() if position is not None else None
    out.write(f"offsets stored at {where}; `mysql-cdc run` continues from there\n")
    out.flush()
    return 0
