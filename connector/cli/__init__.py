"""The ``mysql-cdc`` command line: ``run``, ``snapshot``, ``verify`` and ``demo``."""

from connector.cli.main import main

__all__ = ["main"]
