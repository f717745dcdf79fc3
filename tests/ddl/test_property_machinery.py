"""mysql_cdc_base.properties: the one list parser, the typed parsers and the per-kind validation every
component's declarations go through."""

from __future__ import annotations

import pytest

from mysql_cdc_base.errors import ConfigError
from mysql_cdc_base.properties import (
    MappingSource,
    Property,
    bool_of,
    by_name,
    check_value,
    choice_of,
    compile_regex_list,
    int_of,
    list_of,
    parse_bool,
    parse_int,
    split_list,
)


@pytest.mark.parametrize(
    ("text", "items"),
    [
        (None, []),
        ("", []),
        (" , ,", []),
        ("a", ["a"]),
        (" a , b ,,c ", ["a", "b", "c"]),
        (r"t{1\,3},x", ["t{1,3}", "x"]),
        (r"a\,", ["a,"]),
        ("a\\", ["a\\"]),  # a backslash not before a comma stays
        (r"a\\b,c", [r"a\\b", "c"]),
    ],
)
def test_split_list_separates_on_commas_and_keeps_escaped_ones(text, items):
    assert split_list(text) == items


def test_regex_list_matches_whole_names_case_insensitively_with_escaped_commas():
    patterns = compile_regex_list("table.include.list", r"shop\.a{1\,2}, other\..*")
    assert [p.pattern for p in patterns] == [r"shop\.a{1,2}", r"other\..*"]
    assert patterns[0].fullmatch("SHOP.AA")
    assert not patterns[0].fullmatch("shop.aaa")


def test_regex_list_error_names_the_key_the_pattern_and_takes_the_components_error_class():
    class OwnError(ConfigError):
        pass

    with pytest.raises(OwnError, match=r"^table.include.list: 'shop.\(orders' is not a valid regular"):
        compile_regex_list("table.include.list", "ok, shop.(orders", error=OwnError)


def test_typed_parsers_name_the_key_and_the_text_as_given():
    assert parse_int("k", " 42 ") == 42
    assert parse_bool("k", "TRUE") is True
    assert parse_bool("k", " false") is False
    with pytest.raises(ConfigError, match=r"^k: expected an integer, got 'x1'$"):
        parse_int("k", "x1")
    with pytest.raises(ConfigError, match=r"^k: expected true or false, got 'Yes'$"):
        parse_bool("k", "Yes")


PORT = Property("p.port", "3306", kind="int", minimum=1)
FLAG = Property("p.flag", "true", kind="bool")
MODE = Property("p.mode", "file", kind="choice", choices=("file", "kafka"), aliases={"a.b.Kafka": "kafka"})
OPS = Property("p.ops", "t", kind="choice-list", choices=("c", "u", "d", "t"))
TABLES = Property("p.tables", kind="regex-list")
HOST = Property("p.host", required=True, doc="The host.")


@pytest.mark.parametrize(
    ("spec", "text", "message"),
    [
        (PORT, "abc", "p.port: expected an integer, got 'abc'"),
        (PORT, "0", "p.port: must be at least 1, got 0"),
        (FLAG, "yes", "p.flag: expected true or false, got 'yes'"),
        (MODE, "disk", "p.mode: expected one of file, kafka, got 'disk'"),
        (OPS, "c,x", "p.ops: unknown value 'x'; expected a comma-separated list of c, u, d, t"),
        (TABLES, "a,(b", "p.tables: '(b' is not a valid regular expression"),
        (HOST, " ", "p.host: is required (The host.)"),
    ],
)
def test_each_kind_refuses_a_bad_value_naming_the_key(spec, text, message):
    with pytest.raises(ConfigError) as caught:
        check_value(spec, text)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("spec", "text"),
    [(PORT, " 1 "), (FLAG, "False"), (MODE, "a.b.Kafka"), (MODE, "KAFKA"), (OPS, "c, u"), (TABLES, None)],
)
def test_each_kind_accepts_a_good_value(spec, text):
    check_value(spec, text)


def test_typed_reads_fall_back_to_the_declared_default():
    empty = MappingSource({"p.ops": "  "})
    assert int_of(empty, PORT) == 3306
    assert bool_of(empty, FLAG) is True
    assert choice_of(empty, MODE) == "file"
    assert list_of(empty, OPS) == ["t"]
    given = MappingSource({"p.port": "3307", "p.flag": "false", "p.mode": "a.b.Kafka", "p.ops": "c,d"})
    assert int_of(given, PORT) == 3307
    assert bool_of(given, FLAG) is False
    assert choice_of(given, MODE) == "kafka"
    assert list_of(given, OPS) == ["c", "d"]


def test_a_property_declared_twice_is_refused():
    assert set(by_name((PORT, FLAG), (MODE,))) == {"p.port", "p.flag", "p.mode"}
    with pytest.raises(ValueError, match="p.port is declared twice"):
        by_name((PORT,), (Property("p.port"),))
