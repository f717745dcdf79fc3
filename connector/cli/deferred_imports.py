"""cryptography, which pymysql imports but a command seldom uses, loaded when first used (issue 41).

When it is imported, pymysql imports cryptography's ``serialization``, ``hashes`` and ``padding``
modules (and with them cryptography's Rust bindings) for one purpose: encrypting the password with
the server's RSA key in the ``sha256_password`` and ``caching_sha2_password`` full authentication
without TLS. That import was about a twentieth of the time to the first event.
``defer_cryptography`` puts a placeholder for each of these modules in ``sys.modules`` before
pymysql is imported, so that pymysql's ``from ... import`` binds the placeholder; the first read of
an attribute the placeholder does not have yet (pymysql encrypting a password, a PKCS12 keystore
being read) runs the real module's code in it, once, and the placeholder is then that module.

``importlib.util.LazyLoader`` does not do this on Python 3.11: the import system reads the
``__spec__`` of a module it finds in ``sys.modules``, and any attribute read loads a LazyLoader
module, so pymysql's import would load it at once.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from typing import Any

# What pymysql._auth imports (pymysql/_auth.py); cryptography's packages above them are small.
PYMYSQL_CRYPTOGRAPHY = (
    "cryptography.hazmat.primitives.hashes",
    "cryptography.hazmat.primitives.serialization",
    "cryptography.hazmat.primitives.asymmetric.padding",
)
_LOADING = threading.RLock()


class DeferredModule(types.ModuleType):
    """A module whose code runs on the first read of an attribute it does not have."""

    def __getattr__(self, name: str) -> Any:
        with _LOADING:
            if type(self) is DeferredModule:  # not loaded yet (nor being loaded by this thread)
                self.__class__ = types.ModuleType
                spec = self.__spec__
                assert spec is not None and spec.loader is not None
                spec.loader.exec_module(self)
                # What the module left in sys.modules (cryptography wraps some modules to warn
                # of deprecated names) is what its package binds, as after an import.
                parent, _, child = spec.name.rpartition(".")
                setattr(sys.modules[parent], child, sys.modules[spec.name])
        return object.__getattribute__(self, name)


def defer_cryptography() -> None:
    """Placeholders for pymysql's cryptography modules; nothing when pymysql or those modules are
    imported already, or cryptography is not installed (pymysql then does without it)."""
    if "pymysql" in sys.modules:
        return
    for name in PYMYSQL_CRYPTOGRAPHY:
        if name in sys.modules:
            continue
        try:
            spec = importlib.util.find_spec(name)  # imports the packages above it
        except ImportError:
            return
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        module.__class__ = DeferredModule
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        setattr(sys.modules[parent], child, module)  # as an import binds a submodule
