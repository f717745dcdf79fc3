"""``GtidSet.add``'s quick path for the GTID of each streamed transaction (issue 41) gives the set
the general path (parsing the GTID as a set and merging) gives, for MariaDB and MySQL GTIDs in and
out of order, tagged, upper case and malformed."""

from __future__ import annotations

import random

import pytest

from mysql_cdc_base.errors import InvalidGtidSetError
from mysql_cdc_base.position import GtidSet, _merge

UUID = "3E11FA47-71CA-11E1-9E33-C80AA9429562"
OTHER = "b5a2c4e0-5f1e-11ef-8d2b-0242ac120002"


def general_add(gtids: GtidSet, gtid: str) -> GtidSet:
    """``add`` without the quick path: the GTID parsed as a set, merged."""
    other = GtidSet.parse(gtid)
    if other.mariadb_positions:
        return GtidSet(gtids.mysql, {**gtids.mariadb_positions, **other.mariadb_positions})
    mysql = dict(gtids.mysql)
    for uuid, intervals in other.mysql.items():
        mysql[uuid] = _merge([*mysql.get(uuid, ()), *intervals])
    return GtidSet(mysql, gtids.mariadb_positions)


def gtid_stream(rng: random.Random) -> list[str]:
    out = []
    next_n = {UUID: 1, OTHER: 5}
    for _ in range(300):
        roll = rng.random()
        uuid = rng.choice((UUID, OTHER))
        if roll < 0.5:
            out.append(f"{rng.choice((uuid, uuid.lower()))}:{next_n[uuid]}")
            next_n[uuid] += 1
        elif roll < 0.6:
            out.append(f"{uuid}:{rng.randint(1, 400)}")  # a gap or one already in
        elif roll < 0.7:
            out.append(f"{uuid}:tag_{rng.randint(1, 2)}:{rng.randint(1, 9)}")
        else:
            out.append(f"{rng.randint(0, 2)}-{rng.randint(1, 3)}-{rng.randint(1, 10**6)}")
    return out


@pytest.mark.parametrize("seed", range(5))
def test_add_equals_parsing_the_gtid_as_a_set(seed: int) -> None:
    rng = random.Random(seed)
    quick = general = GtidSet.parse(f"{UUID}:1-3")
    for gtid in gtid_stream(rng):
        quick, general = quick.add(gtid), general_add(general, gtid)
        assert quick == general, gtid
        assert str(quick) == str(general)


@pytest.mark.parametrize("bad", [f"{UUID}:x", f"{UUID[:-1]}:4", "1-2-x", "1-2"])
def test_a_malformed_gtid_is_refused_as_before(bad: str) -> None:
    with pytest.raises(InvalidGtidSetError):
        GtidSet.parse(f"{UUID}:1-3").add(bad)
