"""What ``mysql-cdc run`` imports before its first event (issue 31: time to the first event), and
what ``mysql-cdc --version`` and ``--help`` import (issue 41: nothing heavy).

A run into the jsonl sink must not import the optional heavy dependencies that only other settings
need (Kafka sink or stores, metrics, rich output, Spark): each costs start-up time on every run.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest

from connector.cli.parser import COMMAND_GROUPS, build_parser
from connector.testing.local_server import MySQLServerHandle
from tests.connector.startup_support import state_at_first_event, store_offset, write_properties

# Each is needed only by settings this run does not have: sink.type=kafka or the Kafka stores and
# signal channel (kafka), metrics.port (prometheus_client), `mysql-cdc demo` (rich), sink.type=spark
# and `verify` (pyspark, delta), PKCS12 trust and key stores (cryptography.x509).
OPTIONAL_HEAVY = (
    "kafka",
    "confluent_kafka",
    "prometheus_client",
    "rich",
    "pyspark",
    "delta",
    "cryptography.x509",
)


def test_run_into_jsonl_imports_no_optional_dependency(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    mysql_server.execute("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))", database=unique_db)
    output = tmp_path / "events.jsonl"
    properties = write_properties(mysql_server, unique_db, tmp_path / "state", output)
    store_offset(properties)
    output.unlink()  # the snapshot's schema change events: the run's own output starts empty
    mysql_server.execute("INSERT INTO items VALUES (1, 'one'), (2, 'two')", database=unique_db)

    state = state_at_first_event(properties, output, tmp_path / "state.json")

    assert b'"op":"c"' in output.read_bytes().splitlines()[0]  # the run resumed and streamed the insert
    loaded = {name for name in OPTIONAL_HEAVY if name in state.modules}
    assert not loaded, f"mysql-cdc run into jsonl imported {sorted(loaded)} before its first event"
    # Recovering the snapshot's history (SET, DROP/CREATE DATABASE, USE records besides the tables'
    # tableChanges) and streaming rows need no DDL grammar: sqlglot is not loaded (issue 41).
    assert (properties.parent / "state" / "schema-history.jsonl").read_bytes().count(b"USE ") == 1
    # Nor is the plugin lookup's importlib.metadata, nor the javaproperties package (with the
    # xml.sax and urllib.request it imports): a .properties file without backslashes is read
    # without it (tests/connector/config/test_properties_reader.py).
    # The trees and handlers of the table statements come with the grammar (ddl.parsing.plain_trees).
    deferred = {
        "sqlglot",
        "importlib.metadata",
        "javaproperties",
        "xml.sax",
        "urllib.request",
        "ddl.parsing.statements",
        "ddl.parsing.table_statements",
        # The reader processes of a chunked or multi-threaded incremental snapshot, and tempfile
        # (with shutil, bz2, lzma) of the offset file's first save and of PKCS12 keystores.
        "multiprocessing",
        "snapshot.rows.chunked",
        "connector.sources.incremental_readers",
        "tempfile",
        # argparse's formatters are given their width (connector.cli.parser.help_width): one
        # without asks shutil, which imports bz2, lzma and zlib.
        "shutil",
        # Issue 41, second round: what only other commands, transforms, sinks, unknown keys or
        # compressed transactions need (RUN_PATH_DEFERRED below).
        *RUN_PATH_DEFERRED,
    }
    assert not deferred & state.modules, f"loaded before the first event: {sorted(deferred & state.modules)}"
    # The launcher paused the collector for the start-up; the run froze what it set up and turned
    # the collector back on for the stream.
    assert state.gc_enabled
    assert state.frozen_objects > 10_000


DEFERRED_PARSER = (
    "import sys, connector.cli.commands, connector.coordinator, connector.dispatch.dispatcher, "
    "snapshot.snapshotter, ddl.history.recovery\n"
    "from ddl.model import SchemaModel, TableId\n"
    "from ddl.parsing.parser import parser_for\n"
    "parser = parser_for('mariadb')\n"
    "loaded = lambda: ['sqlglot' in sys.modules, 'ddl.parsing.statements' in sys.modules]\n"
    "print(*loaded(), parser.flavor)\n"
    "model = parser.parse('CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))', SchemaModel(), 'd').model\n"
    "print(*loaded(), [c.name for c in model.table(TableId('d', 't')).columns])\n"
)


def test_the_ddl_parser_imports_sqlglot_on_its_first_ddl() -> None:
    # Issue 41 (time to the first event): the run's modules and a parser set up for the flavor do
    # not import sqlglot, nor the table statements' trees; the first DDL parsed does. (A run resuming from a schema history does
    # not parse its SET / USE / CREATE / DROP DATABASE records with the grammar: tests/ddl/
    # test_simple_statements.py and the run above.)
    done = subprocess.run(
        [sys.executable, "-c", DEFERRED_PARSER], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = done.stdout.splitlines()
    assert before == "False False mariadb"
    assert after == "True True ['id', 'name']"


# What only running a command needs (issue 41): ``--version`` and ``--help`` import none of them.
COMMAND_ONLY = ("sqlglot", "pymysql", "pyspark", "kafka", "confluent_kafka", "prometheus_client")


def imported_modules(*arguments: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """(top-level packages of every module imported, the finished process) of
    ``python -X importtime -m connector.cli ARGUMENTS``, from its import-time report."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "connector.cli", *arguments],
        capture_output=True,
        text=True,
        check=False,
    )
    names = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "connector" in names, done.stderr[-2000:]  # the report is there: the test can fail
    return names, done


# What the modules of the run path do not import (issue 41): each is loaded where it is needed.
RUN_PATH_DEFERRED = (
    "sqlglot",  # the first DDL that needs the grammar (ddl.parsing.parser)
    "ddl.parsing.statements",  # the table statements' trees, with the grammar
    "ddl.parsing.table_statements",  # and their handlers
    "javaproperties",  # a .properties file with a backslash (connector.config_files)
    "xml.sax",
    "multiprocessing",  # the chunked snapshot's and incremental snapshot's reader processes
    "snapshot.rows.chunked",
    "connector.sources.incremental_readers",
    "tempfile",  # the offset file's first save, a PKCS12 keystore
    # The other commands' modules (connector.cli.commands imports each when its command runs).
    "connector.cli.signal",
    "connector.cli.status",
    "connector.cli.snapshot",
    "connector.replay",
    # The built-in transforms and predicates, imported by class name when a configuration names
    # one (connector.transforms.plugins.PluginRegistry).
    "connector.transforms.kafka",
    "connector.transforms.unwrap",
    "connector.transforms.routing",
    "connector.transforms.mysql",
    "connector.transforms.predicates",
    # The Kafka and Spark sinks' settings: the property table reads their declarations from
    # sink.kafka.properties and sink.spark.properties.
    "sink.kafka.settings",
    "sink.spark.settings",
    "difflib",  # the "did you mean" of an unknown key (connector.config_files)
    "zstandard",  # a compressed transaction's payload (connector.binlog.packets)
    "pickle",  # whether a chunked snapshot's readers can take the connect function (snapshot.snapshotter)
)


def test_the_run_paths_modules_import_none_of_what_they_defer() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import connector.cli.commands"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    # The report lists the run path: the engine, the DDL parser, the snapshot, the binlog library.
    assert {"connector.engine", "ddl.parsing.parser", "snapshot.snapshotter", "pymysqlreplication"} <= names
    loaded = sorted(names.intersection(RUN_PATH_DEFERRED))
    assert not loaded, f"the run path's modules imported {loaded}"


@pytest.mark.parametrize("option", ["--version", "--help"])
def test_version_and_help_import_nothing_a_command_needs(option: str) -> None:
    names, done = imported_modules(option)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = sorted(names.intersection(COMMAND_ONLY))
    assert not loaded, f"mysql-cdc {option} imported {loaded}"
    if option == "--version":
        assert done.stdout.startswith("mysql-cdc ")
    else:
        assert "replay-binlog" in done.stdout and "spark-apply" in done.stdout  # every command listed


def test_a_command_still_imports_what_it_runs() -> None:
    # The other side of the check above: ``status`` with a missing file gets as far as reading its
    # configuration (the commands' modules are imported), and the report shows their dependencies.
    names, done = imported_modules("status", "-c", "/nonexistent.properties")
    assert done.returncode == 2 and "/nonexistent.properties" in done.stderr
    assert "pymysql" in names


def test_the_version_is_the_installed_distributions() -> None:
    # Read from the .dist-info without importlib.metadata (connector.version): the same text.
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, connector.version as v; assert 'importlib.metadata' not in sys.modules; "
            "import importlib.metadata as m; print(v.__version__, m.version('mysql-cdc'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    ours, installed = done.stdout.split()
    assert ours == installed


def test_the_launcher_loads_only_the_allocator_before_it_re_executes() -> None:
    # `mysql-cdc run` decides its allocator and re-executes itself first (connector.cli.allocator):
    # what the first process imports before that is paid twice (issue 41: time to the first event).
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, connector.cli, connector.cli.allocator as a; a.tuned_environment({}); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('connector', 'typing', 'argparse', 'platform', 'collections', 'importlib')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["['connector',", "'connector.cli',", "'connector.cli.allocator']"]


# Command lines of every command (issue 41: the launcher builds only the named command's group of
# subparsers); each is parsed by that parser as by the whole one.
COMMAND_LINES = (
    ["run", "-c", "a.properties", "--set", "k=v", "--metrics-port", "9100"],
    ["snapshot", "-c", "a.properties", "--table", "db.t"],
    ["status", "-c", "a.properties"],
    ["verify", "-c", "a.properties", "--table", "db.t"],
    ["check", "-c", "a.properties", "--log-level", "DEBUG"],
    ["signal", "-c", "a.properties", "execute-snapshot", "--table", "db.t", "--type", "blocking"],
    ["replay-binlog", "-c", "a.properties", "mysql-bin.000001", "mysql-bin.000002"],
    ["spark-apply", "-c", "a.properties", "--progress-interval", "2"],
    ["demo", "--rows", "3"],
    ["properties", "sink"],
)


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=lambda argv: argv[0])
def test_a_commands_own_parser_parses_and_helps_as_the_whole_parser(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert sorted(COMMAND_GROUPS) == sorted(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    own, whole = build_parser(argv[0]), build_parser()
    assert vars(own.parse_args(argv)) == vars(whole.parse_args(argv))
    helps = []
    for parser in (own, whole):
        with pytest.raises(SystemExit):
            parser.parse_args([argv[0], "--help"])
        helps.append(capsys.readouterr().out)
    assert helps[0] == helps[1] and f"usage: mysql-cdc {argv[0]}" in helps[0]
    # A bad command line of the command: the same error from either.
    errors = []
    for parser in (own, whole):
        with pytest.raises(SystemExit):
            parser.parse_args([*argv, "--no-such-option"])
        errors.append(capsys.readouterr().err)
    assert errors[0] == errors[1] and "--no-such-option" in errors[0]


def _run_help(capsys: pytest.CaptureFixture[str], *, own_width: bool) -> str:
    parser = build_parser("run")
    if not own_width:  # the formatter classes without the width: argparse asks shutil itself
        for p in (parser, *parser._subparsers._group_actions[0].choices.values()):  # type: ignore[union-attr]
            assert isinstance(p.formatter_class, functools.partial)
            p.formatter_class = p.formatter_class.func
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--help"])
    return capsys.readouterr().out


def test_help_wraps_to_the_terminal_width_as_argparse_would(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The parser gives argparse's formatters their width (help_width) so that no start imports
    # shutil; the help comes out as argparse's own width lookup would make it, at any width.
    helps = {}
    for columns in ("60", "132"):
        monkeypatch.setenv("COLUMNS", columns)
        helps[columns] = _run_help(capsys, own_width=True)
        assert helps[columns] == _run_help(capsys, own_width=False)
    assert helps["60"] != helps["132"]


def test_an_unknown_command_gets_the_whole_parser() -> None:
    parser = build_parser("no-such-command")
    assert sorted(parser._subparsers._group_actions[0].choices) == sorted(COMMAND_GROUPS)  # type: ignore[union-attr]


BUILT_IN_TRANSFORM_ON_FIRST_USE = (
    "import sys\n"
    "from connector.transforms import TRANSFORMS, build_chain\n"
    "loaded = lambda: 'connector.transforms.unwrap' in sys.modules\n"
    "print(loaded(), len(TRANSFORMS))\n"
    "chain = build_chain({'transforms': 'unwrap', "
    "'transforms.unwrap.type': 'io.debezium.transforms.ExtractNewRecordState'})\n"
    "print(loaded(), type(chain.steps[0].transform).__name__)\n"
)


def test_a_built_in_transform_is_imported_when_a_configuration_names_it() -> None:
    # Issue 41: the registry lists every built-in class by name without importing its module; the
    # first configuration naming one imports it and builds the transform.
    done = subprocess.run(
        [sys.executable, "-c", BUILT_IN_TRANSFORM_ON_FIRST_USE], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = done.stdout.splitlines()
    assert before == "False 12"
    assert after == "True ExtractNewRecordState"
