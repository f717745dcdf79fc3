"""One running instance per connector, without exactly-once: a consumer group as a presence marker.

With ``exactly.once.support`` the brokers fence a second instance (``transactional.id``). Without
it nothing would stop two processes with the same ``name`` and ``topic.prefix`` from both writing
records and offsets. So when the connector uses Kafka (``sink.type=kafka`` or
``offset.storage=kafka``) each instance joins the consumer group ``mysql-cdc-<name>-<topic.prefix>``
on those brokers before it reads or writes anything, and stays a member while it runs (kafka-python's
heartbeat thread, plus a poll every few seconds). At start-up:

* a group with a live member means another instance runs: after waiting one session timeout (a
  SIGKILLed instance's membership expires by then; a clean stop leaves the group at once) the start
  is refused with an error naming the connector, the group and the member's host;
* two instances starting at the same moment may both join: each counts the members after joining
  and refuses when there is more than one (both may refuse; neither writes).

The group subscribes to a topic that does not exist, so it is assigned nothing and reads nothing.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from kafka import KafkaConsumer
from kafka import errors as kafka_errors
from kafka.admin import KafkaAdminClient

from connector.delivery.settings import GuardTarget
from ddl.kafka.client import (
    PRODUCER_SETTINGS,
    bootstrap_list,
    client_kwargs,
    security_kwargs,
    unreachable_message,
)
from mysql_cdc_base.errors import MysqlCdcError
from mysql_cdc_base.properties import PropertyReader

log = logging.getLogger(__name__)

SESSION_TIMEOUT_MS = 6000  # the brokers' default group.min.session.timeout.ms


class SecondInstanceError(MysqlCdcError, RuntimeError):
    """Another instance of the same connector is running."""


class KafkaUnreachableError(MysqlCdcError, RuntimeError):
    """No broker of the connector's bootstrap servers answered."""


class InstanceGuard:
    def __init__(
        self,
        bootstrap: str,
        connector_name: str,
        topic_prefix: str,
        client_kwargs: Mapping[str, Any] | None = None,
        session_timeout_ms: int = SESSION_TIMEOUT_MS,
        bootstrap_key: str = "sink.kafka.bootstrap.servers",
    ) -> None:
        self.bootstrap = bootstrap
        self.bootstrap_key = bootstrap_key
        self.connector_name = connector_name
        self.topic_prefix = topic_prefix
        self.group = f"mysql-cdc-{connector_name}-{topic_prefix}"
        self.client_kwargs = dict(client_kwargs or {})
        self.session_timeout_ms = session_timeout_ms
        self._consumer: KafkaConsumer | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def from_config(cls, config: PropertyReader) -> InstanceGuard | None:
        """The guard when the connector uses Kafka, else None (the engine asks only when delivery
        is not exactly once: a transactional producer is fenced by the brokers instead)."""
        target = GuardTarget.from_config(config)
        if target is None:
            return None
        identity = security_kwargs(client_kwargs(target.producer, target.producer_prefix, PRODUCER_SETTINGS))
        return cls(
            target.bootstrap,
            target.connector_name,
            target.topic_prefix,
            identity,
            bootstrap_key=target.bootstrap_key,
        )

    def acquire(self) -> None:
        """Join the group, or raise ``SecondInstanceError`` when another instance is in it."""
        members = self._members()
        if members:
            log.info(
                "consumer group %s has %d member(s); waiting up to %d ms for a stopped instance's "
                "membership to expire",
                self.group,
                len(members),
                self.session_timeout_ms,
            )
            deadline = time.monotonic() + self.session_timeout_ms / 1000 + 3
            while members and time.monotonic() < deadline:
                time.sleep(0.5)
                members = self._members()
            if members:
                raise self._refusal(members)
        self._join()
        members = self._members()
        if len(members) > 1:
            self.release()
            raise self._refusal(members)
        log.info("instance guard: member of consumer group %s (one instance of this connector)", self.group)

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        if self._consumer is not None:
            with contextlib.suppress(Exception):
                self._consumer.close()  # leaves the group: a successor need not wait
            self._consumer = None

    # -- internals --------------------------------------------------------------------------------
    def _refusal(self, members: list[str]) -> SecondInstanceError:
        return SecondInstanceError(
            f"another instance of connector '{self.connector_name}' (topic.prefix {self.topic_prefix}) "
            f"is running: consumer group {self.group} on {self.bootstrap} has a live member "
            f"({', '.join(members)}); refusing to start so that two instances do not both write. Stop "
            "the other instance first, or run an active/standby pair with exactly.once.support=required, "
            "where the standby's start fences the active instance"
        )

    def _members(self) -> list[str]:
        deadline = time.monotonic() + 30
        while True:
            admin = self._admin()
            try:
                (group,) = admin.describe_consumer_groups([self.group])
                return [f"{m.client_id} at {m.client_host.lstrip('/')}" for m in group.members]
            except (kafka_errors.KafkaError, ValueError) as exc:
                # A new cluster creates its group coordinator (__consumer_offsets) on first use.
                # kafka-python 2.3 decodes a group's authorized operations before its error code:
                # a group answered with an error (coordinator loading or moving) carries
                # Integer.MIN_VALUE there, which it fails on with ValueError; retried the same way.
                retriable = isinstance(exc, ValueError) or getattr(exc, "retriable", False)
                if not retriable or time.monotonic() > deadline:
                    raise SecondInstanceError(
                        f"cannot check for another instance of connector '{self.connector_name}' in "
                        f"consumer group {self.group} on {self.bootstrap}: {type(exc).__name__}: {exc}"
                    ) from exc
            finally:
                admin.close()
            time.sleep(0.5)

    def _admin(self) -> KafkaAdminClient:
        try:
            return KafkaAdminClient(
                bootstrap_servers=bootstrap_list(self.bootstrap),
                request_timeout_ms=10_000,
                **self.client_kwargs,
            )
        except kafka_errors.NoBrokersAvailable:
            raise KafkaUnreachableError(unreachable_message(self.bootstrap_key, self.bootstrap)) from None

    def _join(self) -> None:
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap_list(self.bootstrap),
            group_id=self.group,
            client_id=f"mysql-cdc-{self.connector_name}",
            session_timeout_ms=self.session_timeout_ms,
            heartbeat_interval_ms=max(self.session_timeout_ms // 3, 1000),
            enable_auto_commit=False,
            allow_auto_create_topics=False,
            **self.client_kwargs,
        )
        # A topic that does not exist: the group assigns nothing and nothing is fetched.
        consumer.subscribe([f"{self.group}.presence"])
        deadline = time.monotonic() + 30
        while not self._members():
            consumer.poll(timeout_ms=500)
            if time.monotonic() > deadline:
                consumer.close()
                raise SecondInstanceError(
                    f"could not join consumer group {self.group} on {self.bootstrap} within 30 s"
                )
        self._consumer = consumer
        self._stop.clear()
        self._thread = threading.Thread(target=self._keep, name="instance-guard", daemon=True)
        self._thread.start()

    def _keep(self) -> None:
        """Poll now and then so the membership never lapses for want of polls (max.poll.interval.ms)."""
        while not self._stop.wait(5.0):
            consumer = self._consumer
            if consumer is None:
                return
            with contextlib.suppress(Exception):
                consumer.poll(timeout_ms=100)
