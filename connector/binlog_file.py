"""Binlog files as an event source: the same ``RawEvent``s ``BinlogReader`` yields, read from files."""
