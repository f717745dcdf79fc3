"""pytest plugin: a throwaway MySQL-compatible server, the connector running against it, and the
database-free fake, as fixtures for the tests of projects that consume Debezium events.

Enabled by the ``pytest11`` entry point ``mysql_cdc`` (or ``-p connector.testing.pytest_plugin``), and inert
until a test asks for one of its fixtures: importing it starts nothing and imports nothing heavy.

Fixtures (all cleaned up by the end of the test or session):

``cdc_mysql`` (session)
    A ``LocalMySQLServer``: ``mariadbd``/``mysqld`` in a temp directory on a free loopback port,
    configured for CDC (ROW binlog, FULL images and metadata, GTIDs). ``.execute(sql, database=..)``,
    ``.query(sql)``, ``.connect(db)`` as an admin user; ``.connector_properties()``.
``cdc_database``
    A fresh, empty database on ``cdc_mysql`` for this test (dropped afterwards).
``cdc_properties``
    The Debezium properties ``cdc_connector`` starts with: the server's connection properties, a
    unique ``database.server.id``, ``topic.prefix`` (ini option ``mysql_cdc_topic_prefix``, default
    ``cdc``) and ``database.include.list`` = ``cdc_database``. Add or override keys with
    ``@pytest.mark.cdc_properties({"key": "value"})`` or by overriding this fixture.
``cdc_connector``
    A started ``connector.embedded.api.EmbeddedEngine`` on ``cdc_properties``; stopped after the test
    (replication connection closed on the server). Every change committed in the test is delivered.
``cdc_engine_factory``
    ``cdc_engine_factory({"dotted.key": value, ...}, sinks=..., callback=...)`` starts further
    engines (``cdc_properties`` plus the overrides; keyword arguments go to ``EmbeddedEngine``);
    all are stopped after the test.
``cdc_fake``
    ``cdc_fake(ddl, **kwargs)`` returns a ``connector.testing.fake.FakeConnector`` (topic prefix as above);
    closed after the test.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from connector.embedded.api import EmbeddedEngine
    from connector.testing.fake import FakeConnector
    from connector.testing.local_server import LocalMySQLServer

TOPIC_PREFIX_INI = "mysql_cdc_topic_prefix"
DEFAULT_TOPIC_PREFIX = "cdc"
# Each engine gets its own replica server id: a server drops an older dump thread when another
# replica registers with the same id.
_SERVER_IDS = itertools.count(6400 + os.getpid() % 1000 * 100)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        TOPIC_PREFIX_INI, "topic.prefix of the mysql-cdc test fixtures", default=DEFAULT_TOPIC_PREFIX
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "cdc_properties(properties): extra Debezium properties for the cdc_connector fixture"
    )


def _topic_prefix(config: pytest.Config) -> str:
    return str(config.getini(TOPIC_PREFIX_INI) or DEFAULT_TOPIC_PREFIX)


@pytest.fixture(scope="session")
def cdc_mysql() -> Iterator[LocalMySQLServer]:
    """A throwaway MySQL-compatible server for the whole session."""
    from connector.testing.local_server import local_server

    with local_server() as server:
        yield server


@pytest.fixture
def cdc_database(cdc_mysql: LocalMySQLServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """A database of this test's own on ``cdc_mysql``: created empty, dropped afterwards."""
    from connector.testing.local_server import scratch_database

    with scratch_database(cdc_mysql, request.node.name, "cdc_") as name:
        yield name


@pytest.fixture
def cdc_properties(
    cdc_mysql: LocalMySQLServer, cdc_database: str, request: pytest.FixtureRequest
) -> dict[str, str]:
    """Debezium properties for ``cdc_connector`` (see the module docstring)."""
    from connector.config import property_texts

    props = cdc_mysql.connector_properties(
        **{
            "database.server.id": str(next(_SERVER_IDS)),
            "topic.prefix": _topic_prefix(request.config),
            "database.include.list": cdc_database,
        }
    )
    for marker in reversed(list(request.node.iter_markers("cdc_properties"))):
        for extra in marker.args:
            props.update(property_texts(dict(extra)))
        props.update(property_texts(marker.kwargs))
    return props


@pytest.fixture
def cdc_engine_factory(cdc_properties: dict[str, str]) -> Iterator[Callable[..., EmbeddedEngine]]:
    """Start engines on ``cdc_properties`` plus overrides; stopped after the test."""
    from connector.config import property_texts
    from connector.embedded.api import EmbeddedEngine

    engines: list[EmbeddedEngine] = []

    def start(overrides: Mapping[str, Any] | None = None, /, **engine_options: Any) -> EmbeddedEngine:
        props = {
            **cdc_properties,
            "database.server.id": str(next(_SERVER_IDS)),
            **property_texts(overrides or {}),
        }
        engine = EmbeddedEngine(props, **engine_options)
        engines.append(engine)
        return engine.start()

    try:
        yield start
    finally:
        errors = []
        for engine in reversed(engines):
            try:
                engine.stop(raise_error=False)
            except Exception as exc:  # noqa: BLE001 - stop every engine, then report
                errors.append(exc)
        if errors:
            raise errors[0]


@pytest.fixture
def cdc_connector(
    cdc_engine_factory: Callable[..., EmbeddedEngine], cdc_properties: dict[str, str]
) -> EmbeddedEngine:
    """The connector running in-process against ``cdc_mysql``, capturing ``cdc_database``."""
    return cdc_engine_factory({"database.server.id": cdc_properties["database.server.id"]})


@pytest.fixture
def cdc_fake(request: pytest.FixtureRequest) -> Iterator[Callable[..., FakeConnector]]:
    """``cdc_fake(ddl, **kwargs)`` -> a ``FakeConnector``; closed after the test."""
    from connector.testing.fake import FakeConnector

    fakes: list[FakeConnector] = []
    prefix = _topic_prefix(request.config)

    def make(ddl: str | Sequence[str] = (), **kwargs: Any) -> FakeConnector:
        kwargs.setdefault("topic_prefix", prefix)
        fake = FakeConnector(ddl, **kwargs)
        fakes.append(fake)
        return fake

    try:
        yield make
    finally:
        for fake in fakes:
            fake.close()
