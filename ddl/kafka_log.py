"""Moved to ``ddl.kafka.log``; kept importable for the signal channel (``connector.sources``)."""

from ddl.kafka.log import KafkaTopicLog, TopicEnsurer

__all__ = ["KafkaTopicLog", "TopicEnsurer"]
