"""The Kafka client pieces every Kafka user shares: the Kafka sink, the Kafka offset store, the
Kafka schema history and the Kafka signal channel.

- ``ddl.kafka.client``: Kafka's Java client settings translated to kafka-python arguments, broker
  lists and reachability (imports no kafka-python: declared on every start);
- ``ddl.kafka.topics``: topic creation through the admin API;
- ``ddl.kafka.log``: one topic used as a log (read to its end, append durably, follow).

They sit in ``ddl`` (the lowest layer) because the schema history here uses them and the sink and
the connector's stores above use them too.
"""
