"""The base layer of mysql-cdc: what every other package may import and that imports none of them.

Errors (``errors``), the property machinery (``properties``), source positions and offsets
(``position``), the server flavours (``flavor``), the table identity (``table_id``), the record model
(``records``) and the Kafka Connect schemas with their value modes (``connect``, ``debezium_schemas``).
The layers read ``connector`` > ``snapshot`` | ``sink`` > ``ddl`` > ``mysql_cdc_base``
(``pyproject.toml``, ``[tool.importlinter]``).
"""
