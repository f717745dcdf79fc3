"""Schema-only capture at first start (Debezium's ``no_data`` path without locks).

Stand-in until ``snapshot.Snapshotter`` is wired in: reads the binlog position, then the structure of
every non-system table, feeding the same ``SnapshotListener`` calls in Debezium's order.
"""

from __future__ import annotations

from typing import Any

from connector.config import ConnectorConfig
from connector.filters import TableFilter
from connector.server import ServerInfo, ServerProbe, connect
from ddl.model import TableId


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class SchemaOnlySnapshot:
    def __init__(self, config: ConnectorConfig, info: ServerInfo, probe: ServerProbe,
                 table_filter: TableFilter) -> None:
        self.config, self.info, self.probe, self.filter = config, info, probe, table_filter

    def run(self, listener: Any) -> None:
        with connect(self.config) as conn, conn.cursor() as cur:
            listener.on_position(self.probe.current_position(self.info, cur))
            cur.execute("SHOW VARIABLES WHERE Variable_name IN ('character_set_server','collation_server')")
            variables = sorted((str(k), str(v)) for k, v in cur.fetchall())
            listener.on_schema_statement(
                "SET " + ", ".join(f"{k}={v}" for k, v in variables) + ";", "")
            cur.execute("SELECT schema_name, default_character_set_name, default_collation_name "
                        "FROM information_schema.schemata")
            databases = {str(r[0]): (str(r[1]), str(r[2])) for r in cur.fetchall()
                         if self.filter.database_captured(str(r[0]))}
            tables: dict[str, list[str]] = {}
            for db in sorted(databases):
                cur.execute(f"SHOW FULL TABLES IN {_q(db)} WHERE Table_Type = 'BASE TABLE'")
                tables[db] = sorted(str(r[0]) for r in cur.fetchall())
            for db in sorted(tables):
                for table in tables[db]:
                    listener.on_schema_statement(f"DROP TABLE IF EXISTS {_q(db)}.{_q(table)}", db)
            for db in sorted(databases):
                charset, collation = databases[db]
                listener.on_schema_statement(f"DROP DATABASE IF EXISTS {_q(db)}", db)
                listener.on_schema_statement(
                    f"CREATE DATABASE {_q(db)} CHARSET {charset} COLLATE {collation}", db)
                listener.on_schema_statement(f"USE {_q(db)}", db)
                for table in tables[db]:
                    cur.execute(f"SHOW CREATE TABLE {_q(db)}.{_q(table)}")
                    listener.on_schema_statement(str(cur.fetchone()[1]), db)
                    _ = TableId(db, table)
            listener.on_complete()
