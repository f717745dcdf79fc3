"""The installed package's version (``source.version`` in every event, ``mysql-cdc --version``)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mysql-cdc")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"
