"""The two server kinds the connector reads, MySQL and MariaDB, and what differs between them, as data.

As sqlglot keeps SQL dialect differences as data on one dialect object per database, the status SQL,
the GTID variables and the binlog dump flags of each server kind live on one ``FlavorDialect``. The
flavour is chosen once, from ``SELECT VERSION()`` (``flavor_of``), and passed everywhere as a
``ServerFlavor``: a ``StrEnum``, so it is also the ``mysql``/``mariadb`` text the DDL parser, the
offsets and the logs use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from mysql_cdc_base.errors import ConfigError


def version_tuple(version_text: str) -> tuple[int, ...]:
    """``(major, minor, patch)`` of a server version text such as ``10.11.19-MariaDB-0+deb12u1``."""
    return tuple(int(x) for x in re.findall(r"\d+", version_text)[:3])


@dataclass(frozen=True, slots=True)
class FlavorDialect:
    """What one server kind says differently: status statements, GTID variables, dump flags."""

    # The global variable holding the GTIDs the server has executed (MariaDB: the last GTID written
    # to the binlog per replication domain).
    executed_gtids_variable: str
    # The binlog status statement, newest first: (first version that accepts it, statement).
    binlog_status_statements: tuple[tuple[tuple[int, ...], str], ...]
    # The 0-based column of the status row holding the executed GTID set (None: the row has none,
    # so the variable above is read instead).
    status_gtids_column: int | None
    # Every transaction has a GTID (MariaDB); MySQL's depend on gtid_mode.
    gtids_always_on: bool
    # The binlog dump of a GTID start uses the MariaDB protocol (@slave_connect_state).
    mariadb_gtid_dump: bool
    # COM_BINLOG_DUMP flags that ask for ANNOTATE_ROWS events (the statement text) when include.query
    # is set; 0 where the server has no such events.
    annotate_rows_dump_flags: int
    # Whether a transaction's rows follow a BEGIN query event (MySQL) or the GTID event alone opens it.
    begin_query_event: bool
    binlog_listing_sql: str = "SHOW BINARY LOGS"

    def executed_gtids_sql(self) -> str:
        return f"SELECT @@global.{self.executed_gtids_variable}"

    def binlog_status_sql(self, version: tuple[int, ...]) -> str:
        """The status statement this server version accepts (MySQL 8.4 removed SHOW MASTER STATUS)."""
        return next(sql for since, sql in self.binlog_status_statements if version >= since)


# MariaDB's COM_BINLOG_DUMP flag BINLOG_SEND_ANNOTATE_ROWS_EVENT.
_SEND_ANNOTATE_ROWS = 0x02

MYSQL_DIALECT = FlavorDialect(
    executed_gtids_variable="gtid_executed",
    binlog_status_statements=(((8, 4), "SHOW BINARY LOG STATUS"), ((), "SHOW MASTER STATUS")),
    status_gtids_column=4,
    gtids_always_on=False,
    mariadb_gtid_dump=False,
    annotate_rows_dump_flags=0,
    begin_query_event=True,
)

MARIADB_DIALECT = FlavorDialect(
    executed_gtids_variable="gtid_binlog_pos",
    binlog_status_statements=(((), "SHOW MASTER STATUS"),),
    status_gtids_column=None,
    gtids_always_on=True,
    mariadb_gtid_dump=True,
    annotate_rows_dump_flags=_SEND_ANNOTATE_ROWS,
    begin_query_event=False,
)


class ServerFlavor(StrEnum):
    """A server kind; its text is the ``mysql``/``mariadb`` spelling used in offsets and logs."""

    MYSQL = "mysql"
    MARIADB = "mariadb"

    @property
    def dialect(self) -> FlavorDialect:
        return _DIALECTS[self]


_DIALECTS: dict[ServerFlavor, FlavorDialect] = {
    ServerFlavor.MYSQL: MYSQL_DIALECT,
    ServerFlavor.MARIADB: MARIADB_DIALECT,
}

MYSQL = ServerFlavor.MYSQL
MARIADB = ServerFlavor.MARIADB


def flavor_of(version_text: str) -> ServerFlavor:
    """The server kind of a ``SELECT VERSION()`` text (MariaDB says so in it)."""
    return MARIADB if "mariadb" in version_text.lower() else MYSQL


def dialect_of(flavor: str) -> FlavorDialect:
    """The dialect of a flavour given as a ``ServerFlavor`` or its text (``mysql``/``mariadb``)."""
    try:
        return ServerFlavor(flavor.lower()).dialect
    except ValueError:
        raise ConfigError("flavor", f"expected mysql or mariadb, got {flavor!r}") from None
