"""The grammar's word tables: statements and objects that never change table structure, and the
first words at which a script without ';' starts its next statement."""

from __future__ import annotations

# --- statements -------------------------------------------------------------------------------------

# First words of statements that never change table structure.
IGNORED_FIRST_WORDS = frozenset(
    {
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "REPLACE",
        "CALL",
        "DO",
        "HANDLER",
        "LOAD",
        "TABLE",
        "VALUES",
        "WITH",
        "IMPORT",
        "START",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT",
        "RELEASE",
        "LOCK",
        "UNLOCK",
        "XA",
        "PURGE",
        "RESET",
        "CHANGE",
        "STOP",
        "GRANT",
        "REVOKE",
        "ANALYZE",
        "CHECK",
        "CHECKSUM",
        "OPTIMIZE",
        "REPAIR",
        "INSTALL",
        "UNINSTALL",
        "BINLOG",
        "CACHE",
        "FLUSH",
        "KILL",
        "SHUTDOWN",
        "RESTART",
        "CLONE",
        "SHOW",
        "DESCRIBE",
        "DESC",
        "EXPLAIN",
        "HELP",
        "PREPARE",
        "EXECUTE",
        "DEALLOCATE",
        "GET",
        "SIGNAL",
        "RESIGNAL",
        "DECLARE",
        "CLOSE",
        "OPEN",
        "FETCH",
        "LEAVE",
        "ITERATE",
        "RETURN",
        "IF",
        "CASE",
        "LOOP",
        "WHILE",
        "REPEAT",
        "END",
        "BACKUP",
        "SOURCE",
    }
)
# Objects whose definitions hold no stored-program body.
SIMPLE_OBJECTS = frozenset(
    {
        "VIEW",
        "USER",
        "ROLE",
        "SERVER",
        "TABLESPACE",
        "LOGFILE",
        "SPATIAL",
        "RESOURCE",
        "SEQUENCE",
        "UNDO",
        "SYNONYM",
        "INSTANCE",
    }
)
# Objects that are stored programs (their bodies may hold ';').
_PROGRAM_OBJECTS = frozenset({"PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "PACKAGE", "AGGREGATE"})
IGNORED_CREATE_OBJECTS = SIMPLE_OBJECTS - {"INSTANCE"} | _PROGRAM_OBJECTS
IGNORED_ALTER_OBJECTS = SIMPLE_OBJECTS - {"SPATIAL", "SYNONYM"} | _PROGRAM_OBJECTS - {"TRIGGER", "AGGREGATE"}
IGNORED_DROP_OBJECTS = IGNORED_CREATE_OBJECTS | frozenset({"PREPARE"})
DEFINER_PREFIX_WORDS = frozenset({"DEFINER", "ALGORITHM", "SQL"})
# Ignored statements that may hold stored-program bodies (never split inside them).
COMPOUND_FIRST_WORDS = frozenset({"BEGIN", "IF", "CASE", "LOOP", "WHILE", "REPEAT", "DECLARE"})
# First words of statements: where a script without ';' starts its next statement.
BOUNDARY_WORDS = frozenset(
    {
        "CREATE",
        "ALTER",
        "DROP",
        "RENAME",
        "TRUNCATE",
        "USE",
        "SET",
        "INSERT",
        "UPDATE",
        "DELETE",
        "REPLACE",
        "SELECT",
        "GRANT",
        "REVOKE",
        "FLUSH",
        "CALL",
        "LOCK",
        "UNLOCK",
        "COMMIT",
        "ROLLBACK",
        "ANALYZE",
        "OPTIMIZE",
        "REPAIR",
        "SHOW",
    }
)
