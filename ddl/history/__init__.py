"""Schema history: its records, stores (file, memory, Kafka), serialized forms and replay on restart."""
