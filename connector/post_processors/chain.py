"""The configured post-processors (``post.processors``): they run on each change event before the
transforms, in the order listed; ``post.processors.<alias>.type`` names Debezium's class."""

from __future__ import annotations

from collections.abc import Callable

import pymysql

from connector.post_processors.properties import DEFAULT_PLACEHOLDER, PLACEHOLDER_KEY, RESELECT_TYPE, aliases
from connector.post_processors.reselect import ReselectColumns
from connector.records.builder import TableSchema
from connector.transforms import Step, TransformChain
from connector.transforms.base import options_under
from ddl.model import Table
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertyReader
from mysql_cdc_base.table_id import TableId

KNOWN_TYPES = (RESELECT_TYPE,)
RESELECT_OPTIONS = frozenset(
    (
        "type",
        "reselect.columns.include.list",
        "reselect.columns.exclude.list",
        "reselect.unavailable.values",
        "reselect.null.values",
        "reselect.use.event.key",
        "reselect.error.handling.mode",
    )
)


def build_post_processors(
    config: PropertyReader,
    connect: Callable[[], pymysql.connections.Connection],
    table_of: Callable[[TableId], Table | None],
    schema_of: Callable[[Table], TableSchema],
    signal_tables: frozenset[TableId] = frozenset(),
) -> list[ReselectColumns]:
    """The configured post-processors, in order; an unknown type stops start-up naming its key."""
    placeholder = config.get(PLACEHOLDER_KEY) or DEFAULT_PLACEHOLDER
    built = []
    for alias in aliases(config.raw):
        options = options_under(config.raw, f"post.processors.{alias}.")
        kind = options.require("type")
        if kind != RESELECT_TYPE:
            raise ConfigError(
                options.key("type"),
                f"{kind!r} is not a post-processor here (known: {', '.join(KNOWN_TYPES)})",
            )
        unknown = sorted(set(options.values) - RESELECT_OPTIONS)
        if unknown:
            raise ConfigError(
                options.key(unknown[0]),
                f"is not an option of the reselect post-processor (its options: {', '.join(sorted(RESELECT_OPTIONS))})",
            )
        built.append(ReselectColumns(options, placeholder, connect, table_of, schema_of, signal_tables))
    return built


def with_post_processors(chain: TransformChain, processors: list[ReselectColumns]) -> TransformChain:
    """``chain`` with the post-processors first (Debezium runs them before the transforms)."""
    if not processors:
        return chain
    steps = tuple(Step(f"post.processors[{i}]", p) for i, p in enumerate(processors))
    return TransformChain((*steps, *chain.steps))


__all__ = ["ReselectColumns", "build_post_processors", "with_post_processors"]
