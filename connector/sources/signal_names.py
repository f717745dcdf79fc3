"""The names a signal may carry: its channels and its action types (Debezium's), besides the
internal window markers. A leaf module, so that the command line's parser names them without
loading the signal machinery (``mysql-cdc --help`` imports nothing heavy, issue 41)."""

from __future__ import annotations

SOURCE, KAFKA, FILE, IN_PROCESS = "source", "kafka", "file", "in-process"

EXECUTE_SNAPSHOT = "execute-snapshot"
STOP_SNAPSHOT = "stop-snapshot"
PAUSE_SNAPSHOT = "pause-snapshot"
RESUME_SNAPSHOT = "resume-snapshot"
LOG = "log"
SET_BINLOG_POSITION = "set-binlog-position"
