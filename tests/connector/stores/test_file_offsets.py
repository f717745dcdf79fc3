"""FileOffsetStore on real files: what it stores, that a save does not read the file again while it
is the one the store last wrote, and that a file changed from outside is read again (its other
entries kept, its damage reported) rather than overwritten from memory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import orjson
import pytest

from connector.stores.offsets import FileOffsetStore, OffsetStoreError, partition_key
from mysql_cdc_base.position import SourceOffset

_OPENED: list[str] = []


def _record_opens(event: str, args: tuple[object, ...]) -> None:
    # The interpreter's audit event for every open(): the path is its first argument.
    if event == "open" and args and isinstance(args[0], str):
        _OPENED.append(args[0])


sys.addaudithook(_record_opens)


def offset_at(pos: int) -> SourceOffset:
    return SourceOffset.from_map({"file": "mysql-bin.000003", "pos": pos, "ts_sec": 1_700_000_000})


def stored_entries(path: Path) -> dict[str, dict[str, object]]:
    entries: dict[str, dict[str, object]] = orjson.loads(path.read_bytes())
    return entries


def test_saved_offset_is_debeziums_map_under_the_partition_key(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    store = FileOffsetStore(path, "inventory-connector", "dbserver1")
    store.save(offset_at(1570))
    store.save(offset_at(2048))
    key = partition_key("inventory-connector", "dbserver1").decode()
    assert stored_entries(path) == {key: offset_at(2048).to_map()}
    assert FileOffsetStore(path, "inventory-connector", "dbserver1").load() == offset_at(2048)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["offsets.json"]  # no temporary file left


def test_saves_do_not_read_the_file_they_wrote_last(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    store = FileOffsetStore(path, "c", "s")
    assert store.load() is None
    store.save(offset_at(100))
    _OPENED.clear()
    for pos in range(200, 1200, 100):
        store.save(offset_at(pos))
    opened = [Path(name) for name in _OPENED]
    assert path not in opened, "a save read the offset file it had written itself"
    assert store.load() == offset_at(1100)


def test_an_entry_another_store_wrote_between_saves_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    ours, theirs = FileOffsetStore(path, "c", "ours"), FileOffsetStore(path, "c", "theirs")
    ours.save(offset_at(100))
    theirs.save(offset_at(5000))
    ours.save(offset_at(200))
    assert stored_entries(path) == {
        partition_key("c", "ours").decode(): offset_at(200).to_map(),
        partition_key("c", "theirs").decode(): offset_at(5000).to_map(),
    }


def test_a_file_restored_from_outside_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    store = FileOffsetStore(path, "c", "s")
    store.save(offset_at(100))
    backup = path.read_bytes()
    store.save(offset_at(200))
    # An operator restores an older copy, with another partition's entry added, by replacing the file.
    restored = orjson.loads(backup)
    restored["other"] = {"file": "mysql-bin.000001", "pos": 4}
    (tmp_path / "restore.json").write_bytes(orjson.dumps(restored))
    os.replace(tmp_path / "restore.json", path)
    store.save(offset_at(300))
    assert stored_entries(path)["other"] == {"file": "mysql-bin.000001", "pos": 4}
    assert store.load() == offset_at(300)


def test_a_file_damaged_from_outside_between_saves_is_reported_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    store = FileOffsetStore(path, "c", "s")
    store.save(offset_at(100))
    path.write_bytes(b'{"["c",{"server":"s"}]": {"file": "mysql-bin.0000')  # torn by a full disk
    with pytest.raises(OffsetStoreError, match="not valid JSON") as failed:
        store.save(offset_at(200))
    assert str(path) in str(failed.value)
    assert path.read_bytes().endswith(b"mysql-bin.0000"), "the damaged file must be left for the operator"


def test_a_deleted_file_is_written_anew_with_only_this_partition(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    ours, theirs = FileOffsetStore(path, "c", "ours"), FileOffsetStore(path, "c", "theirs")
    theirs.save(offset_at(5000))
    ours.save(offset_at(100))
    path.unlink()  # an operator starts over
    ours.save(offset_at(200))
    assert stored_entries(path) == {partition_key("c", "ours").decode(): offset_at(200).to_map()}
