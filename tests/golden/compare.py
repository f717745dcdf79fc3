"""Compare the connector's records with real Debezium's recordings (``tests/golden/debezium``).

Both sides are JSON lines in the layout of our jsonl sink (topic, key and value as Kafka Connect's
JsonConverter writes them, headers). Each line is parsed keeping every number's exact text (Java's
``1.0E300`` must stay ``1.0E300``) and every object's key order, the per-run fields are blanked
(``PER_RUN``), the two sequences are aligned, and every difference is reported per record with its
JSON path, our value and Debezium's. A difference passes only when ``KNOWN`` (the test's explicit
allow-list, each entry with its reason) covers it.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.golden.workloads import DEBEZIUM

# Set to a file path to get every difference as JSON lines (used to write notes/golden-diff.md).
REPORT = os.environ.get("MYSQL_CDC_GOLDEN_REPORT")


class Num(str):
    """A JSON number, kept as its exact text."""


def parse(line: bytes | str) -> Any:
    return json.loads(line, parse_int=Num, parse_float=Num, parse_constant=Num)


def dump(node: Any) -> str:
    if isinstance(node, Num):
        return str(node)
    if isinstance(node, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{dump(v)}" for k, v in node.items()) + "}"
    if isinstance(node, list):
        return "[" + ",".join(dump(v) for v in node) + "]"
    return json.dumps(node, ensure_ascii=False)


# -- normalisation ----------------------------------------------------------------------------------

BLANK = "*"

# Fields of ``source`` that change from run to run, blanked on both sides:
#   ts_ms/ts_us/ts_ns  the wall clock of the event or of the snapshot read;
#   file/pos           binlog coordinates: another server (Debezium's runs on its own throwaway server,
#                      started with --version=8.0.36-log), another binlog history;
#   gtid               the GTID of the event (Debezium on MariaDB-as-MySQL sees no MySQL GTIDs: null);
#   thread             the server's connection id of the writing session;
#   server_id          the server's id as the binlog event carries it (0 in the snapshot);
#   version            the connector build ("3.6.3.Final" vs our own version string).
SOURCE_PER_RUN = ("ts_ms", "ts_us", "ts_ns", "file", "pos", "gtid", "thread", "server_id", "version")
# Top-level value fields: the time the connector processed the record (envelope, schema change,
# heartbeat and transaction records alike).
VALUE_PER_RUN = ("ts_ms", "ts_us", "ts_ns")


def _blank(node: Any, key: str) -> None:
    if isinstance(node, dict) and key in node:
        node[key] = BLANK


TRANSACTION_VALUE = "io.debezium.connector.common.TransactionMetadataValue"


def _is_transaction_record(record: dict[str, Any]) -> bool:
    """A BEGIN/END record, on whatever topic the naming strategy gives it (``topic.transaction``)."""
    value = record.get("value")
    schema = value.get("schema") if isinstance(value, dict) else None
    named = isinstance(schema, dict) and schema.get("name") == TRANSACTION_VALUE
    return named or str(record.get("topic", "")).endswith(".transaction")


def normalise(record: dict[str, Any]) -> dict[str, Any]:
    """Blank the per-run fields of one record (in place) and bring the headers to one form."""
    value = record.get("value")
    payload = value.get("payload") if isinstance(value, dict) else None
    if isinstance(payload, dict):
        for key in VALUE_PER_RUN:
            _blank(payload, key)
        source = payload.get("source")
        if isinstance(source, dict):
            for key in SOURCE_PER_RUN:
                _blank(source, key)
        # Transaction ids: the GTID (or binlog position) of the transaction, per run.
        transaction = payload.get("transaction")
        if isinstance(transaction, dict):
            _blank(transaction, "id")
        if _is_transaction_record(record):
            _blank(payload, "id")
    key = record.get("key")
    if isinstance(key, dict) and _is_transaction_record(record):
        _blank(key.get("payload"), "id")
    headers = record.get("headers")
    if isinstance(headers, dict):
        record["headers"] = {name: _header_value(v) for name, v in headers.items()}
        # The id of the connector run (a random UUID per start).
        _blank(record["headers"], "__debezium.context.runId")
    return record


def _header_value(value: Any) -> Any:
    """One form for a header value on both sides. The oracle writes the header converter's JSON (the
    embedded engine's Json header format: ``{"schema", "payload"}``); our jsonl sink writes the payload
    (a string as is, a struct as its JSON text). A harness difference, not Debezium's: compare payloads."""
    if isinstance(value, dict) and set(value) == {"schema", "payload"}:
        value = value["payload"]
    if isinstance(value, str) and value.startswith("{"):
        try:
            return parse(value)
        except ValueError:
            return value
    return value


def load(lines: Iterable[bytes | str]) -> list[dict[str, Any]]:
    return [normalise(parse(line)) for line in lines if line.strip()]


def own_database(records: Sequence[dict[str, Any]], db: str) -> list[dict[str, Any]]:
    """The records without schema changes of databases other than ``db``: Debezium's snapshot records
    the DDL of every database on the server (``schema.history.internal.store.only.captured.databases.ddl``
    is false by default), and the test session's server holds other tests' databases. The server-wide
    ``SET character_set_server`` (database ``""``) stays."""
    out = []
    for r in records:
        value = r.get("value")
        payload = value.get("payload") if isinstance(value, dict) else None
        if isinstance(payload, dict) and "ddl" in payload and payload.get("databaseName") not in (db, ""):
            continue
        out.append(r)
    return out


# -- the allow-list ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Known:
    """A difference we keep on purpose: where (a regex on the JSON path), when, and why."""

    name: str
    reason: str
    path: str
    when: Callable[[Any, Any], bool] = lambda ours, theirs: True

    def covers(self, path: str, ours: Any, theirs: Any) -> bool:
        return re.fullmatch(self.path, path) is not None and self.when(ours, theirs)


# -- comparing --------------------------------------------------------------------------------------

MISSING = "<missing>"


def differences(ours: Any, theirs: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, our value, Debezium's value) for every leaf that differs, and key-order differences."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in list(theirs) + [k for k in ours if k not in theirs]:
            out += differences(ours.get(key, MISSING), theirs.get(key, MISSING), f"{path}.{key}")
        if not out and list(ours) != list(theirs):
            out.append((f"{path}<key order>", list(ours), list(theirs)))
        return out
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        out = []
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            name = b.get("field") if isinstance(b, dict) and isinstance(b.get("field"), str) else None
            out += differences(a, b, f"{path}[{i}:{name}]" if name else f"{path}[{i}]")
        return out
    if type(ours) is not type(theirs) or ours != theirs:
        return [(path, ours, theirs)]
    return []


@dataclass
class Outcome:
    """The comparison of one file."""

    name: str
    compared: int = 0
    equal: int = 0
    allowed: int = 0
    problems: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # for REPORT

    @property
    def ok(self) -> bool:
        return not self.problems


def _short(node: Any, limit: int = 300) -> str:
    text = dump(node)
    return text if len(text) <= limit else text[:limit] + "…"


def _describe(record: dict[str, Any] | None) -> str:
    if record is None:
        return "-"
    value = record.get("value")
    payload = value.get("payload") if isinstance(value, dict) else None
    what = (
        "tombstone"
        if value is None
        else (payload or {}).get("op")
        or (
            "schema change: " + _short((payload or {}).get("ddl"), 80)
            if "ddl" in (payload or {})
            else "record"
        )
    )
    return f"{record.get('topic')} [{what}]"


def compare(
    name: str, ours: Sequence[dict[str, Any]], theirs: Sequence[dict[str, Any]], known: Sequence[Known] = ()
) -> Outcome:
    """Align the two record sequences and report every difference not covered by ``known``."""
    outcome = Outcome(name)
    texts_ours, texts_theirs = [dump(r) for r in ours], [dump(r) for r in theirs]
    matcher = difflib.SequenceMatcher(None, texts_ours, texts_theirs, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            outcome.compared += i2 - i1
            outcome.equal += i2 - i1
            continue
        pairs = list(zip(range(i1, i2), range(j1, j2), strict=False))
        for i, j in pairs:
            outcome.compared += 1
            diffs = differences(ours[i], theirs[j])
            open_diffs = [d for d in diffs if not any(k.covers(*d) for k in known)]
            for path, a, b in diffs:
                covered = next((k.name for k in known if k.covers(path, a, b)), None)
                outcome.rows.append(
                    {
                        "file": name,
                        "record": j,
                        "what": _describe(theirs[j]),
                        "path": path,
                        "ours": _short(a, 2000),
                        "debezium": _short(b, 2000),
                        "known": covered,
                    }
                )
            if not open_diffs:
                outcome.allowed += 1
                continue
            lines = [f"{name} record {j + 1} (ours {i + 1}) {_describe(theirs[j])}:"]
            for path, a, b in open_diffs[:12]:
                lines.append(f"    {path}\n      ours     {_short(a)}\n      debezium {_short(b)}")
            if len(open_diffs) > 12:
                lines.append(f"    ... and {len(open_diffs) - 12} more differences")
            outcome.problems.append("\n".join(lines))
        for i in range(i1 + len(pairs), i2):
            outcome.compared += 1
            outcome.problems.append(
                f"{name}: extra record of ours {i + 1} {_describe(ours[i])}:\n"
                f"    {_short(texts_ours[i], 600)}"
            )
            outcome.rows.append(
                {
                    "file": name,
                    "record": None,
                    "what": _describe(ours[i]),
                    "path": "<extra>",
                    "ours": _short(texts_ours[i], 2000),
                    "debezium": None,
                    "known": None,
                }
            )
        for j in range(j1 + len(pairs), j2):
            outcome.compared += 1
            outcome.problems.append(
                f"{name}: Debezium's record {j + 1} missing from ours "
                f"{_describe(theirs[j])}:\n    {_short(texts_theirs[j], 600)}"
            )
            outcome.rows.append(
                {
                    "file": name,
                    "record": j,
                    "what": _describe(theirs[j]),
                    "path": "<missing>",
                    "ours": None,
                    "debezium": _short(texts_theirs[j], 2000),
                    "known": None,
                }
            )
    if REPORT:
        with open(REPORT, "a") as f:
            f.write(
                json.dumps(
                    {
                        "summary": name,
                        "compared": outcome.compared,
                        "equal": outcome.equal,
                        "allowed": outcome.allowed,
                    }
                )
                + "\n"
            )
            for row in outcome.rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return outcome


def recording(relative: str) -> Path:
    return DEBEZIUM / relative


def recorded_lines(relative: str) -> list[bytes]:
    return recording(relative).read_bytes().splitlines()
