"""The post-processors' typed settings, parsed once from each one's options
(``post.processors.<alias>.*``; an error names the full key): ``ReselectSettings``."""

from __future__ import annotations

import re
from typing import NamedTuple

from connector.transforms.base import Options
from mysql_cdc_base.errors import ConfigError

WARN, FAIL = "warn", "fail"
INCLUDE_KEY = "reselect.columns.include.list"
EXCLUDE_KEY = "reselect.columns.exclude.list"


def _patterns(options: Options, name: str) -> tuple[re.Pattern[str], ...]:
    out = []
    for text in options.get_list(name):
        try:
            out.append(re.compile(text, re.IGNORECASE))
        except re.error as exc:
            raise ConfigError(
                options.key(name), f"{text!r} is not a valid regular expression: {exc}"
            ) from None
    return tuple(out)


class ReselectSettings(NamedTuple):
    """Which columns are re-selected (include or exclude patterns, never both), which values
    (unavailable placeholders, nulls), by which key, and what a failed query does (warn | fail)."""

    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]
    unavailable: bool
    nulls: bool
    use_event_key: bool
    mode: str

    @classmethod
    def from_options(cls, options: Options) -> ReselectSettings:
        include, exclude = _patterns(options, INCLUDE_KEY), _patterns(options, EXCLUDE_KEY)
        if include and exclude:
            raise ConfigError(options.key(EXCLUDE_KEY), f"cannot be set together with {INCLUDE_KEY}")
        return cls(
            include,
            exclude,
            unavailable=options.get_bool("reselect.unavailable.values", True),
            nulls=options.get_bool("reselect.null.values", True),
            use_event_key=options.get_bool("reselect.use.event.key", False),
            mode=options.get_choice("reselect.error.handling.mode", (WARN, FAIL), WARN),
        )
