"""The confluent-kafka sink's settings: Kafka's Java producer names (``sink.kafka.producer.*``) mapped
to librdkafka properties (``RDKAFKA_PRODUCER_SETTINGS``), each validated as the kafka-python sink
validates it; a setting librdkafka has no equivalent for is a ``ConfigError`` naming the key
(``sink.kafka.confluent``)."""

from __future__ import annotations

from ddl.kafka.client import (
    PRODUCER_SETTINGS,
    Parser,
    Secret,
    Setting,
    jaas_credentials,
    parse_int,
)
from mysql_cdc_base.errors import ConfigError
from sink.kafka.settings import PRODUCER_PREFIX

# -- settings: Kafka's Java producer names → librdkafka properties ----------------------------------


def _same(key: str, text: str) -> str:
    """A setting whose meaning and syntax librdkafka shares: validated as kafka-python's is (the
    same ConfigError for the same bad value), passed on as written."""
    PRODUCER_SETTINGS[key.removeprefix(PRODUCER_PREFIX)].parse(key, text)
    return text.strip()


def _int(key: str, text: str) -> str:
    return str(parse_int(key, text))


def _message_max_bytes(key: str, text: str) -> str:
    value = parse_int(key, text)
    if value < 1000:  # librdkafka's message.max.bytes range starts at 1000
        raise ConfigError(key, f"must be at least 1000 with sink.kafka.client=confluent, got {value}")
    return str(value)


def _socket_buffer(key: str, text: str) -> str:
    value = parse_int(key, text)
    return "0" if value == -1 else str(value)  # Java's -1 (the OS default) is librdkafka's 0


def _hostname_check(key: str, text: str) -> str:
    return "https" if PRODUCER_SETTINGS[key.removeprefix(PRODUCER_PREFIX)].parse(key, text) else "none"


def _compression(key: str, text: str) -> str:
    value = text.strip().lower()
    if value not in ("none", "gzip", "snappy", "lz4", "zstd"):
        raise ConfigError(key, f"expected none, gzip, snappy, lz4 or zstd, got {text!r}")
    return value  # librdkafka has every codec built in


def _jaas(key: str, text: str) -> dict[str, str]:
    """``sasl.jaas.config`` of the PLAIN/SCRAM login modules → librdkafka's username/password."""
    username, password = jaas_credentials(key, text)
    return {"sasl.username": username, "sasl.password": password}


def _bool(key: str, text: str) -> str:
    return "true" if PRODUCER_SETTINGS["enable.idempotence"].parse(key, text) else "false"


def _secret(key: str, text: str) -> Secret:
    return Secret(text)  # shown as asterisks by repr


def _refused(reason: str) -> Parser:
    def parse(key: str, text: str) -> None:
        raise ConfigError(key, f"does not apply to sink.kafka.client=confluent: {reason}")

    return parse


def _r(name: str | None, parse: Parser = _same) -> Setting:
    return Setting(name, parse)


RDKAFKA_PRODUCER_SETTINGS: dict[str, Setting] = {
    "client.id": _r("client.id"),
    "security.protocol": _r("security.protocol"),
    "sasl.mechanism": _r("sasl.mechanism"),
    "sasl.plain.username": _r("sasl.username"),
    "sasl.plain.password": _r("sasl.password", _secret),
    "sasl.username": _r("sasl.username"),
    "sasl.password": _r("sasl.password", _secret),
    "sasl.jaas.config": _r("*", _jaas),
    "sasl.kerberos.service.name": _r("sasl.kerberos.service.name"),
    "sasl.kerberos.domain.name": _r(
        None, _refused("librdkafka takes the broker's host name; use sasl.kerberos.service.name")
    ),
    "ssl.cafile": _r("ssl.ca.location"),
    "ssl.certfile": _r("ssl.certificate.location"),
    "ssl.keyfile": _r("ssl.key.location"),
    "ssl.crlfile": _r("ssl.crl.location"),
    "ssl.password": _r("ssl.key.password", _secret),
    "ssl.ciphers": _r("ssl.cipher.suites"),
    "ssl.check.hostname": _r("ssl.endpoint.identification.algorithm", _hostname_check),
    # As with kafka-python, the Java store settings name PEM files.
    "ssl.truststore.location": _r("ssl.ca.location"),
    "ssl.truststore.type": _r(None),
    "ssl.keystore.location": _r("ssl.certificate.location"),
    "ssl.keystore.type": _r(None),
    "ssl.key.password": _r("ssl.key.password", _secret),
    "ssl.keystore.password": _r("ssl.key.password", _secret),
    "ssl.endpoint.identification.algorithm": _r("ssl.endpoint.identification.algorithm", _hostname_check),
    "request.timeout.ms": _r("request.timeout.ms", _int),
    "retry.backoff.ms": _r("retry.backoff.ms", _int),
    "reconnect.backoff.ms": _r("reconnect.backoff.ms", _int),
    "reconnect.backoff.max.ms": _r("reconnect.backoff.max.ms", _int),
    "connections.max.idle.ms": _r("connections.max.idle.ms", _int),
    "metadata.max.age.ms": _r("metadata.max.age.ms", _int),
    "receive.buffer.bytes": _r("socket.receive.buffer.bytes", _socket_buffer),
    "send.buffer.bytes": _r("socket.send.buffer.bytes", _socket_buffer),
    "api.version": _r(
        None,
        _refused(
            "librdkafka asks the broker for its protocol versions (ApiVersions); remove the key "
            "(broker.version.fallback only matters for brokers older than 0.10)"
        ),
    ),
    "api.version.auto.timeout.ms": _r("api.version.request.timeout.ms", _int),
    "acks": _r("acks", lambda k, t: PRODUCER_SETTINGS["acks"].parse(k, t)),
    "max.in.flight.requests.per.connection": _r("max.in.flight.requests.per.connection", _same),
    "batch.size": _r("batch.size", _int),
    "linger.ms": _r("linger.ms", _int),
    "compression.type": _r("compression.type", _compression),
    "max.request.size": _r("message.max.bytes", _message_max_bytes),
    "delivery.timeout.ms": _r("delivery.timeout.ms", _int),
    "max.block.ms": _r(
        None,
        _refused(
            "librdkafka's produce() does not wait for a topic's metadata: records queue until the "
            "topic is known or delivery.timeout.ms expires; remove the key"
        ),
    ),
    "retries": _r("retries", _int),
    "enable.idempotence": _r("enable.idempotence", _bool),
    "buffer.memory": _r(None, _int),  # queue.buffering.max.kbytes, set by the sink (see start)
}
