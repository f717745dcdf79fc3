"""The record each Delta commit carries, and the settings' URIs (no Spark needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.table_id import TableId
from sink.spark.commits import CommitMeta, in_snapshot, is_replay
from sink.spark.session import DELTA_PACKAGE, session_settings
from sink.spark.settings import SparkSinkSettings, warehouse_uri


def offset(pos: int, row: int = 0, snapshot: str | None = None) -> SourceOffset:
    return SourceOffset("mysql-bin.000003", pos, event=1 if row else 0, row=row, snapshot=snapshot)


def test_commit_record_round_trips_through_delta_user_metadata() -> None:
    meta = CommitMeta(
        batch=7,
        seq=2,
        of=3,
        offset=offset(400, 2),
        batch_offset=offset(900),
        since=offset(100),
        stable=offset(100),
        key=("id",),
        table=("shop", "orders"),
        kind="current",
        base_version=4,
        base_offset=offset(50),
        snapshot=True,  # a snapshot's last batch: its end is outside the snapshot
    )
    back = CommitMeta.from_json(meta.to_json(), version=12)
    assert back == CommitMeta(**{**meta.__dict__, "version": 12})
    assert CommitMeta.from_json(None, 0) is None
    assert CommitMeta.from_json('{"someone": "else"}', 0) is None  # a user's own metadata
    assert not back.in_snapshot and back.takes_snapshot and back.order == (7, 2)
    plain = CommitMeta.from_json(CommitMeta(**{**meta.__dict__, "snapshot": False}).to_json(), 12)
    assert plain is not None and not plain.takes_snapshot and '"snapshot"' not in plain.to_json()


def test_replays_are_recognised_by_binlog_position() -> None:
    held = offset(400, 2)
    assert is_replay(offset(400, 1), held) and is_replay(offset(400, 2), held)
    assert not is_replay(offset(400, 3), held) and not is_replay(offset(500), held)
    assert not is_replay(offset(100, snapshot="INITIAL"), held)  # snapshot rows are never replays
    assert not is_replay(offset(100), None)
    assert in_snapshot({"file": "f", "pos": 4, "snapshot": "INITIAL"}) and not in_snapshot(None)


def test_warehouse_is_a_hadoop_uri_and_names_map_to_locations(tmp_path: Path) -> None:
    assert warehouse_uri(str(tmp_path)) == f"file:{tmp_path}"
    assert warehouse_uri(f"file://{tmp_path}/") == f"file:{tmp_path}"
    assert warehouse_uri("s3a://bucket/cdc/") == "s3a://bucket/cdc"
    assert warehouse_uri("abfss://c@acct.dfs.core.windows.net/wh") == "abfss://c@acct.dfs.core.windows.net/wh"
    settings = SparkSinkSettings("hdfs://nn:8020/wh", changelog_name_format="cdc.{database}__{table}")
    assert settings.names(TableId("shop", "orders")) == (
        "shop.orders",
        "cdc.shop__orders",
    )
    assert settings.location("shop.orders") == "hdfs://nn:8020/wh/shop/orders"
    assert settings.location("cdc.weird name") == "hdfs://nn:8020/wh/cdc/weird@0020name"


def test_session_gets_delta_from_the_local_jars_or_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MYSQL_CDC_SPARK_JARS", str(tmp_path))
    settings = session_settings()
    assert settings["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"
    assert settings["spark.jars.packages"] == DELTA_PACKAGE and "spark.jars" not in settings  # no jars here
    for name in ("delta-spark_4.1_2.13-4.4.0.jar", "delta-storage-4.4.0.jar"):
        (tmp_path / name).write_bytes(b"")
    settings = session_settings()
    assert settings["spark.jars"].split(",") == [
        str(tmp_path / "delta-spark_4.1_2.13-4.4.0.jar"),
        str(tmp_path / "delta-storage-4.4.0.jar"),
    ]
    assert session_settings({"spark.jars.packages": "mine"})["spark.jars.packages"] == "mine"


def test_unknown_evolution_mode_is_refused() -> None:
    from sink.spark.settings import settings_from_config

    class Config(dict[str, str]):
        def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
            return super().get(key, default)

        def get_int(self, key: str, default: int | None = None) -> int | None:
            value = self.get(key)
            return int(value) if value is not None else default

        def subset(self, prefix: str) -> dict[str, str]:
            return {k[len(prefix) :]: v for k, v in self.items() if k.startswith(prefix)}

    with pytest.raises(ConfigError, match="sink.spark.schema.evolution"):
        settings_from_config(Config({"sink.spark.warehouse": "/x", "sink.spark.schema.evolution": "magic"}))
