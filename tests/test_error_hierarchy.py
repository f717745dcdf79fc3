"""Every exception class the product defines derives from ``MysqlCdcError`` (issue 44, item 6).

A user catches everything mysql-cdc raises on purpose with one ``except MysqlCdcError``. This test
imports every module of the product packages, collects every exception class defined there (nested
classes too) and fails on any that is outside the hierarchy, unless the allow-list below names it with
the reason it never reaches a caller.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from types import ModuleType

import pytest

from mysql_cdc_base.errors import MysqlCdcError

PRODUCT_PACKAGES = ("connector", "ddl", "snapshot", "sink", "mysql_cdc_base")

# Private control-flow signals: raised and caught inside one function pair, never seen by a caller.
ALLOWED = {
    # compile_image_reader raises it for a column type it has no reader for; RowDecoder._compiled
    # catches it and falls back to the library's decoder.
    "connector.binlog.image_reader.Unsupported",
    # KafkaSinkBase._settle's inner ``get`` raises it when a future completed while waiting in
    # slices; ``_settle`` catches it at once and re-raises the future's own Kafka error.
    "sink.kafka.sink._Settled",
}


def product_modules() -> Iterator[ModuleType]:
    for name in PRODUCT_PACKAGES:
        package = importlib.import_module(name)
        yield package
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue  # running it is the CLI; its classes, if any, are found by importing the rest
            yield importlib.import_module(info.name)


def classes_in(owner: object, module_name: str) -> Iterator[type]:
    for value in vars(owner).values():
        if isinstance(value, type) and value.__module__ == module_name and value is not owner:
            yield value
            yield from classes_in(value, module_name)


def exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module in product_modules():
        for cls in classes_in(module, module.__name__):
            if issubclass(cls, BaseException):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


def test_every_product_exception_derives_from_mysql_cdc_error() -> None:
    found = exception_classes()
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, MysqlCdcError))
    assert [name for name in outside if name not in ALLOWED] == []
    # The allow-list holds only classes that exist and are still outside: no stale entries.
    assert sorted(ALLOWED) == [name for name in outside if name in ALLOWED]


def test_the_walk_finds_the_product_exceptions() -> None:
    # The walk must reach deep modules; otherwise the test above would pass on an empty list.
    found = exception_classes()
    for name in (
        "mysql_cdc_base.errors.ConfigError",
        "connector.binlog.image_reader.InvalidDateError",
        "snapshot.rows.chunks.ChunkKeyError",
        "sink.spark.kafka_records.BadRecordError",
        "connector.sources.incremental_state.ForeignKeyEncoding",
        "ddl.parsing.table_draft.SchemaConflict",
    ):
        assert name in found
    assert len(found) > 40


@pytest.mark.parametrize(
    ("name", "builtin"),
    [
        ("connector.sources.incremental_state.ForeignKeyEncoding", ValueError),
        ("ddl.parsing.table_draft.SchemaConflict", ValueError),
        ("connector.post_processors.reselect.ReselectError", RuntimeError),
    ],
)
def test_moved_exceptions_keep_the_builtin_callers_catch(name: str, builtin: type[Exception]) -> None:
    cls = exception_classes()[name]
    assert issubclass(cls, MysqlCdcError)
    assert issubclass(cls, builtin)
