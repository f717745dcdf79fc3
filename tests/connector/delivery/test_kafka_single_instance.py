"""Without exactly-once, a second instance of a connector on the same Kafka is refused at start-up
(``connector.delivery.instance_guard``): it stops with an error naming the connector and the consumer group
while the first goes on; after the first is SIGKILLed, a new instance starts once the dead one's
group membership has expired, and after a clean stop at once.
"""

from __future__ import annotations

import time
from pathlib import Path

from connector.testing.local_server import LocalMySQLServer
from tests.connector.kafka_eos_support import FAST_SERVER_OPTIONS, Daemon, create_table, eos_props
from tests.kafka_support import KafkaBroker


def test_a_second_instance_without_exactly_once_is_refused_at_start_up_naming_the_connector(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    db = "single"
    prefix = kafka_broker.unique("single")
    with LocalMySQLServer(options=FAST_SERVER_OPTIONS) as server:
        create_table(server, db)
        props = eos_props(
            server, kafka_broker, prefix, db, tmp_path / "data", **{"exactly.once.support": "disabled"}
        )
        first = Daemon(props, tmp_path, "first")
        second: Daemon | None = None
        third: Daemon | None = None
        try:
            first.wait_streaming()
            second = Daemon(props, tmp_path, "second")
            assert second.proc.wait(timeout=60) == 1, second.log()
            error = [line for line in second.log().splitlines() if line.startswith("mysql-cdc: error:")][-1]
            assert f"another instance of connector '{prefix}'" in error, error
            assert f"consumer group mysql-cdc-{prefix}-{prefix}" in error, error
            assert "exactly.once.support=required" in error, error  # the way to run active/standby
            assert "streaming from" not in second.log(100_000), "the refused instance must not stream"
            assert first.proc.poll() is None, "the first instance goes on"

            first.kill()  # its membership lapses after the session timeout
            killed = time.monotonic()
            third = Daemon(props, tmp_path, "third")
            third.wait_streaming()
            assert time.monotonic() - killed < 60
            assert third.terminate() == 0, third.log()  # a clean stop leaves the group at once
            fourth = Daemon(props, tmp_path, "fourth")
            started = time.monotonic()
            fourth.wait_streaming()
            assert "waiting up to" not in fourth.log(100_000), "a cleanly stopped instance left the group"
            assert time.monotonic() - started < 60
            assert fourth.terminate() == 0, fourth.log()
        finally:
            for daemon in (first, second, third):
                if daemon is not None:
                    daemon.kill()
