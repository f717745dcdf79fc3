"""Column conversion, one module per MySQL type family, and the registry that picks them.

Each family converts one decoded form: the binlog row decoder produces it directly, and the snapshot's
text is adapted to it at the edge, so streaming and snapshot share one conversion per family.
"""

from connector.records.conversion.family import (
    ColumnConverter,
    Convert,
    ConverterSettings,
    NullRule,
    identity,
    null_rule_of,
)
from connector.records.conversion.registry import SNAPSHOT_CONVERSIONS, column_converter
from connector.records.conversion.temporal import UnrepresentableValueError

__all__ = [
    "SNAPSHOT_CONVERSIONS",
    "ColumnConverter",
    "Convert",
    "ConverterSettings",
    "NullRule",
    "UnrepresentableValueError",
    "column_converter",
    "identity",
    "null_rule_of",
]
