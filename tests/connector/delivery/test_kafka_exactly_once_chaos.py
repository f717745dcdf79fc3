"""Chaos: ``mysql-cdc run`` into a real Kafka is SIGKILLed again and again under mixed writes
(inserts, updates, deletes, multi-statement transactions and an ``ALTER TABLE``), then compared with
an independent replay of the binlog (``mariadb-binlog``/``mysqlbinlog``).

* ``exactly.once.support=required``, 10 kills: a ``read_committed`` consumer sees every change of
  the binlog exactly once and in binlog order (0 duplicates, 0 missing), and no committed record
  after the DDL has the old schema;
* the same workload at least once (``exactly.once.support=disabled``), 4 kills: nothing is missing,
  there are duplicates, and every duplicate is in a run of re-delivered records at the very start
  of a restarted instance's output (a restart boundary), never in the middle of a run.

Both Kafka clients (``sink.kafka.client``) run the same proof. The default client (kafka-python)
takes the full count of kills; ``confluent`` (librdkafka) a lighter run of it (4 and 2 kills, the DDL
sooner) to keep CI short: each kill is the same event for either client, and the properties checked
(aborted records exist, none committed twice or lost, replays only at restarts) are the same.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from connector.testing.local_server import LocalMySQLServer, MySQLServerHandle
from tests.connector.kafka_eos_support import (
    FAST_SERVER_OPTIONS,
    Change,
    Daemon,
    MixedWriter,
    binlog_changes,
    change_of,
    create_table,
    end_offset,
    eos_props,
    exactly_once_report,
    topic_records,
    wait_for,
)
from tests.kafka_support import KafkaBroker


class Run(NamedTuple):
    """One client's campaign: kills exactly once, kills at least once, transactions before the DDL."""

    client: str
    eos_kills: int
    alo_kills: int
    ddl_after: int


RUNS = [Run("kafka-python", 10, 4, 900), Run("confluent", 4, 2, 450)]


def campaign(
    server: MySQLServerHandle,
    broker: KafkaBroker,
    workdir: Path,
    db: str,
    *,
    exactly_once: bool,
    kills: int,
    seed: int,
    run: Run,
) -> tuple[list[Change], list[int], str]:
    """Runs the writer while killing the connector ``kills`` times; returns the binlog's changes,
    the data topic's end offset at each kill, and the topic."""
    rng = random.Random(seed)
    create_table(server, db)
    prefix = broker.unique(db)
    topic = f"{prefix}.{db}.t"
    props = eos_props(
        server,
        broker,
        prefix,
        db,
        workdir / "data",
        **{
            "exactly.once.support": "required" if exactly_once else "disabled",
            "sink.kafka.client": run.client,
        },
        # Transactions stay open 2 s with their records already sent, so most kills (0.5-2.5 s
        # after streaming starts) interrupt one: the aborted-records check below then holds on a
        # loaded machine too (with poll boundaries a transaction is open only for a moment).
        **(
            {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "2000"}
            if exactly_once
            else {}
        ),
    )
    writer = MixedWriter(server, db, seed=seed, per_second=150, ddl_after=run.ddl_after)
    boundaries: list[int] = []
    daemon = Daemon(props, workdir, "run-0")
    try:
        daemon.wait_streaming()
        writer.start()
        for kill in range(1, kills + 1):
            if rng.random() < 0.8:
                daemon.wait_streaming()  # mostly mid-stream; sometimes during start-up and recovery
            time.sleep(rng.uniform(0.5, 2.5))
            daemon.kill()
            time.sleep(0.5)  # a produce request the killed process had sent is appended by now
            boundaries.append(end_offset(broker, topic))
            assert writer.is_alive(), f"the writer stopped: {writer.error!r}"
            daemon = Daemon(props, workdir, f"run-{kill}")
        assert writer.ddl_done, "the DDL must land while the connector is being killed"
        writer.finish()
        expected = binlog_changes(server, db)
        isolation = "read_committed" if exactly_once else "read_uncommitted"
        wait_for(
            lambda: (
                len({change_of(v) for _, v in topic_records(broker, topic, isolation) if v}) >= len(expected)
            ),
            300,
            "every change after the last kill",
            daemon,
        )
        assert daemon.terminate() == 0, daemon.log()
    finally:
        writer.stop_event.set()
        daemon.kill()
    return expected, boundaries, topic


@pytest.mark.slow
@pytest.mark.parametrize("run", RUNS, ids=[run.client for run in RUNS])
def test_repeated_sigkills_exactly_once_loses_and_repeats_nothing_at_least_once_repeats_only_at_restarts(
    kafka_broker: KafkaBroker, tmp_path: Path, run: Run
) -> None:
    started = time.monotonic()
    with LocalMySQLServer(options=FAST_SERVER_OPTIONS) as server:
        # -- exactly once ------------------------------------------------------------------------
        expected, _, topic = campaign(
            server,
            kafka_broker,
            tmp_path / "eos",
            "chaos_eos",
            exactly_once=True,
            kills=run.eos_kills,
            seed=618,
            run=run,
        )
        records = topic_records(kafka_broker, topic, "read_committed")
        seen = [change_of(v) for _, v in records if v]
        duplicates, missing = exactly_once_report(expected, seen)
        assert (duplicates, missing) == (0, 0), (
            f"{duplicates} duplicates, {missing} missing of {len(expected)}"
        )
        assert seen == expected, "one partition: the committed records are in binlog order"
        assert_no_record_after_the_ddl_has_the_old_schema([v for _, v in records if v])
        # The kills did land inside transactions: an uncommitted reader sees the aborted records again.
        uncommitted = [change_of(v) for _, v in topic_records(kafka_broker, topic, "read_uncommitted") if v]
        aborted = len(uncommitted) - len(seen)
        assert aborted > 0, "no kill interrupted a transaction: the test proved nothing"
        eos_seconds = time.monotonic() - started

        # -- the same workload, at least once ----------------------------------------------------
        expected_alo, boundaries, topic_alo = campaign(
            server,
            kafka_broker,
            tmp_path / "alo",
            "chaos_alo",
            exactly_once=False,
            kills=run.alo_kills,
            seed=618,
            run=run,
        )
        plain = topic_records(kafka_broker, topic_alo, "read_uncommitted")
        alo_duplicates, alo_missing = exactly_once_report(expected_alo, [change_of(v) for _, v in plain if v])
        assert alo_missing == 0
        assert alo_duplicates > 0, "at least once, SIGKILL repeats what was delivered after the stored offset"
        replayed = assert_duplicates_only_at_restart_boundaries(plain, boundaries)
    print(
        f"\n{run.client}: exactly once: {run.eos_kills} SIGKILLs, {len(expected)} changes, 0 duplicates, 0 missing, {aborted} records "
        f"in aborted transactions ({eos_seconds:.0f} s); "
        f"at least once: {run.alo_kills} SIGKILLs, {len(expected_alo)} changes, {alo_duplicates} duplicates, all in the "
        f"replays at restarts {replayed}"
    )


def assert_no_record_after_the_ddl_has_the_old_schema(values: list[dict[str, Any]]) -> None:
    with_note = [("note" in (v["payload"]["after"] or v["payload"]["before"])) for v in values]
    first = with_note.index(True)
    assert all(with_note[first:]), "a committed record after the ALTER TABLE has the schema before it"
    assert not any(with_note[:first])


def assert_duplicates_only_at_restart_boundaries(
    records: list[tuple[int, dict[str, Any] | None]], boundaries: list[int]
) -> list[int]:
    """Splits the topic at the end offsets observed at each kill: in every instance's output the
    records already seen before it form a prefix (the replay from the stored offset), and nothing
    repeats after that prefix. Returns the replay length at each restart."""
    edges = [0, *boundaries, max((o for o, _ in records), default=-1) + 1]
    seen: set[Change] = set()
    replays = []
    for start, end in zip(edges, edges[1:], strict=False):
        segment = [change_of(v) for o, v in records if start <= o < end and v]
        prefix = 0
        while prefix < len(segment) and segment[prefix] in seen:
            prefix += 1
        rest = segment[prefix:]
        repeated = [c for c in rest if c in seen]
        assert not repeated, (
            f"output from offset {start}: {len(repeated)} changes repeated after the restart's replay "
            f"({prefix} records) ended, e.g. {repeated[:3]}"
        )
        assert len(set(rest)) == len(rest), f"output from offset {start} repeats a change within itself"
        replays.append(prefix)
        seen.update(segment)
    return replays[1:]
