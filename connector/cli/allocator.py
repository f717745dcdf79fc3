"""Memory allocator settings for the long-running commands (``run``, ``snapshot``), on request.

Streaming builds and drops many short-lived objects per row (dicts, strings, the kilobytes of each
record's JSON) in batches of thousands. With ``MYSQL_CDC_ALLOCATOR=tuned`` these commands run the
interpreter with glibc's allocator for everything (``PYTHONMALLOC=malloc``) and thresholds that
keep a few tens of MB of freed memory for reuse, so that memory given back to the kernel after a
batch does not cost its page faults again on the next one: the process re-executes itself once
with that environment at start-up (same PID). Anything already set (``PYTHONMALLOC`` or any of the
``MALLOC_*_`` variables) is left as the operator set it.

It is off by default since issue 41. When it came in, page faults were a third of the streaming
time on a VM; since then the stream allocates far less per event, and on the project's 2-core VM
the interpreter's own allocator streamed with the same or less CPU per change (OLTP 46.9 against
48.4 µs, bulk 16.7 against 17.5 µs, three alternating pairs each), while the re-execution, a
second interpreter start, delayed the first event by about 13 ms.
"""

from __future__ import annotations

import gc
import os
import sys

# typing.TYPE_CHECKING without importing typing or collections: the launcher imports this module
# alone before it decides to re-execute (connector.cli).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

# ``tuned`` turns the settings on; ``default`` (or nothing) keeps the interpreter's own allocator.
CHOICE = "MYSQL_CDC_ALLOCATOR"
# The commands that run long enough for the allocator to matter (the launcher re-executes for them).
LONG_RUNNING_COMMANDS = frozenset({"run", "snapshot", "replay-binlog"})
TUNED: Mapping[str, str] = {
    "PYTHONMALLOC": "malloc",
    "MALLOC_MMAP_THRESHOLD_": str(64 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(256 << 20),
    "MALLOC_TOP_PAD_": str(64 << 20),
}


def tuned_environment(environ: Mapping[str, str]) -> dict[str, str] | None:
    """The environment to re-execute with, or None when there is nothing to do: not asked for
    (``MYSQL_CDC_ALLOCATOR=tuned``), already tuned (or set by the operator), or not glibc."""
    if environ.get(CHOICE, "").strip().lower() != "tuned" or "PYTHONMALLOC" in environ:
        return None
    if not is_glibc():
        return None
    return {**TUNED, **environ}  # the operator's own MALLOC_* settings win


def is_glibc() -> bool:
    """Whether the C library is glibc (``platform.libc_ver`` reads the interpreter's binary to know;
    glibc answers this ``confstr`` name, other C libraries do not)."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None
    except (ValueError, OSError):
        return False


def reexec_with_tuned_allocator(arguments: Sequence[str]) -> None:
    """Replace this process by ``python <arguments>`` with the tuned environment (same PID, so
    supervisors and signals are unaffected); returns only when no re-execution is needed."""
    choice = os.environ.get(CHOICE, "").strip().lower()
    if choice not in ("", "default", "tuned"):
        raise SystemExit(f"mysql-cdc: {CHOICE}={choice!r} is not an allocator: use tuned or default")
    env = tuned_environment(os.environ)
    if env is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, *arguments], env)


def pause_collector_for_start_up() -> None:
    """Turn the cyclic garbage collector off until ``freeze_start_up_objects``: the imports and the
    set-up create some fifty thousand objects that live as long as the process, and the young
    collections they trigger (about a hundred, 20-80 ms on a small machine) would only move them to
    the old generation, where the freeze takes them anyway."""
    gc.disable()


def freeze_start_up_objects() -> None:
    """Move every object alive now (imported modules, sqlglot's tables, Connect schemas, the
    configuration: tens of thousands that live as long as the process) out of the collector's
    sight, so that the full collections a stream of short-lived records triggers do not scan them
    again each time (``gc.freeze``), and turn the collector (back) on. Called by the long-running
    commands once they are set up.

    The full collection first is kept although it costs 30-50 ms of the start-up for a few hundred
    unreachable objects: it also records the number of long-lived objects, and without it CPython
    would run a full collection at every third-generation threshold of the stream instead of once
    that many new long-lived objects have accumulated (one benchmark run without it streamed 13%
    slower; the machine is too noisy to say more). ``run`` moves that collection after its first
    records (``freeze_before_first_records``)."""
    gc.collect()
    gc.freeze()
    gc.enable()


def freeze_before_first_records() -> None:
    """``freeze_start_up_objects`` without its full collection, for ``run``: the collection's 30-50
    ms would delay the first event (issue 41). ``settle_after_first_records`` runs it once the first
    records are out, with the same outcome."""
    gc.freeze()
    gc.enable()


def settle_after_first_records() -> None:
    """The full collection ``freeze_before_first_records`` left out: over everything frozen and what
    came since (so that CPython counts them as long-lived, see ``freeze_start_up_objects``), then
    frozen again."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
