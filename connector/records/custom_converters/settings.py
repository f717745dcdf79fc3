"""The built-in custom converters' typed settings, parsed once from each converter's options
(``<alias>.*``; an error names the full key, an unknown option is refused):
``TinyIntOneSettings`` (``TinyIntOneToBooleanConverter``) and ``JdbcSinkTypesSettings``
(``JdbcSinkDataTypesConverter``)."""

from __future__ import annotations

import re
from typing import NamedTuple

from connector.transforms.base import Options
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import split_list

Selector = tuple[re.Pattern[str], ...] | None


def column_selector(options: Options, name: str) -> Selector:
    """Comma-separated regexes matched case-insensitively against the whole ``db.table.column``;
    None when the option is not set."""
    text = options.get(name)
    if not text:
        return None
    try:
        return tuple(re.compile(p, re.IGNORECASE) for p in split_list(text))
    except re.error as exc:
        raise ConfigError(options.key(name), f"is not a valid regular expression: {exc}") from None


class TinyIntOneSettings(NamedTuple):
    """``selector`` and ``length.checker`` (default true: only TINYINT(1) and BOOLEAN columns)."""

    selector: Selector
    length_checker: bool

    @classmethod
    def from_options(cls, options: Options) -> TinyIntOneSettings:
        options.check_options(frozenset({"selector", "length.checker"}))
        return cls(column_selector(options, "selector"), options.get_bool("length.checker", True))


class JdbcSinkTypesSettings(NamedTuple):
    """``selector.boolean``, ``selector.real``, ``selector.string`` and ``treat.real.as.double``
    (default true)."""

    boolean: Selector
    real: Selector
    string: Selector
    real_as_double: bool

    @classmethod
    def from_options(cls, options: Options) -> JdbcSinkTypesSettings:
        options.check_options(
            frozenset({"selector.boolean", "selector.real", "selector.string", "treat.real.as.double"})
        )
        return cls(
            column_selector(options, "selector.boolean"),
            column_selector(options, "selector.real"),
            column_selector(options, "selector.string"),
            options.get_bool("treat.real.as.double", True),
        )
