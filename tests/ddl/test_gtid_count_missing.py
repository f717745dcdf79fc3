"""GtidSet.count_missing: the lag in transactions `mysql-cdc status` prints."""

from __future__ import annotations

import pytest

from mysql_cdc_base.position import GtidSet

A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
B = "4f22fb58-82db-22f2-af44-d91bb0530673"


@pytest.mark.parametrize(
    ("stored", "server", "missing"),
    [
        (f"{A}:1-5", f"{A}:1-5", 0),
        (f"{A}:1-5", f"{A}:1-8", 3),
        (f"{A}:1-5:7", f"{A}:1-10", 4),  # 6, 8, 9, 10
        (f"{A}:1-5", f"{A}:1-5,{B}:1-2", 2),  # a source the stored set has never seen
        ("", f"{A}:1-3", 3),
        (f"{A}:1-10", f"{A}:1-5", 0),  # ahead of the server (e.g. a restored server): no lag
        ("0-1-100", "0-1-107", 7),
        ("0-1-100,1-2-5", "0-1-100,1-2-9,2-3-4", 8),  # domain 1 is 4 behind, domain 2 unseen
        ("0-1-100", "0-1-90", 0),
        ("0-1-100", "0-2-103", 3),  # a new primary continues the domain's sequence
    ],
)
def test_count_missing(stored: str, server: str, missing: int) -> None:
    assert GtidSet.parse(stored).count_missing(GtidSet.parse(server)) == missing
