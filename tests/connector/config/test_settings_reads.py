"""Issue 44 item 4: product modules read properties through typed settings objects. A read of a
property by key string (``config.get_bool("…")``, ``config["…"]``) is allowed only in the settings
modules (``*/settings.py``) and the property machinery itself."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("connector", "ddl", "snapshot", "sink", "mysql_cdc_base")
# The typed getters of mysql_cdc_base.properties.PropertyReader and the transforms' option readers.
TYPED_READS = frozenset(
    {"get_bool", "get_int", "get_choice", "get_list", "get_regex", "int_of", "path_or_default"}
)
MACHINERY = frozenset({"mysql_cdc_base/properties.py", "connector/config.py"})
# Not moved yet (issue 44 item 4, left for a follow-up): the per-instance option readers of the
# SMTs, predicates, the reselect post-processor and the custom converters (``transforms.X.*``,
# ``post.processors.X.*``, ``converters.X.*``), and ``sink.jsonl.path`` (the jsonl sink has no
# settings module). Exact counts: a module that reads fewer must be taken off this list.
PENDING: dict[str, int] = {}


CONFIG_RECEIVER = re.compile(r"(^|\.)(config|options)(\.raw)?$")


def _receiver_is_config(node: ast.expr) -> bool:
    return CONFIG_RECEIVER.search(ast.unparse(node)) is not None


def _literal_first_argument(call: ast.Call) -> bool:
    return bool(call.args) and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)


def key_string_reads(source: str) -> list[tuple[int, str]]:
    """(line, code) of every read of a property by a literal key in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and _literal_first_argument(node)
        ):
            method, receiver = node.func.attr, node.func.value
            if method in TYPED_READS or (method == "get" and _receiver_is_config(receiver)):
                found.append((node.lineno, ast.unparse(node)))
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
            and "." in node.slice.value
            and _receiver_is_config(node.value)
        ):
            found.append((node.lineno, ast.unparse(node)))
    return found


def _product_modules() -> list[Path]:
    return sorted(
        path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if path.name != "settings.py" and path.relative_to(ROOT).as_posix() not in MACHINERY
    )


def test_the_detector_finds_each_kind_of_key_string_read():
    source = (
        'a = config.get_bool("include.query")\n'
        'b = self.config.get("topic.delimiter")\n'
        'c = options.get_regex("topic.regex")\n'
        'd = config["offset.storage"]\n'
        'e = row.get("op")\n'
        'f = multiprocessing.get_context("spawn")\n'
        'g = table.configuration.get("delta.checkpointInterval")\n'
        'h = config.raw.get("progress.interval.ms")\n'
    )
    assert [line for line, _ in key_string_reads(source)] == [1, 2, 3, 4, 8]


def test_no_product_module_reads_a_property_by_key_string_outside_the_settings_modules():
    reads = {
        path.relative_to(ROOT).as_posix(): key_string_reads(path.read_text()) for path in _product_modules()
    }
    offenders = [
        f"{module}:{line}: {code}"
        for module, found in reads.items()
        if len(found) != PENDING.get(module, 0)
        for line, code in found
    ]
    assert offenders == [], "read these through the component's settings module:\n" + "\n".join(offenders)
    assert {module: len(found) for module, found in reads.items() if found} == PENDING
