"""pymysql's cryptography modules are placeholders until first used (``connector.cli.deferred_imports``,
issue 41: time to the first event), and work as the real modules once they are."""

from __future__ import annotations

import subprocess
import sys

# pymysql imported after defer_cryptography, then its RSA password encryption (sha256_password and
# caching_sha2_password without TLS) with a real key, decrypted with cryptography's own modules.
_PROBE = """
import sys
from connector.cli.deferred_imports import PYMYSQL_CRYPTOGRAPHY, DeferredModule, defer_cryptography
defer_cryptography()
import pymysql
from pymysql import _auth
print('cryptography.hazmat.bindings._rust' in sys.modules, _auth._have_cryptography)
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
pem = key.public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
)
salt = bytes(range(1, 21))
sent = _auth.sha2_rsa_encrypt(b"s3cret", salt, pem)
oaep = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
print(key.decrypt(sent, oaep) == _auth._xor_password(b"s3cret\\0", salt))
print(not any(isinstance(sys.modules[name], DeferredModule) for name in PYMYSQL_CRYPTOGRAPHY))
try:
    hashes.NoSuchName
except AttributeError:
    print('AttributeError')
"""


def test_pymysql_loads_cryptography_when_it_encrypts_a_password() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True", "True", "True", "AttributeError"]


def test_nothing_is_deferred_once_pymysql_is_imported() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, pymysql\n"
            "from connector.cli.deferred_imports import PYMYSQL_CRYPTOGRAPHY, DeferredModule, defer_cryptography\n"
            "defer_cryptography()\n"
            "print(not any(isinstance(sys.modules[n], DeferredModule) for n in PYMYSQL_CRYPTOGRAPHY))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True"]
