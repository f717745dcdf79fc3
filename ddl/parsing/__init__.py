"""The DDL parser: sqlglot-tokenized MySQL/MariaDB DDL -> statement trees -> new schema models."""
