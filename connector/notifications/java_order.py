"""Java's ``HashMap``/``HashSet`` iteration order for string keys, so notification maps and lists
print in the order Debezium's do (its ``additionalData`` is a ``HashMap`` copy, its initial snapshot
table list a ``HashSet`` of table ids, whose hash is that of their ``db.table`` text)."""

from __future__ import annotations

from collections.abc import Sequence


def java_string_hash(text: str) -> int:
    """``String.hashCode`` (over UTF-16 code units), as an unsigned 32-bit number."""
    h = 0
    for unit in _utf16_units(text):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def _bucket(key: str, capacity: int) -> int:
    h = java_string_hash(key)
    return (h ^ (h >> 16)) & (capacity - 1)


def _table_size_for(n: int) -> int:
    capacity = 1
    while capacity < n:
        capacity *= 2
    return capacity


def hashmap_order(keys: Sequence[str], capacity: int) -> list[str]:
    """``keys`` (in insertion order) as a ``HashMap`` of ``capacity`` buckets iterates them:
    by bucket, then insertion order (a resize keeps that order within a bucket)."""
    return sorted(keys, key=lambda k: _bucket(k, capacity))


def copied_map_capacity(copied: int, added: int) -> int:
    """The table size of ``new HashMap<>(m)`` with ``copied`` entries, after ``added`` more puts."""
    capacity = 16 if copied == 0 else _table_size_for(max(1, int(copied / 0.75 + 1.0)))
    while copied + added > int(capacity * 0.75):
        capacity *= 2
    return capacity


def hashset_copy_order(items: Sequence[str]) -> list[str]:
    """``new HashSet<>(collection)``: capacity max(size/.75 + 1, 16)."""
    return hashmap_order(items, _table_size_for(max(int(len(items) / 0.75) + 1, 16)))
