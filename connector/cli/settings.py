"""The commands' typed settings, read once from the properties: the log line format
(``log.format``: text, or json)."""

from __future__ import annotations

from typing import NamedTuple

from mysql_cdc_base.properties import PropertyReader


class LogSettings(NamedTuple):
    json: bool  # log.format=json: one JSON object a line

    @classmethod
    def from_config(cls, config: PropertyReader) -> LogSettings:
        return cls(json=config.get_choice("log.format") == "json")
