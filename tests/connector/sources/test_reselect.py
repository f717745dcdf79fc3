"""``binlog_row_image=NOBLOB`` with the reselect post-processor: a table with TEXT, BLOB and JSON
columns streamed under updates gives the same ``after`` images as a FULL-image server's run, the
``before`` images hold ``unavailable.value.placeholder`` where NOBLOB left a BLOB/TEXT column out,
and a row deleted before the re-read keeps its placeholders (and a warning says so). Without the
post-processor the start-up check refuses NOBLOB, naming the fix."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from connector.engine import Engine
from connector.errors import PrerequisiteError
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.errors import ConfigError
from sink.memory import MemorySink
from tests.golden.workloads import golden_config, run_statements

DB = "reselect_t"
PLACEHOLDER = "__debezium_unavailable_value"
SETUP = (
    f"CREATE TABLE {DB}.docs (id INT PRIMARY KEY, title VARCHAR(20), body TEXT, data BLOB, doc JSON)",
    f"INSERT INTO {DB}.docs VALUES (1, 'one', 'body-1', x'0102', '{{\"a\": 1}}'), (2, 'two', NULL, NULL, NULL)",
)
# Each group runs, then the connector catches up: every re-read sees the state right after its change.
WORKLOAD: tuple[tuple[str, ...], ...] = (
    (f"INSERT INTO {DB}.docs VALUES (3, 'three', 'body-3', x'0303', '{{\"c\": [1, 2]}}')",),
    (f"UPDATE {DB}.docs SET title = 'one*' WHERE id = 1",),
    (f"UPDATE {DB}.docs SET title = 'three*' WHERE id = 3",),
    (f"UPDATE {DB}.docs SET body = 'body-2', title = 'two*' WHERE id = 2",),
    (f"UPDATE {DB}.docs SET data = x'ff', title = 'one**' WHERE id = 1",),
    (f"UPDATE {DB}.docs SET doc = '[9]' WHERE id = 3",),
    (f"UPDATE {DB}.docs SET title = 'two**' WHERE id = 2",),
    # A row gone before the re-read: what NOBLOB left out cannot be re-read.
    (
        "BEGIN",
        f"INSERT INTO {DB}.docs VALUES (4, 'four', 'body-4', x'04', '[4]')",
        f"UPDATE {DB}.docs SET title = 'four*' WHERE id = 4",
        f"DELETE FROM {DB}.docs WHERE id = 4",
        "COMMIT",
    ),
)
PROPS = {
    "topic.prefix": DB,
    "database.include.list": DB,
    "snapshot.mode": "initial",
    "post.processors": "reselector",
    "post.processors.reselector.type": "io.debezium.processors.reselect.ReselectColumnsPostProcessor",
    "post.processors.reselector.reselect.columns.include.list": rf"{DB}\.docs:(body|data|doc)",
}


@pytest.fixture(scope="module")
def noblob_server() -> Iterator[LocalMySQLServer]:
    server = LocalMySQLServer(extra_options=("--binlog-row-image=NOBLOB",)).start()
    try:
        yield server
    finally:
        server.remove()


def stream(server: Any, tmp_path: Path, props: dict[str, str]) -> list[dict[str, Any]]:
    server.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}")
    run_statements(server, SETUP)
    memory = MemorySink()
    engine = Engine(golden_config(server, tmp_path, props), sinks=[memory])
    try:
        engine.catch_up()
        for group in WORKLOAD:
            run_statements(server, group)
            engine.catch_up()
    finally:
        engine.close()
        server.execute(f"DROP DATABASE IF EXISTS {DB}")
    return [
        r.value
        for r in memory.records
        if isinstance(r.value, dict) and r.value.get("op") in ("c", "r", "u", "d")
    ]


def images(values: Sequence[dict[str, Any]], part: str) -> list[tuple[str, Any]]:
    return [(v["op"], v[part]) for v in values]


def test_noblob_with_reselect_equals_a_full_image_run(
    mysql_server: Any, noblob_server: LocalMySQLServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="connector.post_processors.reselect")
    full = stream(mysql_server, tmp_path / "full", PROPS)
    noblob = stream(noblob_server, tmp_path / "noblob", PROPS)
    assert [v["op"] for v in noblob] == [v["op"] for v in full] == ["r", "r", *"cuuuuuu", *"cud"]

    gone = [i for i, v in enumerate(full) if (v["after"] or v["before"])["id"] == 4]
    kept = [i for i in range(len(full)) if i not in gone]
    # Every after image equals the FULL run's, except the row deleted before its re-read.
    assert [noblob[i]["after"] for i in kept] == [full[i]["after"] for i in kept]
    # Before images: NOBLOB leaves the BLOB/TEXT columns out, the placeholder marks them (a
    # re-read would give the row's state after the change, not before it: they are not re-read).
    for i in kept:
        theirs, ours = full[i]["before"], noblob[i]["before"]
        if theirs is None:
            assert ours is None
            continue
        assert {k: ours[k] for k in ("id", "title")} == {k: theirs[k] for k in ("id", "title")}
        assert ours["body"] == ours["doc"] == PLACEHOLDER
        assert ours["data"] == "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="  # the placeholder's bytes

    # The row deleted before the re-read: its insert is whole (an insert's image holds every
    # column); its update keeps the placeholders where NOBLOB left the columns out.
    insert, update, delete = (noblob[i] for i in gone)
    assert insert["after"] == full[gone[0]]["after"]
    assert update["after"]["title"] == "four*"
    assert update["after"]["body"] == update["after"]["doc"] == PLACEHOLDER
    assert delete["after"] is None
    warned = [r.getMessage() for r in caplog.records if "Failed to find row" in r.getMessage()]
    assert warned == [f"Failed to find row in table {DB}.docs with key {{'id': 4}}."]


def test_noblob_without_the_post_processor_is_refused(
    noblob_server: LocalMySQLServer, tmp_path: Path
) -> None:
    props = {k: v for k, v in PROPS.items() if not k.startswith("post.processors")}
    noblob_server.execute(f"CREATE DATABASE IF NOT EXISTS {DB}")
    engine = Engine(golden_config(noblob_server, tmp_path, props), sinks=[MemorySink()])
    try:
        with pytest.raises(PrerequisiteError, match="NOBLOB together with the reselect post-processor"):
            engine.prepare()
    finally:
        engine.close()
        noblob_server.execute(f"DROP DATABASE IF EXISTS {DB}")


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"post.processors.reselector.type": "io.debezium.Nope"}, "post.processors.reselector.type"),
        (
            {"post.processors.reselector.reselect.cache.enabled": "true"},
            "post.processors.reselector.reselect.cache.enabled",
        ),
        (
            {"post.processors.reselector.reselect.null.values": "perhaps"},
            "post.processors.reselector.reselect.null.values",
        ),
        (
            {"post.processors.reselector.reselect.error.handling.mode": "shrug"},
            "post.processors.reselector.reselect.error.handling.mode",
        ),
        (
            {"post.processors.reselector.reselect.columns.include.list": "("},
            "post.processors.reselector.reselect.columns.include.list",
        ),
    ],
)
def test_bad_post_processor_options_name_their_key(
    mysql_server: Any, tmp_path: Path, extra: dict[str, str], key: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        Engine(golden_config(mysql_server, tmp_path, {**PROPS, **extra}), sinks=[MemorySink()])
    assert raised.value.key == key


@pytest.mark.parametrize("use_event_key", [True, False])
def test_keyless_table_is_reselected_by_the_event_key(
    mysql_server: Any, tmp_path: Path, use_event_key: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """``reselect.use.event.key``: a table without a primary key, its key from ``message.key.columns``;
    without the option the row cannot be looked up (warned, left null)."""
    caplog.set_level(logging.WARNING, logger="connector.post_processors.reselect")
    mysql_server.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}")
    run_statements(
        mysql_server,
        (
            f"CREATE TABLE {DB}.notes (code VARCHAR(10), body TEXT)",
            f"INSERT INTO {DB}.notes VALUES ('a', 'x')",
        ),
    )
    props = {
        **PROPS,
        "message.key.columns": f"{DB}.notes:code",
        "post.processors.reselector.reselect.columns.include.list": rf"{DB}\.notes:body",
        "post.processors.reselector.reselect.use.event.key": str(use_event_key).lower(),
    }
    memory = MemorySink()
    engine = Engine(golden_config(mysql_server, tmp_path, props), sinks=[memory])
    try:
        engine.catch_up()
        run_statements(
            mysql_server,
            (
                "BEGIN",
                f"UPDATE {DB}.notes SET body = NULL WHERE code = 'a'",
                f"UPDATE {DB}.notes SET body = 'later' WHERE code = 'a'",
                "COMMIT",
            ),
        )
        engine.catch_up()
    finally:
        engine.close()
        mysql_server.execute(f"DROP DATABASE IF EXISTS {DB}")
    first = next(r.value for r in memory.records if isinstance(r.value, dict) and r.value.get("op") == "u")
    assert first["after"]["body"] == ("later" if use_event_key else None)
    warned = [r.getMessage() for r in caplog.records if "no primary key" in r.getMessage()]
    assert bool(warned) is not use_event_key


def test_unavailable_value_placeholder_marks_what_noblob_left_out(
    noblob_server: LocalMySQLServer, tmp_path: Path
) -> None:
    marker = "<not in the binlog>"
    values = stream(noblob_server, tmp_path, {**PROPS, "unavailable.value.placeholder": marker})
    befores = [v["before"] for v in values if v["op"] == "u" and v["before"] is not None]
    assert befores
    for before in befores:
        assert before["body"] == before["doc"] == marker
        assert base64.b64decode(before["data"]) == marker.encode()
