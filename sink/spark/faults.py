"""Test-only fault injection for the crash tests (``tests/sink/test_spark_crash.py``): the process
SIGKILLs itself at a chosen point of its Delta work, a moment no timing of an outside kill hits
reliably. Off unless ``MYSQL_CDC_TEST_KILL_AT`` is set; never set it in production.

``MYSQL_CDC_TEST_KILL_AT=<point>:<path suffix>[#<n>]`` kills at the ``n``-th time (default: the
first) this process reaches ``<point>`` for a Delta table whose path ends with the suffix (an
empty suffix matches every table). The points (any name a caller passes is one):

* ``create``: in the middle of creating the table: Delta has made its log directories
  (``_delta_log/_staged_commits``), not yet its commit 0 (``DeltaWriter.create``);
* ``commit``: right after one of the sink's data commits to the table has landed (a changelog
  append, a current-state MERGE or append), before the batch's next commit and before anything
  else records it. The tables of a batch are written side by side, except while a ``commit``
  point is set: then one after another (``commits_in_turn``), so that the kill lands between two
  tables' commits and not while another table's commit is in flight (two side by side commits
  land nearly together);
* ``batch``: right after every commit of a batch has landed, before the sink records the batch
  (its offset for the engine, the commit counts of maintenance); the path is the warehouse's;
* ``merge``: right before a streaming (not snapshot) commit to a current-state table: a deferred
  MERGE, or its append (``DeltaWriter.apply_rows``);
* ``compact``: during maintenance, right after the table's OPTIMIZE has committed, before its
  checkpoint (where delta-rs compacts) and before the sink records that the table was compacted;
* ``checkpoint``: right after a checkpoint delta-rs wrote (after an OPTIMIZE, or every
  ``delta.checkpointInterval`` versions), before the expired log entries are removed.

Occurrences are counted per process: a restarted process counts from zero.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections import Counter
from collections.abc import Callable

from sink.base import SinkError

log = logging.getLogger(__name__)

KILL_AT_ENV = "MYSQL_CDC_TEST_KILL_AT"

_seen: Counter[str] = Counter()
_lock = threading.Lock()


def parse(spec: str) -> tuple[str, str, int]:
    """``(point, suffix, n)`` of a ``MYSQL_CDC_TEST_KILL_AT`` value."""
    point, colon, rest = spec.partition(":")
    suffix, hash_, count = rest.partition("#")
    if not colon or not point or (hash_ and not (count.isdigit() and int(count) > 0)):
        raise SinkError(
            f"{KILL_AT_ENV}={spec!r}: expected <point>:<path suffix>[#<n>] (n a positive count), "
            "for example commit:items_changelog#3"
        )
    return point, suffix, int(count) if hash_ else 1


def commits_in_turn() -> bool:
    """Write a batch's tables one after another: a ``commit`` point is set."""
    return os.environ.get(KILL_AT_ENV, "").startswith("commit:")


def kill_point(point: str, path: str, before: Callable[[], None] | None = None) -> None:
    """Die as a SIGKILL would when ``MYSQL_CDC_TEST_KILL_AT`` names this ``point`` and ``path``
    for the time it is reached now; ``before`` runs first (what the point does before dying)."""
    spec = os.environ.get(KILL_AT_ENV)
    if not spec:
        return
    wanted, suffix, nth = parse(spec)
    if point != wanted or not path.endswith(suffix):
        return
    with _lock:
        _seen[spec] += 1
        if _seen[spec] != nth:
            return
        if before is not None:
            before()
        log.warning("%s=%s: killing the process at %s of %s", KILL_AT_ENV, spec, point, path)
        os.kill(os.getpid(), signal.SIGKILL)
