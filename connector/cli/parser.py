"""The ``mysql-cdc`` argument parser, kept apart from the commands: ``mysql-cdc --help`` and
``--version`` build it without importing what the commands run (the engine, the DDL parser, the
server and Kafka clients: issue 41), and the configuration properties listed at the end of a
command's help are read only when that help is printed."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable
from typing import Any

from connector.property_groups import group_summary_lines
from connector.sources import signal_names
from connector.version import __version__


def _properties_epilog() -> str:
    """The property groups, one line each; ``mysql-cdc properties GROUP`` prints a group in full."""
    return "\n".join(
        [
            "property groups (Debezium names, set in the --config file or with --set KEY=VALUE):",
            *group_summary_lines(),
            "print a group or a key with: mysql-cdc properties [GROUP|KEY]  "
            "(the site: docs/reference/properties.md)",
        ]
    )


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose help can end with the property groups (``properties_help=True``).
    The listing is built when the help is printed, not each time a command line is parsed."""

    def __init__(self, *args: Any, properties_help: bool = False, **kwargs: Any) -> None:
        formatter = kwargs.get("formatter_class", argparse.HelpFormatter)
        kwargs["formatter_class"] = functools.partial(formatter, width=help_width())
        super().__init__(*args, **kwargs)
        self.properties_help = properties_help

    def format_help(self) -> str:
        if self.properties_help and self.epilog is None:
            self.epilog = _properties_epilog()
        return super().format_help()


def help_width() -> int:
    """The width argparse gives help text: ``shutil.get_terminal_size``'s columns less 2. argparse
    builds a formatter for every argument it adds, and a formatter without a width imports
    ``shutil`` (with ``bz2``, ``lzma`` and ``zlib``) to ask: 3-5 ms of every start (issue 41)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


def _add_config_args(p: argparse.ArgumentParser, *, metrics_port: bool = True) -> None:
    p.add_argument(
        "--config",
        "-c",
        required=True,
        metavar="FILE",
        help="Java .properties file with Debezium connector properties",
    )
    p.add_argument(
        "--set",
        "-s",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one property (repeatable)",
    )
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    if not metrics_port:
        return
    p.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve Debezium's metrics (/metrics) and /health on this loopback port (metrics.port)",
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line's parser; with ``command`` (a command line's first argument), only
    what that command needs when it is a known command: its subparser, with those of its group
    (``COMMAND_GROUPS``). A command line starting with a command is parsed the same either way
    (what follows the command is its subparser's), and building one group instead of the sixteen
    subparsers saves start-up time (issue 41); any other command line gets the whole parser."""
    parser = CommandParser(
        prog="mysql-cdc",
        description="MySQL change data capture with Debezium-compatible change events.",
        properties_help=True,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mysql-cdc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    group = COMMAND_GROUPS.get(command) if command is not None else None
    for add_group in (group,) if group is not None else _GROUPS:
        add_group(sub)
    return parser


def _add_run_commands(sub: Any) -> None:
    """``run`` and ``snapshot``."""
    run = sub.add_parser(
        "run",
        help="stream changes continuously (snapshot first if needed)",
        description="Connect as a replica and stream change events to the configured "
        "sinks until stopped (SIGINT/SIGTERM stop cleanly).",
        properties_help=True,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_config_args(run)

    snap = sub.add_parser(
        "snapshot",
        help="one-off initial snapshot into the sinks, then exit",
        description="Take a consistent snapshot of the captured tables into the "
        "configured sinks and exit, leaving offsets that `run` continues from.",
        properties_help=True,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_config_args(snap)
    snap.add_argument(
        "--table",
        action="append",
        default=[],
        metavar="DB.TABLE",
        help="snapshot only this captured table (repeatable)",
    )


def _add_check_commands(sub: Any) -> None:
    """``status``, ``verify`` and ``check``."""
    status = sub.add_parser(
        "status",
        help="print the stored offset, the server's position and the lag",
        description="Print the stored offset (offset.storage), the server's current binlog "
        "position and the lag in bytes and transactions; exit 1 when no offset is stored.",
    )
    _add_config_args(status, metrics_port=False)

    verify = sub.add_parser(
        "verify",
        help="compare a Spark current-state table with MySQL",
        description="Compare Spark current-state tables with the live MySQL tables "
        "(row count and per-row checksums); exit 0 only when equal.",
    )
    _add_config_args(verify)
    verify.add_argument(
        "--table", action="append", required=True, metavar="DB.TABLE", help="table to verify (repeatable)"
    )

    check = sub.add_parser(
        "check",
        help="preflight: check the configuration, server, grants, stored offset and sinks",
        description="Print a checklist (configuration, server and credentials, binlog settings and "
        "GRANTs, the stored offset, each sink) and exit 1 when anything fails. Writes nothing and "
        "stores no offset; each failure names its fix.",
    )
    _add_config_args(check, metrics_port=False)


def _add_replay_commands(sub: Any) -> None:
    """``replay-binlog`` and ``spark-apply``."""
    replay = sub.add_parser(
        "replay-binlog",
        help="replay archived binlog files into the sinks, without a server, then exit",
        description="Read binlog files (in the order given; a ROTATE at a file's end continues with "
        "the next one) and stream their changes into the configured sinks with the configured "
        "offset store, filters and transforms, as `run` would from a server; then exit. No server "
        "connection is made. A second run with the same offset store resumes after what the first "
        "stored. Table structures come from the files' DDL, the schema history, or the tables' "
        "FULL row metadata.",
        properties_help=True,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_config_args(replay, metrics_port=False)
    replay.add_argument("files", nargs="+", metavar="FILE", help="binlog files, in replay order")

    apply = sub.add_parser(
        "spark-apply",
        help="apply the connectors' Kafka topics to Delta tables (Spark Structured Streaming)",
        description="Read the connectors' topics from Kafka with Spark's Kafka source and apply "
        "them to current-state and changelog Delta tables, exactly once, until stopped "
        "(SIGINT/SIGTERM stop after the current micro-batch). Properties: kafka.bootstrap.servers, "
        "topics or topics.regex, sink.spark.warehouse, spark.apply.checkpoint.location, "
        "spark.apply.* and sink.spark.*: the site's guide docs/guides/delta-spark.md lists them with "
        "their defaults.",
    )
    _add_config_args(apply, metrics_port=False)
    apply.add_argument(
        "--progress-interval",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="log the query's progress this often (default %(default)s)",
    )


def _add_tool_commands(sub: Any) -> None:
    """``demo`` and ``properties``."""
    demo = sub.add_parser(
        "demo",
        help="self-contained demo: throwaway server, sample data, JSON lines",
        description="Start a throwaway local MySQL-compatible server, create a small "
        "sample database, stream a few changes to a JSON lines file and "
        "print a summary. Needs mariadbd or mysqld installed.",
    )
    demo.add_argument("--output", default="demo-events.jsonl", help="JSON lines file (default %(default)s)")
    demo.add_argument("--rows", type=int, default=5, help="sample rows per table (default %(default)s)")
    demo.add_argument("--log-level", default="WARNING")

    reference = sub.add_parser(
        "properties",
        help="print the property reference, grouped (all, one GROUP, or a KEY or key prefix)",
        description="Print the configuration properties from the property table, grouped as the "
        "site's reference (docs/reference/properties.md): default and description of each.",
        properties_help=True,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    reference.add_argument("selector", nargs="?", metavar="GROUP|KEY", help="a group, a key or a key prefix")
    reference.add_argument("--log-level", default="WARNING")


def add_signal_parser(sub: Any, add_config_args: Callable[..., None]) -> None:
    """``signal`` and its actions, on the top-level subparsers."""
    signal = sub.add_parser(
        "signal",
        help="send a signal (execute-snapshot, stop-snapshot, ...) to a running connector",
        description="Send one signal through a channel of signal.enabled.channels; the running "
        "connector carries it out when it reads it.",
    )
    add_config_args(signal, metrics_port=False)
    signal.add_argument(
        "--channel",
        choices=(signal_names.SOURCE, signal_names.KAFKA, signal_names.FILE),
        help="channel to send through (default: first enabled)",
    )
    actions = signal.add_subparsers(dest="action", required=True, metavar="ACTION")

    execute = actions.add_parser(
        signal_names.EXECUTE_SNAPSHOT, help="snapshot tables (incremental or blocking)"
    )
    _add_tables(execute, required=True)
    execute.add_argument("--type", choices=("incremental", "blocking"), default="incremental")
    execute.add_argument(
        "--where", metavar="FILTER", help="read only rows matching this SQL condition (additional-conditions)"
    )
    execute.add_argument(
        "--surrogate-key", metavar="COLUMN", help="chunk by this column, not the primary key"
    )

    stop = actions.add_parser(
        signal_names.STOP_SNAPSHOT, help="stop the incremental snapshot (of --table, or all)"
    )
    _add_tables(stop, required=False)
    for name, text in ((signal_names.PAUSE_SNAPSHOT, "pause"), (signal_names.RESUME_SNAPSHOT, "resume")):
        actions.add_parser(name, help=f"{text} the incremental snapshot")

    log = actions.add_parser(signal_names.LOG, help="write a message into the connector's log")
    log.add_argument("--message", required=True)

    position = actions.add_parser(
        signal_names.SET_BINLOG_POSITION, help="move the stream to a binlog position"
    )
    position.add_argument("--file", metavar="BINLOG", help="binlog file name (with --position)")
    position.add_argument("--position", type=int, metavar="POS")
    position.add_argument("--gtid-set", metavar="GTIDS", help="a GTID set instead of file and position")


def _add_signal_commands(sub: Any) -> None:
    """``signal``."""
    add_signal_parser(sub, _add_config_args)


def _add_tables(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--table", action="append", required=required, default=[], metavar="DB.TABLE", help="repeatable"
    )


# The groups of subparsers, in the order --help lists them, and each command's group.
_GROUPS: tuple[Callable[[Any], None], ...] = (
    _add_run_commands,
    _add_check_commands,
    _add_signal_commands,
    _add_replay_commands,
    _add_tool_commands,
)
COMMAND_GROUPS: dict[str, Callable[[Any], None]] = {
    "run": _add_run_commands,
    "snapshot": _add_run_commands,
    "status": _add_check_commands,
    "verify": _add_check_commands,
    "check": _add_check_commands,
    "signal": _add_signal_commands,
    "replay-binlog": _add_replay_commands,
    "spark-apply": _add_replay_commands,
    "demo": _add_tool_commands,
    "properties": _add_tool_commands,
}
