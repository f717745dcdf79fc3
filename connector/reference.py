"""The property reference: the property table (``connector.config.PROPERTIES``) grouped the way
Debezium's documentation groups it, rendered for the terminal (``mysql-cdc properties``) and as the
site's page ``docs/reference/properties.md``.

A declaration's group is its own ``group`` when set; else ``required`` for a required property;
else the first rule of ``PREFIX_GROUPS`` its name starts with; else the group of the module that
declared it (``MODULE_GROUPS``); else ``advanced``. So a property added without a group still lands
somewhere sensible.

Regenerate the page with ``python -m connector.reference docs/reference/properties.md``
(``tests/connector/test_reference.py`` fails when the checked-in page is stale).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from connector.config import PASSTHROUGH_PREFIXES, PROPERTIES
from ddl.properties import Property


@dataclass(frozen=True)
class Group:
    key: str
    title: str
    summary: str


GROUPS: tuple[Group, ...] = (
    Group("required", "Required", "Every configuration sets these."),
    Group("connection", "Connection", "Reaching MySQL: TLS, time zone, timeouts and reconnection."),
    Group("filters", "Filters", "Which databases, tables, columns and GTID sources are captured."),
    Group("snapshot", "Snapshot and signals", "The initial snapshot, signals and incremental snapshots."),
    Group("streaming", "Streaming and events", "Topic names, what is emitted, heartbeats, failure handling."),
    Group("converters", "Converters and types", "How column values are represented; custom converters."),
    Group("transforms", "Transforms", "Single message transforms and their predicates."),
    Group("sink", "Sink selection", "Which sinks are fed."),
    Group("sink-jsonl", "Sink: JSON lines", "sink.type=jsonl (and stdout)."),
    Group("sink-kafka", "Sink: Kafka", "sink.type=kafka; sink.kafka.producer.* pass to the producer."),
    Group("sink-spark", "Sink: Spark / Delta", "sink.type=spark, the in-process Delta sink."),
    Group("stores", "Offset and schema history stores", "Where positions and DDL history are kept."),
    Group("advanced", "Advanced and operations", "Metrics, logs, data directory, batching."),
)
GROUP_KEYS = tuple(g.key for g in GROUPS)

# First match wins: more specific prefixes before their parents.
PREFIX_GROUPS: tuple[tuple[str, str], ...] = (
    ("database.include.", "filters"),
    ("database.exclude.", "filters"),
    ("table.", "filters"),
    ("column.include.", "filters"),
    ("column.exclude.", "filters"),
    ("gtid.source.", "filters"),
    ("message.key.columns", "filters"),
    ("snapshot.include.collection.", "filters"),
    ("database.", "connection"),
    ("connect.", "connection"),
    ("snapshot.", "snapshot"),
    ("legacy.snapshot.", "snapshot"),
    ("incremental.snapshot.", "snapshot"),
    ("signal.", "snapshot"),
    ("read.only", "snapshot"),
    ("sink.jsonl.", "sink-jsonl"),
    ("sink.kafka.", "sink-kafka"),
    ("sink.spark.", "sink-spark"),
    ("sink.", "sink"),
    ("offset.", "stores"),
    ("schema.history.", "stores"),
    ("exactly.once.", "stores"),
    ("transaction.boundary", "stores"),
    ("transforms", "transforms"),
    ("predicates", "transforms"),
    ("converters", "converters"),
    ("key.converter.", "converters"),
    ("value.converter.", "converters"),
    ("decimal.", "converters"),
    ("time.precision.", "converters"),
    ("bigint.", "converters"),
    ("binary.", "converters"),
    ("enable.time.adjuster", "converters"),
    ("column.", "converters"),
    ("datatype.", "converters"),
    ("include.schema.comments", "converters"),
    ("topic.", "streaming"),
    ("tombstones.", "streaming"),
    ("include.", "streaming"),
    ("provide.transaction.", "streaming"),
    ("skipped.operations", "streaming"),
    ("extended.headers.", "streaming"),
    ("heartbeat.", "streaming"),
    ("inconsistent.schema.", "streaming"),
    ("event.", "streaming"),
    ("binlog.", "streaming"),
    ("streaming.", "streaming"),
    ("skip.messages.", "streaming"),
    ("notification.", "advanced"),
    ("post.processors", "advanced"),
    ("name", "connection"),
)

# The declaring module's group, for a name no prefix rule knows (longest module prefix wins).
MODULE_GROUPS: tuple[tuple[str, str], ...] = (
    ("sink.jsonl", "sink-jsonl"),
    ("sink.kafka", "sink-kafka"),
    ("sink.spark", "sink-spark"),
    ("sink.connect", "converters"),
    ("snapshot", "snapshot"),
    ("connector.sources", "streaming"),
    ("connector.stores", "stores"),
    ("connector.transforms", "transforms"),
    ("connector.records", "converters"),
)


def group_of(spec: Property) -> str:
    """The reference group of one declaration (see the module docstring for the order)."""
    if spec.group:
        return spec.group
    if spec.required:
        return "required"
    for prefix, group in PREFIX_GROUPS:
        if spec.name == prefix or spec.name.startswith(prefix):
            return group
    for module, group in MODULE_GROUPS:
        if spec.module == module or spec.module.startswith(module + "."):
            return group
    return "advanced"


def grouped(properties: Sequence[Property] = PROPERTIES) -> dict[str, list[Property]]:
    """The declarations by group, in the groups' order and the table's order within a group."""
    out: dict[str, list[Property]] = {key: [] for key in GROUP_KEYS}
    for spec in properties:
        out.setdefault(group_of(spec), []).append(spec)
    return out


def default_text(spec: Property) -> str:
    if spec.required:
        return "(required)"
    return spec.default if spec.default not in (None, "") else "-"


def doc_text(spec: Property) -> str:
    extra = f" One of: {', '.join(spec.choices)}." if spec.choices else ""
    secret = " Secret: never logged." if spec.secret and "never logged" not in spec.doc else ""
    return spec.doc + extra + secret


def group_summary_lines() -> list[str]:
    """One line per group (for ``--help``): key, count and title."""
    counts = grouped()
    return [f"  {g.key:<11} {len(counts[g.key]):>3}  {g.title}: {g.summary}" for g in GROUPS]


# -- the terminal ----------------------------------------------------------------------------------
def render_text(selector: str | None = None) -> str:
    """The grouped reference for ``mysql-cdc properties [GROUP|KEY]``; raises ``KeyError`` naming
    what is known when ``selector`` is neither a group nor a key (nor a key prefix)."""
    groups = grouped()
    if selector is None:
        return "\n".join(_text_group(g, groups[g.key]) for g in GROUPS)
    if selector in groups:
        group = next(g for g in GROUPS if g.key == selector)
        return _text_group(group, groups[selector])
    matches = [p for p in PROPERTIES if p.name == selector] or [
        p for p in PROPERTIES if p.name.startswith(selector)
    ]
    if not matches:
        raise KeyError(selector)
    return "\n".join(_text_property(p) for p in matches)


def _text_group(group: Group, specs: Sequence[Property]) -> str:
    lines = [f"== {group.title} ({group.key}): {group.summary}"]
    lines.extend(_text_property(p) for p in specs)
    return "\n".join(lines) + "\n"


def _text_property(spec: Property) -> str:
    head = f"  {spec.name}  [default: {default_text(spec)}]  ({group_of(spec)})"
    body = textwrap.wrap(doc_text(spec), width=96, initial_indent="      ", subsequent_indent="      ")
    return "\n".join([head, *body])


# -- the site's page -------------------------------------------------------------------------------
PAGE_HEAD = """# Property reference

<!-- Generated by `python -m connector.reference docs/reference/properties.md` from the property
declarations; tests/connector/test_reference.py fails when this page is stale. Do not edit. -->

Debezium's property names, set in the `--config` file (a Java `.properties` file) or with
`--set KEY=VALUE`. `${ENV_VAR}` and `${ENV_VAR:-default}` in values are replaced from the
environment. The same reference is printed by `mysql-cdc properties [GROUP|KEY]`.
A misspelt or unknown key is warned about at start-up; a bad value stops the connector naming
the key and the expected form.

| Group | Properties | |
| --- | ---: | --- |
"""


def render_markdown() -> str:
    groups = grouped()
    parts = [PAGE_HEAD]
    parts.extend(f"| [{g.title}](#{g.key}) | {len(groups[g.key])} | {g.summary} |\n" for g in GROUPS)
    for g in GROUPS:
        parts.append(f"\n## {g.title} {{#{g.key}}}\n\n{g.summary}\n\n")
        parts.append("| Property | Default | Description |\n| --- | --- | --- |\n")
        parts.extend(_markdown_row(p) for p in groups[g.key])
    parts.append("\n## Pass-through prefixes {#passthrough}\n\n")
    parts.append(
        "Keys under these prefixes are handed to a component as they are (not declared one by one):\n\n"
    )
    parts.extend(f"- `{prefix}`\n" for prefix in PASSTHROUGH_PREFIXES)
    return "".join(parts)


def _markdown_row(spec: Property) -> str:
    doc = doc_text(spec).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    default = default_text(spec).replace("|", "\\|")
    return f"| `{spec.name}` | `{default}` | {doc} |\n"


def main(argv: Sequence[str]) -> int:
    text = render_markdown()
    if argv:
        Path(argv[0]).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
