"""The properties of the metrics endpoint (``metrics.port``, ``metrics.host``).

Apart from ``connector.metrics.server``, which serves them with prometheus-client: the
configuration declares these properties on every start, and the server (with its import of
prometheus-client) is loaded only when ``metrics.port`` turns the endpoint on.
"""

from __future__ import annotations

from mysql_cdc_base.properties import Property, prop

SERVER_PROPERTIES: tuple[Property, ...] = (
    prop(
        "metrics.port",
        "0",
        "Port of the HTTP endpoint with Debezium's metrics (/metrics) and /health; 0: off.",
        kind="int",
        minimum=0,
    ),
    prop("metrics.host", "127.0.0.1", "Address the metrics endpoint binds."),
)
