"""Streaming throughput: the connector vs a bare mysql-replication loop over the same binlog range.

Writes N inserts, N/2 updates and N/4 deletes to a throwaway server, then times
  (a) baseline: mysql-replication iterating every row of the range (decoding only), and
  (b) the connector streaming the same range into the jsonl sink (decode, convert, build Debezium
      events, serialise, write, fsync, store offsets),
and prints events/s for both and the ratio (b)/(a). The two alternate ``--repeat`` times (each
connector run with its own engine, offsets and output), and medians are quoted, so a machine whose
speed drifts during the run affects both sides alike.

    .venv/bin/python -m bench.streaming [--rows 50000] [--repeat 3] [--metrics] [--baseline REV]

``--baseline REV`` also runs the same workload (this tree's ``bench/``) with the connector of git
revision REV, on its own throwaway server, and prints its figures and the ratio of the two.

``--metrics`` also streams the range with Debezium's metrics on (metrics.port served, scraped every
0.2 s) and off (no metrics hooks), alternating off/on/off/on over the same range, and prints the
best time of each and the cost of metrics in percent.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from bench.baseline import figures_at, print_json, with_daemon_allocator
from bench.workload import TABLE, replication_settings, write_workload
from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer, free_port
from sink.jsonl import JsonlSink


def bare_loop(server: LocalMySQLServer, file: str, pos: int, end_file: str, end_pos: int) -> int:
    stream = BinLogStreamReader(
        connection_settings=replication_settings(server),
        server_id=9999,
        log_file=file,
        log_pos=pos,
        resume_stream=True,
        blocking=False,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
    )
    count = 0
    try:
        for event in stream:
            for _ in event.rows:
                count += 1
            if stream.log_file == end_file and stream.log_pos >= end_pos:
                break
    finally:
        stream.close()
    return count


def metrics_engine(server: LocalMySQLServer, tmp: str, index: int, metrics: bool) -> tuple[Engine, Path, int]:
    """An engine prepared at the current end of the binlog; ``metrics``: served on a port, else
    without metrics hooks."""
    port = free_port() if metrics else 0
    engine, out = prepared_engine(server, tmp, f"m{index}", 6000 + index, **{"metrics.port": str(port)})
    if not metrics:  # the hooks' cost is what is measured: take them out
        assert engine.streaming is not None
        engine.streaming.dispatcher.metrics = None
        engine.streaming.metrics = None
        engine.delivery.metrics = None
    return engine, out, port


def timed_catch_up(engine: Engine, port: int) -> float:
    stop = threading.Event()

    def scraper() -> None:
        while not stop.wait(0.2):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                response.read()

    thread = threading.Thread(target=scraper, daemon=True)
    if port:
        thread.start()
    t0 = time.perf_counter()
    engine.catch_up(timeout=3600)
    elapsed = time.perf_counter() - t0
    stop.set()
    engine.close()
    return elapsed


def prepared_engine(
    server: LocalMySQLServer, tmp: str, name: str, server_id: int, **extra: str
) -> tuple[Engine, Path]:
    """An engine with its own offsets, history and output file, prepared at the current end of the
    binlog (schema read; its stream sits at the start of the range written next)."""
    config = ConnectorConfig.from_mapping(
        server.connector_properties(
            **{
                "topic.prefix": "bench",
                "database.include.list": "bench",
                "data.dir": f"{tmp}/{name}",
                "database.server.id": str(server_id),
                **extra,
            }
        )
    )
    out = Path(tmp) / f"{name}.jsonl"
    engine = Engine(config, sinks=[JsonlSink(out)])
    engine.catch_up()
    return engine, out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each side (medians)")
    parser.add_argument("--metrics", action="store_true", help="also compare metrics on vs off")
    parser.add_argument(
        "--baseline", metavar="REV", help="also run the same workload with the connector of git revision REV"
    )
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    with_daemon_allocator("bench.streaming")
    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    with LocalMySQLServer(options=options) as server, tempfile.TemporaryDirectory() as tmp:
        server.execute("CREATE DATABASE bench", TABLE)
        engines = [prepared_engine(server, tmp, f"run{i}", 7000 + i) for i in range(args.repeat)]
        flags = (False, True, False, True) if args.metrics else ()
        compared = [metrics_engine(server, tmp, i, on) for i, on in enumerate(flags)]
        start_file, start_pos = server.query("SHOW MASTER STATUS")[0][:2]
        changes = write_workload(server, args.rows)
        end_file, end_pos = server.query("SHOW MASTER STATUS")[0][:2]

        # Bare loop and connector alternate, so that a change in the machine's speed hits both.
        bare_s, connector_s = [], []
        for engine, out in engines:
            t0 = time.perf_counter()
            baseline_rows = bare_loop(server, start_file, start_pos, end_file, end_pos)
            bare_s.append(time.perf_counter() - t0)
            assert baseline_rows == changes, (baseline_rows, changes)
            t0 = time.perf_counter()
            engine.catch_up(timeout=3600)
            connector_s.append(time.perf_counter() - t0)
            engine.close()
            with out.open("rb") as lines:  # streamed: the output can be larger than memory
                events = sum(1 for line in lines if b'"op":' in line)
            assert events == changes, (events, changes)
            out.unlink()
        peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        base_rate = changes / statistics.median(bare_s)
        conn_rate = changes / statistics.median(connector_s)
        ratios = sorted(b / c for b, c in zip(bare_s, connector_s, strict=True))
        print(f"row changes in range:            {changes}, {args.repeat} interleaved runs of each")
        print(f"(a) bare mysql-replication loop: {base_rate:,.0f} rows/s (median)")
        print(f"(b) connector → jsonl sink:      {conn_rate:,.0f} events/s (median)")
        print(
            f"ratio (b)/(a):                   {statistics.median(ratios):.2f} "
            f"(median of pairs; {' '.join(f'{r:.2f}' for r in ratios)})"
        )
        print(f"peak RSS of this process:        {peak_rss_mb:.0f} MB")
        figures = {"bare": base_rate, "connector": conn_rate, "ratio": statistics.median(ratios)}
        if args.baseline:
            old = figures_at(
                args.baseline, "bench.streaming", ["--rows", str(args.rows), "--repeat", str(args.repeat)]
            )
            print(f"--- the same at {args.baseline} (its own server, same workload) ---")
            print(f"(a') bare loop:                  {old['bare']:,.0f} rows/s")
            print(f"(b') connector → jsonl sink:     {old['connector']:,.0f} events/s")
            print(f"ratio (b')/(a'):                 {old['ratio']:.2f}")
            print(f"ratio (b)/(b'):                  {conn_rate / old['connector']:.2f}")
        if compared:
            times: dict[bool, list[float]] = {False: [], True: []}
            for on, (metrics_run, _, port) in zip(flags, compared, strict=True):
                times[on].append(timed_catch_up(metrics_run, port))
            off_s, on_s = min(times[False]), min(times[True])
            print(
                f"metrics off: {changes / off_s:,.0f} events/s; on (served, scraped): {changes / on_s:,.0f} events/s"
            )
            print(f"metrics cost:                    {100 * (on_s - off_s) / off_s:+.1f}% (best of 2 each)")
        if args.json:
            print_json(figures)


if __name__ == "__main__":
    main()
