"""The post-processor properties (``post.processors``, ``unavailable.value.placeholder``), declared for
``connector.config``'s table, and what the start-up check asks of them."""

from __future__ import annotations

from collections.abc import Mapping

from mysql_cdc_base.properties import Property, prop, split_list

RESELECT_TYPE = "io.debezium.processors.reselect.ReselectColumnsPostProcessor"
PLACEHOLDER_KEY = "unavailable.value.placeholder"
DEFAULT_PLACEHOLDER = "__debezium_unavailable_value"

POST_PROCESSOR_PROPERTIES: tuple[Property, ...] = (
    prop(
        "post.processors",
        "",
        "Post-processors run on every change event before the transforms, in the order listed; each "
        "alias is configured under post.processors.<alias>. (type: "
        f"{RESELECT_TYPE}; see docs/guides/reselect.md).",
        kind="list",
    ),
    prop(
        PLACEHOLDER_KEY,
        DEFAULT_PLACEHOLDER,
        "What marks a column value the binlog left out (binlog_row_image=NOBLOB) and the reselect "
        "post-processor could not re-read: this text in string columns, its UTF-8 bytes in binary "
        "ones.",
    ),
)


def aliases(raw: Mapping[str, str]) -> list[str]:
    return split_list(raw.get("post.processors") or "")


def reselects(raw: Mapping[str, str]) -> bool:
    """A reselect post-processor is configured (``binlog_row_image=NOBLOB`` is then supported)."""
    return any((raw.get(f"post.processors.{a}.type") or "").strip() == RESELECT_TYPE for a in aliases(raw))
