"""Golden records of the single message transforms (``connector/transforms``): for each case of
``workloads.TRANSFORM_CASES`` a fresh engine runs the workload with the case's ``transforms.*`` /
``predicates.*`` properties against a real server, and every record it produced is compared with what
real Debezium 3.6.3's embedded engine emitted for the same workload and properties
(``tests/golden/debezium/transforms/<case>.jsonl``, recorded by
``python -m tests.golden.record_debezium --transform CASE``), after ``compare.py``'s normalisation plus
the per-run fields that transforms copy into the row (``__ts_ms``, ``__source_ts_ms``).

Cases: ExtractNewRecordState in every ``delete.tombstone.handling.mode`` (and dropping truncates) with ``add.fields`` (renames,
prefix, struct fields), ``add.headers`` (prefix; on kept tombstones too) and ``route.by.field``;
ReadToInsertEvent; Kafka's RegexRouter, ReplaceField, InsertField, Filter with TopicNameMatches,
RecordIsTombstone and HasHeaderKey (negated too), ValueToKey and ExtractField; ByLogicalTableRouter with
and without key enforcement and with a key field regex; the custom converters TinyIntOneToBooleanConverter
(with and without ``length.checker``) and JdbcSinkDataTypesConverter (``selector.boolean``/``.real``/
``.string``, ``treat.real.as.double``).

``unwrap_legacy_options`` is not run: its recording shows Debezium 3.6 ignoring the removed 2.x
options ``drop.tombstones``/``delete.handling.mode`` (its output equals ``unwrap_default``'s), which we
refuse at start-up instead (``test_removed_unwrap_options_are_refused``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.stores.offsets import MemoryOffsetStore
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.records import jsonl_line
from sink.memory import MemorySink
from tests.golden.compare import BLANK, Known, compare, dump, load, own_database, recording
from tests.golden.workloads import TRANSFORM_CASES, golden_config, run_statements, transform_db

# Differences from Debezium we keep on purpose (each with its reason). Everything else fails.
KNOWN: list[Known] = [
    Known(
        "latin1 text through JdbcSinkDataTypesConverter, streamed",
        "Debezium's streamed value of a latin1 column selected by selector.string is U+FFFD for 'é' (its "
        "converter decodes the binlog bytes as UTF-8; without the converter, and in its snapshot, it gives "
        "'é'); we give the text the server stores, in both paths",
        r"\.value\.payload\.after\.s",
        lambda ours, theirs: theirs == "\ufffd" and ours == "é",
    )
]
RUN = [case for case in TRANSFORM_CASES if case != "unwrap_legacy_options"]
# Fields that transforms copy from the envelope into the row or headers, per run like their source.
PER_RUN_ROW_FIELDS = ("__ts_ms", "__source_ts_ms", "__ts_us", "__ts_ns", "__source_ts_us", "__source_ts_ns")


def _normalise_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for record in records:
        value = record.get("value")
        payload = value.get("payload") if isinstance(value, dict) else None
        if isinstance(payload, dict):
            for name in PER_RUN_ROW_FIELDS:
                if name in payload:
                    payload[name] = BLANK
    return records


def _without_dummy_events(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """MariaDB's dummy events as Debezium's MySQL connector records them (``# Dummy event ...``,
    ``record_debezium.artefact``; some recorded here as ``# D``): an artefact of running Debezium on
    MariaDB, not Debezium behaviour. The schema change right after one has ``source.row`` 1 instead of
    0 (Debezium counts the dummy event as the statement's first), so that field is blanked there."""
    out = []
    after_dummy = False
    for r in records:
        value = r.get("value")
        payload = value.get("payload") if isinstance(value, dict) else None
        if isinstance(payload, dict) and str(payload.get("ddl") or "").startswith("# D"):
            after_dummy = True
            continue
        if after_dummy and isinstance(payload, dict) and "ddl" in payload:
            payload["source"]["row"] = "<after a dummy event>"
            after_dummy = False
        out.append(r)
    return out


def _like_theirs(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Blank our ``source.row`` of the schema changes whose recorded counterpart follows a dummy event."""
    marked = [
        r["value"]["payload"]["ddl"]
        for r in theirs
        if isinstance(r.get("value"), dict)
        and isinstance(r["value"].get("payload"), dict)
        and r["value"]["payload"].get("source", {}).get("row") == "<after a dummy event>"
    ]
    for r in ours:
        payload = r["value"].get("payload") if isinstance(r.get("value"), dict) else None
        if isinstance(payload, dict) and payload.get("ddl") in marked:
            payload["source"]["row"] = "<after a dummy event>"
    return ours


def run_case(server: LocalMySQLServer, tmp_path: Path, case: str) -> list[bytes]:
    spec = TRANSFORM_CASES[case]
    db = transform_db(case)
    server.execute(f"DROP DATABASE IF EXISTS `{db}`", f"CREATE DATABASE `{db}` CHARSET utf8mb4")
    memory = MemorySink()
    engine = Engine(golden_config(server, tmp_path, spec.properties(db)), sinks=[memory])
    try:
        run_statements(server, spec.setup, db)
        engine.catch_up()
        run_statements(server, spec.stream, db)
        engine.catch_up()
        engine.delivery.flush()
    finally:
        engine.close()
        server.execute(f"DROP DATABASE IF EXISTS `{db}`")
    return [jsonl_line(r) for r in memory.records]


@pytest.mark.parametrize("case", RUN)
def test_golden_transforms(mysql_server: LocalMySQLServer, tmp_path: Path, case: str) -> None:
    db = transform_db(case)
    ours = _normalise_rows(own_database(load(run_case(mysql_server, tmp_path, case)), db))
    theirs = load(recording(f"transforms/{case}.jsonl").read_bytes().splitlines())
    theirs = _normalise_rows(_without_dummy_events(own_database(theirs, db)))
    outcome = compare(f"transforms/{case}.jsonl", _like_theirs(ours, theirs), theirs, KNOWN)
    assert outcome.ok, "\n".join(outcome.problems)
    assert outcome.compared == outcome.equal + outcome.allowed == len(theirs) > 0


def test_legacy_recording_shows_debezium_ignoring_removed_options() -> None:
    """The fact behind refusing them: Debezium 3.6 gives the default mode's output for them."""
    legacy = load(recording("transforms/unwrap_legacy_options.jsonl").read_bytes().splitlines())
    default = load(recording("transforms/unwrap_default.jsonl").read_bytes().splitlines())

    def data(records: list[dict[str, Any]], case: str) -> list[str]:
        return [dump(r).replace(case, "CASE") for r in records if r["topic"] != "golden"]

    assert data(legacy, "unwrap_legacy_options") == data(default, "unwrap_default")


@pytest.mark.parametrize("key", ["drop.tombstones", "delete.handling.mode"])
def test_removed_unwrap_options_are_refused(key: str) -> None:
    props = {
        "database.hostname": "127.0.0.1",
        "database.user": "cdc",
        "database.server.id": "1",
        "topic.prefix": "p",
        "transforms": "unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        f"transforms.unwrap.{key}": "false" if key == "drop.tombstones" else "rewrite",
    }
    with pytest.raises(ConfigError) as raised:
        Engine(ConnectorConfig(props), sinks=[MemorySink()], offsets=MemoryOffsetStore())
    assert f"transforms.unwrap.{key}" in str(raised.value)
    assert "delete.tombstone.handling.mode" in str(raised.value)
