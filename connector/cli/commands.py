"""``mysql-cdc``: the command line.

Exit status: 0 success, 2 bad configuration (the message names the key and the fix), 1 any other
failure (the message names the problem and, for server prerequisites, the setting or GRANT to add).
"""

from __future__ import annotations

import argparse
import functools
import logging
import signal
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from types import FrameType
from typing import Any

from connector.cli.allocator import freeze_start_up_objects
from connector.cli.signal import add_signal_parser, signal_command
from connector.cli.snapshot import snapshot_command
from connector.cli.status import status_command
from connector.config import (
    ConfigError,
    ConnectorConfig,
    describe_properties,
    is_secret,
    load_properties_file,
    parse_overrides,
    substitute_env,
)
from connector.engine import Engine
from connector.log_format import HeldRecords, JsonFormatter
from connector.sources.replay import BinlogReplay
from connector.version import __version__
from ddl.model import TableId

log = logging.getLogger("mysql_cdc")


class SecretFilter(logging.Filter):
    """Masks configured secrets in every log record, whatever code produced it."""

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s and len(s) >= 3]

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            masked = message
            for secret in self.secrets:
                masked = masked.replace(secret, "********")
            if masked != message:
                record.msg, record.args = masked, None
        return True


def setup_logging(level: str, secrets: Sequence[str] = (), config: ConnectorConfig | None = None) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if config is not None and config.get_choice("log.format") == "json":
        handler.setFormatter(JsonFormatter(config.connector_name, config.topic_prefix))
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(SecretFilter(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    logging.captureWarnings(True)  # Python warnings (a library's DeprecationWarning...) as log records
    # mysql-replication's own reconnect warnings are replaced by ours.
    logging.getLogger("pymysqlreplication").setLevel(logging.ERROR)
    # kafka-python logs each failed connection attempt; the connector's own message names the key
    # and the address (sink.kafka.client.unreachable_message). Its lines come back with DEBUG.
    logging.getLogger("kafka").setLevel(logging.DEBUG if level.upper() == "DEBUG" else logging.CRITICAL)
    logging.getLogger("py4j").setLevel(logging.WARNING)


def _properties_epilog() -> str:
    lines = ["configuration properties (Debezium names; set them in the --config file or with --set):"]
    for name, default, doc in describe_properties():
        lines.append(f"  {name}  [default: {default}]")
        lines.extend(textwrap.wrap(doc, width=96, initial_indent="      ", subsequent_indent="      "))
    lines.append("  ${ENV_VAR} and ${ENV_VAR:-default} in values are replaced from the environment.")
    return "\n".join(lines)


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose help can end with the configuration properties
    (``properties_help=True``). The listing is built when the help is printed, not each time a
    command line is parsed: wrapping the documentation of every property took about a tenth of
    ``mysql-cdc run``'s start-up."""

    def __init__(self, *args: Any, properties_help: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.properties_help = properties_help

    def format_help(self) -> str:
        if self.properties_help and self.epilog is None:
            self.epilog = _properties_epilog()
        return super().format_help()


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


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="mysql-cdc",
        description="MySQL change data capture with Debezium-compatible change events.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mysql-cdc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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

    add_signal_parser(sub, _add_config_args)

    check = sub.add_parser(
        "check",
        help="preflight: check the configuration, server, grants, stored offset and sinks",
        description="Print a checklist (configuration, server and credentials, binlog settings and "
        "GRANTs, the stored offset, each sink) and exit 1 when anything fails. Writes nothing and "
        "stores no offset; each failure names its fix.",
    )
    _add_config_args(check, metrics_port=False)

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
        "spark.apply.* and sink.spark.* (see the README).",
    )
    _add_config_args(apply, metrics_port=False)
    apply.add_argument(
        "--progress-interval",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="log the query's progress this often (default %(default)s)",
    )

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
    return parser


# mysql-cdc run logs a streaming progress line this often unless progress.interval.ms is set.
CLI_PROGRESS_INTERVAL_MS = 10_000


def load_config(args: argparse.Namespace) -> ConnectorConfig:
    overrides = parse_overrides(args.set)
    if getattr(args, "metrics_port", None) is not None:
        overrides["metrics.port"] = str(args.metrics_port)
    return ConnectorConfig.from_file(args.config, overrides)


def _stop_on_signals(stop: Callable[[], None]) -> None:
    """SIGTERM and SIGINT stop a long-running command after its current batch."""

    def handler(signum: int, frame: FrameType | None) -> None:
        log.info("signal %d received; stopping after the current batch", signum)
        stop()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def cmd_run(args: argparse.Namespace, config: ConnectorConfig) -> int:
    engine = Engine(config, progress_interval_ms=CLI_PROGRESS_INTERVAL_MS)
    _stop_on_signals(engine.stop)
    log.info(
        "mysql-cdc %s starting: %s:%s as %s, topic.prefix=%s, sinks=%s",
        __version__,
        config.hostname,
        config.port,
        config.user,
        config.topic_prefix,
        ",".join(config.sink_types),
    )
    freeze_start_up_objects()
    engine.run()
    log.info("stopped cleanly; %d records delivered", engine.delivery.delivered)
    return 0


def cmd_snapshot(args: argparse.Namespace, config: ConnectorConfig) -> int:
    # Also turns the collector back on, which the launcher paused for the start-up.
    freeze_start_up_objects()
    return snapshot_command(config, args.table)


def cmd_status(args: argparse.Namespace, config: ConnectorConfig) -> int:
    return status_command(config)


def cmd_verify(args: argparse.Namespace, config: ConnectorConfig) -> int:
    # `verify` reads the Spark warehouse: loaded only when asked for, so that every other command
    # (and --help) starts without pyspark.
    from connector.cli.verify import run_verify

    return run_verify(config, [TableId.parse(t) for t in args.table], sys.stdout)


def cmd_signal(args: argparse.Namespace, config: ConnectorConfig) -> int:
    return signal_command(config, args)


def cmd_replay_binlog(args: argparse.Namespace, config: ConnectorConfig) -> int:
    replay = BinlogReplay(config, args.files)
    _stop_on_signals(replay.stop)
    freeze_start_up_objects()
    replay.run()
    log.info("replay done; %d records delivered", replay.delivered)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    # The demo starts a throwaway server and prints with rich: loaded only when asked for, so that
    # `run` and the other commands start without rich and the server launcher.
    from connector.cli.demo import run_demo  # noqa: PLC0415

    return run_demo(args.output, args.rows)


def cmd_check(args: argparse.Namespace) -> int:
    from connector.cli.check import check_command  # noqa: PLC0415 - the checks load client libraries

    return check_command(args.config, args.set)


def cmd_spark_apply(props: Mapping[str, str], args: argparse.Namespace) -> int:
    from connector.cli.spark_apply import spark_apply_command  # noqa: PLC0415 - loads pyspark

    return spark_apply_command(props, args.progress_interval)


COMMANDS = {
    "run": cmd_run,
    "snapshot": cmd_snapshot,
    "status": cmd_status,
    "verify": cmd_verify,
    "signal": cmd_signal,
    "replay-binlog": cmd_replay_binlog,
}


# What a command runs once its properties are read: the secrets to mask in its logs and errors, the
# connector configuration (None for spark-apply, whose properties are its own) and the call.
Prepared = tuple[list[str], ConnectorConfig | None, Callable[[], int]]


def _prepare_connector_command(args: argparse.Namespace) -> Prepared:
    config = load_config(args)
    return _secret_values(config.raw), config, functools.partial(COMMANDS[args.command], args, config)


def _prepare_spark_apply(args: argparse.Namespace) -> Prepared:
    """The job reads no connector configuration: its properties are its own."""
    props = {k: substitute_env(v, k) for k, v in load_properties_file(args.config).items()}
    props.update(parse_overrides(args.set))
    return _secret_values(props), None, functools.partial(cmd_spark_apply, props, args)


PREPARE: Mapping[str, Callable[[argparse.Namespace], Prepared]] = {"spark-apply": _prepare_spark_apply}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.log_level)
    if args.command == "demo":
        return cmd_demo(args)
    if args.command == "check":
        return _run_reporting_failures(functools.partial(cmd_check, args), [])
    held = HeldRecords.install()  # until log.format is known
    try:
        secrets, config, command = PREPARE.get(args.command, _prepare_connector_command)(args)
    except ConfigError as exc:
        setup_logging(args.log_level)
        held.replay()
        print(f"mysql-cdc: configuration error: {exc}", file=sys.stderr)
        return 2
    setup_logging(args.log_level, secrets=secrets, config=config)
    held.replay()
    return _run_reporting_failures(command, secrets)


def _run_reporting_failures(command: Callable[[], int], secrets: Sequence[str]) -> int:
    """Every command's failures the same way: exit status 2 for bad configuration, 130 when
    interrupted, 1 for anything else, the message on stderr with the secrets masked."""
    try:
        return command()
    except ConfigError as exc:
        print(f"mysql-cdc: configuration error: {_mask(str(exc), secrets)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the top level reports every failure the same way
        log.debug("failure", exc_info=True)
        print(f"mysql-cdc: error: {_mask(str(exc), secrets)}", file=sys.stderr)
        return 1


def _secret_values(props: Mapping[str, str]) -> list[str]:
    return [value for key, value in props.items() if is_secret(key)]


def _mask(text: str, secrets: Sequence[str]) -> str:
    for value in secrets:
        if value and len(value) >= 3:
            text = text.replace(value, "********")
    return text


if __name__ == "__main__":
    sys.exit(main())
