"""Golden reselect: the ``ReselectColumnsPostProcessor`` on a FULL-image server compared with what real
Debezium 3.6.3 emitted for the same table, statements and properties
(``tests/golden/debezium/notify/reselect_full.jsonl`` and its log, recorded by ``python -m
tests.golden.record_notify``): nulls re-read after their transaction (``later``), a row deleted before
the re-read left as it is with Debezium's warning. Debezium 3.6.3 refuses ``binlog_row_image=NOBLOB``
(``reselect_noblob_rejected.txt``); ours accepts it with the post-processor (``tests/connector/sources/test_reselect.py``).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.records import jsonl_line
from tests.golden.compare import Known, compare, load, own_database, recording
from tests.golden.record_notify import DB
from tests.golden.test_golden_notifications import run_case

KNOWN: list[Known] = []


def test_golden_reselect_full_image(
    mysql_server: LocalMySQLServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="connector.post_processors.reselect")
    engine, memory = run_case(mysql_server, tmp_path, "reselect_full")
    engine.close()
    mysql_server.execute(f"DROP DATABASE IF EXISTS `{DB}`")
    ours = own_database(load(jsonl_line(r) for r in memory.records), DB)
    theirs = own_database(load(recording("notify/reselect_full.jsonl").read_bytes().splitlines()), DB)
    outcome = compare("notify/reselect_full.jsonl", ours, theirs, KNOWN)
    assert outcome.ok, "\n".join(outcome.problems)
    warned = [r.getMessage() for r in caplog.records if "Failed to find row" in r.getMessage()]
    logged = [
        line.split(" - ", 1)[1]
        for line in recording("notify/reselect_full.log.txt").read_text().splitlines()
        if "Failed to find row" in line
    ]
    # Debezium prints the key as a Connect Struct (Struct{id=4}), ours as a dict: the count and table
    # are compared.
    assert len(warned) == len(logged) == 2
    assert all(f"table {DB}.docs" in line for line in warned)
