"""Stage 2, sources: what the coordinator runs, in Debezium's order: the initial snapshot
(``initial_snapshot``), then streaming (``streaming``, or ``replay`` over archived files), with
signals, incremental snapshots and heartbeats beside streaming. Every source hands its rows,
schema changes and transaction boundaries to the one dispatcher (``connector.dispatch``)."""
