"""Moved to ``ddl.kafka.client`` (shared by the Kafka sink, stores, history and signal channel);
kept importable for the signal channel (``connector.sources``) until its imports follow."""

from ddl.kafka.client import (
    CONSUMER_SETTINGS,
    bootstrap_list,
    client_kwargs,
    describe_reachability,
    security_kwargs,
)

__all__ = ["CONSUMER_SETTINGS", "bootstrap_list", "client_kwargs", "describe_reachability", "security_kwargs"]
