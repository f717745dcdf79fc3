"""The ``mysql-cdc`` command line: ``run``, ``snapshot``, ``verify``, ``demo`` and the others.

The entry point is a small launcher: it decides the memory allocator of the long-running commands
(``connector.cli.allocator``; the interpreter's own unless ``MYSQL_CDC_ALLOCATOR=tuned``) before
importing the commands, so that a process which re-executes itself with the tuned allocator pays
its imports once, not twice: before that decision, only ``connector.cli.allocator`` is loaded.
"""

from __future__ import annotations

import sys

from connector.cli.allocator import (
    LONG_RUNNING_COMMANDS,
    TYPE_CHECKING,
    pause_collector_for_start_up,
    reexec_with_tuned_allocator,
)

if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] in LONG_RUNNING_COMMANDS:
        # The process entry point of a long-running command (not a call from Python code).
        reexec_with_tuned_allocator(["-m", "connector.cli", *sys.argv[1:]])
        # Until the command freezes its start-up objects (``freeze_start_up_objects``).
        pause_collector_for_start_up()
    # Parsed before the commands are imported: --help, --version and a bad command line end here,
    # without loading the engine, the DDL parser or the clients (issue 41). Imported after the
    # re-execution, which would otherwise pay for it twice (argparse, the property groups).
    from connector.cli.parser import build_parser  # noqa: PLC0415

    arguments = sys.argv[1:] if argv is None else argv
    # Only the named command's subparser is built (the whole parser for anything else).
    args = build_parser(arguments[0] if arguments else None).parse_args(arguments)
    # Imported here, after the allocator decision: importing the commands is most of start-up.
    from connector.cli.commands import main as run_command  # noqa: PLC0415

    return run_command(args=args)


__all__ = ["main"]
