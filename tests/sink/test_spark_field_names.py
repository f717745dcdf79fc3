"""The Spark sink with ``field.name.adjustment.mode``: the Delta tables' columns are the adjusted
field names the change events carry, also across a schema change event (whose ``tableChanges`` keep
the columns' own names), against a real local Spark."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from connector.config import ConnectorConfig
from connector.records.builder import EventBuilder
from connector.records.conversion import ConverterSettings
from ddl.model import ChangeType
from sink.spark import SparkSink
from sink.spark.settings import settings_from_config
from tests.sink.spark_orders import J
from tests.sink.spark_support import BASE_PROPS, Emitter, col, make_table


def test_delta_columns_are_the_adjusted_field_names(spark: SparkSession, tmp_path: Path) -> None:
    props = {
        **BASE_PROPS,
        "field.name.adjustment.mode": "avro_unicode",
        "sink.spark.warehouse": str(tmp_path / "wh"),
        "sink.spark.master": "local[2]",
    }
    config = ConnectorConfig.from_mapping(props)
    settings = settings_from_config(config)
    assert settings.converter_settings is None  # tableChanges do not say the columns' field names
    em = Emitter(EventBuilder(config, converter_settings=ConverterSettings()))
    v1 = make_table(
        "adj",
        "t",
        [col("id", "INT", J.INTEGER, optional=False), col("my_col", "INT", J.INTEGER)],
        ["id"],
    )
    v2 = make_table("adj", "t", [*v1.columns, col("new-c", "VARCHAR", J.VARCHAR, length=10)], ["id"])
    sink = SparkSink(settings)
    sink.start()
    try:
        records = [
            *em.ddl(v1, "CREATE TABLE t (id INT PRIMARY KEY, my_col INT)", ChangeType.CREATE),
            *em.insert(v1, (1, 10)),
            *em.ddl(v2, "ALTER TABLE t ADD COLUMN `new-c` VARCHAR(10)"),
            *em.insert(v2, (2, 20, "x")),
            *em.update(v2, (1, 10, None), (1, 11, "y")),
        ]
        sink.send(records)
        sink.flush()
        rows = spark.table("adj.t").orderBy("id").collect()
        assert spark.table("adj.t").columns == ["id", "my_u005fcol", "new_u002dc"]
        assert [tuple(r) for r in rows] == [(1, 11, "y"), (2, 20, "x")]
    finally:
        sink.close()
