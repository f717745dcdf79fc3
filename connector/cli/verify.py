"""``mysql-cdc verify``: is a Spark current-state table equal to the live MySQL table?

For each table both sides are streamed once (MySQL with a server-side cursor, Spark from the
warehouse's last commit) and every row is reduced to its primary key and a digest of its values in a
canonical form, so representation differences that are not data differences (Debezium's
little-endian BIT bytes, BIGINT UNSIGNED wrapped into a signed long, FLOAT printed with 6 digits by
MySQL, JSON spacing, TIMESTAMP time zones ...) do not count. Rows are then grouped into primary-key
ranges of ``chunk`` keys; the report gives the row counts, every range whose checksum differs, and up
to ``max_details`` individual differences (missing rows, extra rows, and the columns that differ).

Columns Spark keeps for columns MySQL dropped are not compared. Run verify while the connector is
stopped or idle: a table that changes during the comparison shows the changes as differences.
The exit code is 0 only when every table is equal.
"""

from __future__ import annotations

import base64
import calendar
import datetime as dt
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TextIO

import orjson
import pymysql
import pymysql.cursors
from pyspark.sql import functions as F

from connector.server.connection import PrerequisiteError, connect
from ddl.mysql_types import Family, canonical_type, family_of
from mysql_cdc_base.connect import ValueModes
from mysql_cdc_base.table_id import TableId
from sink.spark import SparkSink, Warehouse, describe_commit, spark_session

Canon = Callable[[Any], Any]
EQUAL, DIFFERENT, FAILED = 0, 1, 2
_TWO_64 = 1 << 64


# ------------------------------------------------------------------------------------------------
# Canonical values: one JSON-able form per value, whichever side it comes from
# ------------------------------------------------------------------------------------------------
def _int(value: Any) -> Any:
    return int(value)


def _unsigned_64(value: Any) -> Any:
    # bigint.unsigned.handling.mode=long wraps values >= 2^63 into negative longs.
    return int(value) % _TWO_64


def _decimal(value: Any) -> Any:
    number = value if isinstance(value, Decimal) else Decimal(str(value))
    return "d:" + format(number.normalize(), "f")


def _float32(value: Any) -> Any:
    # MySQL prints FLOAT with 6 significant digits; Spark holds the float32 itself.
    return "f:" + format(float(value), ".6g")


def _float64(value: Any) -> Any:
    return "f:" + format(float(value), ".15g")


def _text(value: Any) -> Any:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes | bytearray) else str(value)


def _json_text(value: Any) -> Any:
    text = _text(value)
    try:
        return "j:" + orjson.dumps(orjson.loads(text), option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONDecodeError:
        return text


def _bytes(value: Any) -> Any:
    return "b:" + bytes(value).hex()


def _date(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.date) else None


def _datetime(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.datetime) else _date(value)


def _micros(value: Any) -> Any:
    if isinstance(value, dt.timedelta):
        return value // dt.timedelta(microseconds=1)
    return int(value)


def _utc_micros(value: Any) -> Any:
    """A MySQL TIMESTAMP read in a UTC session (naive) → epoch microseconds."""
    if not isinstance(value, dt.datetime):
        return None
    return calendar.timegm(value.timetuple()) * 1_000_000 + value.microsecond


def _bit_big_endian(value: Any) -> Any:
    return int.from_bytes(bytes(value), "big") if isinstance(value, bytes | bytearray) else int(value)


def _bit_little_endian(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    return int.from_bytes(bytes(value), "little") if isinstance(value, bytes | bytearray) else int(value)


def _mysql_geometry(value: Any) -> Any:
    raw = bytes(value)
    srid = int.from_bytes(raw[:4], "little")
    return ["g", raw[4:].hex(), srid]


def _spark_geometry(value: Any) -> Any:
    # Row(wkb, srid) or Row(x, y, wkb, srid): WKB and SRID identify the value.
    wkb, srid = value["wkb"], value["srid"]
    return ["g", bytes(wkb).hex() if wkb is not None else None, int(srid or 0)]


@dataclass(frozen=True)
class ColumnRule:
    """How one column is read and canonicalised on each side."""

    name: str
    mysql: Canon
    spark: Canon
    spark_expression: str | None = None  # a SQL expression to select instead of the column


@dataclass(frozen=True, slots=True)
class _ColumnFacts:
    """What picks a column's rule: its name, its registry type name (``canonical_type`` of
    information_schema's DATA_TYPE), UNSIGNED, the Spark column's type and binary.handling.mode."""

    name: str
    type_name: str
    unsigned: bool
    spark_type: str
    binary_mode: str


def _same(canon: Canon) -> Callable[[_ColumnFacts], ColumnRule]:
    return lambda facts: ColumnRule(facts.name, canon, canon)


def _integer_rule(facts: _ColumnFacts) -> ColumnRule:
    canon = _unsigned_64 if facts.type_name == "BIGINT" and facts.unsigned else _int
    return ColumnRule(facts.name, canon, canon)


def _decimal_rule(facts: _ColumnFacts) -> ColumnRule:
    canon = _float64 if facts.spark_type == "double" else _decimal
    return ColumnRule(facts.name, canon, canon)


def _float_rule(facts: _ColumnFacts) -> ColumnRule:
    canon = _float32 if facts.spark_type == "float" else _float64
    return ColumnRule(facts.name, canon, canon)


_BINARY_DECODERS: Mapping[str, Canon] = {
    "base64": base64.b64decode,
    "base64-url-safe": base64.urlsafe_b64decode,
    "hex": bytes.fromhex,
}


def _binary_rule(facts: _ColumnFacts) -> ColumnRule:
    if facts.spark_type == "string":
        decode = _BINARY_DECODERS.get(facts.binary_mode, base64.b64decode)
        return ColumnRule(facts.name, _bytes, lambda v: _bytes(decode(v)))
    return ColumnRule(facts.name, _bytes, _bytes)


def _timestamp_rule(facts: _ColumnFacts) -> ColumnRule:
    return ColumnRule(facts.name, _utc_micros, _int, f"unix_micros(`{facts.name.replace('`', '``')}`)")


RuleBuilder = Callable[[_ColumnFacts], ColumnRule]
_text_rule = _same(_text)
# Rules by the registry's family of the column's type; _TYPE_RULES decides within a family.
_FAMILY_RULES: Mapping[Family, RuleBuilder] = {
    Family.INTEGER: _integer_rule,
    Family.DECIMAL: _decimal_rule,
    Family.FLOAT: _same(_float64),
    Family.JSON: _same(_json_text),
    Family.CHARACTER: _text_rule,
    Family.ENUM: _text_rule,
    Family.SET: _text_rule,
    Family.BINARY: _binary_rule,
    Family.BIT: lambda facts: ColumnRule(facts.name, _bit_big_endian, _bit_little_endian),
    Family.SPATIAL: lambda facts: ColumnRule(facts.name, _mysql_geometry, _spark_geometry),
    Family.POINT: lambda facts: ColumnRule(facts.name, _mysql_geometry, _spark_geometry),
}
_TYPE_RULES: Mapping[str, RuleBuilder] = {
    "FLOAT": _float_rule,
    "YEAR": _integer_rule,
    "DATE": _same(_date),
    "DATETIME": _same(_datetime),
    "TIMESTAMP": _timestamp_rule,
    "TIME": _same(_micros),
}


def column_rule(name: str, data_type: str, column_type: str, spark_type: str, binary_mode: str) -> ColumnRule:
    """The comparison rule for a MySQL column (``information_schema`` DATA_TYPE / COLUMN_TYPE) and
    the Spark column holding it (``DataType.simpleString()``); text for a type the registry lacks."""
    type_name = canonical_type(data_type)
    facts = _ColumnFacts(name, type_name, "unsigned" in column_type.lower(), spark_type, binary_mode)
    build = _TYPE_RULES.get(type_name) or _FAMILY_RULES.get(family_of(type_name) or Family.OTHER, _text_rule)
    return build(facts)


def _apply(rules: Sequence[ColumnRule], side: str, row: Sequence[Any]) -> list[Any]:
    return [None if v is None else getattr(rule, side)(v) for rule, v in zip(rules, row, strict=True)]


def _digest(values: list[Any]) -> bytes:
    return hashlib.blake2b(orjson.dumps(values), digest_size=16).digest()


# ------------------------------------------------------------------------------------------------
# Comparison
# ------------------------------------------------------------------------------------------------
@dataclass
class TableReport:
    table: TableId
    mysql_rows: int = 0
    spark_rows: int = 0
    only_mysql: list[tuple[Any, ...]] = field(default_factory=list)
    only_spark: list[tuple[Any, ...]] = field(default_factory=list)
    changed: list[tuple[Any, ...]] = field(default_factory=list)
    ranges: list[tuple[Any, Any, int, int, bool]] = field(
        default_factory=list
    )  # first, last, n MySQL, n Spark, equal
    schema_problems: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def differences(self) -> int:
        return len(self.only_mysql) + len(self.only_spark) + len(self.changed) + len(self.schema_problems)

    @property
    def equal(self) -> bool:
        return self.error is None and self.differences == 0 and self.mysql_rows == self.spark_rows


def _sorted_keys(keys: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    items = list(keys)
    try:
        return sorted(items)
    except TypeError:  # mixed value kinds in one key column: any total order will do
        return sorted(items, key=lambda k: orjson.dumps(k))


def compare(
    table: TableId,
    mysql_rows: Iterator[tuple[tuple[Any, ...], bytes]],
    spark_rows: Iterator[tuple[tuple[Any, ...], bytes]],
    chunk: int,
) -> TableReport:
    """Compare two streams of (canonical key, row digest)."""
    report = TableReport(table)
    mysql: dict[tuple[Any, ...], bytes] = {}
    for key, digest in mysql_rows:
        mysql[key] = digest
    report.mysql_rows = len(mysql)
    spark: dict[tuple[Any, ...], bytes] = {}
    for key, digest in spark_rows:
        if key in spark:
            report.schema_problems.append(f"key {_show_key(key)} appears twice in Spark")
        spark[key] = digest
    report.spark_rows = len(spark)
    keys = _sorted_keys(mysql.keys() | spark.keys())
    for start in range(0, len(keys), chunk):
        part = keys[start : start + chunk]
        m = [mysql[k] for k in part if k in mysql]
        s = [spark[k] for k in part if k in spark]
        equal = len(m) == len(s) and _xor(m) == _xor(s) and all(mysql.get(k) == spark.get(k) for k in part)
        report.ranges.append((part[0], part[-1], len(m), len(s), equal))
        if equal:
            continue
        for key in part:
            if key not in spark:
                report.only_mysql.append(key)
            elif key not in mysql:
                report.only_spark.append(key)
            elif mysql[key] != spark[key]:
                report.changed.append(key)
    return report


def _xor(digests: Sequence[bytes]) -> int:
    total = 0
    for d in digests:
        total ^= int.from_bytes(d, "big")
    return total


def _show_key(key: tuple[Any, ...]) -> str:
    return ", ".join(orjson.dumps(v).decode() if not isinstance(v, str) else v for v in key)


# ------------------------------------------------------------------------------------------------
# The command
# ------------------------------------------------------------------------------------------------
def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _mysql_columns(conn: pymysql.connections.Connection, table: TableId) -> list[tuple[str, str, str]]:
    with conn.cursor() as cur:
        cur.execute(
            "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
            (table.database, table.table),
        )
        return [(str(r[0]), str(r[1]), str(r[2])) for r in cur.fetchall()]


def _mysql_stream(
    conn: pymysql.connections.Connection,
    table: TableId,
    names: Sequence[str],
    rules: Sequence[ColumnRule],
    key_index: Sequence[int],
) -> Iterator[tuple[tuple[Any, ...], list[Any]]]:
    columns = ", ".join(_quote(n) for n in names)
    with conn.cursor(pymysql.cursors.SSCursor) as cur:
        cur.execute(f"SELECT {columns} FROM {_quote(table.database)}.{_quote(table.table)}")
        for row in cur:
            values = _apply(rules, "mysql", row)
            yield tuple(values[i] for i in key_index), values


def _spark_stream(
    frame: Any, rules: Sequence[ColumnRule], key_index: Sequence[int]
) -> Iterator[tuple[tuple[Any, ...], list[Any]]]:
    selected = frame.select(
        *[
            F.expr(rule.spark_expression).alias(rule.name)
            if rule.spark_expression
            else F.col(_quote(rule.name))
            for rule in rules
        ]
    )
    for row in selected.toLocalIterator():
        values = _apply(rules, "spark", tuple(row))
        yield tuple(values[i] for i in key_index), values


def verify_table(
    spark: Any,
    conn: pymysql.connections.Connection,
    warehouse: Warehouse,
    table: TableId,
    binary_mode: str,
    chunk: int = 1000,
    max_details: int = 20,
) -> tuple[TableReport, str]:
    """Compare one table; returns the report and its text."""
    report = TableReport(table)
    found = warehouse.current_state(table)
    if found is None:
        report.error = (
            f"no current-state Delta table for {table} in {warehouse.settings.warehouse} (never captured, or a "
            "table without primary key, which is kept as a changelog only)"
        )
        return report, render(report, {}, {})
    frame, key, meta = found
    columns = _mysql_columns(conn, table)
    if not columns:
        report.error = f"table {table} does not exist in MySQL"
        return report, render(report, {}, {})
    spark_types = {f.name.lower(): f.dataType.simpleString() for f in frame.schema.fields}
    rules: list[ColumnRule] = []
    for name, data_type, column_type in columns:
        spark_type = spark_types.get(name.lower())
        if spark_type is None:
            report.schema_problems.append(f"column {name} ({column_type}) is missing in Spark")
            continue
        rules.append(column_rule(name, data_type, column_type, spark_type, binary_mode))
    names = [r.name for r in rules]
    lowered = [n.lower() for n in names]
    missing_key = [k for k in key if k.lower() not in lowered]
    if missing_key:
        report.error = f"key column(s) {', '.join(missing_key)} missing on one side"
        return report, render(report, {}, {})
    key_index = [lowered.index(k.lower()) for k in key]

    def digests(rows: Iterator[tuple[tuple[Any, ...], list[Any]]]) -> Iterator[tuple[tuple[Any, ...], bytes]]:
        for k, values in rows:
            yield k, _digest(values)

    result = compare(
        table,
        digests(_mysql_stream(conn, table, names, rules, key_index)),
        digests(_spark_stream(frame, rules, key_index)),
        chunk,
    )
    result.schema_problems[:0] = report.schema_problems
    # Details: the values of the first differing rows, read again from both sides.
    wanted = set(result.changed[:max_details])
    mysql_rows = (
        {k: v for k, v in _mysql_stream(conn, table, names, rules, key_index) if k in wanted}
        if wanted
        else {}
    )
    spark_rows = {k: v for k, v in _spark_stream(frame, rules, key_index) if k in wanted} if wanted else {}
    text = render(result, mysql_rows, spark_rows, names, max_details, commit_offset=describe_commit(meta))
    return result, text


def render(
    report: TableReport,
    mysql_rows: Mapping[tuple[Any, ...], list[Any]],
    spark_rows: Mapping[tuple[Any, ...], list[Any]],
    names: Sequence[str] = (),
    max_details: int = 20,
    commit_offset: str = "",
) -> str:
    lines = []
    if report.error is not None:
        lines.append(f"{report.table}: ERROR {report.error}")
        return "\n".join(lines) + "\n"
    where = f" (Spark at {commit_offset})" if commit_offset else ""
    lines.append(f"{report.table}: MySQL {report.mysql_rows} rows, Spark {report.spark_rows} rows{where}")
    for problem in report.schema_problems:
        lines.append(f"  schema: {problem}")
    bad = [r for r in report.ranges if not r[4]]
    lines.append(f"  {len(report.ranges)} key ranges compared, {len(bad)} differ")
    for first, last, n_mysql, n_spark, _ in bad[:max_details]:
        lines.append(
            f"  range [{_show_key(first)} .. {_show_key(last)}]: MySQL {n_mysql} rows, "
            f"Spark {n_spark} rows, checksums differ"
        )
    shown = 0
    for key in report.only_mysql:
        if shown >= max_details:
            break
        lines.append(f"  missing in Spark: key ({_show_key(key)})")
        shown += 1
    for key in report.only_spark:
        if shown >= max_details:
            break
        lines.append(f"  only in Spark: key ({_show_key(key)})")
        shown += 1
    for key in report.changed:
        if shown >= max_details:
            break
        m, s = mysql_rows.get(key), spark_rows.get(key)
        columns = [n for i, n in enumerate(names) if m is not None and s is not None and m[i] != s[i]]
        detail = "; ".join(
            f"{n}: MySQL {_show_value(m, names, n)} != Spark {_show_value(s, names, n)}" for n in columns
        )
        lines.append(f"  differs: key ({_show_key(key)}): {detail or 'values differ'}")
        shown += 1
    hidden = report.differences - len(report.schema_problems) - shown
    if hidden > 0:
        lines.append(f"  ... and {hidden} more differing rows")
    lines.append(f"{report.table}: {'EQUAL' if report.equal else 'DIFFERENT'}")
    return "\n".join(lines) + "\n"


def _show_value(values: Sequence[Any] | None, names: Sequence[str], name: str) -> str:
    if values is None:
        return "?"
    return orjson.dumps(values[list(names).index(name)]).decode()


def run_verify(
    config: Any, table_ids: Sequence[TableId], out: TextIO, *, chunk: int = 1000, max_details: int = 20
) -> int:
    """Verify each table (all committed keyed tables when ``table_ids`` is empty); print the report
    to ``out``. Returns 0 when every table is equal, 1 when some differ, 2 when one cannot be
    compared (missing table, MySQL unreachable)."""
    settings = SparkSink.from_config(config).settings
    binary_mode = ValueModes.from_config(config).binary_handling_mode
    spark = spark_session(settings.master, settings.conf, settings.warehouse, settings.log_level)
    warehouse = Warehouse(spark, settings)
    tables = list(table_ids) or warehouse.keyed_tables()
    if not tables:
        out.write(f"no tables to verify in {settings.warehouse}\n")
        return FAILED
    try:
        conn = connect(config, init_command="SET time_zone = '+00:00'")
    except PrerequisiteError as exc:
        out.write(f"verify: {exc}\n")
        return FAILED
    worst = EQUAL
    try:
        for table in tables:
            try:
                report, text = verify_table(spark, conn, warehouse, table, binary_mode, chunk, max_details)
            except pymysql.err.MySQLError as exc:
                report, text = TableReport(table, error=f"MySQL: {exc}"), ""
                text = render(report, {}, {})
            out.write(text)
            status = EQUAL if report.equal else (FAILED if report.error else DIFFERENT)
            worst = max(worst, status)
    finally:
        conn.close()
    out.flush()
    return worst
