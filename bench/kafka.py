"""Kafka delivery throughput on a real Apache Kafka broker: the connector into Kafka through each
producer client and delivery mode vs the connector into the jsonl sink, same workload, same run.

Starts a throwaway MySQL server and a real single-node Kafka (KRaft, Kafka's own jars, through
``connector.testing.local_kafka``; ``--bootstrap host:port`` uses a running broker instead). One
engine per variant (``VARIANTS``: jsonl, kafka-python and confluent at least once, and the same two
with ``exactly.once.support=required``), each with its own offsets, history and server id, sits at
the start of the binlog. Each of ``--repeat`` rounds writes N inserts, N/2 updates and N/4 deletes
and times every engine's catch-up over that range, in an order that rotates from round to round, so
a machine whose speed drifts affects all alike; medians are quoted, with events/s, the ratio to
jsonl's median, and the median of the per-round ratios (each variant against jsonl in the same
round, the steadier figure on a shared machine). A variant whose setting this build does not have is printed as "not available in
this build" (no figure is made up for it).

To isolate the sinks from the binlog reader, the records of one round (collected into memory by
one more engine) are then pushed through the jsonl sink and each Kafka client's sink alone,
flushing after every batch of 2,048 as the engine does (``--repeat`` times, medians).

Every Kafka variant's data topic must hold every change and tombstone (a read of the topic's end
offsets; with exactly once, the committed records), and the jsonl file every change, or the script
fails.

    .venv/bin/python -m bench.kafka [--rows 50000] [--repeat 3] [--compression none]
                                    [--bootstrap 127.0.0.1:9092] [--baseline REV]

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
import contextlib  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Callable, Iterator, Mapping  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

from kafka import KafkaConsumer, TopicPartition  # noqa: E402

from bench.baseline import figures_at, print_json, with_daemon_allocator  # noqa: E402
from bench.workload import TABLE, write_workload  # noqa: E402
from connector.config import PROPERTIES, ConfigError, ConnectorConfig  # noqa: E402
from connector.engine import Engine  # noqa: E402
from connector.testing.local_server import DEFAULT_SERVER_OPTIONS, LocalMySQLServer  # noqa: E402
from mysql_cdc_base.records import ChangeRecord  # noqa: E402
from sink.base import Sink  # noqa: E402
from sink.jsonl import JsonlSink  # noqa: E402
from sink.memory import MemorySink  # noqa: E402

KNOWN = {p.name for p in PROPERTIES}
BATCH = 2048


@dataclass(frozen=True)
class Variant:
    """One way into a sink: its name (the key of its figure) and the connector settings it adds."""

    name: str
    settings: Mapping[str, str] = field(default_factory=dict)

    @property
    def kafka(self) -> bool:
        return self.settings.get("sink.type") == "kafka"

    @property
    def exactly_once(self) -> bool:
        return self.settings.get("exactly.once.support") == "required"

    @property
    def missing(self) -> list[str]:
        """The settings this build of the connector does not know (so it cannot run the variant)."""
        return [key for key in self.settings if key not in KNOWN]


KAFKA_PYTHON = {"sink.type": "kafka", "sink.kafka.client": "kafka-python"}
CONFLUENT = {"sink.type": "kafka", "sink.kafka.client": "confluent"}
EXACTLY_ONCE = {"exactly.once.support": "required", "offset.storage": "kafka"}
VARIANTS = (
    Variant("jsonl", {"sink.type": "jsonl"}),  # the baseline every ratio is against
    Variant("kafka-python", KAFKA_PYTHON),
    Variant("confluent", CONFLUENT),
    Variant("kafka-python exactly once", {**KAFKA_PYTHON, **EXACTLY_ONCE}),
    Variant("confluent exactly once", {**CONFLUENT, **EXACTLY_ONCE}),
)


@dataclass
class Clock:
    """Wall time, this process's CPU time (all threads: librdkafka's too) and the local broker's
    CPU time (from /proc; 0 for a broker elsewhere), so a figure can say where the time went."""

    broker_pid: int | None = None

    def broker_cpu(self) -> float:
        if self.broker_pid is None:
            return 0.0
        fields = Path(f"/proc/{self.broker_pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def now(self) -> tuple[float, float, float]:
        return time.perf_counter(), time.process_time(), self.broker_cpu()

    def since(self, start: tuple[float, float, float]) -> tuple[float, float, float]:
        end = self.now()
        return end[0] - start[0], end[1] - start[1], end[2] - start[2]


@contextlib.contextmanager
def kafka_broker(bootstrap: str | None) -> Iterator[tuple[str, Clock]]:
    if bootstrap:
        yield bootstrap, Clock()
        return
    from connector.testing.local_kafka import local_kafka

    with local_kafka(1) as cluster:
        process = cluster.brokers[0].process
        yield cluster.bootstrap, Clock(process.pid if process is not None else None)


class Runner:
    """A variant's engine, positioned at the start of the benchmark's binlog range."""

    def __init__(
        self, variant: Variant, server: LocalMySQLServer, root: Path, server_id: int, base: Mapping[str, str]
    ) -> None:
        self.variant = variant
        self.prefix = f"bench{uuid.uuid4().hex[:8]}"
        data_dir = root / variant.name.replace(" ", "-")
        extra = {
            "topic.prefix": self.prefix,
            "name": self.prefix,  # exactly once: each runner its own transactional.id (no fencing)
            "database.include.list": "bench",
            "data.dir": str(data_dir),
            "database.server.id": str(server_id),
            **base,
            **variant.settings,
        }
        if extra.get("offset.storage") == "kafka":
            extra.setdefault("offset.storage.topic", f"{self.prefix}-offsets")
            extra.setdefault("offset.storage.kafka.bootstrap.servers", base["sink.kafka.bootstrap.servers"])
        self.jsonl = data_dir / "events.jsonl"
        self.engine = Engine(ConnectorConfig.from_mapping(server.connector_properties(**extra)))
        self.seconds: list[float] = []
        self.cpu: list[float] = []  # this process (binlog reader, connector, sink, client threads)
        self.broker_cpu: list[float] = []

    def catch_up(self, clock: Clock) -> None:
        started = clock.now()
        self.engine.catch_up(timeout=3600)
        wall, cpu, broker = clock.since(started)
        self.seconds.append(wall)
        self.cpu.append(cpu)
        self.broker_cpu.append(broker)

    @property
    def data_topic(self) -> str:
        return f"{self.prefix}.bench.items"


def committed_records(bootstrap: str, topic: str, read_committed: bool) -> int:
    """Records in a topic: the sum of its partitions' end offsets (under read_committed, the last
    stable offsets, less the transaction markers counted by a read of the topic)."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        allow_auto_create_topics=False,
        enable_auto_commit=False,
        group_id=None,
        isolation_level="read_committed" if read_committed else "read_uncommitted",
        consumer_timeout_ms=2000,
    )
    try:
        partitions = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not read_committed:
            return sum(consumer.end_offsets(partitions).values()) if partitions else 0
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        return sum(1 for _ in consumer)  # transaction markers are offsets but not records
    finally:
        consumer.close()


def timed_sink(
    make: Callable[[], Sink], records: list[ChangeRecord], clock: Clock
) -> tuple[float, float, float]:
    """(wall, own CPU, broker CPU) seconds of the records through a sink alone."""
    sink = make()
    sink.start()
    started = clock.now()
    for start in range(0, len(records), BATCH):
        sink.send(records[start : start + BATCH])
        sink.flush()
    elapsed = clock.since(started)
    sink.close()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--compression", default="none", help="sink.kafka.producer.compression.type")
    parser.add_argument("--bootstrap", help="a running broker instead of a throwaway local one")
    parser.add_argument(
        "--baseline", metavar="REV", help="also run the same workload with the connector of git revision REV"
    )
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    with_daemon_allocator("bench.kafka")
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("kafka").setLevel(logging.CRITICAL)

    runnable = [v for v in VARIANTS if not v.missing]
    options = [*DEFAULT_SERVER_OPTIONS, "--sync-binlog=0", "--innodb-flush-log-at-trx-commit=2"]
    changes_per_round = args.rows + args.rows // 2 + args.rows // 4
    tombstones_per_round = args.rows // 4  # every delete is followed by a tombstone
    with (
        kafka_broker(args.bootstrap) as (bootstrap, clock),
        LocalMySQLServer(options=options) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        server.execute("CREATE DATABASE bench", TABLE)
        root = Path(tmp)
        base = {
            "sink.kafka.bootstrap.servers": bootstrap,
            "sink.kafka.producer.compression.type": args.compression,
        }
        runners = []
        refused: dict[str, str] = {}  # variant → why this build's connector will not run it
        for i, variant in enumerate(runnable):
            try:
                runners.append(Runner(variant, server, root, 6100 + i, base))
            except ConfigError as exc:
                refused[variant.name] = str(exc)
        memory = MemorySink()
        collector = Engine(
            ConnectorConfig.from_mapping(
                server.connector_properties(
                    **{
                        "topic.prefix": "bench",
                        "database.include.list": "bench",
                        "data.dir": str(root / "memory"),
                        "database.server.id": "6099",
                    }
                )
            ),
            sinks=[memory],
        )
        for engine in [r.engine for r in runners] + [collector]:
            engine.catch_up()  # schema read; each stream now sits at the start of the range

        for round_ in range(args.repeat):
            write_workload(server, args.rows, first=round_ * args.rows)
            order = runners[round_ % len(runners) :] + runners[: round_ % len(runners)]
            for runner in order:
                runner.catch_up(clock)
            if round_ == 0:
                collector.catch_up(timeout=3600)
                collector.close()
        for runner in runners:
            runner.engine.close()

        problems = []
        expected_changes = changes_per_round * args.repeat
        for runner in runners:
            if runner.variant.kafka:
                held = committed_records(bootstrap, runner.data_topic, runner.variant.exactly_once)
                expected = expected_changes + tombstones_per_round * args.repeat
            else:
                held = sum(1 for line in runner.jsonl.read_bytes().splitlines() if b'"op":' in line)
                expected = expected_changes
            if held != expected:
                problems.append(f"{runner.variant.name}: {held:,} records delivered, expected {expected:,}")

        # The sinks alone, on the records of the first round.
        records = [r for r in memory.records if r.table_id is not None]
        sink_config = ConnectorConfig.from_mapping(
            server.connector_properties(**{"topic.prefix": f"alone{uuid.uuid4().hex[:8]}", **base})
        )
        from sink.kafka.sink import KafkaSink

        alone: dict[str, Callable[[], Sink]] = {
            "jsonl": lambda: JsonlSink(root / "alone" / f"{uuid.uuid4().hex}.jsonl"),
            "kafka-python": lambda: KafkaSink.from_config(sink_config),
        }
        if "sink.kafka.client" in KNOWN:
            from sink.kafka.confluent import ConfluentKafkaSink

            alone["confluent"] = lambda: ConfluentKafkaSink.from_config(sink_config)
        alone_times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in alone}
        for round_ in range(args.repeat):
            names = list(alone)
            for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
                alone_times[name].append(timed_sink(alone[name], records, clock))

    broker = args.bootstrap or "a throwaway local Kafka 4.1 broker (KRaft, one node)"
    print(f"broker: {broker}; compression {args.compression}; {args.repeat} rounds, medians quoted")
    print(f"row changes per round: {changes_per_round:,} (+{tombstones_per_round:,} tombstones)")
    if problems:
        print("\n".join(problems))
        return 1
    rates = {r.variant.name: changes_per_round / statistics.median(r.seconds) for r in runners}
    jsonl_rate = rates["jsonl"]
    jsonl_seconds = next(r.seconds for r in runners if r.variant.name == "jsonl")
    paired = {
        r.variant.name: statistics.median(j / s for j, s in zip(jsonl_seconds, r.seconds, strict=True))
        for r in runners
    }
    print("connector → sink, events/s: median (every round); ratio to jsonl: of the medians, per round")
    for variant in VARIANTS:
        if variant.missing or variant.name in refused:
            why = refused.get(variant.name) or f"no {', '.join(variant.missing)}"
            print(f"  {variant.name:<28} not available in this build ({why})")
            continue
        runner = next(r for r in runners if r.variant is variant)
        every = ", ".join(f"{changes_per_round / s:,.0f}" for s in runner.seconds)
        print(
            f"  {variant.name:<28} {rates[variant.name]:>9,.0f}  ({every})   "
            f"{rates[variant.name] / jsonl_rate:.2f}, {paired[variant.name]:.2f}"
        )
    print("CPU per event, µs (median): this process (reader, connector, sink, client threads); local broker")
    for runner in runners:
        own = statistics.median(runner.cpu) / changes_per_round * 1e6
        broker_us = statistics.median(runner.broker_cpu) / changes_per_round * 1e6
        print(f"  {runner.variant.name:<28} {own:>6.1f}  {broker_us:>6.1f}")
    for client in ("kafka-python", "confluent"):
        eos = f"{client} exactly once"
        if client in rates and eos in rates:
            print(f"  cost of exactly once with {client}: {100 * (1 - rates[eos] / rates[client]):.0f} %")
    alone_rates = {
        name: len(records) / statistics.median(t[0] for t in times) for name, times in alone_times.items()
    }
    print(
        f"sinks alone, the first round's {len(records):,} records, flush every {BATCH:,}: records/s "
        "(median), ratio to jsonl, CPU µs per record of this process and of the local broker"
    )
    for name, rate in alone_rates.items():
        own = statistics.median(t[1] for t in alone_times[name]) / len(records) * 1e6
        broker_us = statistics.median(t[2] for t in alone_times[name]) / len(records) * 1e6
        print(
            f"  {name:<28} {rate:>9,.0f}   {rate / alone_rates['jsonl']:.2f}   {own:>6.1f}  {broker_us:>6.1f}"
        )

    figures = {
        **rates,
        **{f"{name} per-round ratio": ratio for name, ratio in paired.items()},
        **{f"{name} alone": rate for name, rate in alone_rates.items()},
    }
    # The keys earlier versions of this script printed, for --baseline against them.
    figures["kafka"] = rates["kafka-python"]
    figures["kafka_sink_alone"] = alone_rates["kafka-python"]
    if args.baseline:
        old = figures_at(
            args.baseline,
            "bench.kafka",
            ["--rows", str(args.rows), "--repeat", str(args.repeat), "--compression", args.compression],
        )
        print(f"--- the same at {args.baseline} (its own server and broker, same workload) ---")
        for name in [v.name for v in VARIANTS] + [f"{n} alone" for n in alone_rates]:
            if name in old and name in figures:
                print(f"  {name:<28} {old[name]:>9,.0f}   now/then {figures[name] / old[name]:.2f}")
        print(
            f"kafka-python as a fraction of jsonl, now {rates['kafka-python'] / jsonl_rate:.2f}, "
            f"then {old['kafka'] / old['jsonl']:.2f}"
        )
    if args.json:
        print_json(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
