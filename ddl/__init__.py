"""The base layer: the schema model, binlog positions, the error hierarchy, the DDL parser and the schema history."""
