"""Stage 5, delivery: records batched to the sinks and the offset stored once they hold them
durably (``batches``), or committed with them in one Kafka transaction (``exactly_once``), with one
running instance per connector name (``instance_guard``)."""
