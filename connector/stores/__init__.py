"""Where a connector keeps its state: offset stores (file, memory, Kafka) and the Kafka schema
history's configuration (the history itself lives in ``ddl.history.store`` / ``ddl.history.kafka``)."""
