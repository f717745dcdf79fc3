"""The metrics' typed settings (``metrics.port``, 0: off; ``metrics.host``;
``progress.interval.ms``), read once through their declarations."""

from __future__ import annotations

from typing import NamedTuple

from connector.metrics.endpoint import SERVER_PROPERTIES
from connector.metrics.progress import PROGRESS_PROPERTIES
from mysql_cdc_base.properties import PropertyReader, by_name, int_of, text_of

_SPECS = by_name(SERVER_PROPERTIES, PROGRESS_PROPERTIES)
PROGRESS_KEY = "progress.interval.ms"


def _progress_interval_ms(config: PropertyReader) -> int | None:
    # Set in the configuration itself (the declared default 0 would turn the line off).
    configured = (config.raw.get(PROGRESS_KEY) or "").strip()
    return int_of(config, _SPECS[PROGRESS_KEY]) if configured else None


class MetricsSettings(NamedTuple):
    port: int
    host: str
    progress_interval_ms: int | None  # progress.interval.ms when set (else the caller's default)

    @classmethod
    def from_config(cls, config: PropertyReader) -> MetricsSettings:
        return cls(
            port=int_of(config, _SPECS["metrics.port"]) or 0,
            host=text_of(config, _SPECS["metrics.host"]) or "127.0.0.1",
            progress_interval_ms=_progress_interval_ms(config),
        )
