"""Makes the mysql-cdc pytest plugin's fixtures available to these tests.

Installed projects get the plugin from the ``pytest11`` entry point ``mysql_cdc``. Until that entry
point is installed here, import its fixtures and hooks (``pytest_plugins`` is not allowed in a
non-root conftest)."""

from importlib.metadata import entry_points

if not any(ep.name == "mysql_cdc" for ep in entry_points(group="pytest11")):
    from connector.pytest_plugin import (  # noqa: F401
        cdc_connector,
        cdc_database,
        cdc_engine_factory,
        cdc_fake,
        cdc_mysql,
        cdc_properties,
        pytest_addoption,
        pytest_configure,
    )
