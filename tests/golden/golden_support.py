"""Helpers shared by test modules (moved out of test_golden_types.py)."""

from __future__ import annotations

from connector.engine import Engine
from sink.memory import MemorySink


def _without_trailing_fraction_zeros(text: str) -> str:
    """``...10.500Z`` -> ``...10.5Z``, ``...10.000Z`` -> ``...10Z``."""
    head, dot, fraction = text.removesuffix("Z").partition(".")
    fraction = fraction.rstrip("0")
    return f"{head}.{fraction}Z" if dot and fraction else f"{head}Z"


def snapshot_data_unless_engine_did(engine: Engine, memory: MemorySink) -> None:
    """Until the engine runs the data snapshot itself (it currently snapshots the schema only), run
    the real ``snapshot.Snapshotter`` with the engine's own snapshot listener, exactly as the engine
    will: same connection settings, same record builder, same delivery."""
    if any(r.op == "r" for r in memory.records):
        return
    from connector.sources.initial_snapshot import SnapshotEmitter
    from connector.sources.snapshot_connection import snapshot_connection_factory as connection_factory
    from snapshot.snapshotter import SnapshotSettings, Snapshotter

    assert engine.info is not None
    emitter = SnapshotEmitter(engine)
    Snapshotter(
        SnapshotSettings(),
        connection_factory(engine.config),
        engine.filter.table_captured,
        engine.info.flavor,
    ).run(emitter)
    engine.delivery.flush()
