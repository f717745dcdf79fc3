"""One registry of MySQL column types: each type's name, the synonyms MySQL accepts for it, its
family, Debezium's DDL-parser facts (JDBC type, default length and scale, forced charset) and, for
the integers, their width, binlog field type and Connect schema types.

Every module that must know a type from its name reads it here: the DDL parser and model, the
converters, the table-map DDL, the Spark schema evolution, ``verify`` and the fake source. Column
data types keep the spelling the DDL used (as Debezium's table model does); ``canonical_type`` gives
the registry's name for a spelling.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import NamedTuple


class JdbcType:
    """``java.sql.Types`` codes, as Debezium writes them into ``jdbcType``."""

    BIT = -7
    TINYINT = -6
    SMALLINT = 5
    INTEGER = 4
    BIGINT = -5
    FLOAT = 6
    REAL = 7
    DOUBLE = 8
    NUMERIC = 2
    DECIMAL = 3
    CHAR = 1
    VARCHAR = 12
    LONGVARCHAR = -1
    DATE = 91
    TIME = 92
    TIMESTAMP = 93
    BINARY = -2
    VARBINARY = -3
    LONGVARBINARY = -4
    NULL = 0
    OTHER = 1111
    BLOB = 2004
    CLOB = 2005
    BOOLEAN = 16
    NCHAR = -15
    NVARCHAR = -9
    TIMESTAMP_WITH_TIMEZONE = 2014


class Family(StrEnum):
    """What kind of values a MySQL type holds."""

    INTEGER = "integer"
    BOOLEAN = "boolean"
    BIT = "bit"
    FLOAT = "float"
    DECIMAL = "decimal"
    CHARACTER = "character"
    ENUM = "enum"
    SET = "set"
    BINARY = "binary"
    TEMPORAL = "temporal"
    JSON = "json"
    SPATIAL = "spatial"  # spatial types other than POINT (which has its own Debezium schema)
    POINT = "point"
    VECTOR = "vector"
    OTHER = "other"


class Dims(StrEnum):
    """What the DDL may give in parentheses after a type's name."""

    NONE = "none"
    ONE = "one"  # (M): display width, length, precision or fractional-second digits
    TWO = "two"  # (M[,D]): precision and scale
    VALUES = "values"  # ENUM/SET members


# Each family's dims (a type that takes none although its family does says so in MYSQL_TYPES).
_FAMILY_DIMS: Mapping[Family, Dims] = {
    Family.INTEGER: Dims.ONE,
    Family.BIT: Dims.ONE,
    Family.FLOAT: Dims.TWO,
    Family.DECIMAL: Dims.TWO,
    Family.CHARACTER: Dims.ONE,
    Family.ENUM: Dims.VALUES,
    Family.SET: Dims.VALUES,
    Family.BINARY: Dims.ONE,
    Family.TEMPORAL: Dims.ONE,
    Family.VECTOR: Dims.ONE,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class TypeAttributes:
    """What a column's declared type says beside its name, shared by the parser's type spec and the
    model's column: ``length`` (display width, character length, precision or fractional-second
    digits; None when the DDL gave none), ``scale``, UNSIGNED, ZEROFILL, the character set and the
    collation. Keyword-only, so that the classes holding it keep their own fields first."""

    length: int | None = None
    scale: int | None = None
    unsigned: bool = False
    zerofill: bool = False
    charset: str | None = None
    collation: str | None = None


class IntegerFacts(NamedTuple):
    """An integer type's storage: bytes, the binlog's field type code (``enum_field_types``) and the
    Connect schema type Debezium 3.6 gives it signed and unsigned (None: BIGINT UNSIGNED follows
    ``bigint.unsigned.handling.mode``)."""

    size: int
    binlog_type: int
    connect_signed: str
    connect_unsigned: str | None


@dataclass(frozen=True, slots=True)
class MysqlType:
    """One MySQL type. ``jdbc`` is the JDBC type Debezium's DDL parser registers for it (None for the
    spellings the parser resolves to another type); ``spelling_jdbc`` overrides it for a synonym;
    ``dims`` is what the DDL may give in parentheses after the name."""

    name: str
    family: Family
    jdbc: int | None
    synonyms: tuple[str, ...] = ()
    dims: Dims = Dims.NONE
    default_length: int | None = None
    default_scale: int | None = None
    forced_charset: str | None = None  # NCHAR/NVARCHAR are always utf8
    integer: IntegerFacts | None = None
    spelling_jdbc: Mapping[str, int] = field(default_factory=dict)

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.name, *self.synonyms)


def _t(
    name: str,
    family: Family,
    jdbc: int | None,
    *synonyms: str,
    default_length: int | None = None,
    default_scale: int | None = None,
    forced_charset: str | None = None,
    spelling_jdbc: Mapping[str, int] | None = None,
    dims: Dims | None = None,
) -> MysqlType:
    return MysqlType(
        name,
        family,
        jdbc,
        synonyms,
        dims or _FAMILY_DIMS.get(family, Dims.NONE),
        default_length=default_length,
        default_scale=default_scale,
        forced_charset=forced_charset,
        spelling_jdbc=spelling_jdbc or {},
    )


def _int(name: str, jdbc: int, facts: IntegerFacts, *synonyms: str) -> MysqlType:
    return MysqlType(name, Family.INTEGER, jdbc, synonyms, Dims.ONE, integer=facts)


_J = JdbcType
_F = Family
# Debezium <= 3.6.1 registers TINYINT as SMALLINT (Connect INT16).
MYSQL_TYPES: tuple[MysqlType, ...] = (
    _int("TINYINT", _J.SMALLINT, IntegerFacts(1, 1, "int16", "int16"), "INT1"),
    _int("SMALLINT", _J.SMALLINT, IntegerFacts(2, 2, "int16", "int32"), "INT2"),
    _int("MEDIUMINT", _J.INTEGER, IntegerFacts(3, 9, "int32", "int32"), "INT3", "MIDDLEINT"),
    _int("INT", _J.INTEGER, IntegerFacts(4, 3, "int32", "int64"), "INTEGER", "INT4"),
    _int("BIGINT", _J.BIGINT, IntegerFacts(8, 8, "int64", None), "INT8"),
    _t("SERIAL", _F.INTEGER, _J.BIGINT, dims=Dims.NONE),  # BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
    _t("BOOLEAN", _F.BOOLEAN, _J.BOOLEAN, "BOOL"),
    _t("BIT", _F.BIT, _J.BIT, default_length=1),
    _t("FLOAT", _F.FLOAT, _J.FLOAT, "FLOAT4"),
    _t("REAL", _F.FLOAT, _J.REAL),
    _t("DOUBLE", _F.FLOAT, _J.DOUBLE, "FLOAT8", "DOUBLE PRECISION"),
    _t(
        "DECIMAL",
        _F.DECIMAL,
        _J.DECIMAL,
        "DEC",
        "NUMERIC",
        "FIXED",
        default_length=10,
        default_scale=0,
        spelling_jdbc={"NUMERIC": _J.NUMERIC},
    ),
    _t("CHAR", _F.CHARACTER, _J.CHAR, "CHARACTER"),
    _t("VARCHAR", _F.CHARACTER, _J.VARCHAR),
    _t("NCHAR", _F.CHARACTER, _J.NCHAR, default_length=1, forced_charset="utf8"),
    _t("NVARCHAR", _F.CHARACTER, _J.NVARCHAR, forced_charset="utf8"),
    _t("NATIONAL CHAR", _F.CHARACTER, None),
    _t("NATIONAL VARCHAR", _F.CHARACTER, None),
    *(_t(name, _F.CHARACTER, _J.VARCHAR) for name in ("TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT")),
    _t("LONG", _F.CHARACTER, _J.VARCHAR, dims=Dims.NONE),
    _t("LONG VARCHAR", _F.CHARACTER, _J.VARCHAR, dims=Dims.NONE),
    _t("ENUM", _F.ENUM, _J.CHAR),
    _t("SET", _F.SET, _J.CHAR),
    _t("BINARY", _F.BINARY, _J.BINARY),
    _t("VARBINARY", _F.BINARY, _J.VARBINARY),
    _t("TINYBLOB", _F.BINARY, _J.BLOB, dims=Dims.NONE),
    _t("BLOB", _F.BINARY, _J.BLOB),
    *(_t(name, _F.BINARY, _J.BLOB, dims=Dims.NONE) for name in ("MEDIUMBLOB", "LONGBLOB", "LONG VARBINARY")),
    _t("DATE", _F.TEMPORAL, _J.DATE, dims=Dims.NONE),
    _t("TIME", _F.TEMPORAL, _J.TIME),
    _t("DATETIME", _F.TEMPORAL, _J.TIMESTAMP),
    _t("TIMESTAMP", _F.TEMPORAL, _J.TIMESTAMP_WITH_TIMEZONE),
    _t("YEAR", _F.TEMPORAL, _J.INTEGER),
    _t("JSON", _F.JSON, _J.OTHER),
    _t("GEOMETRY", _F.SPATIAL, _J.OTHER),
    _t("POINT", _F.POINT, _J.OTHER),
    *(
        _t(name, _F.SPATIAL, _J.OTHER)
        for name in ("LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON")
    ),
    _t("GEOMETRYCOLLECTION", _F.SPATIAL, _J.OTHER, "GEOMCOLLECTION"),
    _t("VECTOR", _F.VECTOR, _J.OTHER, default_length=2048),  # MySQL 9, MariaDB 11.7
    *(_t(name, _F.OTHER, _J.OTHER) for name in ("INET4", "INET6", "UUID", "XMLTYPE")),  # MariaDB's
)

TYPES_BY_NAME: Mapping[str, MysqlType] = MappingProxyType({t.name: t for t in MYSQL_TYPES})

# Synonyms MySQL accepts for one type, to the registry's name.
TYPE_SYNONYMS: Mapping[str, str] = MappingProxyType(
    {synonym: t.name for t in MYSQL_TYPES for synonym in t.synonyms}
)


def canonical_type(data_type: str) -> str:
    """The canonical name of a column data type (``integer`` → ``INT``, ``dec`` → ``DECIMAL``)."""
    key = data_type.upper()
    return TYPE_SYNONYMS.get(key, key)


def family_of(data_type: str) -> Family | None:
    """The family of a type name in any spelling and case; None for a name the registry lacks."""
    found = TYPES_BY_NAME.get(canonical_type(data_type))
    return found.family if found is not None else None


def spellings_of(*families: Family) -> frozenset[str]:
    """Every spelling (upper case) of the types in ``families``."""
    return frozenset(s for t in MYSQL_TYPES if t.family in families for s in t.spellings)


INTEGER_TYPES: tuple[MysqlType, ...] = tuple(t for t in MYSQL_TYPES if t.integer is not None)


def is_single_precision(type_name: str, length: int | None, scale: int | None) -> bool:
    """Whether Debezium gives a floating-point column Connect's ``float`` (FLOAT32): the literal REAL
    (Debezium narrows its double), and FLOAT without a scale and with a precision of at most 24.
    ``type_name`` is the registry's name (``canonical_type``)."""
    return type_name == "REAL" or (
        type_name == "FLOAT" and scale is None and (length is None or length <= 24)
    )
