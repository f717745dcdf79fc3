"""The kafka sink: records into Kafka topics with kafka-python or librdkafka, its settings, partitioner and client plumbing shared with the Kafka offset store and schema history."""
