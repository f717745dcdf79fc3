"""Java ``.properties`` text -> key/value pairs, as ``java.util.Properties.load`` reads it.

The rules are those of the javaproperties package's ``loads`` (which the tests hold this reader
to): lines end at LF, CR LF or CR; a line whose first non-blank character is ``#`` or ``!`` is a
comment; a line ending in an odd number of backslashes continues on the next, whose leading blanks
are dropped; the key ends at the first unescaped ``=``, ``:`` or blank, and blanks with at most
one ``=`` or ``:`` separate it from the value; ``\\t \\n \\f \\r \\uXXXX`` are decoded, a backslash
before any other character is dropped, and UTF-16 surrogate pairs so written become one character.
A later occurrence of a key wins.

Read here rather than with javaproperties because importing that package loads its XML support
(``xml.sax``, ``urllib.request``, ``http.client``, ``email``): some 15 ms of every start of
``mysql-cdc run`` (issue 41: time to the first event).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_LINE_END = re.compile(r"\r\n?|\n")
_COMMENT = re.compile(r"[ \t\f]*[#!]")
_BLANK = re.compile(r"[ \t\f]*\r?\n?")
_CONTINUED = re.compile(r"(?<!\\)((?:\\\\)*)\\\r?\n?\Z")
_SEPARATOR = re.compile(r"(?<!\\)(?:\\\\)*([ \t\f]*[=:]|[ \t\f])[ \t\f]*")
_ESCAPE = re.compile(r"\\(u.{0,4}|.)")
_U_ESCAPE = re.compile(r"u[0-9A-Fa-f]{4}")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "f": "\f", "r": "\r"}
_BLANKS = " \t\f"


class InvalidUEscapeError(ValueError):
    """A ``\\u`` not followed by four hexadecimal digits; ``escape`` is the sequence as written."""

    def __init__(self, escape: str) -> None:
        super().__init__(f"Invalid \\u escape sequence: {escape}")
        self.escape = escape


def _lines(text: str) -> list[str]:
    """The lines of ``text``, each with its line end (LF, CR LF or CR only)."""
    lines, start = [], 0
    for end in _LINE_END.finditer(text):
        lines.append(text[start : end.end()])
        start = end.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def _logical_lines(text: str) -> Iterator[str]:
    """Each entry's text: comments and blank lines left out, continuations joined."""
    lines = iter(_lines(text))
    for line in lines:
        if _COMMENT.match(line) or _BLANK.fullmatch(line):
            continue
        entry = line.lstrip(_BLANKS).rstrip("\r\n")
        while _CONTINUED.search(entry):
            entry = entry[:-1] + next(lines, "").lstrip(_BLANKS).rstrip("\r\n")
        if entry:
            yield entry


def _decode_escape(match: re.Match[str]) -> str:
    escape = match.group(1)
    if escape[0] != "u":
        return _SIMPLE_ESCAPES.get(escape, escape)
    if not _U_ESCAPE.fullmatch(escape):
        raise InvalidUEscapeError("\\" + escape)
    return chr(int(escape[1:], 16))


def _join_surrogates(match: re.Match[str]) -> str:
    high, low = map(ord, match.group())
    return chr(((high - 0xD800) << 10) + (low - 0xDC00) + 0x10000)


def unescape(field: str) -> str:
    """A key or value with its escape sequences decoded."""
    return _SURROGATE_PAIR.sub(_join_surrogates, _ESCAPE.sub(_decode_escape, field))


def load_properties_text(text: str) -> dict[str, str]:
    """The properties of ``text``; raises ``InvalidUEscapeError`` for a bad ``\\u`` escape."""
    properties: dict[str, str] = {}
    for entry in _logical_lines(text):
        separator = _SEPARATOR.search(entry)
        if separator is None:
            properties[unescape(entry)] = ""
        else:
            properties[unescape(entry[: separator.start(1)])] = unescape(entry[separator.end() :])
    return properties


__all__ = ["InvalidUEscapeError", "load_properties_text", "unescape"]
