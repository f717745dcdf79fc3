"""Topic names (``topic.naming.strategy``) and Avro-safe schema and field names
(``schema.name.adjustment.mode``, ``field.name.adjustment.mode``).

Facts taken from Debezium 3.6's ``AbstractTopicNamingStrategy``, ``DefaultTopicNamingStrategy``,
``DefaultUnicodeTopicNamingStrategy``, ``UnicodeReplacementFunction`` and ``SchemaNameAdjuster``:

* a data topic is ``<topic.prefix><delimiter><db><delimiter><table>`` (blank parts left out), every
  character Kafka does not accept (not ``[A-Za-z0-9._-]``) replaced: by ``_`` (default strategy) or by
  ``_u`` and its UTF-16 code unit in lower-case hex, padded with ``00`` when it has at most two digits
  (unicode strategy, where ``_`` itself is replaced: it is the escape character); a name longer than
  249 characters is cut, ``.`` and ``..`` are replaced;
* the schema change topic is ``<topic.prefix>``, the transaction topic
  ``<topic.prefix><delimiter><topic.transaction>``, the heartbeat topic ``topic.heartbeat.name`` or
  ``<topic.heartbeat.prefix><delimiter><topic.prefix>``;
* the record schemas are named ``<data topic>.Key``/``.Value``/``.Envelope``, passed through the
  schema name adjuster; every column's field name through the field name adjuster.

A Python strategy (entry point of group ``mysql_cdc.topic_naming_strategies`` or
``package.module:Class``) implements ``TopicNamingStrategy``; it is loaded like the snapshotter
plugins (``snapshot.spi``), and any problem stops start-up naming ``topic.naming.strategy``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Final, NamedTuple, Protocol, runtime_checkable

from connector.records.settings import TOPIC_NAMING_KEY, topic_naming_name
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import PropertyReader
from mysql_cdc_base.table_id import TableId
from snapshot.spi import PluginKind, load_plugin

MAX_NAME_LENGTH: Final = 249  # Kafka's longest topic name
_KAFKA_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_LETTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS: Final = frozenset("0123456789")
# Properties that become (part of) a topic name as they are, so must be valid topic names.
TOPIC_NAME_KEYS: Final = (
    "topic.delimiter",
    "topic.transaction",
    "topic.heartbeat.prefix",
    "topic.heartbeat.name",
)


@runtime_checkable
class TopicNamingStrategy(Protocol):
    """Debezium's ``io.debezium.spi.topic.TopicNamingStrategy`` for the MySQL connector."""

    def configure(self, properties: Mapping[str, str]) -> None:
        """Called once, before any other method, with every connector property."""
        ...

    def data_change_topic(self, table_id: TableId) -> str:
        """The topic of ``table_id``'s change records (``.database``, ``.table``); also the prefix
        of its record schema names."""
        ...

    def schema_change_topic(self) -> str: ...

    def transaction_topic(self) -> str: ...

    def heartbeat_topic(self) -> str: ...


STRATEGY_PLUGIN: Final = PluginKind(
    "topic.naming.strategy",
    "mysql_cdc.topic_naming_strategies",
    TopicNamingStrategy,
    ("configure", "data_change_topic", "schema_change_topic", "transaction_topic", "heartbeat_topic"),
)


def unicode_escape(char: str) -> str:
    """``UnicodeReplacementFunction#replace`` of one UTF-16 code unit."""
    digits = f"{ord(char):x}"
    return "_u" + ("00" + digits if len(digits) <= 2 else digits)


def utf16_units(text: str) -> list[str]:
    """``text`` as Java sees it: one item per UTF-16 code unit (a character beyond the BMP is two)."""
    if text.isascii() or all(ord(c) < 0x10000 for c in text):
        return list(text)
    data = text.encode("utf-16-be", "surrogatepass")
    return [chr(int.from_bytes(data[i : i + 2], "big")) for i in range(0, len(data), 2)]


class DefaultTopicNamingStrategy:
    """``io.debezium.schema.DefaultTopicNamingStrategy``; configured from the connector properties."""

    escape_underscore = False

    def __init__(self) -> None:
        self.prefix = self.delimiter = self.transaction = self.heartbeat_prefix = ""
        self.heartbeat_name: str | None = None
        self._names: OrderedDict[TableId, str] = OrderedDict()
        self._cache_size = 10000

    def configure(self, properties: Mapping[str, str]) -> None:
        for key in TOPIC_NAME_KEYS:  # CommonConnectorConfig#validateTopicName
            value = properties.get(key)
            if value and not all(c in _KAFKA_CHARS for c in value):
                raise ConfigError(
                    key,
                    f"{value!r} has invalid format (only the underscore, hyphen, dot and alphanumeric "
                    "characters are allowed)",
                )
        self.prefix = properties.get("topic.prefix") or ""
        self.delimiter = properties.get("topic.delimiter") or "."
        self.transaction = properties.get("topic.transaction") or "transaction"
        self.heartbeat_prefix = properties.get("topic.heartbeat.prefix") or "__debezium-heartbeat"
        self.heartbeat_name = properties.get("topic.heartbeat.name") or None
        self._cache_size = int(properties.get("topic.cache.size") or 10000)

    def _valid(self, char: str) -> bool:
        return char in _KAFKA_CHARS and not (self.escape_underscore and char == "_")

    def _replace(self, char: str) -> str:
        return unicode_escape(char) if self.escape_underscore else "_"

    def sanitized_topic_name(self, name: str) -> str:
        if all(self._valid(c) for c in name) and len(name) <= MAX_NAME_LENGTH and name not in (".", ".."):
            return name
        out = "".join(c if self._valid(c) else self._replace(c) for c in utf16_units(name))
        if len(out) > MAX_NAME_LENGTH:
            return out[:MAX_NAME_LENGTH]
        if out in (".", ".."):
            return self._replace(".") * len(out)
        return out

    def data_change_topic(self, table_id: TableId) -> str:
        name = self._names.get(table_id)
        if name is not None:
            self._names.move_to_end(table_id)
            return name
        parts = [p for p in (self.prefix, table_id.database, table_id.table) if p and p.strip()]
        name = self.sanitized_topic_name(self.delimiter.join(parts))
        self._names[table_id] = name
        if len(self._names) > self._cache_size:  # topic.cache.size: least recently used goes
            self._names.popitem(last=False)
        return name

    def schema_change_topic(self) -> str:
        return self.prefix

    def transaction_topic(self) -> str:
        return self.delimiter.join((self.prefix, self.transaction))

    def heartbeat_topic(self) -> str:
        return self.heartbeat_name or self.delimiter.join((self.heartbeat_prefix, self.prefix))


class DefaultUnicodeTopicNamingStrategy(DefaultTopicNamingStrategy):
    """``io.debezium.schema.DefaultUnicodeTopicNamingStrategy``: invalid characters and ``_`` become
    ``_uXXXX``."""

    escape_underscore = True


BUILT_IN_STRATEGIES: Final[Mapping[str, type[DefaultTopicNamingStrategy]]] = {
    "io.debezium.schema.DefaultTopicNamingStrategy": DefaultTopicNamingStrategy,
    "io.debezium.schema.DefaultUnicodeTopicNamingStrategy": DefaultUnicodeTopicNamingStrategy,
    "default": DefaultTopicNamingStrategy,
    "unicode": DefaultUnicodeTopicNamingStrategy,
}
# Debezium strategies for connectors with schemas or multiple partitions: not MySQL's.
NOT_FOR_MYSQL: Final = frozenset(
    {
        "io.debezium.schema.SchemaTopicNamingStrategy",
        "io.debezium.schema.SchemaUnicodeTopicNamingStrategy",
    }
)


def topic_naming_strategy(config: PropertyReader) -> TopicNamingStrategy:
    """The configured strategy, configured; a plugin problem is a ``ConfigError`` naming the key."""
    name = topic_naming_name(config)
    built_in = BUILT_IN_STRATEGIES.get(name)
    if name in NOT_FOR_MYSQL:
        raise ConfigError(TOPIC_NAMING_KEY, f"{name} names topics by schema, which MySQL tables do not have")
    if built_in is not None:
        strategy: TopicNamingStrategy = built_in()
        strategy.configure(config.raw)
        return strategy
    if name.startswith("io.debezium.") and ":" not in name:
        raise ConfigError(
            "topic.naming.strategy",
            f"{name} is not a Debezium strategy for MySQL; use DefaultTopicNamingStrategy, "
            "DefaultUnicodeTopicNamingStrategy, or a Python plugin (entry point or package.module:Class)",
        )
    plugin: TopicNamingStrategy = load_plugin(STRATEGY_PLUGIN, name, config.raw)
    return plugin


# -- name adjustment (SchemaNameAdjuster) -------------------------------------------------------------


class Replacement(NamedTuple):
    """A ``ReplacementFunction``: which characters stay, what the others become."""

    first: Callable[[str], bool]
    rest: Callable[[str], bool]
    replace: Callable[[str], str]
    keep_leading_digit: bool  # the underscore forms write _ then the digit (Avro adjuster compatibility)


def _avro_first(c: str) -> bool:
    return c in _LETTERS or c == "_"


def _avro_schema_rest(c: str) -> bool:
    return _avro_first(c) or c == "." or c in _DIGITS


def _avro_field_rest(c: str) -> bool:
    return _avro_first(c) or c in _DIGITS


def _unicode_first(c: str) -> bool:
    return c in _LETTERS


def _unicode_schema_rest(c: str) -> bool:
    return c in _LETTERS or c == "." or c in _DIGITS


def _unicode_field_rest(c: str) -> bool:
    return c in _LETTERS or c in _DIGITS


def _underscore(_: str) -> str:
    return "_"


SCHEMA_REPLACEMENTS: Final[Mapping[str, Replacement]] = {
    "avro": Replacement(_avro_first, _avro_schema_rest, _underscore, True),
    "avro_unicode": Replacement(_unicode_first, _unicode_schema_rest, unicode_escape, False),
}
FIELD_REPLACEMENTS: Final[Mapping[str, Replacement]] = {
    "avro": Replacement(_avro_first, _avro_field_rest, _underscore, True),
    "avro_unicode": Replacement(_unicode_first, _unicode_field_rest, unicode_escape, False),
}


def valid_fullname(name: str, rules: Replacement) -> str:
    """``SchemaNameAdjuster.validFullname``: ``name`` with every character its rules reject replaced."""
    if not name:
        return name
    units = utf16_units(name)
    head = units[0]
    out = [head if rules.first(head) else rules.replace(head)]
    if not rules.first(head) and rules.keep_leading_digit and head in _DIGITS:
        out.append(head)
    out += [c if rules.rest(c) else rules.replace(c) for c in units[1:]]
    result = "".join(out)
    return name if result == "".join(units) else result


class NameAdjuster:
    """One adjuster (``none``/``avro``/``avro_unicode``) of one connector. Two different names that
    become the same stop the connector, as Debezium's adjusters do."""

    def __init__(self, key: str, rules: Replacement | None) -> None:
        self.key = key
        self.rules = rules
        self._originals: dict[str, str] = {}
        self._cache: dict[str, str] = {}

    def __bool__(self) -> bool:
        return self.rules is not None

    def adjust(self, name: str) -> str:
        if self.rules is None:
            return name
        done = self._cache.get(name)
        if done is not None:
            return done
        result = valid_fullname(name, self.rules)
        if result != name:
            first = self._originals.setdefault(result, name)
            if first != name:
                raise ConfigError(
                    self.key,
                    f"the name {name!r} is not valid for Avro and its replacement {result!r} "
                    f"conflicts with {first!r}",
                )
        self._cache[name] = result
        return result


def _adjuster(config: PropertyReader, key: str, table: Mapping[str, Replacement]) -> NameAdjuster:
    return NameAdjuster(key, table.get(config.get_choice(key)))


def schema_name_adjuster(config: PropertyReader) -> NameAdjuster:
    return _adjuster(config, "schema.name.adjustment.mode", SCHEMA_REPLACEMENTS)


def field_name_adjuster(config: PropertyReader) -> NameAdjuster:
    return _adjuster(config, "field.name.adjustment.mode", FIELD_REPLACEMENTS)


def sanitized_topic_name(name: str) -> str:
    """Debezium's ``TopicNamingStrategy.sanitizedTopicName``: every character Kafka does not accept in
    a topic name (anything but ASCII letters, digits, ``.``, ``_`` and ``-``) becomes ``_``, one for
    one (``dbz5743中文`` -> ``dbz5743__``)."""
    if all(ch in _KAFKA_CHARS for ch in name):
        return name
    return "".join(ch if ch in _KAFKA_CHARS else "_" for ch in name)


def topic_name(prefix: str, delimiter: str, *parts: str) -> str:
    return sanitized_topic_name(delimiter.join([prefix, *parts]))
