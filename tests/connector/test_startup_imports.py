"""What ``mysql-cdc run`` imports before its first event (issue 31: time to the first event).

A run into the jsonl sink must not import the optional heavy dependencies that only other settings
need (Kafka sink or stores, metrics, rich output, Spark): each costs start-up time on every run.
"""

from __future__ import annotations

from pathlib import Path

from connector.testing.local_server import MySQLServerHandle
from tests.connector.startup_support import state_at_first_event, store_offset, write_properties

# Each is needed only by settings this run does not have: sink.type=kafka or the Kafka stores and
# signal channel (kafka), metrics.port (prometheus_client), `mysql-cdc demo` (rich), sink.type=spark
# and `verify` (pyspark, delta), PKCS12 trust and key stores (cryptography.x509).
OPTIONAL_HEAVY = (
    "kafka",
    "confluent_kafka",
    "prometheus_client",
    "rich",
    "pyspark",
    "delta",
    "cryptography.x509",
)


def test_run_into_jsonl_imports_no_optional_dependency(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    mysql_server.execute("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))", database=unique_db)
    output = tmp_path / "events.jsonl"
    properties = write_properties(mysql_server, unique_db, tmp_path / "state", output)
    store_offset(properties)
    output.unlink()  # the snapshot's schema change events: the run's own output starts empty
    mysql_server.execute("INSERT INTO items VALUES (1, 'one'), (2, 'two')", database=unique_db)

    state = state_at_first_event(properties, output, tmp_path / "state.json")

    assert b'"op":"c"' in output.read_bytes().splitlines()[0]  # the run resumed and streamed the insert
    loaded = {name for name in OPTIONAL_HEAVY if name in state.modules}
    assert not loaded, f"mysql-cdc run into jsonl imported {sorted(loaded)} before its first event"
    # The launcher paused the collector for the start-up; the run froze what it set up and turned
    # the collector back on for the stream.
    assert state.gc_enabled
    assert state.frozen_objects > 10_000
