"""GTID sets for restart positions and gtid.source.includes/excludes."""

from __future__ import annotations

from pathlib import Path

import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.records.filters import gtid_source_filter
from connector.records.settings import CaptureSettings
from connector.stores.offsets import FileOffsetStore
from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.position import GtidSet
from mysql_cdc_base.records import RecordKind
from sink.memory import MemorySink

# Samples in MySQL 8.4's own notation (SHOW BINARY LOG STATUS Executed_Gtid_Set, Debezium offsets).
UUID_A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
UUID_B = "8f0e5a7e-1a2b-11ee-a6c3-0242ac120002"


def test_source_of_names_the_server_uuid_or_the_mariadb_stream():
    assert GtidSet.source_of(f"{UUID_A.upper()}:23") == UUID_A
    assert GtidSet.source_of("0-1-100") == "0-1"
    assert GtidSet.source_of("12-3001-7") == "12-3001"


def test_retain_and_the_merged_restart_set():
    offset = GtidSet.parse(f"{UUID_A}:1-5:7,{UUID_B}:1-3")
    keep_a = lambda source: source == UUID_A  # noqa: E731
    assert str(offset.retain(keep_a)) == f"{UUID_A}:1-5:7"
    server = GtidSet.parse(f"{UUID_A}:1-20,{UUID_B}:1-40")
    # Sources the filter keeps restart from the offset; the others from what the server executed.
    assert str(offset.with_sources_of(server, keep_a)) == f"{UUID_A}:1-5:7,{UUID_B}:1-40"
    mariadb = GtidSet.parse("0-1-100,1-1-7")
    assert str(mariadb.retain(lambda s: s == "0-1")) == "0-1-100"
    merged = mariadb.with_sources_of(GtidSet.parse("0-1-150,1-1-30"), lambda s: s == "0-1")
    assert str(merged) == "0-1-100,1-1-30"


def _config(**props: str) -> ConnectorConfig:
    base = {
        "database.hostname": "127.0.0.1",
        "database.user": "u",
        "database.server.id": "1",
        "topic.prefix": "p",
    }
    return ConnectorConfig.from_mapping({**base, **props})


def test_gtid_source_filters_match_whole_names_and_are_exclusive():
    includes = gtid_source_filter(
        CaptureSettings.from_config(_config(**{"gtid.source.includes": f"{UUID_A},0-1"}))
    )
    assert includes is not None and includes(UUID_A) and includes("0-1") and not includes("0-12")
    assert not includes(UUID_B)
    excludes = gtid_source_filter(CaptureSettings.from_config(_config(**{"gtid.source.excludes": "1-.*"})))
    assert excludes is not None and excludes("0-1") and not excludes("1-1")
    assert gtid_source_filter(CaptureSettings.from_config(_config())) is None
    with pytest.raises(ConfigError) as info:
        _config(**{"gtid.source.includes": "a", "gtid.source.excludes": "b"})
    assert "gtid.source.excludes" in str(info.value)


def _ids(records) -> list[int]:
    return [r.after["id"] for r in records if r.kind == RecordKind.DATA and r.op in ("c", "r")]


def test_gtid_source_includes_skips_other_streams_and_restarts_past_them(tmp_path: Path):
    with LocalMySQLServer() as server:
        server.execute("CREATE DATABASE g", "CREATE TABLE g.t (id INT PRIMARY KEY)")
        props = server.connector_properties(
            **{
                "topic.prefix": "g",
                "database.include.list": "g",
                "data.dir": str(tmp_path),
                "gtid.source.includes": "0-1",
            }
        )

        def run() -> list[int]:
            memory = MemorySink()
            engine = Engine(ConnectorConfig.from_mapping(props), sinks=[memory])
            try:
                engine.catch_up()
            finally:
                engine.close()
            return _ids(memory.records)

        assert run() == []
        with server.connect("g") as conn, conn.cursor() as cur:
            cur.execute("INSERT INTO t VALUES (1)")
            cur.execute("SET SESSION gtid_domain_id = 1")  # another stream: 1-1-n
            cur.execute("INSERT INTO t VALUES (2)")
            cur.execute("SET SESSION gtid_domain_id = 0")
            cur.execute("INSERT INTO t VALUES (3)")
        assert run() == [1, 3]
        stored = FileOffsetStore(tmp_path / "offsets.json", "mysql-cdc", "g").load()
        assert stored is not None and stored.gtids is not None
        assert set(stored.gtids.mariadb) == {0}, stored.gtids  # only the included stream

        with server.connect("g") as conn, conn.cursor() as cur:
            cur.execute("SET SESSION gtid_domain_id = 1")
            cur.execute("INSERT INTO t VALUES (4)")
            cur.execute("SET SESSION gtid_domain_id = 0")
            cur.execute("INSERT INTO t VALUES (5)")
        # The restart reads from 0-1-n and, for stream 1-1, from the server's own position.
        assert run() == [5]

        # gtid.source.filter.dml.events=false: rows of other streams read while streaming are
        # emitted (a restart still starts past them).
        props["gtid.source.filter.dml.events"] = "false"
        memory = MemorySink()
        engine = Engine(ConnectorConfig.from_mapping(props), sinks=[memory])
        try:
            server.execute("INSERT INTO g.t VALUES (7)")
            engine.catch_up()  # the stream is open from here on
            with server.connect("g") as conn, conn.cursor() as cur:
                cur.execute("SET SESSION gtid_domain_id = 1")
                cur.execute("INSERT INTO t VALUES (6)")
            engine.catch_up()
        finally:
            engine.close()
        assert _ids(memory.records) == [7, 6]
