"""Reading ``--config``: a Java ``.properties`` file, or Kafka Connect's REST JSON.

A connector configuration posted to a Kafka Connect cluster (``{"name": ..., "config": {...}}``, the
body of ``POST /connectors``) works unchanged: its ``config`` object gives the properties and its
``name`` the connector's ``name`` (unless the object sets one). Any other JSON, and YAML, is refused
with a message naming the formats that are read, rather than being parsed as properties lines.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from mysql_cdc_base.errors import ConfigError

EXPECTED_FORMATS = (
    "expected a Java .properties file (key=value lines) or Kafka Connect's REST JSON "
    '({"name": "...", "config": {"key": "value", ...}})'
)
_YAML_SUFFIXES = (".yaml", ".yml")
# A YAML mapping key that opens a nested block ("database:" alone on its line) or a document start.
_YAML_LINE = re.compile(r"^(---\s*$|[A-Za-z_][\w.-]*:\s*$|\s+-\s+\S)")
# A .properties file without a backslash has no escapes and no continued lines: its lines are read
# here with the rules of java.util.Properties.load (those of the javaproperties package, which a test
# holds this reader to). Only a file with a backslash loads that package: with the xml.sax and
# urllib.request it brings, it was about a twentieth of the time to the first event (issue 41).
_LINE_END = re.compile(r"\r\n?|\n")
_SKIPPED_LINE = re.compile(r"[ \t\f]*(?:[#!]|\Z)")  # a comment, or blank
_KEY_END = re.compile(r"([ \t\f]*[=:]|[ \t\f])[ \t\f]*")


def load_properties_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """The file's properties; any problem reading it is a ``ConfigError`` naming the file, and the
    line where the text is at fault."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ConfigError("--config", f"configuration file {p} does not exist") from None
    except OSError as exc:
        raise ConfigError("--config", f"cannot read configuration file {p}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            "--config", f"{p} line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"
        ) from None
    return _reader_for(p, text)(p, text)


def _reader_for(path: Path, text: str) -> Callable[[Path, str], dict[str, str]]:
    if text.lstrip().startswith(("{", "[")):
        return _connect_json
    if path.suffix.lower() in _YAML_SUFFIXES or any(_YAML_LINE.match(line) for line in text.splitlines()):
        return _yaml
    return _java_properties


def _java_properties(path: Path, text: str) -> dict[str, str]:
    if "\\" not in text:
        return plain_properties(text)
    # Escapes or continued lines: the javaproperties package, loaded only for them (see _LINE_END).
    import javaproperties  # noqa: PLC0415

    try:
        return dict(javaproperties.loads(text))
    except javaproperties.InvalidUEscapeError as exc:
        line = next((n for n, t in enumerate(text.splitlines(), 1) if exc.escape in t), 0)
        raise ConfigError("--config", f"{path} line {line}: invalid \\u escape {exc.escape!r}") from None
    except ValueError as exc:
        raise ConfigError("--config", f"{path}: {exc}") from None


def plain_properties(text: str) -> dict[str, str]:
    """The properties of a ``.properties`` text without backslashes (no escapes, no continued
    lines): a key runs to the first ``=``, ``:`` or whitespace, then whitespace and one ``=`` or
    ``:`` are skipped and the value is the rest of the line; later keys win."""
    props: dict[str, str] = {}
    for line in _LINE_END.split(text):
        if _SKIPPED_LINE.match(line):
            continue
        line = line.lstrip(" \t\f")
        end = _KEY_END.search(line)
        if end is None:
            props[line] = ""
        else:
            props[line[: end.start()]] = line[end.end() :]
    return props


def _connect_json(path: Path, text: str) -> dict[str, str]:
    try:
        document: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError("--config", f"{path} line {exc.lineno}: not valid JSON ({exc.msg})") from None
    config = document.get("config") if isinstance(document, dict) else None
    if not isinstance(config, dict):
        shape = 'an object without a "config" object' if isinstance(document, dict) else "not an object"
        raise ConfigError("--config", f"{path} is JSON but {shape}: {EXPECTED_FORMATS}")
    props = {str(k): _json_value(path, str(k), v) for k, v in config.items()}
    name = document.get("name")
    if isinstance(name, str) and name and "name" not in props:
        props["name"] = name
    return props


def _json_value(path: Path, key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise ConfigError(key, f"{path}: Kafka Connect configuration values are strings, got {value!r}")


def _yaml(path: Path, text: str) -> dict[str, str]:
    raise ConfigError("--config", f"{path} looks like YAML, which is not read: {EXPECTED_FORMATS}")


def did_you_mean(key: str, known: Iterable[str]) -> str:
    """`` (did you mean x?)`` for the closest known key, or '' when none is close."""
    # Imported here: only an unknown key needs it (issue 41: time to the first event).
    import difflib  # noqa: PLC0415

    matches = difflib.get_close_matches(key, list(known), n=1, cutoff=0.75)
    return f" (did you mean {matches[0]}?)" if matches else ""


def unknown_key_message(key: str, known: Mapping[str, Any]) -> str:
    return f"unknown configuration property {key} is ignored{did_you_mean(key, known) or ' (check its spelling)'}"
