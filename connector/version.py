"""The installed package's version (``source.version`` in every event, ``mysql-cdc --version``).

Read from the package's ``.dist-info`` metadata on ``sys.path``, in ``sys.path`` order as
``importlib.metadata.version`` finds it, without importing ``importlib.metadata`` (with its email
and zip machinery, a tenth of a second of every start-up on a small machine: issue 41); other
layouts (eggs, zip imports) fall back to ``importlib.metadata``.
"""

from __future__ import annotations

import os
import sys

DISTRIBUTION = "mysql-cdc"
_PREFIX = DISTRIBUTION.replace("-", "_")


def _dist_info_version() -> str | None:
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.lower().startswith(_PREFIX):
                continue
            if name.endswith(".dist-info") and name[len(_PREFIX)] == "-":
                return _metadata_version(os.path.join(entry or ".", name, "METADATA"))
            if name.endswith(".egg-info"):
                return None  # another layout first on the path: importlib.metadata reads it
    return None


def _metadata_version(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as metadata:
            for line in metadata:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():  # the headers end at the first blank line
                    break
    except OSError:
        pass
    return None


def _library_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 - the fallback only

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0"


__version__ = _dist_info_version() or _library_version()
