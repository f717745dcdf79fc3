"""The pytest plugin, run the way a consuming project runs it: a separate pytest session with the
plugin enabled (``-p connector.testing.pytest_plugin``, as the ``pytest11`` entry point does)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

INNER_TESTS = """
import json
import os
import sys

import pytest

STATE = os.environ["CDC_PLUGIN_STATE"]


def test_plugin_is_inert_until_a_fixture_is_used():
    loaded = [m for m in ("pymysql", "connector.embedded.api", "connector.testing.local_server", "connector.testing.fake")
              if m in sys.modules]
    assert loaded == []


@pytest.mark.cdc_properties({"tombstones.on.delete": "false"})
def test_connector_fixtures(cdc_mysql, cdc_database, cdc_properties, cdc_connector):
    assert cdc_properties["database.include.list"] == cdc_database
    assert cdc_properties["topic.prefix"] == "shop"  # from the ini file
    cdc_mysql.execute("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)", "DELETE FROM t",
                      database=cdc_database)
    deleted = cdc_connector.wait_for(table="t", op="d")
    assert deleted.topic == f"shop.{cdc_database}.t"
    assert [r for r in cdc_connector.drain() if r.kind.value == "tombstone"] == []  # the marker applied
    with open(STATE, "w") as fh:
        json.dump({"workdir": str(cdc_mysql.workdir), "port": cdc_mysql.port, "database": cdc_database,
                   "replication": sorted(cdc_connector.replication_thread_ids)}, fh)


def test_engine_factory_and_fake(cdc_mysql, cdc_engine_factory, cdc_fake):
    first, second = cdc_engine_factory(), cdc_engine_factory({"topic.prefix": "other"})
    assert first.config.server_id != second.config.server_id  # no replica id clash on the server
    fake = cdc_fake("CREATE TABLE t (id INT PRIMARY KEY)")
    assert fake.insert("t", {"id": 1})[0].topic == "shop.inventory.t"
    first.drain(), second.drain()  # both are streaming now
    dumps = {r[0] for r in cdc_mysql.query("SHOW PROCESSLIST") if str(r[4]).startswith("Binlog Dump")}
    assert dumps == first.replication_thread_ids | second.replication_thread_ids and len(dumps) == 2
"""


def test_plugin_fixtures_in_a_consumer_project(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\nmysql_cdc_topic_prefix = shop\n")
    (project / "test_consumer.py").write_text(textwrap.dedent(INNER_TESTS))
    state = tmp_path / "state.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",  # plugin via its pytest11 entry point
            "-W",
            "error::pytest.PytestUnknownMarkWarning",
            str(project),
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CDC_PLUGIN_STATE": str(state)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout
    # Everything the fixtures made is gone once the session ended: the server's files and process
    # (nothing listens on its port any more).
    facts = json.loads(state.read_text())
    assert facts["replication"]
    assert not Path(facts["workdir"]).exists()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", facts["port"])) != 0


def test_importing_the_plugin_has_no_side_effects():
    code = (
        "import sys, connector.testing.pytest_plugin as p; "
        "heavy = [m for m in sys.modules if m.startswith(('pymysql', 'pymysqlreplication', 'kafka', "
        "'connector.', 'ddl', 'sink', 'mysql_cdc_base')) and m not in ('connector.testing', 'connector.testing.pytest_plugin')]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
