"""Single message transforms and predicates, configured with Kafka Connect's syntax.

    transforms=unwrap,route
    transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState
    transforms.unwrap.delete.tombstone.handling.mode=rewrite
    transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
    transforms.route.regex=dbserver1\\.inventory\\.(.*)
    transforms.route.replacement=inventory-$1
    transforms.route.predicate=notHeartbeat
    transforms.route.negate=false
    predicates=notHeartbeat
    predicates.notHeartbeat.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches
    predicates.notHeartbeat.pattern=dbserver1\\..*

The chain is applied, in the order of ``transforms``, to every record after the dispatcher built it
and before any sink sees it: by ``connector.delivery.batches.Delivery`` for the daemon and the embedded engine,
and by the fake connector's emitter. A transform runs on a record when it has no predicate, or when
its predicate's result differs from ``negate``. A dropped record's source offset still counts.

The classes are looked up by their Java class names in ``TRANSFORMS`` / ``PREDICATES``; an unknown
class stops start-up with a ``ConfigError`` naming its key. ``register_transform`` adds a Python one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from connector.transforms.base import (
    Options,
    Predicate,
    Transformation,
    TransformError,
    options_under,
)
from connector.transforms.plugins import PluginRegistry, build_plugin
from connector.transforms.settings import StepSettings
from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import split_list
from mysql_cdc_base.records import ChangeRecord

TransformFactory = Callable[[Options], Transformation]
PredicateFactory = Callable[[Options], Predicate]

_KAFKA = "org.apache.kafka.connect.transforms."

# The built-in classes, each imported when a configuration first names it (a run without transforms
# imports none: issue 41).
TRANSFORMS: PluginRegistry[Transformation] = PluginRegistry(
    {
        "io.debezium.transforms.ExtractNewRecordState": "connector.transforms.unwrap:ExtractNewRecordState",
        "io.debezium.connector.mysql.transforms.ReadToInsertEvent": "connector.transforms.mysql:ReadToInsertEvent",
        "io.debezium.transforms.ByLogicalTableRouter": "connector.transforms.routing:ByLogicalTableRouter",
        _KAFKA + "RegexRouter": "connector.transforms.kafka:RegexRouter",
        _KAFKA + "Filter": "connector.transforms.kafka:Filter",
        _KAFKA + "ReplaceField$Value": "connector.transforms.kafka:ReplaceField.value",
        _KAFKA + "ReplaceField$Key": "connector.transforms.kafka:ReplaceField.key",
        _KAFKA + "InsertField$Value": "connector.transforms.kafka:InsertField.value",
        _KAFKA + "InsertField$Key": "connector.transforms.kafka:InsertField.key",
        _KAFKA + "ValueToKey": "connector.transforms.kafka:ValueToKey",
        _KAFKA + "ExtractField$Value": "connector.transforms.kafka:ExtractField.value",
        _KAFKA + "ExtractField$Key": "connector.transforms.kafka:ExtractField.key",
    }
)

PREDICATES: PluginRegistry[Predicate] = PluginRegistry(
    {
        _KAFKA + "predicates.TopicNameMatches": "connector.transforms.predicates:TopicNameMatches",
        _KAFKA + "predicates.RecordIsTombstone": "connector.transforms.predicates:RecordIsTombstone",
        _KAFKA + "predicates.HasHeaderKey": "connector.transforms.predicates:HasHeaderKey",
    }
)


def register_transform(class_name: str, factory: TransformFactory) -> None:
    """Make ``transforms.<alias>.type=<class_name>`` build ``factory(options)``: any object with
    ``apply(record) -> ChangeRecord | None`` (return a new record with ``dataclasses.replace``)."""
    TRANSFORMS[class_name] = factory


@dataclass(frozen=True)
class Step:
    alias: str
    transform: Transformation
    predicate: Predicate | None = None
    negate: bool = False


@dataclass(frozen=True)
class TransformChain:
    steps: tuple[Step, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.steps)

    def apply(self, records: Sequence[ChangeRecord]) -> list[ChangeRecord]:
        """The records after every step, in order; a record a step drops is gone."""
        out: list[ChangeRecord] = []
        for record in records:
            current: ChangeRecord | None = record
            for step in self.steps:
                if step.predicate is not None and step.predicate.test(record) == step.negate:
                    continue
                try:
                    current = step.transform.apply(record)
                except TransformError:
                    raise
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    raise TransformError(
                        f"transform {step.alias!r} failed on a record of topic {record.topic}: {exc!r}"
                    ) from exc
                if current is None:
                    break
                record = current
            if current is not None:
                out.append(current)
        return out


def _aliases(props: Mapping[str, str], key: str) -> list[str]:
    aliases = split_list(props.get(key))
    duplicates = sorted({a for a in aliases if aliases.count(a) > 1})
    if duplicates:
        raise ConfigError(key, f"lists {', '.join(duplicates)} more than once")
    return aliases


def build_chain(props: Mapping[str, str]) -> TransformChain:
    """The transform chain of the connector properties (``transforms``, ``predicates``)."""
    declared = {
        alias: build_plugin(options_under(props, f"predicates.{alias}."), "predicate", alias, PREDICATES)
        for alias in _aliases(props, "predicates")
    }
    steps = []
    for alias in _aliases(props, "transforms"):
        options = options_under(props, f"transforms.{alias}.")
        transform = build_plugin(options, "transform", alias, TRANSFORMS)
        settings = StepSettings.from_options(options)
        predicate = None
        if settings.predicate is not None:
            predicate = declared.get(settings.predicate)
            if predicate is None:
                raise ConfigError(
                    options.key("predicate"),
                    f"names predicate {settings.predicate!r}, which is not listed in predicates",
                )
        steps.append(Step(alias, transform, predicate, settings.negate))
    return TransformChain(tuple(steps))


__all__ = [
    "PREDICATES",
    "TRANSFORMS",
    "Options",
    "Predicate",
    "TransformChain",
    "TransformError",
    "Transformation",
    "build_chain",
    "register_transform",
]
