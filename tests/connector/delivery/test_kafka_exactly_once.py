"""Exactly once into a real Kafka (``exactly.once.support``): the refused combinations, and fencing.

* start-up refuses every configuration that cannot be exactly once, naming the key;
  ``requested`` falls back to at least once with a warning naming it;
* two instances with the same name, with either client: the second's start fences the first while
  it holds an open transaction, and the first stops at its next send or commit with an error naming
  the connector and its transactional.id and saying another instance took over; the records of its
  aborted transaction stay in the topic (a ``read_uncommitted`` reader sees more than a
  ``read_committed`` one), and a ``read_committed`` consumer sees every change of the binlog
  exactly once (no duplicate from the fenced instance, no gap at the hand-over).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from pathlib import Path

import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer, MySQLServerHandle
from mysql_cdc_base.errors import ConfigError
from sink.base import SinkError
from sink.kafka.sink import KafkaSink
from tests.connector.kafka_eos_support import (
    FAST_SERVER_OPTIONS,
    Daemon,
    MixedWriter,
    binlog_changes,
    create_table,
    end_offset,
    eos_props,
    exactly_once_report,
    java_console_consumer,
    topic_changes,
    topic_records,
    wait_for,
)
from tests.kafka_support import KafkaBroker

LOGGED_ERROR = re.compile(r"^\S+ \S+ (ERROR|CRITICAL) ")

BASE = {
    "database.hostname": "127.0.0.1",
    "database.user": "cdc",
    "database.server.id": "5400",
    "topic.prefix": "eos",
    "sink.type": "kafka",
    "sink.kafka.bootstrap.servers": "127.0.0.1:1",
    "offset.storage": "kafka",
    "offset.storage.topic": "eos.offsets",
    "exactly.once.support": "required",
}


@pytest.mark.parametrize(
    ("overrides", "key", "words"),
    [
        ({"offset.storage": "file"}, "offset.storage", "must be kafka, got file"),
        ({"offset.storage": "memory"}, "offset.storage", "must be kafka, got memory"),
        ({"sink.type": "kafka,jsonl"}, "sink.type", "must be kafka alone"),
        ({"sink.type": "jsonl"}, "sink.type", "must be kafka alone"),
        (
            {"offset.storage.kafka.bootstrap.servers": "127.0.0.1:2"},
            "offset.storage.kafka.bootstrap.servers",
            "cannot span two clusters",
        ),
        (
            {"sink.kafka.producer.enable.idempotence": "false"},
            "sink.kafka.producer.enable.idempotence",
            "idempotent producer",
        ),
        (
            {"offset.storage.kafka.producer.linger.ms": "5"},
            "offset.storage.kafka.producer.linger.ms",
            "written by the sink's transactional producer",
        ),
        ({"transaction.boundary": "connector"}, "transaction.boundary", "connector is not implemented"),
        (
            {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "60000"},
            "transaction.boundary.interval.ms",
            "shorter than sink.kafka.producer.transaction.timeout.ms",
        ),
    ],
)
def test_exactly_once_required_refuses_what_cannot_be_exactly_once_naming_the_key(
    overrides: dict[str, str], key: str, words: str
) -> None:
    config = ConnectorConfig.from_mapping({**BASE, **overrides})
    with pytest.raises(ConfigError) as caught:
        Engine(config)
    assert caught.value.key == key, str(caught.value)
    assert words in str(caught.value), str(caught.value)
    if not key.startswith("transaction.boundary"):  # those messages name the boundary, not the mode
        assert "exactly.once.support=required" in str(caught.value), str(caught.value)


def test_acks_other_than_all_is_refused_naming_the_key() -> None:
    config = ConnectorConfig.from_mapping({**BASE, "sink.kafka.producer.acks": "1"})
    with pytest.raises(ConfigError) as caught:
        Engine(config)
    assert caught.value.key == "sink.kafka.producer.acks"


def test_exactly_once_requested_falls_back_to_at_least_once_with_a_warning_naming_the_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = ConnectorConfig.from_mapping(
        {**BASE, "exactly.once.support": "requested", "offset.storage": "memory"}
    )
    with caplog.at_level(logging.WARNING, logger="connector.delivery.exactly_once"):
        engine = Engine(config)
    assert not engine.exactly_once.enabled
    assert engine.delivery.transaction is None
    assert any("offset.storage must be kafka" in r.getMessage() for r in caplog.records), caplog.text


def test_exactly_once_disabled_keeps_the_sink_non_transactional() -> None:
    engine = Engine(ConnectorConfig.from_mapping({**BASE, "exactly.once.support": "disabled"}))
    assert engine.delivery.transaction is None
    assert getattr(engine.sinks[0], "transactional_id", None) is None
    required = Engine(ConnectorConfig.from_mapping({**BASE, "name": "orders"}))
    assert required.delivery.transaction is not None
    assert required.sinks[0].transactional_id == "mysql-cdc-orders"  # type: ignore[attr-defined]
    confluent = Engine(
        ConnectorConfig.from_mapping({**BASE, "name": "orders", "sink.kafka.client": "confluent"})
    )
    assert confluent.delivery.transaction is not None
    assert confluent.sinks[0]._transactional_id == "mysql-cdc-orders"  # type: ignore[attr-defined]


@pytest.mark.parametrize("client", ["kafka-python", "confluent"])
def test_a_second_instance_fences_the_first_and_the_output_has_no_duplicate_and_no_gap(
    kafka_broker: KafkaBroker, tmp_path: Path, client: str
) -> None:
    """The first instance commits every 15 s (``transaction.boundary=interval``), so when the second
    starts, the first holds an open transaction with records in the topic. The second's start
    aborts it: a ``read_uncommitted`` reader sees those records, a ``read_committed`` one does not."""
    db = "fence"
    prefix = kafka_broker.unique("fence")
    topic = f"{prefix}.{db}.t"
    with LocalMySQLServer(options=FAST_SERVER_OPTIONS) as server:
        create_table(server, db)
        props = eos_props(
            server, kafka_broker, prefix, db, tmp_path / "data", **{"sink.kafka.client": client}
        )
        slow = {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "15000"}
        first = Daemon({**props, **slow}, tmp_path / "first")
        writer = MixedWriter(server, db, seed=26, per_second=120)
        second: Daemon | None = None
        try:
            first.wait_streaming()
            writer.start()
            # The first interval's transaction commits; the second one is open, with records.
            wait_for(lambda: topic_changes(kafka_broker, topic), 60, "the first transaction", first)
            committed_before = end_offset(kafka_broker, topic)
            wait_for(
                lambda: end_offset(kafka_broker, topic) > committed_before + 100,
                30,
                "records of the open transaction",
                first,
            )
            second = Daemon(props, tmp_path / "second")
            # The first instance stops at its next send or commit, naming the takeover.
            assert first.proc.wait(timeout=120) == 1, first.log()
            assert_fenced_error(first, prefix, secret=props["database.password"])
            second.wait_streaming()
            handed_over = writer.transactions
            wait_for(lambda: writer.transactions > handed_over + 400, 60, "400 more transactions", second)
            writer.finish()
            expected = binlog_changes(server, db)
            wait_for(
                lambda: len(topic_changes(kafka_broker, topic)) >= len(expected),
                180,
                "every change committed by the second instance",
                second,
            )
            assert second.terminate() == 0, second.log()
        finally:
            writer.stop_event.set()
            first.kill()
            if second is not None:
                second.kill()
        seen = topic_changes(kafka_broker, topic)
        duplicates, missing = exactly_once_report(expected, seen)
        assert (duplicates, missing) == (0, 0), (
            f"{duplicates} duplicates, {missing} missing of {len(expected)}"
        )
        # Per key, the changes are in binlog order.
        assert seen == expected, "a read_committed consumer sees the binlog's order (one partition)"
        # The fenced instance's open transaction was aborted: its records are in the log, invisible
        # to read_committed consumers.
        uncommitted = len(topic_records(kafka_broker, topic, "read_uncommitted"))
        committed = len(topic_records(kafka_broker, topic, "read_committed"))
        assert uncommitted > committed, (uncommitted, committed)
        # Kafka's own Java console consumer, read_committed, sees the same.
        assert java_console_consumer(kafka_broker, topic) == expected
        print(
            f"\nfencing ({client}): {len(expected)} changes, exactly once across the hand-over; "
            f"{uncommitted - committed} aborted records of the fenced instance"
        )


def assert_fenced_error(daemon: Daemon, prefix: str, secret: str) -> None:
    """The daemon's last error says it was fenced, naming the connector and its transactional.id;
    it is not a client's raw error, and it holds no secret."""
    errors = [line for line in daemon.log(100_000).splitlines() if line.startswith("mysql-cdc: error:")]
    assert errors, daemon.log()
    message = errors[-1]
    assert f"connector '{prefix}' was fenced" in message, message
    assert "another instance with the same name took over" in message, message
    assert f"transactional.id mysql-cdc-{prefix}" in message, message
    assert "Traceback" not in daemon.log(100_000), daemon.log()
    # The clients' own reports of the fencing (librdkafka logs it as CRITICAL) are not errors.
    logged_errors = [line for line in daemon.log(100_000).splitlines() if LOGGED_ERROR.match(line)]
    assert not logged_errors, logged_errors
    assert secret and secret not in daemon.log(100_000)


def test_transaction_boundary_poll_commits_every_batch_and_interval_once_per_interval(
    mysql_server: MySQLServerHandle, unique_db: str, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    """40 rows, one every 100 ms: ``poll`` commits about one transaction per row (each is a batch
    of its own with poll.interval.ms=100), ``interval`` with 2000 ms about one per 2 s; a
    read_committed consumer sees all 40 either way."""
    committed: dict[str, int] = {}
    for boundary in ("poll", "interval"):
        table = f"t_{boundary}"
        mysql_server.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, v VARCHAR(40))", database=unique_db)
        prefix = kafka_broker.unique(f"boundary_{boundary}")
        props = eos_props(
            mysql_server,
            kafka_broker,
            prefix,
            unique_db,
            tmp_path / boundary,
            **{
                "table.include.list": f"{unique_db}.{table}",
                "transaction.boundary": boundary,
                "transaction.boundary.interval.ms": "2000",
            },
        )
        engine = Engine(ConnectorConfig.from_mapping(props))
        runner = threading.Thread(target=engine.run, daemon=True)
        runner.start()
        try:
            wait_for(lambda: engine.streaming is not None, 90, "the engine to stream")  # noqa: B023
            before = engine.sinks[0].committed_transactions  # type: ignore[attr-defined]
            with mysql_server.connect(unique_db) as conn, conn.cursor() as cur:
                for i in range(40):
                    cur.execute(f"INSERT INTO {table} VALUES (%s, %s)", (i, f"v{i}"))
                    conn.commit()
                    time.sleep(0.1)
            topic = f"{prefix}.{unique_db}.{table}"
            wait_for(lambda: len(topic_changes(kafka_broker, topic)) >= 40, 60, "40 committed changes")  # noqa: B023
            committed[boundary] = engine.sinks[0].committed_transactions - before  # type: ignore[attr-defined]
        finally:
            engine.stop()
            runner.join(timeout=60)
        assert sorted(c[1] for c in topic_changes(kafka_broker, topic)) == list(range(40))
    assert committed["poll"] >= 10, committed
    assert 1 <= committed["interval"] <= 5, committed
    print(f"\ntransactions for 40 rows, one every 100 ms: {committed}")


def test_a_transaction_timeout_above_the_brokers_limit_stops_start_up_naming_the_setting(
    kafka_broker: KafkaBroker,
) -> None:
    config = ConnectorConfig.from_mapping(
        {
            **BASE,
            "sink.kafka.bootstrap.servers": kafka_broker,
            "sink.kafka.producer.transaction.timeout.ms": "1000000",  # the brokers allow 900000
        }
    )
    sink = KafkaSink.from_config(config)
    sink.enable_transactions(f"mysql-cdc-{kafka_broker.unique('timeout')}", "timeout")
    try:
        with pytest.raises(SinkError) as caught:
            sink.start()
    finally:
        sink.close()
    assert "cannot initialise the transactions" in str(caught.value)
    assert "sink.kafka.producer.transaction.timeout.ms" in str(caught.value)
