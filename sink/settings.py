"""The jsonl sink's settings, read once from the configuration (the Kafka and Spark sinks keep
theirs in ``sink/kafka/settings.py`` and ``sink/spark/settings.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from mysql_cdc_base.connect import schemas_enabled
from sink.base import SinkConfig


class JsonlSettings(NamedTuple):
    """``sink.jsonl.path`` (default ``<data.dir>/events.jsonl``) and whether keys and values carry
    their schemas (``key.converter.schemas.enable``, ``value.converter.schemas.enable``)."""

    path: Path
    key_schemas: bool = True
    value_schemas: bool = True


def jsonl_settings(config: SinkConfig) -> JsonlSettings:
    return JsonlSettings(
        Path(config.path_or_default("sink.jsonl.path", "events.jsonl")), *schemas_enabled(config)
    )
