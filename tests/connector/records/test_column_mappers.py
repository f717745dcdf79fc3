"""Column mappers (column.truncate.to.N.chars, column.mask.with.N.chars, column.mask.hash...) on a real
server, in snapshot reads and streamed events; hashes checked against Java's own MessageDigest and
ObjectOutputStream, the calls Debezium's MaskStrings makes."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from connector.config import ConfigError, ConnectorConfig
from connector.engine import Engine
from connector.records.builder import EventBuilder
from connector.records.column_mappers import java_serialized_string, truncate_text
from connector.testing.local_server import MySQLServerHandle
from mysql_cdc_base.records import ChangeRecord, RecordKind
from sink.memory import MemorySink
from tests.connector.streaming_support import data
from tests.golden.golden_support import snapshot_data_unless_engine_did

# Debezium's HashValueConverter, run by the JVM: digest(salt bytes, then the value's bytes) as lower
# hex, where the bytes are ObjectOutputStream.writeObject(value) (v1) or value.getBytes() (v2); and
# String.substring for truncation (TruncatingValueConverter).
JAVA_ORACLE = """
import java.io.*;
import java.security.MessageDigest;
import java.util.Base64;
public class MaskOracle {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        int cut = Integer.parseInt(args[2]);
        String line;
        while ((line = in.readLine()) != null) {
            String text = new String(Base64.getDecoder().decode(line), "UTF-8");
            MessageDigest md = MessageDigest.getInstance(args[0]);
            md.update(args[1].getBytes("UTF-8"));
            ByteArrayOutputStream bos = new ByteArrayOutputStream();
            ObjectOutputStream out = new ObjectOutputStream(bos);
            out.writeObject(text);
            out.flush();
            String v1 = hex(md.digest(bos.toByteArray()));
            md.reset();
            md.update(args[1].getBytes("UTF-8"));
            String v2 = hex(md.digest(text.getBytes("UTF-8")));
            String cutText = text.length() > cut ? text.substring(0, cut) : text;
            System.out.println(v1 + " " + v2 + " " + Base64.getEncoder().encodeToString(cutText.getBytes("UTF-16BE")));
        }
    }
    static String hex(byte[] bytes) {
        StringBuilder s = new StringBuilder();
        for (byte b : bytes) s.append(String.format("%02x", b));
        return s.toString();
    }
}
"""

SAMPLES = ["abc", "", "a\x00b", "héllo wörld", "😀 emoji 𝄞 and € signs", "x" * 70_000, "é" * 40_000]


def java_oracle(
    tmp_path: Path, algorithm: str, salt: str, texts: list[str], cut: int
) -> list[tuple[str, str, bytes]]:
    source = tmp_path / "MaskOracle.java"
    source.write_text(JAVA_ORACLE)
    lines = "".join(base64.b64encode(t.encode()).decode() + "\n" for t in texts)
    out = subprocess.run(
        ["java", str(source), algorithm, salt, str(cut)],
        input=lines,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split("\n")
    result = []
    for line in out[: len(texts)]:
        v1, v2, cut_utf16 = line.split(" ")
        result.append((v1, v2, base64.b64decode(cut_utf16)))
    return result


@pytest.mark.parametrize("algorithm", ["SHA-256", "MD5", "SHA-512"])
def test_hashes_and_truncation_match_java(tmp_path: Path, algorithm: str) -> None:
    salt = "CzQMA0cB5K"
    expected = java_oracle(tmp_path, algorithm, salt, SAMPLES, cut=4)
    builder = EventBuilder(
        ConnectorConfig.from_mapping(
            {
                "database.hostname": "h",
                "database.user": "u",
                "database.server.id": "1",
                "topic.prefix": "p",
                f"column.mask.hash.{algorithm}.with.salt.{salt}": "db.t.v1",
                f"column.mask.hash.v2.{algorithm}.with.salt.{salt}": "db.t.v2",
            }
        )
    )
    from ddl.model import SchemaModel
    from ddl.parsing.parser import parser_for
    from mysql_cdc_base.table_id import TableId

    model = parser_for("mariadb").parse("CREATE TABLE t (v1 TEXT, v2 TEXT)", SchemaModel(), "db").model
    table = model.table(TableId("db", "t"))
    assert table is not None
    schema = builder.table_schema(table)
    for text, (v1, v2, cut_utf16) in zip(SAMPLES, expected, strict=True):
        assert schema.value_from_binlog([text, text]) == {"v1": v1, "v2": v2}, text[:40]
        assert schema.value_from_snapshot([text, text]) == {"v1": v1, "v2": v2}, text[:40]
        # Java's substring may split a surrogate pair; we drop the half (no JSON encoder takes it).
        java_cut = cut_utf16.decode("utf-16-be", "surrogatepass")
        if java_cut and "\ud800" <= java_cut[-1] <= "\udbff":
            java_cut = java_cut[:-1]
        assert truncate_text(text, 4) == java_cut
    assert java_serialized_string("abc") == b"\xac\xed\x00\x05t\x00\x03abc"


def make(server: MySQLServerHandle, db: str, data_dir: Path, **extra: str) -> tuple[Engine, MemorySink]:
    memory = MemorySink()
    props = server.connector_properties(
        **{"topic.prefix": "cm", "database.include.list": db, "data.dir": str(data_dir), **extra}
    )
    return Engine(ConnectorConfig.from_mapping(props), sinks=[memory]), memory


def json_of(raw: bytes | None) -> Any:
    assert raw is not None
    return orjson.loads(raw)


def field_schema(record: ChangeRecord, name: str) -> dict[str, Any]:
    value_schema = json_of(record.value_bytes())["schema"]
    after = next(f for f in value_schema["fields"] if f["field"] == "after")
    return next(f for f in after["fields"] if f["field"] == name)


def snapshot_and_stream(
    server: MySQLServerHandle, db: str, data_dir: Path, inserts: list[str], **extra: str
) -> tuple[list[ChangeRecord], list[ChangeRecord], MemorySink]:
    """Rows read by the snapshot, then the same rows inserted again and streamed."""
    server.execute(*inserts, database=db)
    engine, memory = make(server, db, data_dir, **extra)
    try:
        engine.catch_up()
        snapshot_data_unless_engine_did(engine, memory)
        snapshot = [r for r in data(memory.records) if r.op == "r"]
        tables = sorted({r.table_id.table for r in snapshot if r.table_id is not None})
        server.execute(*[f"DELETE FROM `{t}`" for t in tables], *inserts, database=db)
        engine.catch_up()
    finally:
        engine.close()
    return snapshot, [r for r in data(memory.records) if r.op == "c"], memory


def test_mask_hash_truncate_in_snapshot_and_stream(
    mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path
) -> None:
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(40), email VARCHAR(255), code CHAR(10), "
        "bio TEXT, short_note VARCHAR(3), photo BLOB, age INT, mood ENUM('happy','sad'))",
        database=db,
    )
    inserts = [
        "INSERT INTO people VALUES (1, 'Ann Lee', 'ann@example.com', 'A1', 'Likes 😀 and long walks', "
        "'ok', X'00010203040506', 41, 'happy')",
        "INSERT INTO people VALUES (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    ]
    salt = "s3cr3t"
    hashes = {
        t: v1
        for t, (v1, _, _) in zip(
            ["ann@example.com", "A1"],
            java_oracle(tmp_path, "SHA-256", salt, ["ann@example.com", "A1"], cut=1),
            strict=True,
        )
    }
    snapshot, streamed, _ = snapshot_and_stream(
        mysql_server,
        db,
        tmp_path / "d",
        inserts,
        **{
            "column.mask.with.5.chars": f"{db}.people.name,{db}.people.age",
            f"column.mask.hash.SHA-256.with.salt.{salt}": f"{db}\\.people\\.(email|code)",
            "column.truncate.to.4.chars": f"{db}.people.bio,{db}.people.short_note,{db}.people.photo,{db}.people.mood",
        },
    )
    assert len(snapshot) == len(streamed) == 2
    for r_snap, r_stream in zip(snapshot, streamed, strict=True):
        assert r_snap.after == r_stream.after  # same row, same mapped value in both paths
    first, second = streamed
    assert (
        first.after
        == {
            "id": 1,
            "name": "*****",  # mask: always N '*'
            "email": hashes["ann@example.com"],  # SHA-256 hex is 64 chars, the column allows 255
            "code": hashes["A1"][:10],  # hash cut to the column length (CHAR(10))
            "bio": "Like",  # TEXT: length unknown -> truncation possible
            "short_note": "ok",  # VARCHAR(3) <= 4: no truncation
            "photo": base64.b64encode(b"\x00\x01\x02\x03").decode(),  # bytes mode: raw bytes cut
            "age": 41,  # masks change character columns only
            "mood": "happy",  # Debezium's model gives ENUM the length 1: nothing to truncate
        }
    )
    # Debezium's mask converter ignores its input, so a NULL becomes the mask too; hashes keep null.
    assert second.after == {
        "id": 2,
        "name": "*****",
        "email": None,
        "code": None,
        "bio": None,
        "short_note": None,
        "photo": None,
        "age": None,
        "mood": None,
    }
    assert field_schema(first, "name")["parameters"] == {"masked": "true"}
    assert field_schema(first, "age") == {
        "type": "int32",
        "optional": True,
        "parameters": {"masked": "true"},
        "field": "age",
    }
    assert field_schema(first, "email")["parameters"] == {"masked": "true"}
    assert field_schema(first, "bio")["parameters"] == {"truncateLength": "4"}
    assert "parameters" not in field_schema(first, "short_note")
    assert field_schema(first, "photo") == {
        "type": "bytes",
        "optional": True,
        "parameters": {"truncateLength": "4"},
        "field": "photo",
    }
    assert field_schema(first, "mood")["parameters"] == {"allowed": "happy,sad"}


def test_key_columns_are_not_mapped(mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path) -> None:
    # Debezium builds key fields without mappers: the key keeps the real value and a plain schema.
    db = unique_db
    mysql_server.execute("CREATE TABLE accounts (login VARCHAR(20) PRIMARY KEY, pin VARCHAR(8))", database=db)
    engine, memory = make(
        mysql_server,
        db,
        tmp_path,
        **{
            "column.mask.with.3.chars": f"{db}.accounts.login",
            "column.truncate.to.2.chars": f"{db}.accounts.pin",
        },
    )
    engine.catch_up()
    mysql_server.execute(
        "INSERT INTO accounts VALUES ('alice', '123456')",
        "UPDATE accounts SET login = 'bob' WHERE login = 'alice'",
        "DELETE FROM accounts",
        database=db,
    )
    engine.catch_up()
    engine.close()
    records = [r for r in memory.records if r.table_id is not None and r.table_id.table == "accounts"]
    assert [(r.kind, r.op, r.key) for r in records] == [
        (RecordKind.DATA, "c", {"login": "alice"}),
        (RecordKind.DATA, "d", {"login": "alice"}),
        (RecordKind.TOMBSTONE, None, {"login": "alice"}),
        (RecordKind.DATA, "c", {"login": "bob"}),  # a key change is seen on the real values
        (RecordKind.DATA, "d", {"login": "bob"}),
        (RecordKind.TOMBSTONE, None, {"login": "bob"}),
    ]
    assert records[0].after == {"login": "***", "pin": "12"}
    assert {h.name: h.value for h in records[1].headers}["__debezium.newkey"] == {"login": "bob"}
    key_schema = json_of(records[0].key_bytes())["schema"]
    assert key_schema["fields"] == [{"type": "string", "optional": False, "field": "login"}]


def test_first_matching_mapper_wins(mysql_server: MySQLServerHandle, unique_db: str, tmp_path: Path) -> None:
    # ColumnMappers#mapperFor: truncate, mask, propagate.source.type, hash v1, hash v2; first match only.
    db = unique_db
    mysql_server.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(30), b VARCHAR(30), c VARCHAR(30), d VARCHAR(30))",
        database=db,
    )
    engine, memory = make(
        mysql_server,
        db,
        tmp_path,
        **{
            "column.mask.hash.MD5.with.salt.x": f"{db}.t.(a|b|c|d)",
            "column.mask.with.2.chars": f"{db}.t.(a|b)",
            "column.truncate.to.3.chars": f"{db}.t.a",
            "column.propagate.source.type": f"{db}.t.(b|c)",
        },
    )
    engine.catch_up()
    mysql_server.execute("INSERT INTO t VALUES (1, 'alpha', 'bravo', 'charlie', 'delta')", database=db)
    engine.catch_up()
    engine.close()
    (event,) = data(memory.records, "t")
    delta_md5 = java_oracle(tmp_path, "MD5", "x", ["delta"], cut=1)[0][0][:30]
    assert event.after == {"id": 1, "a": "alp", "b": "**", "c": "charlie", "d": delta_md5}
    assert field_schema(event, "a")["parameters"] == {"truncateLength": "3"}
    assert field_schema(event, "b")["parameters"] == {"masked": "true"}  # mask replaced propagate
    assert field_schema(event, "c")["parameters"] == {  # propagate came before the hash
        "__debezium.source.column.type": "VARCHAR",
        "__debezium.source.column.length": "30",
        "__debezium.source.column.name": "c",
    }
    assert field_schema(event, "d")["parameters"] == {"masked": "true"}


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("column.mask.hash.SHA-999.with.salt.x", "db.t.c", "unknown hash algorithm 'SHA-999'"),
        ("column.truncate.to.0.chars", "db.t.c", "must be positive"),
        ("column.mask.with.3.chars", "db.t.(", "not a valid regular expression"),
        ("column.mask.hash.SHA-256.with.pepper", "db.t.c", "not a column mapper property"),
    ],
)
def test_bad_mapper_properties_name_the_key(key: str, value: str, message: str) -> None:
    config = ConnectorConfig.from_mapping(
        {
            "database.hostname": "h",
            "database.user": "u",
            "database.server.id": "1",
            "topic.prefix": "p",
            key: value,
        }
    )
    with pytest.raises(ConfigError) as exc:
        EventBuilder(config)
    assert exc.value.key == key and message in str(exc.value)
