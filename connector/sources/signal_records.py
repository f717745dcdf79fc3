"""A signal as the channels read it (``SignalRecord``), its ``data`` and the error of a signal that
cannot be carried out: shared by ``signals`` and the Kafka channel, which import it and not each other."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from connector.sources.signal_names import IN_PROCESS
from mysql_cdc_base.errors import MysqlCdcError
from mysql_cdc_base.table_id import TableId


class SignalError(MysqlCdcError):
    """A signal that cannot be carried out as sent (logged and skipped, never fatal)."""


@dataclass(frozen=True)
class SignalRecord:
    id: str
    type: str
    data: Mapping[str, Any] = field(default_factory=dict)
    channel: str = IN_PROCESS


def parse_data(text: Any) -> dict[str, Any]:
    """A signal's ``data``: a JSON object (text or already parsed); empty means ``{}``."""
    if text is None or (isinstance(text, str | bytes) and not text.strip()):
        return {}
    if isinstance(text, Mapping):
        return dict(text)
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise SignalError(f"its data is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise SignalError(f"its data must be a JSON object, got {type(value).__name__}")
    return value


def data_collections(data: Mapping[str, Any]) -> list[TableId]:
    """``data-collections`` as table ids (``db.table``); a bad entry is a ``SignalError``."""
    names = data.get("data-collections")
    if names is None:
        return []
    if isinstance(names, str) or not isinstance(names, list):
        raise SignalError('data-collections must be a JSON list of "db.table" names')
    tables = []
    for name in names:
        try:
            tables.append(TableId.parse(str(name)))
        except ValueError:
            raise SignalError(f"data-collections entry {name!r} is not a db.table name") from None
    return tables


def required_type(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SignalError('it has no "type"')
    return value.strip()
