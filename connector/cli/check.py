"""``mysql-cdc check --config FILE``: a preflight checklist, one line a check, exit 1 on any failure.

It reads and writes nothing a run would use: no offset is stored, no topic is created, no file is
opened for writing. In order: the configuration (unknown keys with a did-you-mean), the server (reachable,
the credentials), the server's binlog settings and the user's GRANTs (``ServerProbe``, whose
messages name the my.cnf setting or the GRANT), the stored offset's binlog file or GTIDs (still on
the server?), then each sink (``SINK_CHECKS``): the Kafka brokers and the connector's rights on its
topics, the Delta warehouse and the Spark jars, the jsonl path. A check that cannot run because an
earlier one failed is not shown.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TextIO

from connector.cli.checklist import FAIL, Item, fail, ok, writable_problem
from connector.config import PROPERTIES, ConnectorConfig, parse_overrides
from connector.config_files import did_you_mean, load_properties_file
from connector.errors import PrerequisiteError
from connector.factories import SINK_FACTORIES, build_offset_store, build_server_probe
from connector.server.connection import ServerInfo, connect
from mysql_cdc_base.errors import ConfigError, MysqlCdcError
from sink.settings import jsonl_settings
from snapshot.binlog_status import position_problem
from snapshot.settings import SnapshotSettings

# -- configuration -------------------------------------------------------------------------------


def check_configuration(path: str, overrides: list[str]) -> tuple[list[Item], ConnectorConfig | None]:
    try:
        props = load_properties_file(path)
        props.update(parse_overrides(overrides))
        config = ConnectorConfig(props, warn_unknown=False)
    except ConfigError as exc:
        return [fail("configuration", str(exc))], None
    known = [spec.name for spec in PROPERTIES]
    items = [
        fail("configuration", f"unknown property {key}{did_you_mean(key, known) or ' (check its spelling)'}")
        for key in config.unknown_keys()
    ]
    if not items:
        items.append(ok("configuration", f"{path}: {len(props)} properties, all known"))
    return items, config


# -- server --------------------------------------------------------------------------------------


def check_server(config: ConnectorConfig) -> tuple[list[Item], ServerInfo | None]:
    try:
        with connect(config) as conn, conn.cursor() as cur:
            cur.execute("SELECT VERSION()")
            version = cur.fetchone()[0]
    except (PrerequisiteError, ConfigError) as exc:
        return [fail("server", str(exc))], None
    reached = ok("server", f"{config.hostname}:{config.port} reached as {config.user!r} ({version})")
    locks = SnapshotSettings.from_config(config).locking_mode != "none"
    try:
        info = build_server_probe(config).check(need_snapshot_locks=locks)
    except PrerequisiteError as exc:
        return [reached, fail("binlog settings and grants", str(exc))], None
    detail = f"binlog on, ROW, FULL images and metadata; grants complete; gtid_mode={'ON' if info.gtid_mode else 'OFF'}"
    return [reached, ok("binlog settings and grants", detail)], info


def check_offset(config: ConnectorConfig, info: ServerInfo) -> list[Item]:
    store = build_offset_store(config)
    try:
        stored = store.load()
    except MysqlCdcError as exc:
        return [fail("stored offset", f"cannot read offset.storage: {exc}")]
    finally:
        store.close()
    if stored is None or not stored.has_position:
        mode = SnapshotSettings.from_config(config).mode
        return [ok("stored offset", f"none stored; the first run starts with snapshot.mode={mode}")]
    if stored.in_snapshot:
        return [ok("stored offset", f"{stored.describe()} (an interrupted snapshot, taken again)")]
    with connect(config) as conn, conn.cursor() as cur:
        problem = position_problem(cur, stored.binlog_position, info.flavor)
    if problem is None:
        return [ok("stored offset", f"{stored.describe()} is still on the server")]
    return [
        fail(
            "stored offset",
            f"{stored.describe()}: {problem}; fix: set snapshot.mode=when_needed to take a new "
            "snapshot, or remove the stored offset (offset.storage) to start again",
        )
    ]


# -- sinks ---------------------------------------------------------------------------------------


def check_jsonl(config: ConnectorConfig) -> list[Item]:
    path = jsonl_settings(config).path
    problem = writable_problem(path)
    if problem is None:
        return [ok("sink jsonl", f"{path} is writable")]
    return [fail("sink jsonl", f"sink.jsonl.path {path}: {problem}; fix: choose a writable sink.jsonl.path")]


def check_kafka(config: ConnectorConfig) -> list[Item]:
    from connector.cli.check_kafka import check_kafka_sink  # noqa: PLC0415 - loads kafka-python

    return check_kafka_sink(config)


def check_spark(config: ConnectorConfig) -> list[Item]:
    from connector.cli.check_spark import check_spark_sink  # noqa: PLC0415 - reads the Spark settings

    return check_spark_sink(config)


def check_nothing(config: ConnectorConfig) -> list[Item]:
    return []


SINK_CHECKS: Mapping[str, Callable[[ConnectorConfig], list[Item]]] = {
    "jsonl": check_jsonl,
    "kafka": check_kafka,
    "spark": check_spark,
    "stdout": check_nothing,
    "memory": check_nothing,
}
assert set(SINK_CHECKS) == set(SINK_FACTORIES), "every sink has a check"


def check_sinks(config: ConnectorConfig) -> list[Item]:
    items: list[Item] = []
    for name in config.sink_types or ["jsonl"]:
        check = SINK_CHECKS.get(name.lower())
        if check is None:
            items.append(
                fail("sink.type", f"unknown sink {name!r}; expected one of {', '.join(SINK_CHECKS)}")
            )
        else:
            items.extend(check(config))
    return items


# -- the command ---------------------------------------------------------------------------------


def run_checks(path: str, overrides: list[str]) -> list[Item]:
    items, config = check_configuration(path, overrides)
    if config is None:
        return items
    server_items, info = check_server(config)
    items += server_items
    if info is not None:
        items += check_offset(config, info)
    return items + check_sinks(config)


def check_command(path: str, overrides: list[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout
    items = run_checks(path, overrides)
    for item in items:
        out.write(item.line() + "\n")
    failed = sum(item.status == FAIL for item in items)
    out.write(f"{'check failed: ' + str(failed) + ' problem(s)' if failed else 'all checks passed'}\n")
    out.flush()
    return 1 if failed else 0
