"""The dispatcher's schema-state settings, read once from the properties: what the schema history
stores and skips (``schema.history.internal.skip.unparseable.ddl``,
``schema.history.internal.store.only.captured.*``, ``schema.history.internal.ddl.filter``) and
whether schema-change records are emitted (``include.schema.changes``)."""

from __future__ import annotations

from typing import NamedTuple

from ddl.history.filters import DdlFilter
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertyReader

DDL_FILTER_KEY = "schema.history.internal.ddl.filter"


class SchemaStateSettings(NamedTuple):
    skip_unparseable: bool
    only_captured_tables: bool
    only_captured_dbs: bool
    include_schema_changes: bool
    ddl_filter: DdlFilter

    @classmethod
    def from_config(cls, config: PropertyReader) -> SchemaStateSettings:
        """A bad ``schema.history.internal.ddl.filter`` is a ``ConfigError`` naming it."""
        try:
            ddl_filter = DdlFilter.from_property(config.get(DDL_FILTER_KEY))
        except ValueError as exc:
            raise ConfigError(DDL_FILTER_KEY, str(exc)) from None
        history = "schema.history.internal."
        return cls(
            skip_unparseable=config.get_bool(f"{history}skip.unparseable.ddl"),
            only_captured_tables=config.get_bool(f"{history}store.only.captured.tables.ddl"),
            only_captured_dbs=config.get_bool(f"{history}store.only.captured.databases.ddl"),
            include_schema_changes=config.get_bool("include.schema.changes"),
            ddl_filter=ddl_filter,
        )
