"""``mysql-cdc signal --config FILE ACTION ...``: sends one signal to a running connector.

The signal goes through a channel of ``signal.enabled.channels`` (``--channel``, default the first
enabled of source, kafka, file): a row in the signal table, a record on the signal topic keyed by
the ``topic.prefix``, or a line in the signal file. Its ``data`` is Debezium's: the options below
build it (``--where`` becomes ``additional-conditions`` of every ``--table``). Nothing waits for the
connector; it carries the signal out when it reads it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TextIO

from connector.config import ConfigError, ConnectorConfig
from connector.sources.signals import (
    EXECUTE_SNAPSHOT,
    FILE,
    KAFKA,
    LOG,
    PAUSE_SNAPSHOT,
    RESUME_SNAPSHOT,
    SET_BINLOG_POSITION,
    SOURCE,
    STOP_SNAPSHOT,
    send_signal,
)
from ddl.model import TableId


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
        "--channel", choices=(SOURCE, KAFKA, FILE), help="channel to send through (default: first enabled)"
    )
    actions = signal.add_subparsers(dest="action", required=True, metavar="ACTION")

    execute = actions.add_parser(EXECUTE_SNAPSHOT, help="snapshot tables (incremental or blocking)")
    _add_tables(execute, required=True)
    execute.add_argument("--type", choices=("incremental", "blocking"), default="incremental")
    execute.add_argument(
        "--where", metavar="FILTER", help="read only rows matching this SQL condition (additional-conditions)"
    )
    execute.add_argument(
        "--surrogate-key", metavar="COLUMN", help="chunk by this column, not the primary key"
    )

    stop = actions.add_parser(STOP_SNAPSHOT, help="stop the incremental snapshot (of --table, or all)")
    _add_tables(stop, required=False)
    for name, text in ((PAUSE_SNAPSHOT, "pause"), (RESUME_SNAPSHOT, "resume")):
        actions.add_parser(name, help=f"{text} the incremental snapshot")

    log = actions.add_parser(LOG, help="write a message into the connector's log")
    log.add_argument("--message", required=True)

    position = actions.add_parser(SET_BINLOG_POSITION, help="move the stream to a binlog position")
    position.add_argument("--file", metavar="BINLOG", help="binlog file name (with --position)")
    position.add_argument("--position", type=int, metavar="POS")
    position.add_argument("--gtid-set", metavar="GTIDS", help="a GTID set instead of file and position")


def _add_tables(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--table", action="append", required=required, default=[], metavar="DB.TABLE", help="repeatable"
    )


def _tables(args: argparse.Namespace) -> list[str]:
    names = []
    for name in args.table:
        try:
            names.append(str(TableId.parse(name)))
        except ValueError:
            raise ConfigError("--table", f"{name!r} is not a db.table name") from None
    return names


def _execute_data(args: argparse.Namespace) -> dict[str, Any]:
    tables = _tables(args)
    data: dict[str, Any] = {"data-collections": tables, "type": args.type}
    if args.where:
        data["additional-conditions"] = [{"data-collection": t, "filter": args.where} for t in tables]
    if args.surrogate_key:
        data["surrogate-key"] = args.surrogate_key
    return data


def _stop_data(args: argparse.Namespace) -> dict[str, Any]:
    tables = _tables(args)
    return {"data-collections": tables, "type": "incremental"} if tables else {"type": "incremental"}


def _position_data(args: argparse.Namespace) -> dict[str, Any]:
    if args.gtid_set:
        if args.file or args.position is not None:
            raise ConfigError("--gtid-set", "give either --gtid-set or --file and --position, not both")
        return {"gtid_set": args.gtid_set}
    if not args.file or args.position is None:
        raise ConfigError("--file", "set-binlog-position needs --file and --position (or --gtid-set)")
    return {"binlog_filename": args.file, "binlog_position": args.position}


DATA: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    EXECUTE_SNAPSHOT: _execute_data,
    STOP_SNAPSHOT: _stop_data,
    PAUSE_SNAPSHOT: lambda args: {},
    RESUME_SNAPSHOT: lambda args: {},
    LOG: lambda args: {"message": args.message},
    SET_BINLOG_POSITION: _position_data,
}


def signal_command(config: ConnectorConfig, args: argparse.Namespace, out: TextIO | None = None) -> int:
    data = DATA[args.action](args)
    channel, signal_id = send_signal(config, args.action, data, channel=args.channel)
    print(f"sent {args.action} through the {channel} channel (id {signal_id})", file=out or sys.stdout)
    return 0
