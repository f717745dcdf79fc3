"""One Kafka topic used as a log: the connector's offset topic, the schema history topic and the
signal topic are each one of these.

``KafkaTopicLog`` owns what the three had each carried: the consumer (no group, raw bytes,
``read_committed`` so that records of an open or aborted transaction are never read back), the
synchronous producer (``acks=all``, one request in flight, each ``append`` waits for the
acknowledgement), topic creation through an injected ensurer, and the read from the beginning to
the end offset observed when the read starts. A store keeps only its format: its key, its value
layout, how many partitions its topic may have.

It lives in ``ddl`` because the schema history (here) uses it and ``ddl`` imports nothing above
itself; the connector layer injects what needs the shared client settings (topic creation with the
admin client, the brokers' reachability in error messages) as callables. Every failure is raised as
the caller's error type (``error``) with a message naming the topic, the brokers and ``what`` the
topic is for.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as kafka_errors
from kafka.consumer.fetcher import ConsumerRecord

log = logging.getLogger(__name__)

TopicEnsurer = Callable[[str, int, int, Mapping[str, str]], bool]
"""``(topic, partitions, replication factor, topic configs) -> bool``: create the topic if the
cluster allows it (True: it exists now; False: creation is not possible here and the broker's
auto-creation will make it); raises ``kafka.errors.KafkaError`` for other failures."""


class KafkaTopicLog:
    """One topic: ``read`` it from the beginning to its current end, ``append`` durably, ``follow``
    it with a consumer group (the signal channel)."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        *,
        what: str,
        error: Callable[[str], Exception],
        bootstrap_key: str,
        bootstrap_servers: Sequence[str] | None = None,
        producer_kwargs: Mapping[str, Any] | None = None,
        consumer_kwargs: Mapping[str, Any] | None = None,
        ensure_topic: TopicEnsurer | None = None,
        describe_reachability: Callable[[str], str] | None = None,
        ack_timeout_ms: int = 30_000,
    ) -> None:
        """``what``: the topic's role in messages ("offset topic"); ``error``: builds the caller's
        exception from a message; ``bootstrap_key``: the property that names the brokers."""
        self.bootstrap = bootstrap  # as configured: named in messages
        self.bootstrap_servers: str | list[str] = (
            list(bootstrap_servers) if bootstrap_servers is not None else bootstrap
        )
        self.topic = topic
        self.what = what
        self.error = error
        self.bootstrap_key = bootstrap_key
        self.producer_kwargs = dict(producer_kwargs or {})
        self.consumer_kwargs = dict(consumer_kwargs or {})
        self.ensure_topic = ensure_topic
        self._describe_reachability = describe_reachability
        self.ack_timeout_ms = ack_timeout_ms
        self._producer: KafkaProducer | None = None

    # -- metadata -----------------------------------------------------------------------------------
    def partitions(self) -> set[int] | None:
        """The topic's partition ids, or None when it does not exist (never auto-creates it)."""
        consumer = self.consumer()
        try:
            ids = consumer.partitions_for_topic(self.topic)
        finally:
            consumer.close()
        return set(ids) if ids else None

    def create(self, partitions: int, replication_factor: int, configs: Mapping[str, str], hint: str) -> bool:
        """Create the topic through the ensurer (True: it exists now). ``hint`` says what to check
        when creation fails."""
        if self.ensure_topic is None:
            return False
        try:
            return self.ensure_topic(self.topic, partitions, replication_factor, configs)
        except kafka_errors.KafkaError as exc:
            raise self.error(
                f"cannot create {self.what} {self.topic} on {self.bootstrap} ({partitions} partitions, "
                f"replication factor {replication_factor}): {type(exc).__name__}: {exc}; {hint}"
            ) from exc

    # -- reading ------------------------------------------------------------------------------------
    def read(
        self,
        partitions: Iterable[int],
        *,
        poll_timeout_ms: int = 500,
        max_empty_polls: int = 100,
        hint: str = "",
    ) -> Iterator[ConsumerRecord]:
        """Every committed record of ``partitions`` from the log start to the end offset observed
        now, per partition in offset order. Fails after ``max_empty_polls`` consecutive polls that
        bring nothing while the end is not reached (``hint`` says which setting raises the limit)."""
        tps = [TopicPartition(self.topic, p) for p in sorted(partitions)]
        if not tps:
            return
        consumer = self.consumer()
        try:
            consumer.assign(tps)
            consumer.seek_to_beginning(*tps)
            # read_committed: the end is the last stable offset, so an open transaction's records
            # (and everything after them) are not waited for.
            end = consumer.end_offsets(tps)
            empty_polls = 0
            while any(consumer.position(tp) < end[tp] for tp in tps):
                batches = consumer.poll(timeout_ms=poll_timeout_ms)
                if not batches:
                    empty_polls += 1
                    if empty_polls > max_empty_polls:
                        stuck = {tp.partition: consumer.position(tp) for tp in tps}
                        ends = {tp.partition: end[tp] for tp in tps}
                        raise self.error(
                            f"{self.what} {self.topic} could not be read to its end offsets {ends} "
                            f"(stuck at {stuck}) on {self.bootstrap}"
                            + (f"; {hint}" if hint else "")
                            + self._reachability()
                        )
                    continue
                empty_polls = 0
                for tp, records in batches.items():
                    for record in records:
                        if record.offset < end[tp]:
                            yield record
        except kafka_errors.KafkaError as exc:
            raise self.error(
                f"cannot read {self.what} {self.topic} on {self.bootstrap}: {type(exc).__name__}: {exc}"
                f"{self._reachability()}"
            ) from exc
        finally:
            consumer.close()

    def is_empty(self, partition: int) -> bool:
        tp = TopicPartition(self.topic, partition)
        consumer = self.consumer()
        try:
            return bool(consumer.end_offsets([tp])[tp] <= consumer.beginning_offsets([tp])[tp])
        finally:
            consumer.close()

    def follow(self, group_id: str, partitions: Iterable[int], **kwargs: Any) -> KafkaConsumer:
        """A consumer of ``partitions`` that remembers its position in the consumer group
        ``group_id`` (new records from the group's committed position; the log start when it has
        none). The caller polls it and commits what it processed."""
        return self.consumer(group_id=group_id, auto_offset_reset="earliest", assign=partitions, **kwargs)

    def consumer(
        self, group_id: str | None = None, assign: Iterable[int] | None = None, **kwargs: Any
    ) -> KafkaConsumer:
        try:
            consumer = KafkaConsumer(
                **{
                    "isolation_level": "read_committed",
                    # kafka-python refuses responses over 1,000,000 bytes by default, less than
                    # one full fetch of a partition (max.partition.fetch.bytes, 1 MiB).
                    "receive_message_max_bytes": 100_000_000,
                    **self.consumer_kwargs,
                    **kwargs,
                    "bootstrap_servers": self.bootstrap_servers,
                    "group_id": group_id,
                    "enable_auto_commit": False,
                    "allow_auto_create_topics": False,
                }
            )
        except kafka_errors.KafkaError as exc:
            raise self.error(
                f"cannot connect to {self.bootstrap_key}={self.bootstrap} to read {self.what} "
                f"{self.topic}: {type(exc).__name__}{self._reachability()}"
            ) from exc
        if assign is not None:
            consumer.assign([TopicPartition(self.topic, p) for p in assign])
        return consumer

    # -- writing ------------------------------------------------------------------------------------
    def append(self, key: bytes | None, value: bytes | None, partition: int | None = None) -> None:
        """Write one record and wait until every in-sync replica has it."""
        producer = self._ensure_producer()
        try:
            producer.send(self.topic, key=key, value=value, partition=partition).get(
                timeout=self.ack_timeout_ms / 1000
            )
        except kafka_errors.KafkaError as exc:
            raise self.error(
                f"cannot write to {self.what} {self.topic} on {self.bootstrap}: {type(exc).__name__}: {exc}"
                f"{self._reachability()}"
            ) from exc

    def close(self) -> None:
        if self._producer is not None:
            self._producer.close(timeout=5)
            self._producer = None

    def _ensure_producer(self) -> KafkaProducer:
        if self._producer is None:
            try:
                self._producer = KafkaProducer(
                    **{
                        "retries": 2_147_483_647,
                        **self.producer_kwargs,
                        "bootstrap_servers": self.bootstrap_servers,
                        "acks": "all",
                        "max_in_flight_requests_per_connection": 1,
                    }
                )
            except kafka_errors.KafkaError as exc:
                raise self.error(
                    f"cannot connect to {self.bootstrap_key}={self.bootstrap} to write {self.what} "
                    f"{self.topic}: {type(exc).__name__}{self._reachability()}"
                ) from exc
        return self._producer

    def _reachability(self) -> str:
        """`` (<whether each broker answers>)`` for an error message, or nothing."""
        if self._describe_reachability is None:
            return ""
        return f" ({self._describe_reachability(self.bootstrap)})"
