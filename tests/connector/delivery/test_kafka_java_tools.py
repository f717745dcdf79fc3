"""Kafka's own Java tools read what the connector writes to a real broker.

The connector streams a workload of many column types, updates, deletes with tombstones, a keyless
table, a schema change, transaction metadata and heartbeats into Kafka. Then:

* Kafka's console consumer (``kafka-console-consumer``: ``org.apache.kafka.tools.consumer.
  ConsoleConsumer``) with ``--isolation-level read_committed`` reads every record, with the same key
  and value a kafka-python consumer sees;
* Kafka Connect's ``JsonConverter`` (``schemas.enable=true``, what a Connect sink connector reading
  Debezium topics uses) decodes every key and value, and encoding the result again gives the same
  JSON (``java/JsonConverterCheck.java``, compiled here with ``javac``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import orjson
import pytest

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_kafka import kafka_jars
from connector.testing.local_server import MySQLServerHandle
from tests.connector.kafka_engine_support import topics_with_prefix
from tests.kafka_support import KafkaBroker, consume_all

JAVA_SOURCE = Path(__file__).parents[1] / "java" / "JsonConverterCheck.java"
SEPARATOR = "\u241e"  # between key and value in the console consumer's output; not in the workload


def java_tool(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    java = shutil.which("java")
    assert java, "Kafka's tools need a Java runtime"
    return subprocess.run([java, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def streamed_topics(
    mysql_server: MySQLServerHandle, unique_db: str, kafka_broker: KafkaBroker, tmp_path: Path
) -> tuple[str, list[str]]:
    """Runs the connector over the workload; returns the bootstrap address and the topics written."""
    db = unique_db
    prefix = kafka_broker.unique("java")
    json_type = "LONGTEXT" if mysql_server.is_mariadb else "JSON"
    mysql_server.execute(
        "CREATE TABLE typed (id INT PRIMARY KEY, big BIGINT UNSIGNED, amount DECIMAL(12,3), "
        "price DOUBLE, ratio FLOAT, born DATE, at DATETIME(3), ts TIMESTAMP(6) NULL, dur TIME, "
        "flag BIT(3), color ENUM('red','green'), tags SET('a','b','c'), "
        f"doc {json_type}, raw BLOB, name VARCHAR(40) CHARACTER SET utf8mb4, yr YEAR, "
        "qty INT NOT NULL DEFAULT 7)",
        "CREATE TABLE notes (body TEXT, score DOUBLE)",
        database=db,
    )
    props = mysql_server.connector_properties(
        **{
            "topic.prefix": prefix,
            "database.include.list": db,
            "sink.type": "kafka",
            "sink.kafka.bootstrap.servers": kafka_broker,
            "data.dir": str(tmp_path / "data"),
            "provide.transaction.metadata": "true",
            "heartbeat.interval.ms": "100",
            "topic.creation.default.partitions": "3",
            "topic.creation.default.replication.factor": "1",
        }
    )
    engine = Engine(ConnectorConfig.from_mapping(props))
    try:
        engine.catch_up(60)
        with mysql_server.connect(db) as conn, conn.cursor() as cur:
            for i in range(1, 41):
                cur.execute(
                    "INSERT INTO typed VALUES (%s, %s, %s, %s, %s, '2024-02-29', "
                    "'2024-03-01 12:34:56.789', '2024-03-01 12:34:56.123456', '-12:34:56', b'101', "
                    "'green', 'a,c', %s, %s, %s, 2024, %s)",
                    (
                        i,
                        2**64 - i,
                        f"{i * 1000 + 0.125:.3f}",
                        i / 7,
                        i / 3,
                        orjson.dumps({"k": i, "list": [1, "two", None]}).decode(),
                        bytes(range(i % 256)),
                        f"name {i} – ü 😀",
                        i,
                    ),
                )
                cur.execute("INSERT INTO notes VALUES (%s, %s)", (f"note {i}\twith a tab", i / 3))
            conn.commit()
            cur.execute("UPDATE typed SET amount = amount * 2, name = NULL WHERE MOD(id, 3) = 0")
            cur.execute("DELETE FROM typed WHERE id > 35")
            cur.execute("DELETE FROM notes WHERE score > 10")
            cur.execute("UPDATE typed SET id = 1000 WHERE id = 2")  # key change: delete, tombstone, create
            conn.commit()
            cur.execute("ALTER TABLE typed ADD COLUMN tier INT NOT NULL DEFAULT 3")
            cur.execute("INSERT INTO typed (id, name) VALUES (2000, 'after alter')")
            conn.commit()
        engine.catch_up(60)
    finally:
        engine.close()
    topics = topics_with_prefix(kafka_broker, prefix)
    assert {prefix, f"{prefix}.{db}.typed", f"{prefix}.{db}.notes", f"{prefix}.transaction"} <= set(topics)
    assert f"__debezium-heartbeat.{prefix}" in topics
    return str(kafka_broker), topics


def test_the_console_consumer_reads_every_record_read_committed(
    streamed_topics: tuple[str, list[str]],
) -> None:
    bootstrap, topics = streamed_topics
    expected = Counter(
        (
            m.key.decode() if m.key is not None else "null",
            m.value.decode() if m.value is not None else "null",
        )
        for m in consume_all(bootstrap, topics)
    )
    total = sum(expected.values())
    assert total > 150 and ("null" in {v for _, v in expected})  # tombstones among them
    assert not any(SEPARATOR in k or SEPARATOR in v or "\n" in v for k, v in expected)
    result = java_tool(
        "-cp",
        str(kafka_jars() / "*"),
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        "--bootstrap-server",
        bootstrap,
        "--include",
        "|".join(re.escape(t) for t in topics),
        "--from-beginning",
        "--isolation-level",
        "read_committed",
        "--max-messages",
        str(total),
        "--timeout-ms",
        "60000",
        "--property",
        "print.key=true",
        "--property",
        f"key.separator={SEPARATOR}",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"Processed a total of {total} messages" in result.stderr, result.stderr[-3000:]
    printed = Counter(tuple(line.split(SEPARATOR, 1)) for line in result.stdout.splitlines())
    assert printed == expected


def test_kafka_connects_json_converter_decodes_every_key_and_value(
    streamed_topics: tuple[str, list[str]], tmp_path: Path
) -> None:
    bootstrap, topics = streamed_topics
    javac = shutil.which("javac")
    assert javac, "this test compiles a Java check: it needs a JDK (javac), not only a JRE"
    classes = tmp_path / "classes"
    compiled = subprocess.run(
        [javac, "-d", str(classes), "-cp", str(kafka_jars() / "*"), str(JAVA_SOURCE)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert compiled.returncode == 0, compiled.stderr
    result = java_tool("-cp", f"{kafka_jars() / '*'}:{classes}", "JsonConverterCheck", bootstrap, *topics)
    assert result.returncode == 0, result.stderr[-3000:]
    decoded = [orjson.loads(line) for line in result.stdout.splitlines()]
    consumed = consume_all(bootstrap, topics)
    assert len(decoded) == len(consumed) > 150
    assert {(d["topic"], d["partition"], d["offset"]) for d in decoded} == {
        (m.topic, m.partition, m.offset) for m in consumed
    }
    mismatched = [d for d in decoded for part in ("key", "value") if d[part].get("same") is False]
    assert not mismatched, mismatched[:3]
    by_topic = {(d["topic"], d["value"]["schema"]) for d in decoded if d["value"]["schema"] is not None}
    prefix = next(t for t in topics if "." not in t and not t.startswith("__"))
    db = next(t.split(".")[1] for t in topics if t.endswith(".typed"))
    assert (f"{prefix}.{db}.typed", f"{prefix}.{db}.typed.Envelope") in by_topic
    assert (prefix, "io.debezium.connector.mysql.SchemaChangeValue") in by_topic
    assert (f"{prefix}.transaction", "io.debezium.connector.common.TransactionMetadataValue") in by_topic
    assert sum(1 for d in decoded if d["value"] == {"schema": None}) >= 5  # tombstones: null values
