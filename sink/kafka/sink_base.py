"""What the kafka sink does the same with either client (kafka-python's ``KafkaSink`` and
librdkafka's ``ConfluentKafkaSink``): its own module, so that neither client module imports the other."""

from __future__ import annotations

from ddl.kafka.topics import TopicCreator
from sink.base import Sink, SinkError
from sink.kafka.delivery import create_topic
from sink.kafka.settings import KafkaSinkSettings


class KafkaSinkBase(Sink):
    """What the kafka sink does the same with either client: its settings, the topics it has
    prepared (created per topic.creation.default.*), and the sticky failure."""

    name = "kafka"

    def __init__(self, settings: KafkaSinkSettings) -> None:
        self.settings = settings
        self._ready_topics: set[str] = set()
        self._creator: TopicCreator | None = None
        self._failure: SinkError | None = None
        self.acknowledged = 0  # records the broker has acknowledged (for metrics and tests)

    def _prepare_topic(self, topic: str) -> None:
        try:
            create_topic(self.settings, self._creator, topic)
        except SinkError as exc:
            self._failure = exc
            raise
        self._ready_topics.add(topic)

    def _close_creator(self) -> None:
        if self._creator is not None:
            self._creator.close()
            self._creator = None

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            raise self._failure
