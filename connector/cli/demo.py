"""``mysql-cdc demo``: the whole pipeline on a laptop, with nothing but a MySQL-compatible server
binary installed. Starts a throwaway server, creates a sample database, streams changes to a JSON
lines file through the real engine, and prints what arrived."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import orjson
from rich.console import Console
from rich.table import Table as RichTable

from connector.config import ConnectorConfig
from connector.engine import Engine
from connector.testing.local_server import LocalMySQLServer

SAMPLE_SCHEMA = (
    "CREATE DATABASE inventory",
    "CREATE TABLE inventory.customers (id INT AUTO_INCREMENT PRIMARY KEY, first_name VARCHAR(255) NOT NULL, "
    "last_name VARCHAR(255) NOT NULL, email VARCHAR(255) NOT NULL UNIQUE, created_at DATETIME(3) "
    "DEFAULT CURRENT_TIMESTAMP(3))",
    "CREATE TABLE inventory.orders (order_number INT NOT NULL, line INT NOT NULL, customer_id INT NOT NULL, "
    "quantity INT NOT NULL, price DECIMAL(10,2) NOT NULL, PRIMARY KEY (order_number, line))",
)


def run_demo(output: str, rows: int = 5) -> int:
    console = Console()
    out_path = Path(output).resolve()
    out_path.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="mysql-cdc-demo-") as data_dir:
        console.print("[bold]Starting a throwaway MySQL-compatible server…[/bold]")
        server = LocalMySQLServer()
        try:
            server.start()
            console.print(f"  {server.flavor} on 127.0.0.1:{server.port}")
            server.execute(*SAMPLE_SCHEMA)
            config = ConnectorConfig.from_mapping(
                {
                    **server.connector_properties(),
                    "topic.prefix": "demo",
                    "database.include.list": "inventory",
                    "sink.type": "jsonl",
                    "sink.jsonl.path": str(out_path),
                    "data.dir": data_dir,
                }
            )
            engine = Engine(config)
            engine.catch_up()
            console.print(f"[bold]Streaming changes to {out_path}…[/bold]")
            with server.connect("inventory") as conn, conn.cursor() as cur:
                for i in range(rows):
                    cur.execute(
                        "INSERT INTO customers (first_name, last_name, email) VALUES (%s, %s, %s)",
                        (f"Ada{i}", "Lovelace", f"ada{i}@example.com"),
                    )
                    cur.execute(
                        "INSERT INTO orders VALUES (%s, 1, %s, %s, %s)",
                        (1000 + i, cur.lastrowid, i + 1, f"{9.99 * (i + 1):.2f}"),
                    )
                cur.execute("UPDATE customers SET last_name = 'Byron' WHERE id = 1")
                cur.execute("UPDATE orders SET line = 2 WHERE order_number = 1000")  # key change
                cur.execute("DELETE FROM customers WHERE id = 2")
                cur.execute("ALTER TABLE customers ADD COLUMN phone VARCHAR(32) NULL")
                cur.execute(
                    "INSERT INTO customers (first_name, last_name, email, phone) "
                    "VALUES ('Grace', 'Hopper', 'grace@example.com', '+1-555-0100')"
                )
            engine.catch_up()
            engine.close()
        finally:
            server.remove()
    counts: Counter[tuple[str, str]] = Counter()
    lines = out_path.read_bytes().splitlines()
    for line in lines:
        record = orjson.loads(line)
        value = record["value"]
        kind = "tombstone" if value is None else (value["payload"].get("op") or "schema change")
        counts[(record["topic"], kind)] += 1
    table = RichTable(title=f"{len(lines)} records written to {out_path}")
    table.add_column("topic")
    table.add_column("kind")
    table.add_column("records", justify="right")
    names = {"c": "create", "u": "update", "d": "delete", "r": "read (snapshot)", "t": "truncate"}
    for (topic, kind), n in sorted(counts.items()):
        table.add_row(topic, names.get(kind, kind), str(n))
    console.print(table)
    console.print(f"Inspect one event: [bold]head -n 1 {out_path} | python3 -m json.tool[/bold]")
    return 0
