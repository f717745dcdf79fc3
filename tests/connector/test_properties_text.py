"""``connector.properties_text`` reads ``.properties`` text as the javaproperties package does (the
reader the connector used before issue 41), checked on the format's corners and on generated text."""

from __future__ import annotations

import javaproperties
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.properties_text import InvalidUEscapeError, load_properties_text

CORNERS = [
    "",
    "a=b",
    "a = b\nc: d\ne f\ng\n",
    "  # comment\n! other comment\n\n\t \nkey=value",
    "key = value with = and : inside\n",
    "a=1\na=2\n",  # the last wins
    "multi = one \\\n    two \\\n\tthree\n",
    "odd\\\\\\\nnext = x",  # three backslashes: an escaped one, then a continuation
    "even\\\\\nnext = x",  # two: an escaped backslash, no continuation
    "sp\\ ace\\=key\\:x = v\\tw\\nx\\ry\\fz\\\\",
    "uni = \\u00e9t\\u00E9 \\ud83d\\ude00 \\ud83d alone",
    "crlf = 1\r\ncr = 2\rlf = 3\n",
    "key\\\n  continued = v",
    "trailing.blank = v  \n",
    "empty =\ncolon:\nbare\n",
    "\\#not.comment = 1\n  \\!also = 2",
    "continued.comment = a\\\n# not a comment but a value\n",
    "database.password = p@ss\\=w:rd\n",
    "ends.with.backslash = x\\",
    "\\\n\\\n",  # only continuations: no entry
    "k=\x0bvt\u2028ls\u0085nel",  # only LF, CR LF and CR end lines
]


@pytest.mark.parametrize("text", CORNERS)
def test_corners_read_as_javaproperties_reads_them(text: str) -> None:
    assert load_properties_text(text) == javaproperties.loads(text)


@pytest.mark.parametrize("text", ["a = \\u12", "a = \\uZZZZ", "\\u-123 = x", "a = \\u 123"])
def test_a_bad_u_escape_is_refused_with_the_escape(text: str) -> None:
    with pytest.raises(javaproperties.InvalidUEscapeError) as theirs:
        javaproperties.loads(text)
    with pytest.raises(InvalidUEscapeError) as ours:
        load_properties_text(text)
    assert ours.value.escape == theirs.value.escape


# Text made of the format's significant characters, so that generated documents hit its rules.
PIECES = st.sampled_from(
    [
        "a",
        "b",
        "é",
        "=",
        ":",
        " ",
        "\t",
        "\f",
        "\\",
        "\\\\",
        "\n",
        "\r",
        "\r\n",
        "#",
        "!",
        "\\u00e9",
        "\\ud83d",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_generated_text_reads_as_javaproperties_reads_it(text: str) -> None:
    try:
        expected = javaproperties.loads(text)
    except javaproperties.InvalidUEscapeError as exc:
        with pytest.raises(InvalidUEscapeError) as raised:
            load_properties_text(text)
        assert raised.value.escape == exc.escape
        return
    assert load_properties_text(text) == expected
