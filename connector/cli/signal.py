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
from connector.sources.signal_names import (
    EXECUTE_SNAPSHOT,
    LOG,
    PAUSE_SNAPSHOT,
    RESUME_SNAPSHOT,
    SET_BINLOG_POSITION,
    STOP_SNAPSHOT,
)
from connector.sources.signals import send_signal
from mysql_cdc_base.table_id import TableId


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
