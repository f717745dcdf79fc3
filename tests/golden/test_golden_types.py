"""Golden events for every type family, captured by snapshot and by streaming through the engine.

For each variant (a set of representation modes) a fresh engine snapshots the family tables
(``op: r``), then every table is emptied and refilled with the same rows, which the engine streams
(``op: d`` + tombstone, then ``op: c``). Every record is written the way the JSON-lines sink writes
it (key and value with schemas, headers) and compared byte for byte with
``tests/golden/expected/<variant>/<family>.jsonl`` after normalising only what changes from run to
run (``ts_*``, binlog coordinates, GTIDs, thread ids, the run id header, our version).

The same row must carry the same value in all three images: the snapshot's ``after``, the delete's
``before`` and the insert's ``after``. ``README.md`` next to this file cites, per family, the
Debezium rules behind the expected values; ``tests/connector/test_converters.py`` checks each value
against hand-written expectations.

Regenerate after an intended change with ``MYSQL_CDC_GOLDEN_UPDATE=1`` and review the diff.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer
from sink.memory import MemorySink
from sink.records import ChangeRecord, RecordKind, jsonl_line
from tests.connector.test_converters import FAMILIES, Spec, charset_specs, create_sql

DB = "golden_types"
EXPECTED = Path(__file__).resolve().parent / "expected"
UPDATE = os.environ.get("MYSQL_CDC_GOLDEN_UPDATE") == "1"

# Every representation mode value appears in at least one variant.
VARIANTS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "default": ({}, tuple(FAMILIES) + ("charsets",)),
    "double_precise_base64_connect": (
        {
            "decimal.handling.mode": "double",
            "bigint.unsigned.handling.mode": "precise",
            "binary.handling.mode": "base64",
            "time.precision.mode": "connect",
        },
        ("integers", "decimals", "binaries", "temporals"),
    ),
    "string_urlsafe_adaptive": (
        {
            "decimal.handling.mode": "string",
            "binary.handling.mode": "base64-url-safe",
            "time.precision.mode": "adaptive",
        },
        ("decimals", "binaries", "temporals"),
    ),
    "hex_no_adjuster": (
        {"binary.handling.mode": "hex", "enable.time.adjuster": "false"},
        ("binaries", "temporals", "more_numbers"),
    ),
}


# What differs between runs, blanked in the raw bytes (re-serialising would lose the Java number
# rendering). Schema nodes never match: there these names only appear as "field" values and
# schema versions are numbers, not strings.
_VOLATILE = [
    (re.compile(rb'"(ts_ms|ts_us|ts_ns|pos|thread|server_id)":-?\d+'), rb'"\1":0'),
    (re.compile(rb'"(file|gtid|version)":"[^"]*"'), rb'"\1":"*"'),
    (re.compile(rb'"__debezium\.context\.runId":"[^"]*"'), rb'"__debezium.context.runId":"*"'),
]


def normalise(line: bytes) -> bytes:
    for pattern, replacement in _VOLATILE:
        line = pattern.sub(replacement, line)
    return line


def insert_statements(name: str, specs: Sequence[Spec]) -> list[str]:
    return [s for s in create_sql(name, specs) if s.startswith("INSERT")]


@pytest.fixture(scope="module")
def families(mysql_server: LocalMySQLServer) -> Iterator[dict[str, list[Spec]]]:
    all_families = {**FAMILIES, "charsets": charset_specs(mysql_server)}
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`", f"CREATE DATABASE `{DB}` CHARSET utf8mb4")
    statements = ["SET SESSION sql_mode=''"]
    for name, specs in all_families.items():
        statements += [s.replace("`conv_types`", f"`{DB}`") for s in create_sql(name, specs)]
    with mysql_server.connect() as conn, conn.cursor() as cur:
        for sql in statements:
            cur.execute(sql)
    try:
        yield all_families
    finally:
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`")


def run_variant(
    server: LocalMySQLServer,
    variant: str,
    overrides: dict[str, str],
    family_names: Sequence[str],
    families: dict[str, list[Spec]],
    tmp_path: Path,
) -> list[ChangeRecord]:
    props = server.connector_properties(
        **{
            "topic.prefix": f"golden_{variant}",
            "database.include.list": DB,
            "table.include.list": ",".join(f"{DB}\\.{n}" for n in family_names),
            "data.dir": str(tmp_path),
            "offset.storage": "memory",
            "schema.history.internal": "memory",
            "poll.interval.ms": "50",
            **overrides,
        }
    )
    memory = MemorySink()
    engine = Engine(ConnectorConfig.from_mapping(props), sinks=[memory])
    try:
        engine.catch_up(120)
        snapshot_data_unless_engine_did(engine, memory)
        refill = ["SET SESSION sql_mode=''"]
        for name in family_names:
            refill.append(f"DELETE FROM `{DB}`.`{name}`")
            refill += [s.replace("`conv_types`", f"`{DB}`") for s in insert_statements(name, families[name])]
        with server.connect() as conn, conn.cursor() as cur:
            for sql in refill:
                cur.execute(sql)
        engine.catch_up(120)
    finally:
        engine.close()
    return [r for r in memory.records if r.kind in (RecordKind.DATA, RecordKind.TOMBSTONE)]


def snapshot_data_unless_engine_did(engine: Engine, memory: MemorySink) -> None:
    """Until the engine runs the data snapshot itself (it currently snapshots the schema only), run
    the real ``snapshot.Snapshotter`` with the engine's own snapshot listener, exactly as the engine
    will: same connection settings, same record builder, same delivery."""
    if any(r.op == "r" for r in memory.records):
        return
    from connector.server import snapshot_connection_factory as connection_factory
    from connector.snapshot_source import SnapshotEmitter
    from snapshot.snapshotter import SnapshotSettings, Snapshotter

    assert engine.info is not None
    emitter = SnapshotEmitter(engine)
    Snapshotter(
        SnapshotSettings(),
        connection_factory(engine.config),
        engine.filter.table_captured,
        engine.info.flavor,
    ).run(emitter)
    engine.delivery.flush()


def by_id(records: Sequence[ChangeRecord], op: str) -> dict[int, dict[str, Any]]:
    images = {}
    for r in records:
        if r.kind == RecordKind.DATA and r.op == op:
            image = r.before if op == "d" else r.after
            assert image is not None
            images[image["id"]] = image
    return images


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_golden_events(
    mysql_server: LocalMySQLServer, families: dict[str, list[Spec]], tmp_path: Path, variant: str
) -> None:
    overrides, family_names = VARIANTS[variant]
    records = run_variant(mysql_server, variant, overrides, family_names, families, tmp_path)
    problems = []
    for name in family_names:
        mine = [r for r in records if r.table_id is not None and r.table_id.table == name]
        rows = max(len(s.values) for s in families[name])
        snapshot, deleted, inserted = by_id(mine, "r"), by_id(mine, "d"), by_id(mine, "c")
        # Same row, same value: snapshot SELECT vs binlog (delete image and insert image).
        assert sorted(snapshot) == sorted(deleted) == sorted(inserted) == list(range(rows)), name
        for row_id in range(rows):
            if not snapshot[row_id] == deleted[row_id] == inserted[row_id]:
                problems.append(
                    f"{name} row {row_id}:\n  snapshot {snapshot[row_id]}\n"
                    f"  delete   {deleted[row_id]}\n  insert   {inserted[row_id]}"
                )
        got = b"".join(normalise(jsonl_line(r)) + b"\n" for r in mine)
        path = EXPECTED / variant / f"{name}.jsonl"
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(got)
        expected = path.read_bytes()
        if got != expected:
            for number, (want, have) in enumerate(
                zip(expected.splitlines(), got.splitlines(), strict=False), 1
            ):
                if want != have:
                    problems.append(
                        f"{path.relative_to(EXPECTED)} line {number} differs:\n"
                        f"  expected {want[:600]!r}\n  got      {have[:600]!r}"
                    )
                    break
            else:
                problems.append(
                    f"{path.relative_to(EXPECTED)}: {len(expected.splitlines())} "
                    f"expected lines, got {len(got.splitlines())}"
                )
    assert not problems, "\n".join(problems)
