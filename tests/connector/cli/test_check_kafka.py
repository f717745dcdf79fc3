"""`mysql-cdc check` with the Kafka sink, against real brokers: reachable and writable passes;
unreachable brokers and a topic the connector may not write fail naming the fix."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connector.testing.local_server import LocalMySQLServer, free_port
from tests.connector.check_support import run_check, write_config
from tests.kafka_support import deny_write


@pytest.fixture(scope="module")
def server() -> Iterator[LocalMySQLServer]:
    with LocalMySQLServer() as s:
        yield s


def kafka_config(server, tmp_path, bootstrap: str, prefix: str):
    return write_config(
        server,
        tmp_path,
        **{"sink.type": "kafka", "sink.kafka.bootstrap.servers": bootstrap, "topic.prefix": prefix},
    )


def test_reachable_brokers_and_writable_topics_pass(server, tmp_path, capsys, kafka_broker):
    prefix = kafka_broker.unique("chk")
    kafka_broker.create_topic(f"{prefix}.db.t", 1)
    status, out = run_check(kafka_config(server, tmp_path, str(kafka_broker), prefix), capsys)
    assert status == 0, out
    assert f"[ok]   sink kafka: brokers reached at {kafka_broker}" in out
    assert f"[ok]   kafka topics: 1 topic(s) of topic.prefix={prefix}, all writable" in out


def test_unreachable_brokers_name_bootstrap_servers_in_one_line(server, tmp_path, capsys):
    address = f"127.0.0.1:{free_port()}"
    status, out = run_check(kafka_config(server, tmp_path, address, "chk"), capsys)
    assert status == 1
    assert f"[FAIL] sink kafka: no Kafka broker answered at sink.kafka.bootstrap.servers={address}" in out
    assert (
        f"{address} refused the connection" in out
        and "check sink.kafka.bootstrap.servers, that the brokers run" in out
    )
    assert "kafka.conn" not in out and "ERROR" not in out  # kafka-python's own log lines stay quiet


def test_a_topic_the_connector_may_not_write_names_the_acl(server, tmp_path, capsys, acl_kafka):
    prefix = acl_kafka.unique("chkacl")
    acl_kafka.create_topic(f"{prefix}.db.t", 1)
    deny_write(acl_kafka, f"{prefix}.db.t")
    status, out = run_check(kafka_config(server, tmp_path, str(acl_kafka), prefix), capsys)
    assert status == 1
    assert f"may not WRITE topic {prefix}.db.t: kafka-acls --add --allow-principal" in out
    assert f"--operation Write --topic {prefix}.db.t" in out
