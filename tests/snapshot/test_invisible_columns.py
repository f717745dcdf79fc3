"""INVISIBLE columns (MySQL 8.0.23+, MariaDB 10.3+) in the snapshot.

``SELECT *`` leaves invisible columns out, while the binlog's row images hold them and the table's
structure (SHOW CREATE TABLE) lists them: a snapshot reading ``SELECT *`` would hand the converter
rows one column short, matched to the wrong columns. The snapshot names the columns of such tables.
"""

from __future__ import annotations

from connector.testing.local_server import LocalMySQLServer
from mysql_cdc_base.table_id import TableId
from tests.snapshot.conftest import RecordingListener


def test_a_table_with_invisible_columns_is_read_with_every_column(
    make_snapshotter, mysql_server: LocalMySQLServer, unique_db: str
) -> None:
    db = unique_db
    mysql_server.execute(
        f"CREATE TABLE `{db}`.hidden (id INT PRIMARY KEY, secret INT INVISIBLE, name VARCHAR(8), "
        "note VARCHAR(8) INVISIBLE DEFAULT 'n')",
        f"INSERT INTO `{db}`.hidden (id, secret, name, note) VALUES (1, 10, 'a', 'x'), (2, 20, 'b', 'y')",
        f"CREATE TABLE `{db}`.plain (id INT PRIMARY KEY, name VARCHAR(8))",
        f"INSERT INTO `{db}`.plain VALUES (3, 'c')",
    )
    # The server itself: SELECT * leaves the invisible columns out.
    assert mysql_server.query(f"SELECT * FROM `{db}`.hidden ORDER BY id")[0] == (1, "a")
    listener = RecordingListener()
    make_snapshotter(captured=lambda t: t.database == db).run(listener)
    assert listener.rows(TableId(db, "hidden")) == [(1, 10, "a", "x"), (2, 20, "b", "y")]
    assert listener.rows(TableId(db, "plain")) == [(3, "c")]
