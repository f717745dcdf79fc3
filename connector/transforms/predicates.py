"""Kafka Connect's predicates (``org.apache.kafka.connect.transforms.predicates``), used with
``transforms.<t>.predicate`` / ``.negate`` and declared under ``predicates.<p>.``."""

from __future__ import annotations

from connector.transforms.base import Options
from connector.transforms.settings import topic_pattern
from mysql_cdc_base.records import ChangeRecord


class TopicNameMatches:
    """True for records whose topic matches ``pattern`` entirely."""

    def __init__(self, options: Options) -> None:
        options.check_options(frozenset({"pattern"}))
        self.pattern = topic_pattern(options)

    def test(self, record: ChangeRecord) -> bool:
        return self.pattern.fullmatch(record.topic) is not None


class RecordIsTombstone:
    """True for records with a null value."""

    def __init__(self, options: Options) -> None:
        options.check_options(frozenset())

    def test(self, record: ChangeRecord) -> bool:
        return record.value is None


class HasHeaderKey:
    """True for records with at least one header called ``name``."""

    def __init__(self, options: Options) -> None:
        options.check_options(frozenset({"name"}))
        self.name = options.require("name")

    def test(self, record: ChangeRecord) -> bool:
        return any(h.name == self.name for h in record.headers)
