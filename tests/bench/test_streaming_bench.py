"""bench/streaming.py's parts on a real server at a small scale: the stored start offset, the
workload's row changes, the readers' counts over the range, and a real ``mysql-cdc run`` subprocess
timed by its output file and checked change by change."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.connector_run import BenchRunError, connector_environment, prepare, timed_run
from bench.readers import bare_loop, native_available, native_loop
from bench.streaming import check_output
from bench.workload import CHANGES_TABLE, write_changes_workload
from connector.testing.local_server import LocalMySQLServer


def test_the_connector_resumes_at_the_stored_offset_and_delivers_the_whole_range(
    fresh_mysql_server: LocalMySQLServer, tmp_path: Path
) -> None:
    server = fresh_mysql_server
    server.execute("CREATE DATABASE bench", CHANGES_TABLE)
    state = tmp_path / "prepared"
    stored = prepare(server, state, 9000)
    start = tuple(server.query("SHOW MASTER STATUS")[0][:2])
    assert stored == start
    load = dict(zip(("inserts", "updates", "deletes"), write_changes_workload(server, 2_400), strict=True))
    assert load == {"inserts": 2_400, "updates": 1_000, "deletes": 600}
    assert server.query("SELECT COUNT(*) FROM bench.changes")[0][0] == 1_800
    end = tuple(server.query("SHOW MASTER STATUS")[0][:2])
    changes = sum(load.values())

    assert bare_loop(server, (start[0], start[1]), (end[0], end[1]), 9100) == changes
    if native_available():
        assert native_loop(server, (start[0], start[1]), changes, 9200) == changes

    workdir = tmp_path / "round"
    workdir.mkdir()
    run = timed_run(server, state, workdir, 9300, changes + load["deletes"])
    check_output(workdir / "events.jsonl", load)
    assert 0 < run.first_line_s <= run.last_line_s
    assert 1 <= run.lines_at_first <= changes + load["deletes"]
    assert run.peak_rss_mb > 10 and run.cpu_s > 0


def test_an_output_missing_one_change_is_refused(
    fresh_mysql_server: LocalMySQLServer, tmp_path: Path
) -> None:
    server = fresh_mysql_server
    server.execute("CREATE DATABASE bench", CHANGES_TABLE)
    state = tmp_path / "prepared"
    prepare(server, state, 9000)
    load = dict(zip(("inserts", "updates", "deletes"), write_changes_workload(server, 120), strict=True))
    workdir = tmp_path / "round"
    workdir.mkdir()
    timed_run(server, state, workdir, 9300, sum(load.values()) + load["deletes"])
    out = workdir / "events.jsonl"
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:-1]))  # the last delete's tombstone is gone
    with pytest.raises(BenchRunError, match="tombstones"):
        check_output(out, load)


def test_the_connector_goes_without_the_allocator_variables_the_benchmark_added() -> None:
    environ = {
        "PATH": "/usr/bin",
        "PYTHONMALLOC": "malloc",
        "MALLOC_TOP_PAD_": "1",
        "MALLOC_ARENA_MAX": "2",
        "BENCH_PRESET_ALLOCATOR_VARIABLES": "MALLOC_ARENA_MAX",
    }
    assert connector_environment(environ) == {"PATH": "/usr/bin", "MALLOC_ARENA_MAX": "2"}
