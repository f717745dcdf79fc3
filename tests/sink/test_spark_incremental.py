"""The Spark current-state table after an incremental snapshot that raced with writers: the snapshot
rows never overwrite a newer streamed change, and ``mysql-cdc verify`` calls the tables equal."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession

from connector.cli.verify import run_verify
from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.table_id import TableId
from sink.spark import SparkSink, read_current_state
from tests.connector.incremental_support import fill, grant_signal_table, race_writer, send_signal

ROWS = 20_000


def test_incremental_snapshot_racing_with_writers_leaves_spark_equal_to_mysql(
    spark: SparkSession, mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    grant_signal_table(mysql_server, db)
    mysql_server.execute("CREATE TABLE orders (id INT PRIMARY KEY, name VARCHAR(40), qty INT)", database=db)
    fill(mysql_server, db, ROWS)
    config = ConnectorConfig.from_mapping(
        mysql_server.connector_properties(
            **{
                "topic.prefix": "si",
                "database.include.list": db,
                "data.dir": str(tmp_path / "data"),
                "snapshot.mode": "no_data",
                "signal.data.collection": f"{db}.dbz_signal",
                "incremental.snapshot.chunk.size": "500",
                "sink.type": "spark",
                "sink.spark.warehouse": str(tmp_path / "wh"),
                "sink.spark.master": "local[2]",
                "max.batch.size": "5000",
                "sink.spark.batch.max.events": "20000",
            }
        )
    )
    engine = Engine(config, sinks=[SparkSink.from_config(config)])
    stop = threading.Event()

    try:
        engine.catch_up(timeout=120)
        writers = [
            threading.Thread(target=race_writer, args=(mysql_server, db, ROWS, n, stop, 0.002))
            for n in range(2)
        ]
        for thread in writers:
            thread.start()
        try:
            send_signal(
                mysql_server, db, "sig-spark", "execute-snapshot", {"data-collections": [f"{db}.orders"]}
            )
            incremental = None
            deadline = time.monotonic() + 300
            while incremental is None or incremental.progress.chunks == 0 or incremental.running:
                assert time.monotonic() < deadline, "the incremental snapshot did not finish"
                engine.catch_up(timeout=120)
                assert engine.streaming is not None
                incremental = engine.streaming.signals.incremental
        finally:
            stop.set()
            for thread in writers:
                thread.join()
        engine.catch_up(timeout=120)
    finally:
        engine.close()
    table = TableId(db, "orders")
    frame = read_current_state(spark, SparkSink.from_config(config).settings, table)
    assert frame is not None
    ours = {row["id"]: (row["name"], row["qty"]) for row in frame.collect()}
    theirs = {r[0]: (r[1], r[2]) for r in mysql_server.query("SELECT id, name, qty FROM orders", database=db)}
    assert ours == theirs
    out = io.StringIO()
    code = run_verify(config, [table], out)
    assert code == 0, out.getvalue()
    assert f"{table}: EQUAL" in out.getvalue()
