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
from collections.abc import Callable, Mapping, Sequence
from types import FrameType

from connector.cli.allocator import (
    freeze_before_first_records,
    freeze_start_up_objects,
    settle_after_first_records,
)
from connector.cli.parser import build_parser
from connector.cli.settings import LogSettings
from connector.config import (
    ConfigError,
    ConnectorConfig,
    is_secret,
    load_properties_file,
    parse_overrides,
    substitute_env,
)
from connector.engine import Engine
from connector.log_format import HeldRecords, JsonFormatter
from connector.version import __version__
from mysql_cdc_base.table_id import TableId

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
    if config is not None and LogSettings.from_config(config).json:
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
    # and the address (ddl.kafka.client.unreachable_message). Its lines come back with DEBUG.
    logging.getLogger("kafka").setLevel(logging.DEBUG if level.upper() == "DEBUG" else logging.CRITICAL)
    logging.getLogger("py4j").setLevel(logging.WARNING)


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
    # The full collection of the freeze waits until the first records are out (issue 41).
    freeze_before_first_records()
    engine.delivery.after_first_send = settle_after_first_records
    engine.run()
    log.info("stopped cleanly; %d records delivered", engine.delivery.delivered)
    return 0


# Each command below `run` imports its own module when it runs: `mysql-cdc run` loads none of them
# (issue 41: time to the first event).


def cmd_snapshot(args: argparse.Namespace, config: ConnectorConfig) -> int:
    from connector.cli.snapshot import snapshot_command  # noqa: PLC0415 - see above

    # Also turns the collector back on, which the launcher paused for the start-up.
    freeze_start_up_objects()
    return snapshot_command(config, args.table)


def cmd_status(args: argparse.Namespace, config: ConnectorConfig) -> int:
    from connector.cli.status import status_command  # noqa: PLC0415 - see above

    return status_command(config)


def cmd_verify(args: argparse.Namespace, config: ConnectorConfig) -> int:
    # `verify` reads the Spark warehouse: loaded only when asked for, so that every other command
    # (and --help) starts without pyspark.
    from connector.cli.verify import run_verify

    return run_verify(config, [TableId.parse(t) for t in args.table], sys.stdout)


def cmd_signal(args: argparse.Namespace, config: ConnectorConfig) -> int:
    from connector.cli.signal import signal_command  # noqa: PLC0415 - see above

    return signal_command(config, args)


def cmd_replay_binlog(args: argparse.Namespace, config: ConnectorConfig) -> int:
    from connector.replay import BinlogReplay  # noqa: PLC0415 - see above

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


def cmd_properties(args: argparse.Namespace) -> int:
    from connector.reference import GROUP_KEYS, render_text  # noqa: PLC0415

    try:
        text = render_text(args.selector)
    except KeyError:
        print(
            f"mysql-cdc: no property group or key {args.selector!r}; groups: {', '.join(GROUP_KEYS)}",
            file=sys.stderr,
        )
        return 2
    print(text)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from connector.cli.check import check_command  # noqa: PLC0415 - the checks load client libraries

    return _run_reporting_failures(functools.partial(check_command, args.config, args.set), [])


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


# Commands that read no configuration.
STANDALONE: Mapping[str, Callable[[argparse.Namespace], int]] = {
    "demo": cmd_demo,
    "properties": cmd_properties,
    "check": cmd_check,  # reads its configuration itself, reporting each problem
}

PREPARE: Mapping[str, Callable[[argparse.Namespace], Prepared]] = {"spark-apply": _prepare_spark_apply}


def main(argv: Sequence[str] | None = None, args: argparse.Namespace | None = None) -> int:
    """Runs the command of ``argv`` (default ``sys.argv``), or of ``args`` when the launcher has
    parsed them already."""
    if args is None:
        args = build_parser().parse_args(argv)
    setup_logging(args.log_level)
    if args.command in STANDALONE:
        return STANDALONE[args.command](args)
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
