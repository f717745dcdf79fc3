"""The server connection's typed settings, read through the property table (``database.ssl.*``).

``TlsOptions`` holds what ``database.ssl.*`` ask for, built from a ``PropertyReader`` through the
declarations in ``connector.core_properties`` (their defaults and choices written once, there);
``connector.server.tls`` turns them into an SSL context."""

from __future__ import annotations

from dataclasses import dataclass

from connector.core_properties import CONNECTION_PROPERTIES
from mysql_cdc_base.properties import PropertySource, by_name, choice_of, text_of

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
