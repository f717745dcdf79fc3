"""``sourceinfo.struct.maker`` and ``transaction.metadata.factory``: Python plugins that may add
fields to the ``source`` block and to the transaction metadata (the ``transaction`` block of data
events, the BEGIN/END records).

Debezium's defaults (``io.debezium.connector.mysql.MySqlSourceInfoStructMaker``,
``io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory``) are what the connector builds
without a plugin. A plugin is an entry point name (groups ``mysql_cdc.source_struct_makers`` and
``mysql_cdc.transaction_struct_makers``) or ``package.module:Class``, loaded like the snapshotter
plugins (``snapshot.spi``): it gets the default schema and the default value and returns its own
(usually the default with fields added). Any problem stops start-up naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final, Protocol, runtime_checkable

from mysql_cdc_base.connect import ConnectSchema
from mysql_cdc_base.debezium_schemas import SOURCE_SCHEMA
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertyReader
from snapshot.spi import PluginKind, load_plugin


@runtime_checkable
class SourceInfoStructMaker(Protocol):
    """Debezium's ``SourceInfoStructMaker``: the ``source`` block's schema and value."""

    def configure(self, properties: Mapping[str, str]) -> None: ...

    def schema(self, default: ConnectSchema) -> ConnectSchema:
        """The ``source`` schema of every data and schema change record (asked once)."""
        ...

    def struct(self, source: dict[str, Any]) -> dict[str, Any]:
        """The ``source`` value for one record, from the default one (``source`` may be changed and
        returned)."""
        ...


@runtime_checkable
class TransactionStructMaker(Protocol):
    """Debezium's ``TransactionStructMaker`` (made by a ``TransactionMetadataFactory``)."""

    def configure(self, properties: Mapping[str, str]) -> None: ...

    def block_schema(self, default: ConnectSchema) -> ConnectSchema:
        """The schema of the ``transaction`` field of data change events (asked once)."""
        ...

    def block(self, block: dict[str, Any]) -> dict[str, Any]:
        """One data event's ``transaction`` block, from the default ``{id, total_order,
        data_collection_order}``."""
        ...

    def value_schema(self, default: ConnectSchema) -> ConnectSchema:
        """The schema of the BEGIN/END record values (asked once)."""
        ...

    def begin_value(self, value: dict[str, Any]) -> dict[str, Any]: ...

    def end_value(self, value: dict[str, Any]) -> dict[str, Any]: ...


SOURCE_MAKER: Final = PluginKind(
    "sourceinfo.struct.maker",
    "mysql_cdc.source_struct_makers",
    SourceInfoStructMaker,
    ("configure", "schema", "struct"),
)
TRANSACTION_MAKER: Final = PluginKind(
    "transaction.metadata.factory",
    "mysql_cdc.transaction_struct_makers",
    TransactionStructMaker,
    ("configure", "block_schema", "block", "value_schema", "begin_value", "end_value"),
)
DEFAULTS: Final[Mapping[str, frozenset[str]]] = {
    SOURCE_MAKER.key: frozenset({"io.debezium.connector.mysql.MySqlSourceInfoStructMaker", "default"}),
    TRANSACTION_MAKER.key: frozenset(
        {"io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory", "default"}
    ),
}


def _load(kind: PluginKind, config: PropertyReader) -> Any:
    name = (config.get(kind.key) or "").strip()
    if not name or name in DEFAULTS[kind.key]:
        return None
    if name.startswith("io.debezium.") and ":" not in name:
        raise ConfigError(
            kind.key,
            f"{name} is a Java class: only the default and Python plugins (an entry point of group "
            f"{kind.group} or package.module:Class) are supported",
        )
    return load_plugin(kind, name, config.raw)


def source_struct_maker(config: PropertyReader) -> SourceInfoStructMaker | None:
    """The configured plugin, or None for Debezium's default."""
    maker: SourceInfoStructMaker | None = _load(SOURCE_MAKER, config)
    return maker


def transaction_struct_maker(config: PropertyReader) -> TransactionStructMaker | None:
    """The configured plugin, or None for Debezium's default."""
    maker: TransactionStructMaker | None = _load(TRANSACTION_MAKER, config)
    return maker


def plugin_schema(kind: PluginKind, made: object) -> ConnectSchema:
    """A schema a plugin returned, checked: a struct, or start-up stops naming the key."""
    if not isinstance(made, ConnectSchema) or made.type != "struct":
        raise ConfigError(kind.key, f"the plugin returned {made!r} where a struct ConnectSchema is needed")
    return made


def with_field_schema(schema: ConnectSchema, name: str, field_schema: ConnectSchema) -> ConnectSchema:
    """``schema`` with field ``name``'s schema replaced (itself when it is already that)."""
    fields = schema.fields or ()
    if all(f.schema is field_schema for f in fields if f.name == name):
        return schema
    return replace(
        schema, fields=tuple(replace(f, schema=field_schema) if f.name == name else f for f in fields)
    )


def made_structs(
    config: PropertyReader, transaction_block: ConnectSchema
) -> tuple[SourceInfoStructMaker | None, ConnectSchema, TransactionStructMaker | None, ConnectSchema]:
    """The plugins of both keys (None: the default) and the ``source`` and ``transaction`` block
    schemas they give the envelope."""
    source = source_struct_maker(config)
    transaction = transaction_struct_maker(config)
    source_schema = (
        SOURCE_SCHEMA if source is None else plugin_schema(SOURCE_MAKER, source.schema(SOURCE_SCHEMA))
    )
    block_schema = transaction_block
    if transaction is not None:
        block_schema = plugin_schema(TRANSACTION_MAKER, transaction.block_schema(transaction_block))
    return source, source_schema, transaction, block_schema
