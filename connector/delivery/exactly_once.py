"""Exactly-once delivery into Kafka (Kafka Connect's KIP-618 properties).

``exactly.once.support``:

* ``required``: the Kafka sink's producer is transactional, with ``transactional.id``
  ``mysql-cdc-<name>``. Each transaction holds a batch of change records *and* the source offset
  after them, written to the offset topic (``offset.storage=kafka``, the ``KafkaOffsetBackingStore``
  layout). A ``read_committed`` consumer sees each change once: a crash before the commit leaves
  neither records nor offset visible, and the restart resumes from the offset of the last committed
  transaction (the offset topic is read ``read_committed``). A configuration that cannot be exactly
  once is refused at start-up, naming the key.
* ``requested``: the same when the configuration allows it; otherwise at least once, with a warning
  naming the keys that prevent it.
* ``disabled`` (default): at least once (the offset is stored after the sinks flushed).

``transaction.boundary``: ``poll`` (default) commits every batch the engine hands the sink
(``max.batch.size`` records, or what ``poll.interval.ms`` gathered); ``interval`` commits every
``transaction.boundary.interval.ms`` (default ``offset.flush.interval.ms``), or earlier when
``max.queue.size`` records wait. Connect's ``connector`` (boundaries defined by the connector) is
refused.

Starting the transactional producer (``init_transactions``) fences every earlier producer with the
same id: a second instance of the connector makes the first one fail at its next send or commit with
an error naming the connector, and the first one's open transaction is aborted. That is the
active/standby pattern: the standby's start takes over.

The schema history is not part of the transaction: a DDL is written (``acks=all``, synchronously)
before any record that depends on it is sent, so every committed transaction refers only to schemas
the history holds; after a crash the history may hold DDL past the committed offset, and recovery
applies only the DDL up to the offset.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from connector.delivery.settings import SUPPORT_KEY, ExactlyOnceSettings
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.position import SourceOffset
from mysql_cdc_base.properties import PropertyReader
from sink.base import Sink, TransactionalSink

if TYPE_CHECKING:
    from connector.stores.kafka_offsets import KafkaOffsetStore
    from connector.stores.offsets import OffsetStore

log = logging.getLogger(__name__)


class OffsetTransactions:
    """Commits the sink's open transaction together with the offset record (``Delivery`` calls
    ``commit`` where it would otherwise store the offset)."""

    def __init__(self, sink: TransactionalSink, store: KafkaOffsetStore) -> None:
        self.sink = sink
        self.store = store
        self._topic_ready = False

    def commit(self, offset: SourceOffset | None) -> None:
        """Commit what was sent since the last commit, with ``offset`` (None: records only)."""
        if offset is not None:
            if not self._topic_ready:
                self.store.ensure_topic()
                self._topic_ready = True
            self.sink.add_to_transaction(self.store.topic, self.store.key, self.store.value_of(offset))
        self.sink.commit_transaction()

    def recover(self, offset: SourceOffset | None) -> bool:
        """A new producer (its ``init_transactions`` completes or aborts the abandoned
        transaction); then the offset topic, read read_committed, says whether it committed."""
        self.sink.restart_transactions()
        return offset is not None and self.store.load() == offset


def transactional_id(config: PropertyReader) -> str:
    return f"mysql-cdc-{config.connector_name}"


def exactly_once_from_config(
    config: PropertyReader, sinks: list[Sink], offsets: OffsetStore
) -> tuple[ExactlyOnceSettings, OffsetTransactions | None]:
    """The settings and, when exactly-once is on, the sink made transactional (before it starts)."""
    settings = ExactlyOnceSettings.from_config(config)
    if not settings.enabled:
        return settings, None
    from connector.stores.kafka_offsets import KafkaOffsetStore

    if not isinstance(offsets, KafkaOffsetStore):
        raise ConfigError(
            "offset.storage",
            f"must be kafka with {SUPPORT_KEY} (the engine was given a {type(offsets).__name__})",
        )
    if len(sinks) != 1 or not isinstance(sinks[0], TransactionalSink):
        names = ", ".join(type(s).__name__ for s in sinks)
        raise ConfigError(
            "sink.type" if len(sinks) != 1 else "sink.kafka.client",
            f"the sink ({names}) cannot commit records in a Kafka transaction ({SUPPORT_KEY})",
        )
    sink = sinks[0]
    assert isinstance(sink, TransactionalSink)
    tid = transactional_id(config)
    sink.enable_transactions(tid, config.connector_name)
    log.info(
        "exactly once: transactional.id %s, transaction.boundary=%s%s, offsets in %s",
        tid,
        settings.boundary,
        f" ({settings.interval_ms} ms)" if settings.boundary == "interval" else "",
        offsets.topic,
    )
    return settings, OffsetTransactions(sink, offsets)
