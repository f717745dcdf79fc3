"""Where a connector keeps its state: offset stores (file, memory, Kafka). The schema history, its
Kafka store and that store's wiring from the properties live in ``ddl.history``
(``ddl.history.kafka``)."""
