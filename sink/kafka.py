"""The ``kafka`` sink: change records into Kafka topics with kafka-python, at least once, in order.

Each record goes to ``record.topic`` with key and value exactly as the JSON converter writes them
(the bytes the ``jsonl`` sink writes), its headers, the partition Debezium pins (0 for heartbeats and
schema changes) or the producer's murmur2 partitioner on the key bytes (Java's default partitioner,
so a key lands in the same partition Kafka Connect would put it in), and a null value for tombstones.

Delivery guarantees:
* ``acks=all`` and one in-flight request per connection, so a retried batch can never overtake the
  batch after it: per partition, the broker log is in send order.
* ``send()`` keeps the futures of unacknowledged records; when their bytes exceed ``buffer.memory``
  (kafka-python has no buffer pool of its own) it waits for the oldest ones, so a slow or absent
  broker makes the binlog reader wait instead of growing memory. The wait is bounded: a batch the
  broker does not acknowledge within ``delivery.timeout.ms`` fails.
* ``flush()`` returns once every record sent is acknowledged, or raises ``SinkError`` naming the
  topic, the brokers and the cause; the failure is sticky, so the engine cannot store an offset past
  a record the broker did not take.

Producer settings use Kafka's Java names under ``sink.kafka.producer.`` and are translated to
kafka-python's arguments by one table (``client_kwargs``), shared with the Kafka-backed offset
store and schema history.
"""

from __future__ import annotations

import contextlib
import logging
import random
import re
import socket
import struct
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from kafka import KafkaProducer
from kafka import errors as kafka_errors
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic

from sink.base import Sink, SinkError
from sink.records import ChangeRecord

if TYPE_CHECKING:
    from connector.config import ConnectorConfig

log = logging.getLogger(__name__)

BOOTSTRAP_KEY = "sink.kafka.bootstrap.servers"
PRODUCER_PREFIX = "sink.kafka.producer."
TOPIC_CREATION_PREFIX = "topic.creation.default."
DEFAULT_BUFFER_MEMORY = 32 * 1024 * 1024  # Kafka's buffer.memory default
DEFAULT_DELIVERY_TIMEOUT_MS = 120_000
DEFAULT_REQUEST_TIMEOUT_MS = 30_000


def _config_error(key: str, message: str) -> Exception:
    from connector.config import ConfigError

    return ConfigError(key, message)


# -- settings translation: Kafka's Java client names → kafka-python keyword arguments -------------


class Secret(str):
    """A password kept usable as a ``str`` but shown as asterisks by ``repr`` (kafka-python's admin
    client logs its configuration at debug level, and dicts format their values with ``repr``)."""

    def __repr__(self) -> str:
        return "'********'"


Parser = Callable[[str, str], Any]  # (full key, text) -> value


def _int(key: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise _config_error(key, f"expected an integer, got {text!r}") from None


def _bool(key: str, text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise _config_error(key, f"expected true or false, got {text!r}")
    return value == "true"


def _text(key: str, text: str) -> str:
    return text.strip()


def _secret(key: str, text: str) -> Secret:
    return Secret(text)


def _choice(*allowed: str) -> Parser:
    def parse(key: str, text: str) -> str:
        value = text.strip().upper()
        if value not in allowed:
            raise _config_error(key, f"expected one of {', '.join(allowed)}, got {text!r}")
        return value

    return parse


def _api_version(key: str, text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.strip().split("."))
    except ValueError:
        raise _config_error(key, f"expected a broker version such as 2.8 or 3.7.0, got {text!r}") from None


def _pem_only(key: str, text: str) -> None:
    if text.strip().upper() != "PEM":
        raise _config_error(
            key,
            f"kafka-python reads PEM files only, got {text!r}: convert the store "
            "(keytool -importkeystore ... then openssl pkcs12 -nodes) and set it to PEM",
        )
    return None


def _endpoint_identification(key: str, text: str) -> bool:
    # Java: "https" (the default) verifies the broker host name, "" disables it.
    return text.strip().lower() == "https"


_COMPRESSION_LIBRARIES = {"snappy": "python-snappy", "lz4": "lz4", "zstd": "zstandard"}


def _compression(key: str, text: str) -> str | None:
    from kafka import codec

    value = text.strip().lower()
    available = {
        "none": True,
        "gzip": codec.has_gzip(),
        "snappy": codec.has_snappy(),
        "lz4": codec.has_lz4(),
        "zstd": codec.has_zstd(),
    }
    if value not in available:
        raise _config_error(key, f"expected none, gzip, snappy, lz4 or zstd, got {text!r}")
    if not available[value]:
        raise _config_error(
            key,
            f"{value} compression needs the Python package "
            f"{_COMPRESSION_LIBRARIES[value]}; install it or use gzip",
        )
    return None if value == "none" else value


def _acks(key: str, text: str) -> str:
    if text.strip().lower() not in ("all", "-1"):
        raise _config_error(
            key,
            f"must be all (or -1): offsets are stored only for records every "
            f"in-sync replica has, got {text!r}",
        )
    return "all"


def _single_in_flight(key: str, text: str) -> int:
    if _int(key, text) != 1:
        raise _config_error(
            key,
            "must be 1: with more requests in flight a retried batch could be "
            "written after the next one and break per-key order",
        )
    return 1


_JAAS_OPTION_RE = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def _jaas(key: str, text: str) -> dict[str, Secret | str]:
    """``sasl.jaas.config`` of the PLAIN/SCRAM login modules → username and password."""
    options = dict(_JAAS_OPTION_RE.findall(text))
    if "username" not in options or "password" not in options:
        raise _config_error(
            key,
            'expected "<LoginModule> required username=\\"...\\" password=\\"...\\";" '
            "(PLAIN or SCRAM); for other mechanisms use the sasl.* settings",
        )
    return {"sasl_plain_username": options["username"], "sasl_plain_password": Secret(options["password"])}


@dataclass(frozen=True, slots=True)
class Setting:
    """How one Java client setting becomes a kafka-python argument (``None`` = not passed on)."""

    argument: str | None
    parse: Parser


# Connection, security and timing settings every client (producer, consumer, admin) accepts.
COMMON_SETTINGS: dict[str, Setting] = {
    "client.id": Setting("client_id", _text),
    "security.protocol": Setting(
        "security_protocol", _choice("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
    ),
    "sasl.mechanism": Setting(
        "sasl_mechanism", _choice("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")
    ),
    "sasl.plain.username": Setting("sasl_plain_username", _text),
    "sasl.plain.password": Setting("sasl_plain_password", _secret),
    "sasl.username": Setting("sasl_plain_username", _text),
    "sasl.password": Setting("sasl_plain_password", _secret),
    "sasl.jaas.config": Setting("*", _jaas),  # expands to username + password
    "sasl.kerberos.service.name": Setting("sasl_kerberos_service_name", _text),
    "sasl.kerberos.domain.name": Setting("sasl_kerberos_domain_name", _text),
    "ssl.cafile": Setting("ssl_cafile", _text),
    "ssl.certfile": Setting("ssl_certfile", _text),
    "ssl.keyfile": Setting("ssl_keyfile", _text),
    "ssl.crlfile": Setting("ssl_crlfile", _text),
    "ssl.password": Setting("ssl_password", _secret),
    "ssl.ciphers": Setting("ssl_ciphers", _text),
    "ssl.check.hostname": Setting("ssl_check_hostname", _bool),
    # Java names for the same PEM files.
    "ssl.truststore.location": Setting("ssl_cafile", _text),
    "ssl.truststore.type": Setting(None, _pem_only),
    "ssl.keystore.location": Setting("ssl_certfile", _text),
    "ssl.keystore.type": Setting(None, _pem_only),
    "ssl.key.password": Setting("ssl_password", _secret),
    "ssl.keystore.password": Setting("ssl_password", _secret),
    "ssl.endpoint.identification.algorithm": Setting("ssl_check_hostname", _endpoint_identification),
    "request.timeout.ms": Setting("request_timeout_ms", _int),
    "retry.backoff.ms": Setting("retry_backoff_ms", _int),
    "reconnect.backoff.ms": Setting("reconnect_backoff_ms", _int),
    "reconnect.backoff.max.ms": Setting("reconnect_backoff_max_ms", _int),
    "connections.max.idle.ms": Setting("connections_max_idle_ms", _int),
    "metadata.max.age.ms": Setting("metadata_max_age_ms", _int),
    "receive.buffer.bytes": Setting("receive_buffer_bytes", _int),
    "send.buffer.bytes": Setting("send_buffer_bytes", _int),
    "api.version": Setting("api_version", _api_version),
    "api.version.auto.timeout.ms": Setting("api_version_auto_timeout_ms", _int),
}

PRODUCER_SETTINGS: dict[str, Setting] = {
    **COMMON_SETTINGS,
    "acks": Setting("acks", _acks),
    "max.in.flight.requests.per.connection": Setting(
        "max_in_flight_requests_per_connection", _single_in_flight
    ),
    "batch.size": Setting("batch_size", _int),
    "linger.ms": Setting("linger_ms", _int),
    "compression.type": Setting("compression_type", _compression),
    "max.request.size": Setting("max_request_size", _int),
    "delivery.timeout.ms": Setting("delivery_timeout_ms", _int),
    "max.block.ms": Setting("max_block_ms", _int),
    "retries": Setting("retries", _int),
    "enable.idempotence": Setting("enable_idempotence", _bool),
    "buffer.memory": Setting(None, _int),  # enforced by KafkaSink itself (see module doc)
}

CONSUMER_SETTINGS: dict[str, Setting] = {
    **COMMON_SETTINGS,
    "fetch.min.bytes": Setting("fetch_min_bytes", _int),
    "fetch.max.wait.ms": Setting("fetch_max_wait_ms", _int),
    "fetch.max.bytes": Setting("fetch_max_bytes", _int),
    "max.partition.fetch.bytes": Setting("max_partition_fetch_bytes", _int),
    "max.poll.records": Setting("max_poll_records", _int),
    "check.crcs": Setting("check_crcs", _bool),
    "isolation.level": Setting(
        "isolation_level", lambda k, t: _choice("READ_COMMITTED", "READ_UNCOMMITTED")(k, t).lower()
    ),
}

# Settings the connector owns; setting them would change the wire format or the guarantees.
_OWNED = {
    "bootstrap.servers": "set the component's own bootstrap.servers key instead",
    "key.serializer": "keys are serialized by the JSON converter (key.converter.schemas.enable)",
    "value.serializer": "values are serialized by the JSON converter (value.converter.schemas.enable)",
    "key.deserializer": "the connector reads raw bytes",
    "value.deserializer": "the connector reads raw bytes",
    "partitioner.class": "records are partitioned by key with Kafka's default (murmur2) partitioner",
    "transactional.id": "the connector delivers at least once without Kafka transactions",
    "group.id": "the connector reads its topics without a consumer group",
    "enable.auto.commit": "the connector reads its topics without a consumer group",
    "auto.offset.reset": "the connector always reads its topics from the beginning",
}


def client_kwargs(
    settings: Mapping[str, str], prefix: str, table: Mapping[str, Setting] = PRODUCER_SETTINGS
) -> dict[str, Any]:
    """Translate ``{java name: text}`` (the keys under ``prefix``) to kafka-python arguments.

    A setting the table does not know is an error naming the full key, so a typo in a TLS or SASL
    setting cannot silently fall back to an unauthenticated plaintext connection.
    """
    kwargs: dict[str, Any] = {}
    for name, text in settings.items():
        key = prefix + name
        if name in _OWNED:
            raise _config_error(key, f"cannot be set: {_OWNED[name]}")
        setting = table.get(name)
        if setting is None:
            raise _config_error(
                key,
                "is not a Kafka client setting this connector supports; supported: "
                + ", ".join(sorted(table)),
            )
        value = setting.parse(key, text)
        if setting.argument == "*":
            kwargs.update(value)
        elif setting.argument is not None:
            kwargs[setting.argument] = value
    return kwargs


_IDENTITY_ARGUMENTS = frozenset(
    {
        "client_id",
        "security_protocol",
        "sasl_mechanism",
        "sasl_plain_username",
        "sasl_plain_password",
        "sasl_kerberos_service_name",
        "sasl_kerberos_domain_name",
        "ssl_cafile",
        "ssl_certfile",
        "ssl_keyfile",
        "ssl_crlfile",
        "ssl_password",
        "ssl_ciphers",
        "ssl_check_hostname",
        "api_version",
    }
)


def security_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Who the client is and how it reaches the brokers (TLS, SASL, protocol version), without the
    tuning (timeouts, batching) of the client the settings were written for."""
    return {k: v for k, v in kwargs.items() if k in _IDENTITY_ARGUMENTS}


def bootstrap_list(bootstrap: str) -> list[str]:
    return [part.strip() for part in bootstrap.split(",") if part.strip()]


def describe_reachability(bootstrap: str) -> str:
    """One phrase per bootstrap broker saying whether it accepts TCP connections right now, to
    turn a producer timeout into a cause an operator can act on."""
    parts = []
    for address in bootstrap_list(bootstrap):
        host, _, port = address.rpartition(":")
        try:
            socket.create_connection((host or "localhost", int(port or 9092)), timeout=1.0).close()
            parts.append(f"{address} accepts connections")
        except ConnectionRefusedError:
            parts.append(f"{address} refused the connection")
        except (OSError, ValueError) as exc:
            parts.append(f"{address} is unreachable ({exc})")
    return "; ".join(parts)


# -- topic creation ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicCreation:
    """Kafka Connect's ``topic.creation.default.*`` group: applies when both partitions and
    replication factor are set; other keys of the group are topic configs (cleanup.policy, ...)."""

    partitions: int
    replication_factor: int
    configs: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, enabled: bool, group: Mapping[str, str]) -> TopicCreation | None:
        if not enabled or not group:
            return None
        missing = [k for k in ("partitions", "replication.factor") if not group.get(k, "").strip()]
        if missing:
            raise _config_error(
                TOPIC_CREATION_PREFIX + missing[0],
                "is required when other topic.creation.default.* keys are set "
                "(Kafka Connect creates topics only when both partitions and "
                "replication.factor are given; -1 means the broker's default)",
            )
        partitions = _int(TOPIC_CREATION_PREFIX + "partitions", group["partitions"])
        replication = _int(TOPIC_CREATION_PREFIX + "replication.factor", group["replication.factor"])
        for name, value in (("partitions", partitions), ("replication.factor", replication)):
            if value == 0 or value < -1:
                raise _config_error(TOPIC_CREATION_PREFIX + name, f"must be positive or -1, got {value}")
        configs = {
            k: v.strip()
            for k, v in group.items()
            if k not in ("partitions", "replication.factor", "include", "exclude")
        }
        return cls(partitions, replication, configs)


class TopicCreator:
    """Creates topics through the admin API the first time they are used, where the broker
    allows it; where it does not (no CreateTopics, or not authorised) it says so once and leaves
    creation to the broker's ``auto.create.topics.enable``."""

    def __init__(self, bootstrap: str, admin_kwargs: Mapping[str, Any], timeout_ms: int, what: str) -> None:
        self.bootstrap = bootstrap
        self.admin_kwargs = dict(admin_kwargs)
        self.timeout_ms = timeout_ms
        self.what = what
        self._admin: KafkaAdminClient | None = None
        self.unavailable_reason: str | None = None

    def create(
        self, topic: str, partitions: int, replication_factor: int, configs: Mapping[str, str]
    ) -> bool:
        """True if the topic now exists because of us or already did; False if creation is not
        possible on this cluster (logged once). Other failures raise ``KafkaError``."""
        if self.unavailable_reason is not None:
            return False
        try:
            if self._admin is None:
                self._admin = KafkaAdminClient(
                    **{
                        **self.admin_kwargs,
                        "request_timeout_ms": self.timeout_ms,
                        "bootstrap_servers": bootstrap_list(self.bootstrap),
                    }
                )
            if partitions == -1 or replication_factor == -1:
                partitions, replication_factor = self._broker_defaults(partitions, replication_factor)
            self._admin.create_topics(
                [NewTopic(topic, partitions, replication_factor, topic_configs=dict(configs))],
                timeout_ms=self.timeout_ms,
            )
            log.info(
                "created Kafka topic %s (%d partitions, replication factor %d, %s)",
                topic,
                partitions,
                replication_factor,
                ", ".join(f"{k}={v}" for k, v in configs.items()) or "broker default configs",
            )
            return True
        except kafka_errors.TopicAlreadyExistsError:
            return True
        except (
            kafka_errors.IncompatibleBrokerVersion,
            kafka_errors.UnsupportedVersionError,
            kafka_errors.TopicAuthorizationFailedError,
            kafka_errors.ClusterAuthorizationFailedError,
        ) as exc:
            kind = (
                "does not support CreateTopics"
                if isinstance(
                    exc, kafka_errors.IncompatibleBrokerVersion | kafka_errors.UnsupportedVersionError
                )
                else "does not allow this client to create topics"
            )
            self.unavailable_reason = kind
            log.warning(
                "Kafka cluster at %s %s; %s not applied: topics such as %s are created by the "
                "broker's auto.create.topics.enable with its default partition count and configs",
                self.bootstrap,
                kind,
                self.what,
                topic,
            )
            return False

    def _broker_defaults(self, partitions: int, replication_factor: int) -> tuple[int, int]:
        """Resolve -1 ("the broker's default") ourselves: kafka-python speaks CreateTopics up to v3,
        and only v4+ lets the broker fill in defaults (KIP-464). Like Debezium, read the broker's
        num.partitions / default.replication.factor, else 1 / min(3, brokers)."""
        assert self._admin is not None
        values: dict[str, str] = {}
        # kafka-python's describe_cluster() chokes on some brokers' ACL bitfields; the client's
        # own metadata cache has the broker list without that decoding.
        brokers = sorted(b.nodeId for b in self._admin._client.cluster.brokers())
        try:
            responses = self._admin.describe_configs(
                [
                    ConfigResource(
                        ConfigResourceType.BROKER,
                        str(brokers[0]),
                        {"num.partitions": None, "default.replication.factor": None},
                    )
                ]
            )
            for response in responses:
                for resource in response.resources:
                    for entry in resource[4]:
                        values[entry[0]] = entry[1]
        except (kafka_errors.KafkaError, IndexError, ValueError):
            log.debug("could not read the broker's topic defaults", exc_info=True)
        if partitions == -1:
            partitions = int(values.get("num.partitions") or 1)
        if replication_factor == -1:
            replication_factor = int(values.get("default.replication.factor") or max(1, min(3, len(brokers))))
        return partitions, replication_factor

    def close(self) -> None:
        if self._admin is not None:
            try:
                self._admin.close()
            except Exception:  # noqa: BLE001 - closing a client must not mask the real outcome
                log.debug("closing the Kafka admin client failed", exc_info=True)
            self._admin = None


# -- the sink --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KafkaSinkSettings:
    bootstrap: str
    producer_kwargs: Mapping[str, Any] = field(default_factory=dict)
    buffer_memory: int = DEFAULT_BUFFER_MEMORY
    key_schemas: bool = True
    value_schemas: bool = True
    topic_creation: TopicCreation | None = None

    @property
    def delivery_timeout_ms(self) -> int:
        return int(self.producer_kwargs.get("delivery_timeout_ms", DEFAULT_DELIVERY_TIMEOUT_MS))

    @property
    def request_timeout_ms(self) -> int:
        return int(self.producer_kwargs.get("request_timeout_ms", DEFAULT_REQUEST_TIMEOUT_MS))

    @classmethod
    def from_config(cls, config: ConnectorConfig) -> KafkaSinkSettings:
        bootstrap = config.get(BOOTSTRAP_KEY)
        if not bootstrap:
            raise _config_error(
                BOOTSTRAP_KEY,
                "is required for sink.type=kafka (host:port[,host:port...] of the Kafka brokers)",
            )
        producer = config.subset(PRODUCER_PREFIX)
        kwargs = client_kwargs(producer, PRODUCER_PREFIX, PRODUCER_SETTINGS)
        buffer_memory = (
            _int(PRODUCER_PREFIX + "buffer.memory", producer["buffer.memory"])
            if "buffer.memory" in producer
            else DEFAULT_BUFFER_MEMORY
        )
        if buffer_memory < 1:
            raise _config_error(PRODUCER_PREFIX + "buffer.memory", "must be positive")
        creation = TopicCreation.from_settings(
            config.get_bool("topic.creation.enable", True), config.subset(TOPIC_CREATION_PREFIX)
        )
        return cls(
            bootstrap=bootstrap,
            producer_kwargs=kwargs,
            buffer_memory=buffer_memory,
            key_schemas=config.get_bool("key.converter.schemas.enable", True),
            value_schemas=config.get_bool("value.converter.schemas.enable", True),
            topic_creation=creation,
        )


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (Java ``Utils.murmur2``, seed 0x9747b28c) as an unsigned 32-bit value.

    Same result as kafka-python's byte-at-a-time version, three times faster: the body is read as
    little-endian 32-bit words in one ``struct`` call. Partitioning hashes every keyed record, so
    this is on the sink's hot path."""
    length = len(data)
    m = 0x5BD1E995
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    words = length >> 2
    for k in struct.unpack_from(f"<{words}I", data):
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail, rest = words << 2, length & 3
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    return h ^ (h >> 15)


def java_default_partition(key: bytes | None, all_partitions: Sequence[int], available: Sequence[int]) -> int:
    """Kafka's default partitioner: a key goes to ``toPositive(murmur2(key)) % partitions`` (the
    partition Kafka Connect would choose); a null key to any available partition."""
    if key is None:
        return random.choice(available or all_partitions)
    return all_partitions[(murmur2(key) & 0x7FFFFFFF) % len(all_partitions)]


# A tombstone of a table without a primary key has neither key nor value. Kafka Connect's Java
# producer sends such a record; kafka-python's send() refuses a None key together with a None
# value, so the sink passes this marker as the key and its key serializer turns it back into None.
_NULL_KEY: Any = object()


def _serialize_key(key: Any) -> bytes | None:
    return None if key is _NULL_KEY else key


@dataclass(slots=True)
class _Pending:
    future: Any  # kafka-python FutureRecordMetadata
    topic: str
    size: int


# What an operator can do about the non-retriable errors a broker answers with.
_HINTS: dict[type[Exception], str] = {
    kafka_errors.MessageSizeTooLargeError: "raise sink.kafka.producer.max.request.size and the broker's message.max.bytes / the topic's "
    "max.message.bytes",
    kafka_errors.RecordListTooLargeError: "lower sink.kafka.producer.batch.size",
    kafka_errors.TopicAuthorizationFailedError: "grant the connector's principal WRITE (and DESCRIBE) on the topic, or fix the SASL/TLS identity",
    kafka_errors.ClusterAuthorizationFailedError: "grant the connector's principal the cluster ACL it needs",
    kafka_errors.InvalidTopicError: "check topic.prefix / topic.delimiter: the name is not a legal topic",
}


class KafkaSink(Sink):
    name = "kafka"

    def __init__(
        self, settings: KafkaSinkSettings, producer_factory: Callable[..., KafkaProducer] = KafkaProducer
    ) -> None:
        self.settings = settings
        self._producer_factory = producer_factory
        self._producer: KafkaProducer | None = None
        self._pending: deque[_Pending] = deque()
        self._pending_bytes = 0
        self._ready_topics: set[str] = set()
        self._creator: TopicCreator | None = None
        self._failure: SinkError | None = None
        self.acknowledged = 0  # records the broker has acknowledged (for metrics and tests)

    @classmethod
    def from_config(cls, config: ConnectorConfig) -> KafkaSink:
        return cls(KafkaSinkSettings.from_config(config))

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        s = self.settings
        kwargs: dict[str, Any] = {
            "retries": 2_147_483_647,  # Kafka's default: retry until delivery.timeout.ms
            # Kafka 4.0's default (KIP-1030); with kafka-python it also means far fewer, fuller
            # batches and sender wake-ups than linger 0.
            "linger_ms": 5,
            **s.producer_kwargs,
            "bootstrap_servers": bootstrap_list(s.bootstrap),
            "acks": "all",
            "max_in_flight_requests_per_connection": 1,
            "key_serializer": _serialize_key,
            "partitioner": java_default_partition,
        }
        try:
            self._producer = self._producer_factory(**kwargs)
        except kafka_errors.NoBrokersAvailable:
            raise SinkError(
                f"Kafka sink: no broker of {BOOTSTRAP_KEY}={s.bootstrap} answered "
                f"({describe_reachability(s.bootstrap)})"
            ) from None
        except kafka_errors.KafkaError as exc:
            raise SinkError(f"Kafka sink: cannot connect to {s.bootstrap}: {_error_text(exc)}") from exc
        if s.topic_creation is not None:
            self._creator = TopicCreator(
                s.bootstrap,
                security_kwargs(s.producer_kwargs),
                s.request_timeout_ms,
                "topic.creation.default.*",
            )
        log.info(
            "Kafka sink connected to %s (acks=all, max.in.flight=1, buffer.memory=%d bytes)",
            s.bootstrap,
            s.buffer_memory,
        )

    def close(self) -> None:
        if self._creator is not None:
            self._creator.close()
        if self._producer is not None:
            # Records still pending here were never confirmed, so their offsets were not stored.
            self._producer.close(timeout=5)
            self._producer = None

    # -- delivery -------------------------------------------------------------------------------
    def send(self, records: Sequence[ChangeRecord]) -> None:
        self._raise_if_failed()
        producer = self._producer
        if producer is None:
            raise SinkError("Kafka sink: send() before start()")
        s = self.settings
        limit = s.buffer_memory
        for record in records:
            topic = record.topic
            if topic not in self._ready_topics:
                self._prepare_topic(topic)
            key = record.key_bytes(s.key_schemas)
            value = record.value_bytes(s.value_schemas)
            headers = record.header_items()
            size = (
                (len(key) if key else 0)
                + (len(value) if value else 0)
                + sum(len(n) + len(v) for n, v in headers)
            )
            try:
                future = producer.send(
                    topic,
                    value=value,
                    key=_NULL_KEY if key is None and value is None else key,
                    headers=headers or None,
                    partition=record.partition,
                )
            except kafka_errors.KafkaTimeoutError as exc:
                # send() itself only times out waiting for the topic's metadata (max.block.ms).
                self._failure = SinkError(
                    f"Kafka sink: brokers {s.bootstrap} gave no metadata for topic '{topic}' within "
                    f"max.block.ms={self.settings.producer_kwargs.get('max_block_ms', 60_000)} "
                    f"({describe_reachability(s.bootstrap)}); cause: {_error_text(exc)}"
                )
                raise self._failure from exc
            except kafka_errors.KafkaError as exc:
                self._fail(topic, record.partition, exc)
            except ValueError as exc:  # kafka-python's check of the topic name
                self._fail(topic, record.partition, kafka_errors.InvalidTopicError(str(exc)))
            if future.is_done and future.failed():  # refused client-side (e.g. max.request.size)
                self._fail(topic, record.partition, future.exception)
            self._pending.append(_Pending(future, topic, size))
            self._pending_bytes += size
            if self._pending_bytes > limit:
                self._wait_for_room(limit)
            elif len(self._pending) > 4096:
                self._reap_done()

    def flush(self) -> None:
        self._raise_if_failed()
        producer = self._producer
        if producer is None:
            return
        bound = self._ack_bound_seconds()
        try:
            producer.flush(timeout=bound)
        except kafka_errors.KafkaTimeoutError:
            head = self._pending[0] if self._pending else None
            self._fail(
                head.topic if head else "?",
                None,
                kafka_errors.KafkaTimeoutError(f"records still unacknowledged after {bound:.0f} s"),
            )
        # Every future is complete now; the first failure in send order is the one to report.
        for pending in self._pending:
            future = pending.future
            if not future.is_done:  # flush() promises completion; offsets depend on it, so check
                with contextlib.suppress(kafka_errors.KafkaError):
                    future.get(timeout=bound)
            if not future.is_done or future.failed():
                self._fail(
                    pending.topic,
                    None,
                    future.exception
                    if future.is_done
                    else kafka_errors.KafkaTimeoutError(f"no acknowledgement after {bound:.0f} s"),
                )
        self.acknowledged += len(self._pending)
        self._pending.clear()
        self._pending_bytes = 0

    # -- internals ------------------------------------------------------------------------------
    def _prepare_topic(self, topic: str) -> None:
        creation = self.settings.topic_creation
        if creation is not None and self._creator is not None:
            try:
                self._creator.create(
                    topic, creation.partitions, creation.replication_factor, creation.configs
                )
            except kafka_errors.KafkaError as exc:
                self._failure = SinkError(
                    f"Kafka sink: could not create topic '{topic}' on {self.settings.bootstrap} "
                    f"({creation.partitions} partitions, replication factor "
                    f"{creation.replication_factor}): {_error_text(exc)}; check topic.creation.default.*"
                )
                raise self._failure from exc
        self._ready_topics.add(topic)

    def _ack_bound_seconds(self) -> float:
        # A batch either succeeds or expires within delivery.timeout.ms; the margin covers the
        # last request's own timeout.
        s = self.settings
        return (s.delivery_timeout_ms + s.request_timeout_ms) / 1000 + 5

    def _reap_done(self) -> None:
        while self._pending and self._pending[0].future.is_done:
            self._settle(self._pending[0], timeout=0)

    def _wait_for_room(self, limit: int) -> None:
        """Backpressure: the reader waits here while unacknowledged bytes exceed the limit."""
        bound = self._ack_bound_seconds()
        while self._pending and self._pending_bytes > limit:
            self._settle(self._pending[0], timeout=bound)

    def _settle(self, pending: _Pending, timeout: float) -> None:
        started = time.monotonic()
        try:
            pending.future.get(timeout=timeout)
        except kafka_errors.KafkaError as exc:
            if isinstance(exc, kafka_errors.KafkaTimeoutError) and not pending.future.is_done:
                exc = kafka_errors.KafkaTimeoutError(
                    f"no acknowledgement after {time.monotonic() - started:.0f} s"
                )
            self._fail(pending.topic, None, exc)
        self._pending.popleft()
        self._pending_bytes -= pending.size
        self.acknowledged += 1

    def _fail(self, topic: str, partition: int | None, exc: Exception) -> NoReturn:
        s = self.settings
        where = f"topic '{topic}'" + (f" partition {partition}" if partition is not None else "")
        if isinstance(exc, kafka_errors.KafkaTimeoutError):
            message = (
                f"Kafka sink: brokers {s.bootstrap} did not acknowledge records for {where} within "
                f"delivery.timeout.ms={s.delivery_timeout_ms} ({describe_reachability(s.bootstrap)}); "
                f"cause: {_error_text(exc)}"
            )
        else:
            hint = next((h for t, h in _HINTS.items() if isinstance(exc, t)), None)
            message = (
                f"Kafka sink: brokers {s.bootstrap} rejected a record for {where}: {_error_text(exc)}"
                + (f"; {hint}" if hint else "")
            )
        self._failure = SinkError(message)
        raise self._failure from exc

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            raise self._failure


def _error_text(exc: BaseException) -> str:
    text = str(exc)
    name = type(exc).__name__
    return text if text.startswith(name) or name in text else f"{name}: {text}"
