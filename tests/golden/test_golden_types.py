"""Golden events for every type family, compared with real Debezium 3.6.3's records of the same workload.

For each variant (a set of representation modes) a fresh engine snapshots the family tables
(``op: r``), then every table is emptied and refilled with the same rows, which the engine streams
(``op: d`` + tombstone, then ``op: c``). Every record (data, tombstones and the schema-change topic) is
taken the way the JSON-lines sink writes it (key and value with schemas, headers) and compared with
what real Debezium emitted for exactly the same tables, rows, statements and connector properties
(``tests/golden/debezium/<variant>/<family>.jsonl`` and ``_schema_changes.jsonl``, recorded by
``python -m tests.golden.record_debezium``; the workload lives in ``workloads.py``). Only per-run
fields are normalised (``compare.py``: ``ts_*``, ``source`` file/pos/gtid/thread/server_id/version,
transaction ids, the run id header); any other difference fails with a per-record diff unless
``KNOWN`` below lists it with its reason.

The same row must also carry the same value in all three images: the snapshot's ``after``, the
delete's ``before`` and the insert's ``after``. ``README.md`` next to this file cites, per family, the
Debezium rules behind the values; ``tests/connector/records/test_converters.py`` checks each value against
hand-written expectations.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.records import ChangeRecord, RecordKind, jsonl_line
from sink.memory import MemorySink
from tests.connector.converter_specs import Spec
from tests.golden.compare import Known, compare, load, own_database, recording
from tests.golden.golden_support import _without_trailing_fraction_zeros, snapshot_data_unless_engine_did
from tests.golden.workloads import (
    DB,
    DEBEZIUM,
    VARIANTS,
    all_families,
    create_families,
    golden_config,
    refill_statements,
    run_statements,
    variant_properties,
)

SCHEMA_CHANGES = "_schema_changes"
REJECTED = "_rejected.txt"

# Differences from Debezium we keep on purpose (each with its reason). Everything else fails.
KNOWN: list[Known] = [
    Known(
        "YEAR 0000 in the snapshot",
        "MariaDB-as-MySQL artefact: Debezium's snapshot of YEAR 0000 is 1 because the MariaDB JDBC driver "
        "ignores the yearIsDateType=false that Debezium sets for MySQL Connector/J and returns the year "
        "as java.sql.Date 0001-01-01; with Connector/J Debezium reads the number 0, which the time "
        "adjuster turns into 2000 (0 with enable.time.adjuster=false), as we do. Only the snapshot "
        "image; Debezium's streamed value (1900) is compared.",
        r"\.value\.payload\.after\.yr",
        lambda ours, theirs: theirs == "1" and ours in ("2000", "0"),
    ),
    Known(
        "YEAR 0000 streamed",
        "Debezium bug we do not copy: its binlog client hands YEAR 0000 over as 1900, which the time "
        "adjuster leaves alone, while its snapshot (with Connector/J) gives 2000; we give the snapshot's "
        "value in both paths (0 with enable.time.adjuster=false), so one row has one value.",
        r"\.value\.payload\.(before|after)\.yr",
        lambda ours, theirs: theirs == "1900" and ours in ("2000", "0"),
    ),
    Known(
        "TIMESTAMP(n) fraction in the snapshot",
        "MariaDB-as-MySQL artefact (the MariaDB JDBC driver's value object): Debezium's snapshot writes "
        "the fewest fraction digits (10.5Z) where its streaming pads to the column's precision "
        "(10.500Z), as we do in both paths. Only fraction digits may differ.",
        r"\.value\.payload\.after\.(ts\d|tsz)",
        lambda ours, theirs: _without_trailing_fraction_zeros(ours) == theirs,
    ),
    Known(
        "ENUM member containing a comma, streamed",
        "Debezium bug we do not copy: its streaming emits the escaped text of the schema's 'allowed' "
        "list (a\\,b) where its snapshot and the server say a,b.",
        r"\.value\.payload\.(before|after)\.en",
        lambda ours, theirs: ours == "a,b" and theirs == "a\\,b",
    ),
    Known(
        "single-byte character sets, streamed",
        "Debezium decodes binlog bytes with Java's charsets, which disagree with the server's own "
        "conversion (its snapshot) for these 17 charsets: undefined bytes become U+FFFD, and charsets "
        "Java lacks (dec8, hp8, swe7, ...) are decoded as another charset. We decode as the server "
        "converts, in both paths.",
        r"\.value\.payload\.(before|after)\.c_(latin1|ascii|cp1250|cp1251|cp1256|cp1257|greek|koi8u|cp866"
        r"|hebrew|dec8|hp8|armscii8|swe7|keybcs2|geostd8|tis620)",
    ),
]


@pytest.fixture(scope="module")
def families(mysql_server: LocalMySQLServer) -> Iterator[dict[str, list[Spec]]]:
    families = all_families(mysql_server)
    create_families(mysql_server, families)
    try:
        yield families
    finally:
        mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`")


def run_variant(
    server: LocalMySQLServer,
    variant: str,
    family_names: Sequence[str],
    families: dict[str, list[Spec]],
    tmp_path: Path,
) -> list[ChangeRecord]:
    memory = MemorySink()
    engine = Engine(golden_config(server, tmp_path, variant_properties(variant)), sinks=[memory])
    try:
        engine.catch_up(120)
        snapshot_data_unless_engine_did(engine, memory)
        run_statements(server, refill_statements(family_names, families))
        engine.catch_up(120)
    finally:
        engine.close()
    return list(memory.records)


def by_id(records: Sequence[ChangeRecord], op: str) -> dict[int, dict[str, Any]]:
    images = {}
    for r in records:
        if r.kind == RecordKind.DATA and r.op == op:
            image = r.before if op == "d" else r.after
            assert image is not None
            images[image["id"]] = image
    return images


def split_by_file(lines: Sequence[bytes], prefix: str) -> dict[str, list[bytes]]:
    """Records by golden file: the family table's data topic, or the schema-change topic."""
    out: dict[str, list[bytes]] = {}
    for line in lines:
        topic = json.loads(line)["topic"]
        name = SCHEMA_CHANGES if topic == prefix else topic.removeprefix(f"{prefix}.{DB}.")
        out.setdefault(name, []).append(line)
    return out


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_golden_events(
    mysql_server: LocalMySQLServer, families: dict[str, list[Spec]], tmp_path: Path, variant: str
) -> None:
    rejected = DEBEZIUM / variant / REJECTED
    _, family_names = VARIANTS[variant]
    records = run_variant(mysql_server, variant, family_names, families, tmp_path)
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
    if rejected.exists():
        # Debezium 3.6.3 refuses time.precision.mode=adaptive ("no longer supported"); we keep it
        # (README "Fidelity"). With no recording to compare, this variant checks what it can: the
        # snapshot, delete and insert images agree; test_converters checks the values per mode.
        assert "'adaptive' time.precision.mode is no longer supported" in rejected.read_text()
        assert not problems, "\n".join(problems)
        return
    kept = [r for r in records if r.kind in (RecordKind.DATA, RecordKind.TOMBSTONE, RecordKind.SCHEMA_CHANGE)]
    ours = split_by_file([jsonl_line(r) for r in kept], variant_properties(variant)["topic.prefix"])
    for name in (*family_names, SCHEMA_CHANGES):
        path = recording(f"{variant}/{name}.jsonl")
        mine_lines, theirs = load(ours.get(name, [])), load(path.read_bytes().splitlines())
        outcome = compare(
            f"{variant}/{name}.jsonl", own_database(mine_lines, DB), own_database(theirs, DB), KNOWN
        )
        problems += outcome.problems
    unexpected = set(ours) - {*family_names, SCHEMA_CHANGES}
    assert not unexpected, f"records on topics Debezium did not write to: {sorted(unexpected)}"
    assert not problems, "\n".join(problems)
