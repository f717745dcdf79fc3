"""TLS to MySQL, as Debezium's ``database.ssl.*`` properties ask, on every connection the connector
opens (binlog, snapshot, start-up probe, heartbeat action, verify).

``database.ssl.mode``:

* ``disabled``: plain TCP (a server with ``require_secure_transport=ON`` refuses it);
* ``preferred`` (default): TLS when the server offers it, the certificate not checked;
* ``required``: TLS or no connection, the certificate not checked;
* ``verify_ca``: TLS, the server certificate must chain to the CA (``database.ssl.ca``, or
  ``database.ssl.truststore``; the system's CAs when neither is set);
* ``verify_identity``: as ``verify_ca``, and the certificate must name ``database.hostname``.

A client certificate comes from ``database.ssl.cert`` + ``database.ssl.key`` (PEM) or from
Debezium's PKCS12 ``database.ssl.keystore`` + ``database.ssl.keystore.password``. The key of a
PKCS12 keystore is handed to OpenSSL through a private temporary file, encrypted with a one-off
password, and removed at once.
"""

from __future__ import annotations

import os
import secrets
import ssl
from collections.abc import Callable
from dataclasses import astuple, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from cryptography.hazmat.primitives import serialization
from pymysql.constants import CLIENT

from connector.server.settings import TlsOptions
from mysql_cdc_base.errors import ConfigError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
    from cryptography.x509 import Certificate

VERIFYING_MODES = frozenset({"verify_ca", "verify_identity"})

_C = TypeVar("_C")


class TlsSettings(NamedTuple):
    """What one connection needs: the mode and, unless disabled, the SSL context."""

    mode: str
    context: ssl.SSLContext | None

    @property
    def required(self) -> bool:
        return self.mode not in ("disabled", "preferred")

    def open(self, factory: Callable[..., _C], **kwargs: Any) -> _C:
        """``factory(**kwargs)`` (a pymysql ``Connection`` class) connected under this mode."""
        if self.context is None:
            return factory(ssl_disabled=True, **kwargs)
        if self.required:
            return factory(ssl=self.context, **kwargs)
        # preferred: PyMySQL only offers a context with required semantics, so it is opened deferred
        # and relaxed to "TLS when the server offers it" (the handshake then checks the flag).
        conn: Any = factory(ssl=self.context, defer_connect=True, **kwargs)
        conn._ssl_required = False
        conn.client_flag &= ~CLIENT.SSL
        conn.connect()
        return conn


def _readable(key: str, path: str) -> Path:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(key, f"file {p} does not exist or is not a regular file")
    if not os.access(p, os.R_OK):
        raise ConfigError(key, f"file {p} is not readable by this user")
    return p


def _read_pkcs12(
    data: bytes, password: str | None
) -> tuple[PrivateKeyTypes | None, Certificate | None, list[Certificate]]:
    """A PKCS12 store's key, certificate and further certificates (ValueError: not PKCS12, or the
    wrong password)."""
    # cryptography's PKCS12 reader brings its x509 module (about 15 ms of every start-up): loaded
    # only when a trust or key store is PKCS12, not for the PEM files and the default TLS mode.
    from cryptography.hazmat.primitives.serialization import pkcs12  # noqa: PLC0415

    return pkcs12.load_key_and_certificates(data, password.encode() if password else None)


def _pem_or_pkcs12_cas(key: str, path: str, password: str | None) -> str:
    """A CA bundle as PEM text: a PEM file as it is, a PKCS12 truststore's certificates converted."""
    data = _readable(key, path).read_bytes()
    if b"-----BEGIN CERTIFICATE-----" in data:
        return data.decode("ascii", "replace")
    try:
        _, cert, extra = _read_pkcs12(data, password)
    except ValueError as exc:
        raise ConfigError(
            key,
            f"{path} is neither a PEM CA bundle nor a PKCS12 truststore this password opens ({exc}); "
            "convert a JKS truststore with keytool -importkeystore -deststoretype PKCS12",
        ) from None
    certs: list[Certificate] = ([cert] if cert is not None else []) + list(extra)
    if not certs:
        raise ConfigError(key, f"{path} holds no certificates")
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certs)


def _load_keystore(context: ssl.SSLContext, path: str, password: str | None) -> None:
    key_name = "database.ssl.keystore"
    data = _readable(key_name, path).read_bytes()
    try:
        private_key, cert, extra = _read_pkcs12(data, password)
    except ValueError as exc:
        raise ConfigError(
            key_name,
            f"cannot open PKCS12 keystore {path} ({exc}): check database.ssl.keystore.password; a JKS "
            "keystore converts with keytool -importkeystore -deststoretype PKCS12",
        ) from None
    if private_key is None or cert is None:
        raise ConfigError(key_name, f"{path} holds no private key with its certificate")
    one_off = secrets.token_urlsafe(24)
    pem = private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_off.encode()),
    ) + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert, *extra])
    # A PKCS12 keystore only: tempfile (with shutil, bz2, lzma) is not loaded at every start (issue 41).
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="mysql-cdc-tls-") as tmp:
        chain = Path(tmp) / "client.pem"
        chain.touch(mode=0o600)
        chain.write_bytes(pem)
        context.load_cert_chain(str(chain), password=one_off)


def _verify(context: ssl.SSLContext, options: TlsOptions) -> None:
    context.verify_mode = ssl.CERT_REQUIRED
    context.check_hostname = options.mode == "verify_identity"
    if options.ca:
        try:
            context.load_verify_locations(cafile=str(_readable("database.ssl.ca", options.ca)))
        except ssl.SSLError as exc:
            raise ConfigError(
                "database.ssl.ca", f"{options.ca} is not a PEM CA certificate ({exc})"
            ) from None
    if options.truststore:
        cadata = _pem_or_pkcs12_cas(
            "database.ssl.truststore", options.truststore, options.truststore_password or None
        )
        context.load_verify_locations(cadata=cadata)
    if not options.ca and not options.truststore:
        context.load_default_certs()


def _context(options: TlsOptions) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if options.mode in VERIFYING_MODES:
        _verify(context, options)
    else:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    cert, key = options.cert, options.key
    if cert or key:
        if not (cert and key):
            raise ConfigError("database.ssl.key" if cert else "database.ssl.cert", "set both or neither")
        try:
            context.load_cert_chain(
                str(_readable("database.ssl.cert", cert)),
                str(_readable("database.ssl.key", key)),
                password=options.key_password or None,
            )
        except ssl.SSLError as exc:
            raise ConfigError(
                "database.ssl.cert", f"cannot load the client certificate {cert} with key {key} ({exc})"
            ) from None
    if options.keystore:
        _load_keystore(context, options.keystore, options.keystore_password or None)
    return context


_CACHE: dict[tuple[object, ...], TlsSettings] = {}
_CACHE_LIMIT = 16


def _file_stamps(options: TlsOptions) -> tuple[tuple[int, int] | None, ...]:
    """(modification time, size) of each certificate/key file: a rotated certificate (a file
    replaced in place) makes a new context at the next connection, without a restart."""
    stamps: list[tuple[int, int] | None] = []
    for path in (options.ca, options.cert, options.key, options.keystore, options.truststore):
        try:
            stat = os.stat(path) if path else None
        except OSError:
            stat = None  # _context reports the unreadable file, naming the property
        stamps.append((stat.st_mtime_ns, stat.st_size) if stat is not None else None)
    return tuple(stamps)


def tls_settings(options: TlsOptions) -> TlsSettings:
    """The TLS settings ``database.ssl.*`` ask for (cached per settings and certificate files: every
    connection reuses one context until a file changes). Missing or unreadable files are
    ``ConfigError`` naming the property."""
    cache_key = (*astuple(replace(options, hostname="")), *_file_stamps(options))
    cached = _CACHE.get(cache_key)
    if cached is not None:
        return cached
    settings = TlsSettings(options.mode, None if options.mode == "disabled" else _context(options))
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()  # superseded contexts of rotated files
    _CACHE[cache_key] = settings
    return settings


def describe_tls_failure(options: TlsOptions, cause: BaseException | None) -> str | None:
    """An operator's message for a TLS handshake failure, naming the property to fix; None when
    ``cause`` is no TLS problem."""
    mode = options.mode
    if isinstance(cause, ssl.SSLCertVerificationError):
        reason = cause.verify_message or str(cause)
        if "hostname" in reason.lower() or "ip address mismatch" in reason.lower():
            return (
                f"the server's TLS certificate does not name {options.hostname} "
                f"({reason}): database.ssl.mode=verify_identity needs a certificate for the host in "
                "database.hostname (or use verify_ca)"
            )
        source = "database.ssl.ca" if options.ca else "database.ssl.truststore"
        if not options.ca and not options.truststore:
            source = "database.ssl.ca (unset: the system's CAs were used)"
        return (
            f"the server's TLS certificate is not trusted ({reason}) under database.ssl.mode={mode}: "
            f"check {source}"
        )
    if isinstance(cause, ssl.SSLError):
        return f"TLS handshake with the server failed under database.ssl.mode={mode}: {cause}"
    return None
