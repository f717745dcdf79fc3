"""Memory allocator settings for the long-running commands (``run``, ``snapshot``,
``replay-binlog``), chosen with ``MYSQL_CDC_ALLOCATOR``.

Streaming builds and drops many objects per row (dicts, strings, the kilobytes of each record's
JSON, the packets of large rows events) in batches of thousands. With glibc's default thresholds,
the large blocks are served from fresh ``mmap``s and freed memory is trimmed back to the kernel,
so that the next batch pays a page fault for every page again. So by default (``thresholds``, or
unset) these commands raise glibc's mmap, trim and top-pad thresholds with ``mallopt`` once their
first records are out (no second interpreter, nothing before the first event). On the project's
2-core VM that streamed the bulk bench with 15.0 µs of CPU per change against 18.2-20.8 µs with
glibc's defaults (three alternating pairs); the OLTP bench, whose objects are small and stay in
Python's own allocator, was unchanged.

``tuned`` re-executes the process once at start-up (same PID) with glibc's allocator for every
object (``PYTHONMALLOC=malloc``) and the same thresholds, the only choice before issue 41; it costs
the first event a second interpreter start (about 13 ms) and streamed no faster. ``default`` leaves
the interpreter and glibc as they are. Anything the operator set (``PYTHONMALLOC`` or a
``MALLOC_*_`` variable) is kept as set.
"""

from __future__ import annotations

import gc
import os
import sys

from mysql_cdc_base.errors import ConfigError

# typing.TYPE_CHECKING without importing typing or collections: the launcher imports this module
# alone before it decides to re-execute (connector.cli).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

# ``thresholds`` (or nothing), ``tuned`` or ``default``: see the module's docstring.
CHOICE = "MYSQL_CDC_ALLOCATOR"
CHOICES = ("thresholds", "tuned", "default")
# The commands that run long enough for the allocator to matter (the launcher re-executes for them).
LONG_RUNNING_COMMANDS = frozenset({"run", "snapshot", "replay-binlog"})
TUNED: Mapping[str, str] = {
    "PYTHONMALLOC": "malloc",
    "MALLOC_MMAP_THRESHOLD_": str(64 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(256 << 20),
    "MALLOC_TOP_PAD_": str(64 << 20),
}


def allocator_choice(environ: Mapping[str, str]) -> str:
    """``MYSQL_CDC_ALLOCATOR``: one of ``CHOICES`` (``thresholds`` when unset or empty); any other
    value is refused, naming the variable (the launcher before anything else, an embedded caller at
    its set-up: neither runs on with a choice it did not make)."""
    choice = environ.get(CHOICE, "").strip().lower() or "thresholds"
    if choice not in CHOICES:
        raise ConfigError(CHOICE, f"{choice!r} is not an allocator: use {', '.join(CHOICES)}")
    return choice


def tuned_environment(environ: Mapping[str, str]) -> dict[str, str] | None:
    """The environment to re-execute with, or None when there is nothing to do: not asked for
    (``MYSQL_CDC_ALLOCATOR=tuned``), already tuned (or set by the operator), or not glibc."""
    if allocator_choice(environ) != "tuned" or "PYTHONMALLOC" in environ:
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
    supervisors and signals are unaffected); returns only when no re-execution is needed. An
    unknown choice ends the process, naming the variable."""
    try:
        env = tuned_environment(os.environ)
    except ConfigError as exc:
        raise SystemExit(f"mysql-cdc: {exc}") from None
    if env is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, *arguments], env)


# glibc's mallopt parameters (malloc.h) and the environment variables that set them at start-up.
_MALLOPT_PARAMETERS = {"MALLOC_TRIM_THRESHOLD_": -1, "MALLOC_TOP_PAD_": -2, "MALLOC_MMAP_THRESHOLD_": -3}


def glibc_thresholds_to_set(environ: Mapping[str, str]) -> dict[int, int]:
    """The ``mallopt`` parameters and values to set in this process: the ``TUNED`` thresholds but
    those the operator set, none when the choice is ``default`` or ``tuned`` (which set them in
    the environment), when ``PYTHONMALLOC`` is set, or without glibc."""
    if allocator_choice(environ) != "thresholds" or "PYTHONMALLOC" in environ:
        return {}
    if not is_glibc():
        return {}
    return {
        parameter: int(TUNED[variable])
        for variable, parameter in _MALLOPT_PARAMETERS.items()
        if variable not in environ
    }


def keep_freed_memory_for_reuse() -> None:
    """Set glibc's thresholds in this process (``glibc_thresholds_to_set``); the long-running
    commands call it once they are set up."""
    thresholds = glibc_thresholds_to_set(os.environ)
    if not thresholds:
        return
    # ctypes only here: 1-2 ms of import, after the first records.
    import ctypes  # noqa: PLC0415

    mallopt = ctypes.CDLL(None).mallopt
    for parameter, value in thresholds.items():
        if mallopt(parameter, value) != 1:  # (glibc answers 1, or 0 for a value it refuses)
            _log_refused(parameter, value)


def _log_refused(parameter: int, value: int) -> None:
    """A threshold glibc did not take: its defaults stay, which only costs speed (logged, not raised)."""
    import logging  # noqa: PLC0415 - logging is loaded by then; this module is imported before it

    name = next(k for k, v in _MALLOPT_PARAMETERS.items() if v == parameter)
    logging.getLogger(__name__).debug("glibc refused mallopt(%s, %d); its default stays", name, value)


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
    records (``freeze_before_first_records``). Then glibc's thresholds are set
    (``keep_freed_memory_for_reuse``). An unknown ``MYSQL_CDC_ALLOCATOR`` is refused first."""
    allocator_choice(os.environ)
    gc.collect()
    gc.freeze()
    gc.enable()
    keep_freed_memory_for_reuse()


def freeze_before_first_records() -> None:
    """``freeze_start_up_objects`` without its full collection, for ``run``: the collection's 30-50
    ms would delay the first event (issue 41). ``settle_after_first_records`` runs it once the first
    records are out, with the same outcome. An unknown ``MYSQL_CDC_ALLOCATOR`` is refused first."""
    allocator_choice(os.environ)
    gc.freeze()
    gc.enable()


def settle_after_first_records() -> None:
    """The full collection ``freeze_before_first_records`` left out: over everything frozen and what
    came since (so that CPython counts them as long-lived, see ``freeze_start_up_objects``), then
    frozen again; and glibc's thresholds set (``keep_freed_memory_for_reuse``)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    keep_freed_memory_for_reuse()
