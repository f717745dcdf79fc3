"""The server connection's typed settings, read through the property table.

``ConnectionSettings``: where and as whom to connect, the connect timeout, the session time zone
(``database.connectionTimeZone``) and ``database.initial.statements``. ``TlsOptions`` holds what
``database.ssl.*`` ask for, built from a ``PropertyReader`` through the
declarations in ``connector.core_properties`` (their defaults and choices written once, there);
``connector.server.tls`` turns them into an SSL context."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from connector.core_properties import CONNECTION_PROPERTIES
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertyReader, PropertySource, by_name, choice_of, int_of, text_of

_SPECS = by_name(CONNECTION_PROPERTIES)


def _text(config: PropertySource, key: str) -> str:
    return (text_of(config, _SPECS[key]) or "").strip()


@dataclass(frozen=True)
class TlsOptions:
    """``database.ssl.*``: the mode, the certificate and key files and their passwords (blank:
    unset), and ``database.hostname`` (what ``verify_identity`` checks the certificate against)."""

    mode: str
    ca: str
    cert: str
    key: str
    key_password: str
    keystore: str
    keystore_password: str
    truststore: str
    truststore_password: str
    hostname: str

    @classmethod
    def from_config(cls, config: PropertySource) -> TlsOptions:
        return cls(
            mode=choice_of(config, _SPECS["database.ssl.mode"]),
            ca=_text(config, "database.ssl.ca"),
            cert=_text(config, "database.ssl.cert"),
            key=_text(config, "database.ssl.key"),
            key_password=_text(config, "database.ssl.key.password"),
            keystore=_text(config, "database.ssl.keystore"),
            keystore_password=_text(config, "database.ssl.keystore.password"),
            truststore=_text(config, "database.ssl.truststore"),
            truststore_password=_text(config, "database.ssl.truststore.password"),
            hostname=_text(config, "database.hostname"),
        )

    def __repr__(self) -> str:  # the passwords never reach a log
        return (
            f"TlsOptions(mode={self.mode!r}, ca={self.ca!r}, cert={self.cert!r}, keystore={self.keystore!r})"
        )


_OFFSET_RE = re.compile(r"^([+-])(\d{1,2}):(\d{2})$")
_UTC_NAMES = frozenset({"UTC", "Z", "GMT", "+00:00", "-00:00"})


def session_time_zone(config: PropertySource) -> tuple[str | None, dt.tzinfo]:
    """``database.connectionTimeZone`` as (the session's ``time_zone`` value, its tzinfo); None:
    the server's zone (SERVER, the default), where snapshot connections still run in UTC.

    SERVER and UTC read TIMESTAMP text in UTC: exact whatever the server's own zone is. A fixed offset ±hh:mm runs the session there (what session-dependent SQL,
    e.g. NOW() in heartbeat.action.query or snapshot.select.statement.overrides, sees) and TIMESTAMP
    text is converted back to UTC. Zone names are refused: with daylight saving their repeated hour
    is ambiguous, which would make TIMESTAMP values wrong."""
    value = (text_of(config, _SPECS["database.connectionTimeZone"]) or "SERVER").strip()
    if value.upper() == "SERVER":
        return None, dt.UTC
    if value.upper() in _UTC_NAMES:
        return "+00:00", dt.UTC
    match = _OFFSET_RE.match(value)
    if match is None or int(match.group(2)) > 14 or int(match.group(3)) > 59:
        raise ConfigError(
            "database.connectionTimeZone",
            f"expected SERVER, UTC or a fixed offset such as +05:30, got {value!r} (zone names are "
            "not accepted: their daylight-saving hour is ambiguous)",
        )
    sign = 1 if match.group(1) == "+" else -1
    delta = dt.timedelta(hours=int(match.group(2)), minutes=int(match.group(3)))
    return f"{match.group(1)}{int(match.group(2)):02d}:{match.group(3)}", dt.timezone(sign * delta)


def initial_statements(config: PropertySource) -> list[str]:
    """``database.initial.statements`` split as Debezium does: ';' separates, ';;' is a literal ';'."""
    text = text_of(config, _SPECS["database.initial.statements"]) or ""
    parts = text.replace(";;", "\0").split(";")
    return [p.replace("\0", ";").strip() for p in parts if p.strip()]


@dataclass(frozen=True)
class ConnectionSettings:
    """What every client connection to the server needs (the password is left out of the repr)."""

    hostname: str
    port: int
    user: str
    password: str = field(repr=False)
    server_id: str
    connect_timeout_s: int
    session_zone: str | None  # the session's time_zone; None: the server's
    initial_statements: tuple[str, ...]
    tls: TlsOptions

    @classmethod
    def from_config(cls, config: PropertyReader) -> ConnectionSettings:
        timeout_ms = int_of(config, _SPECS["connect.timeout.ms"]) or 0
        return cls(
            hostname=config.hostname,
            port=config.port,
            user=config.user,
            password=config.password,
            server_id=text_of(config, _SPECS["database.server.id"]) or "",
            connect_timeout_s=max(1, timeout_ms // 1000),
            session_zone=session_time_zone(config)[0],
            initial_statements=tuple(initial_statements(config)),
            tls=TlsOptions.from_config(config),
        )
