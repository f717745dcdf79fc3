"""Kafka delivery throughput: the connector into a Kafka broker vs into the jsonl sink, same workload,
same run.

Writes N inserts, N/2 updates and N/4 deletes to a throwaway server; three engines, each with its own
offsets and history, sit at the start of that binlog range. Then times
  (a) the connector streaming the range into the jsonl sink (baseline: serialise, write, fsync), and
  (b) the connector streaming the same range into the kafka sink (serialise, produce with acks=all,
      one request in flight, wait for every acknowledgement before storing offsets),
and, to isolate the sink from the binlog reader, the same records (collected by the third engine into
memory) pushed through (c) the jsonl sink and (d) the kafka sink alone, flushing after every batch of
2,048 as the engine does, and (e) the kafka sink flushing once at the end (what a longer
``offset.flush.interval.ms`` would allow). Prints events/s and the ratios (b)/(a) and (d)/(c). The broker is librdkafka's in-process mock cluster (confluent-kafka) unless
``--bootstrap host:port`` names a real one.

    .venv/bin/python -m bench.kafka [--rows 50000] [--compression gzip] [--bootstrap 127.0.0.1:9092]
                                    [--baseline REV]

``--baseline REV`` also runs the same workload (this tree's ``bench/``) with the connector of git
revision REV, on its own server and broker, and prints the ratio of the two connector → Kafka rates.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's directory is first on sys.path and this file's name would shadow the
# kafka-python package for every module imported below; the repository root replaces it.
REPO = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(REPO))

import argparse  # noqa: E402
import logging  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Sequence  # noqa: E402

from bench.baseline import figures_at, print_json, with_daemon_allocator  # noqa: E402
from bench.workload import TABLE, write_workload  # noqa: E402
from connector.config import ConnectorConfig  # noqa: E402
from connector.engine import Engine  # noqa: E402
from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer  # noqa: E402
from sink.base import Sink  # noqa: E402
from sink.jsonl import JsonlSink  # noqa: E402
from sink.kafka import KafkaSink  # noqa: E402
from sink.memory import MemorySink  # noqa: E402
from sink.records import ChangeRecord  # noqa: E402
from tests.kafka_support import MockKafkaCluster, record_count  # noqa: E402


def engine(server: LocalMySQLServer, data_dir: Path, sinks: Sequence[Sink], **extra: str) -> Engine:
    config = ConnectorConfig.from_mapping(
        server.connector_properties(
            **{"topic.prefix": "bench", "database.include.list": "bench", "data.dir": str(data_dir), **extra}
        )
    )
    return Engine(config, sinks=list(sinks))


def timed_sink(
    sink: Sink, records: list[ChangeRecord], batch: int = 2048, flush_every_batch: bool = True
) -> float:
    sink.start()
    started = time.perf_counter()
    for start in range(0, len(records), batch):
        sink.send(records[start : start + batch])
        if flush_every_batch:
            sink.flush()
    sink.flush()
    elapsed = time.perf_counter() - started
    sink.close()
    return elapsed


def timed_librdkafka(bootstrap: str, prefix: str, records: list[ChangeRecord], batch: int = 2048) -> float:
    """The alternative to kafka-python, measured rather than guessed: the same records, rendered the
    same way, through confluent-kafka's librdkafka producer with the sink's delivery settings."""
    from confluent_kafka import Producer  # a test dependency, not the connector's

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "max.in.flight.requests.per.connection": 1,
            "linger.ms": 5,
            "batch.size": 1024 * 1024,
            "partitioner": "murmur2_random",  # Java's default partitioner for keyed records
        }
    )
    started = time.perf_counter()
    for start in range(0, len(records), batch):
        for record in records[start : start + batch]:
            producer.produce(
                f"{prefix}.{record.topic}",
                value=record.value_bytes(),
                key=record.key_bytes(),
                headers=record.header_items() or None,
            )
            producer.poll(0)
        producer.flush()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--compression", default="none", help="sink.kafka.producer.compression.type")
    parser.add_argument("--bootstrap", help="a real broker instead of the mock cluster")
    parser.add_argument(
        "--baseline", metavar="REV", help="also run the same workload with the connector of git revision REV"
    )
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    with_daemon_allocator("bench.kafka")
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("kafka").setLevel(logging.CRITICAL)  # the mock's ApiVersions fallback is noisy

    mock = None
    if args.bootstrap:
        bootstrap = args.bootstrap
    else:
        mock = MockKafkaCluster()
        bootstrap = mock.bootstrap
    run = uuid.uuid4().hex[:8]
    kafka_settings = {
        "sink.type": "kafka",
        "sink.kafka.bootstrap.servers": bootstrap,
        "sink.kafka.producer.compression.type": args.compression,
    }

    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    try:
        with LocalMySQLServer(options=options) as server, tempfile.TemporaryDirectory() as tmp:
            server.execute("CREATE DATABASE bench", TABLE)
            root = Path(tmp)
            to_jsonl = engine(server, root / "a", [JsonlSink(root / "a" / "events.jsonl")])
            kafka_config = ConnectorConfig.from_mapping(
                server.connector_properties(
                    **{
                        "topic.prefix": f"bench{run}",
                        "database.include.list": "bench",
                        "data.dir": str(root / "b"),
                        **kafka_settings,
                    }
                )
            )
            to_kafka = Engine(kafka_config, sinks=[KafkaSink.from_config(kafka_config)])
            memory = MemorySink()
            to_memory = engine(server, root / "c", [memory])
            for e in (to_jsonl, to_kafka, to_memory):
                e.catch_up()  # schema read; each stream now sits at the start of the range
            changes = write_workload(server, args.rows)

            t0 = time.perf_counter()
            to_jsonl.catch_up(timeout=3600)
            jsonl_s = time.perf_counter() - t0
            to_jsonl.close()
            t0 = time.perf_counter()
            to_kafka.catch_up(timeout=3600)
            kafka_s = time.perf_counter() - t0
            to_kafka.close()
            to_memory.catch_up(timeout=3600)
            to_memory.close()

            records = [r for r in memory.records if r.table_id is not None]
            data_topic = f"bench{run}.bench.items"
            in_broker = record_count(bootstrap, data_topic)
            jsonl_events = sum(
                1 for line in (root / "a" / "events.jsonl").read_bytes().splitlines() if b'"op":' in line
            )

            sink_config = ConnectorConfig.from_mapping(
                server.connector_properties(**{"topic.prefix": f"sink{run}", **kafka_settings})
            )
            jsonl_only = timed_sink(JsonlSink(root / "d" / "events.jsonl"), records)
            kafka_only = timed_sink(KafkaSink.from_config(sink_config), records)
            kafka_pipelined = timed_sink(KafkaSink.from_config(sink_config), records, flush_every_batch=False)
            librdkafka_s = timed_librdkafka(bootstrap, f"rdk{run}", records)
    finally:
        if mock is not None:
            mock.destroy()

    events = changes
    tombstones = args.rows // 4  # every delete is followed by a tombstone
    print(f"broker: {'mock cluster (librdkafka)' if mock else bootstrap}, compression {args.compression}")
    print(f"row changes in range:                {changes:,} (+{tombstones:,} tombstones)")
    print(f"records in {data_topic}: {in_broker:,}")
    if jsonl_events != events:
        print(f"jsonl sink wrote {jsonl_events} change events, expected {events}")
        return 1
    if in_broker != events + tombstones:
        print(f"broker holds {in_broker} records, expected {events + tombstones}")
        return 1
    rate_a, rate_b = events / jsonl_s, events / kafka_s
    rate_c, rate_d = len(records) / jsonl_only, len(records) / kafka_only
    print(f"(a) connector → jsonl sink:          {rate_a:>9,.0f} events/s ({jsonl_s:.2f} s)")
    print(f"(b) connector → kafka sink:          {rate_b:>9,.0f} events/s ({kafka_s:.2f} s)")
    print(f"ratio (b)/(a):                       {rate_b / rate_a:.2f}")
    print(f"(c) jsonl sink alone, {len(records):,} records: {rate_c:>9,.0f} records/s")
    print(f"(d) kafka sink alone, same records:  {rate_d:>9,.0f} records/s")
    print(f"ratio (d)/(c):                       {rate_d / rate_c:.2f}")
    print(
        f"(e) kafka sink alone, one flush at the end (acks overlap sending): "
        f"{len(records) / kafka_pipelined:,.0f} records/s"
    )
    print(
        f"(f) the same records through librdkafka (confluent-kafka Producer, acks=all, 1 in flight, "
        f"murmur2 partitioner, flush per batch): {len(records) / librdkafka_s:,.0f} records/s"
    )
    from kafka.record import util as record_util

    crc = "C (crc32c package)" if record_util.crc32c_c is not None else "pure Python (install crc32c)"
    print(f"kafka-python record CRC32C: {crc}")
    figures = {"jsonl": rate_a, "kafka": rate_b, "kafka_sink_alone": rate_d}
    if args.baseline:
        old = figures_at(
            args.baseline, "bench.kafka", ["--rows", str(args.rows), "--compression", args.compression]
        )
        print(f"--- the same at {args.baseline} (its own server and broker, same workload) ---")
        print(f"(a') connector → jsonl sink:         {old['jsonl']:>9,.0f} events/s")
        print(f"(b') connector → kafka sink:         {old['kafka']:>9,.0f} events/s")
        print(f"(d') kafka sink alone:               {old['kafka_sink_alone']:>9,.0f} records/s")
        print(f"ratio (b)/(b'), kafka now vs then:   {rate_b / old['kafka']:.2f}")
        print(
            f"kafka as a fraction of jsonl, now:   {rate_b / rate_a:.2f}  (then {old['kafka'] / old['jsonl']:.2f})"
        )
    if args.json:
        print_json(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
