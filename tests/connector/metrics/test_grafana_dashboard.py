"""docs/grafana/mysql-cdc.json against a real Prometheus scraping a running connector (Kafka and
Delta sinks, rows written while it streams): every panel's every query returns data."""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from connector.testing.local_server import MySQLServerHandle, free_port
from tests.connector.dashboard_layout import PICTURE, render
from tests.connector.prometheus_support import Prometheus
from tests.kafka_support import KafkaBroker
from tests.sink.connector_process import ConnectorProcess
from tests.sink.spark_apply_support import connector_props

DASHBOARD = Path(__file__).resolve().parents[3] / "docs" / "grafana" / "mysql-cdc.json"
RATE_WINDOW = "30s"  # $__rate_interval: several scrapes of the 2 s interval


def panel_queries() -> list[tuple[str, str]]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [(panel["title"], target["expr"]) for panel in dashboard["panels"] for target in panel["targets"]]


def resolved(expr: str, server: str) -> str:
    return expr.replace("$__rate_interval", RATE_WINDOW).replace("$server", server)


def finite_values(result: list[dict[str, Any]]) -> list[float]:
    return [float(r["value"][1]) for r in result if math.isfinite(float(r["value"][1]))]


def keep_writing(
    server: MySQLServerHandle, db: str, stop: threading.Event, errors: list[BaseException]
) -> None:
    n = 1000
    try:
        while not stop.is_set():
            server.execute(
                f"INSERT INTO orders VALUES ({n}, 'o')",
                f"UPDATE customers SET name = 'c{n}' WHERE id = 1",
                database=db,
            )
            n += 1
            time.sleep(0.05)
    except BaseException as exc:  # noqa: BLE001 - reported by the test
        errors.append(exc)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_dashboard_query_returns_data_from_a_running_connector(
    mysql_server: MySQLServerHandle, unique_db: str, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    db, prefix = unique_db, kafka_broker.unique("graf")
    mysql_server.execute(
        "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(20))",
        "CREATE TABLE orders (id INT PRIMARY KEY, note VARCHAR(20))",
        "INSERT INTO customers VALUES (1, 'a'), (2, 'b')",
        "INSERT INTO orders VALUES (1, 'x')",
        database=db,
    )
    port = free_port()
    props = connector_props(
        mysql_server,
        db,
        prefix,
        kafka_broker,
        tmp_path,
        **{
            "sink.type": "kafka,spark",
            "sink.spark.warehouse": str(tmp_path / "warehouse"),
            "sink.spark.batch.max.interval.ms": "1000",
            "sink.spark.conf.spark.sql.shuffle.partitions": "2",
            "metrics.port": str(port),
        },
    )
    connector = ConnectorProcess(props, tmp_path)
    prometheus = Prometheus(f"127.0.0.1:{port}", tmp_path / "prometheus")
    stop = threading.Event()
    errors: list[BaseException] = []
    writer = threading.Thread(target=keep_writing, args=(mysql_server, db, stop, errors), daemon=True)
    try:
        connector.wait_for(
            lambda: bool(
                prometheus.query(f'debezium_metrics_Connected{{context="streaming",server="{prefix}"}} == 1')
            ),
            timeout=300,
            what="the connector streaming (scraped by Prometheus)",
        )
        writer.start()
        sinks_committing = "count(sum by (sink) (rate(mysql_cdc_sink_flush_duration_seconds_count[30s])) > 0)"
        streaming = f'sum(rate(mysql_cdc_events_total{{context="streaming",server="{prefix}"}}[30s])) > 0'
        connector.wait_for(
            lambda: (
                finite_values(prometheus.query(sinks_committing)) == [2.0]
                and bool(prometheus.query(streaming))
            ),
            timeout=300,
            what=f"both sinks committing the rows written while streaming (writer errors: {errors}; "
            f"up: {prometheus.query('up')}; sinks: {prometheus.query(sinks_committing)})",
        )
        empty = []
        for title, expr in panel_queries():
            values = finite_values(prometheus.query_with_data(resolved(expr, prefix), timeout=60))
            if not values:
                empty.append(f"{title}: {expr}")
        assert not empty, "queries without data:\n" + "\n".join(empty)
        by_sink = {
            r["metric"]["sink"]
            for r in prometheus.query_with_data(
                resolved(
                    "histogram_quantile(0.95, sum by (le, sink) (rate(mysql_cdc_sink_flush_duration_seconds_bucket[$__rate_interval])))",
                    prefix,
                ),
                timeout=60,
            )
        }
        assert by_sink == {"KafkaSink", "SparkSink"}
        tables = {
            r["metric"]["table"]
            for r in prometheus.query_with_data(
                f'mysql_cdc_events_total{{context="streaming",server="{prefix}"}}', timeout=60
            )
        }
        assert tables == {f"{db}.customers", f"{db}.orders"}
    finally:
        stop.set()
        if writer.is_alive():
            writer.join(10)
        prometheus.stop()
        assert connector.stop() == 0, connector.log()


def test_the_layout_picture_in_the_docs_is_the_dashboards() -> None:
    assert PICTURE.read_text() == render(), "run python -m tests.connector.dashboard_layout"
