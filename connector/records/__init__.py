"""Stage 4, records: Debezium's change records built from rows (``builder``: schemas, envelope,
``source`` block), column values converted to Debezium's representations (``converters``, custom
converters, column mappers), transaction metadata records (``transactions``). The single message
transforms (``connector.transforms``) apply to the finished records."""
