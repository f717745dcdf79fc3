"""The property reference: every declaration in one group, the terminal listing
(``mysql-cdc properties``), help that fits a screen, and the site's generated page kept fresh."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from connector.config import PROPERTIES
from connector.reference import GROUP_KEYS, group_of, grouped, render_markdown
from mysql_cdc_base.properties import Property, prop

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "reference" / "properties.md"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command line, in a terminal of 80 columns (argparse wraps to $COLUMNS)."""
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "connector.cli", *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_every_declaration_lands_in_one_known_group():
    groups = grouped()
    assert set(groups) == set(GROUP_KEYS)
    listed = [p.name for specs in groups.values() for p in specs]
    assert sorted(listed) == sorted(p.name for p in PROPERTIES)
    assert all(groups[key] for key in GROUP_KEYS), "a group with no property"
    assert {p.name for p in groups["required"]} == {p.name for p in PROPERTIES if p.required}


@pytest.mark.parametrize(
    ("name", "group"),
    [
        ("database.ssl.mode", "connection"),
        ("table.include.list", "filters"),
        ("snapshot.mode", "snapshot"),
        ("signal.data.collection", "snapshot"),
        ("heartbeat.interval.ms", "streaming"),
        ("decimal.handling.mode", "converters"),
        ("transforms", "transforms"),
        ("sink.kafka.bootstrap.servers", "sink-kafka"),
        ("sink.spark.warehouse", "sink-spark"),
        ("offset.storage", "stores"),
        ("schema.history.internal", "stores"),
        ("metrics.port", "advanced"),
    ],
)
def test_declared_properties_are_grouped_as_debezium_documents_them(name, group):
    assert group_of(next(p for p in PROPERTIES if p.name == name)) == group


def test_a_new_declaration_without_a_group_lands_by_prefix_then_module():
    # A name no prefix rule knows falls back to its declaring module (prop records it) ...
    assert prop("frobnicate.level", "1").module == __name__
    assert group_of(Property("frobnicate.level", module="sink.kafka.settings")) == "sink-kafka"
    assert group_of(Property("frobnicate.level", module="snapshot.settings")) == "snapshot"
    # ... then to advanced; a prefix rule beats the module; an explicit group beats both.
    assert group_of(Property("frobnicate.level", module="tests.elsewhere")) == "advanced"
    assert group_of(Property("sink.spark.new.knob", module="connector.config")) == "sink-spark"
    assert group_of(Property("sink.spark.new.knob", group="advanced")) == "advanced"


def test_the_checked_in_page_is_the_generated_one():
    assert PAGE.read_text() == render_markdown(), (
        "docs/reference/properties.md is stale: run python -m connector.reference docs/reference/properties.md"
    )
    for spec in PROPERTIES:
        assert f"| `{spec.name}` |" in PAGE.read_text()


def test_top_level_help_fits_a_screen_and_names_commands_and_groups():
    result = cli("--help")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert len(lines) <= 60, len(lines)
    for word in ("run", "snapshot", "replay-binlog", "spark-apply", "properties", *GROUP_KEYS):
        assert any(line.split()[:1] == [word] for line in lines), word
    assert "database.ssl.mode" not in result.stdout  # groups, not every property


@pytest.mark.parametrize("command", ["run", "snapshot", "replay-binlog", "spark-apply"])
def test_command_help_is_short(command):
    result = cli(command, "--help")
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) <= 60
    assert "README" not in result.stdout


def test_properties_command_prints_a_group_a_key_or_refuses_naming_the_groups():
    group = cli("properties", "sink-spark")
    assert group.returncode == 0
    keys = [
        line.split()[0] for line in group.stdout.splitlines() if line.startswith("  ") and "[default:" in line
    ]
    assert keys == [p.name for p in grouped()["sink-spark"]]
    key = cli("properties", "database.ssl.mode")
    assert key.returncode == 0
    assert "[default: preferred]" in key.stdout and "verify_identity" in key.stdout
    assert key.stdout.count("[default:") == 1  # the exact key, not the keys it prefixes
    prefix = cli("properties", "schema.history.internal.store")
    assert prefix.stdout.count("[default:") == 2
    unknown = cli("properties", "no.such.thing")
    assert unknown.returncode == 2
    assert "no.such.thing" in unknown.stderr and "sink-kafka" in unknown.stderr
