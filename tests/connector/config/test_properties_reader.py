"""A ``.properties`` file without backslashes is read by ``connector.config_files`` itself, with
the rules of ``java.util.Properties.load`` as the javaproperties package implements them; a file with
an escape or a continued line is read by that package, which only then is imported (issue 41: the
package and the xml.sax / urllib.request it imports were a large part of the time to the first
event)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import javaproperties
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.config_files import load_properties_file, plain_properties

# Every character the line rules look at (separators, whitespace, comment marks, line ends), with
# ordinary ones among them.
_TEXT = st.text(alphabet=" \t\f=:#!\r\nab.é1", max_size=60)


@settings(max_examples=500, deadline=None)
@given(_TEXT)
def test_a_text_without_backslashes_reads_as_the_javaproperties_package_reads_it(text: str) -> None:
    assert plain_properties(text) == dict(javaproperties.loads(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=1\nb = 2\r\nc:3\rd 4\n", {"a": "1", "b": "2", "c": "3", "d": "4"}),
        ("  key\t =  value with = and : inside  \n", {"key": "value with = and : inside  "}),
        ("# a comment=1\n  ! another\n\n\t\f\nk=\n", {"k": ""}),
        ("lonely\n=no key\nx=1\nx=2", {"lonely": "", "": "no key", "x": "2"}),
        ("k \f:  = v\n", {"k": "= v"}),
    ],
)
def test_lines_split_into_key_and_value_as_java_does(text: str, expected: dict[str, str]) -> None:
    assert plain_properties(text) == expected
    assert dict(javaproperties.loads(text)) == expected  # the reference agrees


def test_escapes_and_continued_lines_are_read_by_the_package(tmp_path: Path) -> None:
    path = tmp_path / "c.properties"
    path.write_text("database.password=p\\u00e4ss\\tword\ntable.include.list=db.a,\\\n    db.b\n")
    assert load_properties_file(path) == {
        "database.password": "päss\tword",
        "table.include.list": "db.a,db.b",
    }


_PROBE = (
    "import sys\n"
    "from connector.config_files import load_properties_file\n"
    "props = load_properties_file(sys.argv[1])\n"
    "print('javaproperties' in sys.modules, props)\n"
)


@pytest.mark.parametrize(
    ("text", "loaded", "props"),
    [
        ("topic.prefix=x\n", "False", "{'topic.prefix': 'x'}"),
        ("topic.prefix=\\u0078\n", "True", "{'topic.prefix': 'x'}"),
    ],
)
def test_the_package_is_imported_only_for_a_backslash(
    tmp_path: Path, text: str, loaded: str, props: str
) -> None:
    path = tmp_path / "c.properties"
    path.write_text(text)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split(maxsplit=1) == [loaded, props + "\n"]
