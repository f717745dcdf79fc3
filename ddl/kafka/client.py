"""Kafka client settings shared by the Kafka sink, the Kafka offset store, the Kafka schema history
and the Kafka signal channel.

Settings use Kafka's Java client names (``security.protocol``, ``sasl.jaas.config``,
``ssl.truststore.location``, ``linger.ms`` ...) under a component's prefix and are translated to
kafka-python's keyword arguments by one table per client kind (``PRODUCER_SETTINGS``,
``CONSUMER_SETTINGS``) in ``client_kwargs``; an unknown or connector-owned key is a ``ConfigError``
naming the full key. ``security_kwargs`` keeps only who a client is and how it reaches the brokers,
so an admin client or a second component on the same brokers shares the identity without the
tuning. ``describe_reachability`` turns a timeout into a cause an operator can act on.

Nothing here imports kafka-python at module level (only the check of a compression codec does):
the connector declares these settings on every start, whether or not Kafka is used. Topic creation
through the admin API is in ``ddl.kafka.topics``.
"""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertySource, parse_bool, parse_int, split_list

# The Kafka sink's logger: topic creation and client messages keep the name they always had.
log = logging.getLogger("sink.kafka")

# The Kafka sink's brokers: the offset store and the schema history fall back to them.
SINK_BOOTSTRAP_KEY = "sink.kafka.bootstrap.servers"


# -- settings translation: Kafka's Java client names → kafka-python keyword arguments -------------


class Secret(str):
    """A password kept usable as a ``str`` but shown as asterisks by ``repr`` (kafka-python's admin
    client logs its configuration at debug level, and dicts format their values with ``repr``)."""

    def __repr__(self) -> str:
        return "'********'"


Parser = Callable[[str, str], Any]  # (full key, text) -> value


def _text(key: str, text: str) -> str:
    return text.strip()


def _secret(key: str, text: str) -> Secret:
    return Secret(text)


def _choice(*allowed: str) -> Parser:
    def parse(key: str, text: str) -> str:
        value = text.strip().upper()
        if value not in allowed:
            raise ConfigError(key, f"expected one of {', '.join(allowed)}, got {text!r}")
        return value

    return parse


def _api_version(key: str, text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.strip().split("."))
    except ValueError:
        raise ConfigError(key, f"expected a broker version such as 2.8 or 3.7.0, got {text!r}") from None


def _pem_only(key: str, text: str) -> None:
    if text.strip().upper() != "PEM":
        raise ConfigError(
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
    # kafka-python's codec module tells which compression libraries are installed: imported here,
    # when a compression.type is given, so that declaring the settings does not load kafka-python.
    from kafka import codec  # noqa: PLC0415

    value = text.strip().lower()
    available = {
        "none": True,
        "gzip": codec.has_gzip(),
        "snappy": codec.has_snappy(),
        "lz4": codec.has_lz4(),
        "zstd": codec.has_zstd(),
    }
    if value not in available:
        raise ConfigError(key, f"expected none, gzip, snappy, lz4 or zstd, got {text!r}")
    if not available[value]:
        raise ConfigError(
            key,
            f"{value} compression needs the Python package "
            f"{_COMPRESSION_LIBRARIES[value]}; install it or use gzip",
        )
    return None if value == "none" else value


def _acks(key: str, text: str) -> str:
    if text.strip().lower() not in ("all", "-1"):
        raise ConfigError(
            key,
            f"must be all (or -1): offsets are stored only for records every "
            f"in-sync replica has, got {text!r}",
        )
    return "all"


def _single_in_flight(key: str, text: str) -> int:
    if parse_int(key, text) != 1:
        raise ConfigError(
            key,
            "must be 1: with more requests in flight a retried batch could be "
            "written after the next one and break per-key order",
        )
    return 1


_JAAS_OPTION_RE = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def jaas_credentials(key: str, text: str) -> tuple[str, Secret]:
    """``sasl.jaas.config`` of the PLAIN/SCRAM login modules → username and password."""
    options = dict(_JAAS_OPTION_RE.findall(text))
    if "username" not in options or "password" not in options:
        raise ConfigError(
            key,
            'expected "<LoginModule> required username=\\"...\\" password=\\"...\\";" '
            "(PLAIN or SCRAM); for other mechanisms use the sasl.* settings",
        )
    return options["username"], Secret(options["password"])


def _jaas(key: str, text: str) -> dict[str, Secret | str]:
    username, password = jaas_credentials(key, text)
    return {"sasl_plain_username": username, "sasl_plain_password": password}


class Setting(NamedTuple):
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
    "ssl.check.hostname": Setting("ssl_check_hostname", parse_bool),
    # Java names for the same PEM files.
    "ssl.truststore.location": Setting("ssl_cafile", _text),
    "ssl.truststore.type": Setting(None, _pem_only),
    "ssl.keystore.location": Setting("ssl_certfile", _text),
    "ssl.keystore.type": Setting(None, _pem_only),
    "ssl.key.password": Setting("ssl_password", _secret),
    "ssl.keystore.password": Setting("ssl_password", _secret),
    "ssl.endpoint.identification.algorithm": Setting("ssl_check_hostname", _endpoint_identification),
    "request.timeout.ms": Setting("request_timeout_ms", parse_int),
    "retry.backoff.ms": Setting("retry_backoff_ms", parse_int),
    "reconnect.backoff.ms": Setting("reconnect_backoff_ms", parse_int),
    "reconnect.backoff.max.ms": Setting("reconnect_backoff_max_ms", parse_int),
    "connections.max.idle.ms": Setting("connections_max_idle_ms", parse_int),
    "metadata.max.age.ms": Setting("metadata_max_age_ms", parse_int),
    "receive.buffer.bytes": Setting("receive_buffer_bytes", parse_int),
    "send.buffer.bytes": Setting("send_buffer_bytes", parse_int),
    "api.version": Setting("api_version", _api_version),
    "api.version.auto.timeout.ms": Setting("api_version_auto_timeout_ms", parse_int),
}

PRODUCER_SETTINGS: dict[str, Setting] = {
    **COMMON_SETTINGS,
    "acks": Setting("acks", _acks),
    "max.in.flight.requests.per.connection": Setting(
        "max_in_flight_requests_per_connection", _single_in_flight
    ),
    "batch.size": Setting("batch_size", parse_int),
    "linger.ms": Setting("linger_ms", parse_int),
    "compression.type": Setting("compression_type", _compression),
    "max.request.size": Setting("max_request_size", parse_int),
    "delivery.timeout.ms": Setting("delivery_timeout_ms", parse_int),
    "max.block.ms": Setting("max_block_ms", parse_int),
    "retries": Setting("retries", parse_int),
    "enable.idempotence": Setting("enable_idempotence", parse_bool),
    "transaction.timeout.ms": Setting("transaction_timeout_ms", parse_int),
    "buffer.memory": Setting(None, parse_int),  # enforced by the Kafka sink itself (see sink.kafka)
}

CONSUMER_SETTINGS: dict[str, Setting] = {
    **COMMON_SETTINGS,
    "fetch.min.bytes": Setting("fetch_min_bytes", parse_int),
    "fetch.max.wait.ms": Setting("fetch_max_wait_ms", parse_int),
    "fetch.max.bytes": Setting("fetch_max_bytes", parse_int),
    "max.partition.fetch.bytes": Setting("max_partition_fetch_bytes", parse_int),
    "max.poll.records": Setting("max_poll_records", parse_int),
    "check.crcs": Setting("check_crcs", parse_bool),
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
    "transactional.id": "with exactly.once.support the connector derives it from its name "
    "(mysql-cdc-<name>), so that a second instance fences the first",
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
            raise ConfigError(key, f"cannot be set: {_OWNED[name]}")
        setting = table.get(name)
        if setting is None:
            raise ConfigError(
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


def store_client_kwargs(
    config: PropertySource, producer_prefix: str, consumer_prefix: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Kafka-backed store's producer and consumer arguments, from the Java client settings under
    its two prefixes (``offset.storage.kafka.producer.``, ``schema.history.internal.consumer.`` ...)."""
    producer = client_kwargs(config.subset(producer_prefix), producer_prefix, PRODUCER_SETTINGS)
    consumer = client_kwargs(config.subset(consumer_prefix), consumer_prefix, CONSUMER_SETTINGS)
    return producer, consumer


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
    return split_list(bootstrap)


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


def unreachable_message(key: str, bootstrap: str) -> str:
    """One line for brokers that did not answer: the key, the addresses tried and what to check."""
    return (
        f"no Kafka broker answered at {key}={bootstrap} ({describe_reachability(bootstrap)}): check "
        f"{key}, that the brokers run and that their advertised listeners are reachable from here"
    )
