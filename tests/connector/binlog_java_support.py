"""Helpers for comparing our decoding of real MySQL 8/9 binlog files with mysql-binlog-connector-java's.

The Java side (``java/BinlogDump.java``) prints one JSON line per row image; the helpers here run it and
normalise both sides' values to one comparable form.
"""

from __future__ import annotations
