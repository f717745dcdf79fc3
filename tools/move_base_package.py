#!/usr/bin/env python3
"""Codemod for issue 44 item 1: move the base layer into its own top-level package, ``mysql_cdc_base``.

Run from the repository root on a clean tree (it refuses a second run and a dirty tree):

    python tools/move_base_package.py            # do it
    python tools/move_base_package.py --dry-run  # print what it would do, change nothing

What it does, printing each step:

1. ``git mv`` the base modules (``MOVES``) into ``mysql_cdc_base/``; cuts ``TableId`` (and its private
   helper) out of ``ddl/model.py`` into ``mysql_cdc_base/table_id.py``, because the record model needs the
   table identity but not the table model (``ddl.model`` imports it back, so ``ddl.model.TableId`` still
   resolves; every ``from ddl.model import ... TableId`` is rewritten to the new home).
2. Rewrites every dotted module path (``ddl.errors`` -> ``mysql_cdc_base.errors``, word-boundary safe) and
   file path (``ddl/errors.py`` -> ``mysql_cdc_base/errors.py``) in every tracked text file. In Python files
   a dotted path in code is rewritten only inside import statements, strings and comments, or where the
   file imports the old module plainly (``import ddl.errors``): ``sink.records`` on a variable named
   ``sink`` is an attribute, not a module.
3. Updates ``pyproject.toml`` (wheel packages, isort first-party, import-linter root packages and
   contracts), ``.ci/run``, ``.ci/package`` and the ``Dockerfile``.
4. Sorts the imports and formats the files it changed with ``ruff`` when ruff is on PATH (or beside the
   running Python).

This file is a tool, not product code: it is not in the wheel (``[tool.hatch.build.targets.wheel]``).
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
from collections.abc import Callable
from pathlib import Path

BASE = "mysql_cdc_base"
THIS = "tools/move_base_package.py"

# Old dotted module -> module name inside the base package.
MOVES: dict[str, str] = {
    "ddl.errors": "errors",
    "ddl.properties": "properties",
    "ddl.position": "position",
    "ddl.flavor": "flavor",
    "sink.records": "records",
    "sink.connect": "connect",
    "sink.debezium_schemas": "debezium_schemas",
}
# A class cut out of a module that stays: (old module, class, new module in base, private helpers).
EXTRACT = ("ddl.model", "TableId", "table_id", ("_double_quoted",))

TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".txt", ".properties", ".json"}
TEXT_NAMES = {"Dockerfile", "run", "package", "setup"}

# The base package's own layers (import-linter), top to bottom.
BASE_LAYERS = ["records | debezium_schemas", "connect", "properties | position | flavor | table_id", "errors"]

INIT_DOC = '''"""The base layer of mysql-cdc: what every other package may import and that imports none of them.

Errors (``errors``), the property machinery (``properties``), source positions and offsets
(``position``), the server flavours (``flavor``), the table identity (``table_id``), the record model
(``records``) and the Kafka Connect schemas with their value modes (``connect``, ``debezium_schemas``).
The layers read ``connector`` > ``snapshot`` | ``sink`` > ``ddl`` > ``mysql_cdc_base``
(``pyproject.toml``, ``[tool.importlinter]``).
"""
'''

TABLE_ID_DOC = '''"""A table's identity, ``database.table``: the one piece of the table model the record model needs.

The table model (columns, tables, the schema) stays in ``ddl.model``, which imports this.
"""

from __future__ import annotations

from dataclasses import dataclass

'''


def log(message: str) -> None:
    print(message, flush=True)


def git(*args: str, capture: bool = True) -> str:
    done = subprocess.run(["git", *args], check=True, text=True, capture_output=capture)
    return done.stdout if capture else ""


def old_path(module: str) -> str:
    return module.replace(".", "/") + ".py"


def new_module(name: str) -> str:
    return f"{BASE}.{name}"


def all_moves() -> dict[str, str]:
    """Old dotted path -> new dotted path, the extracted class included."""
    moves = {old: new_module(name) for old, name in MOVES.items()}
    moves[f"{EXTRACT[0]}.{EXTRACT[1]}"] = f"{new_module(EXTRACT[2])}.{EXTRACT[1]}"
    return moves


# ---------------------------------------------------------------------------------------- checks


def preflight(allow_dirty: bool) -> list[str]:
    """The modules to move; refuses a second run, a missing module and (unless allowed) a dirty tree."""
    if Path(BASE).exists():
        sys.exit(f"refusing: {BASE}/ already exists (the move has run on this tree)")
    if not Path("pyproject.toml").is_file() or not Path(".git").exists():
        sys.exit("run from the repository root")
    missing = [m for m in MOVES if not Path(old_path(m)).is_file()]
    if missing:
        sys.exit(f"refusing: {', '.join(map(old_path, missing))} not found (moved already, or renamed?)")
    if not allow_dirty and git("status", "--porcelain", "--untracked-files=no").strip():
        sys.exit("refusing: the tree has uncommitted changes (commit them, or pass --allow-dirty)")
    return list(MOVES)


# ---------------------------------------------------------------------------------------- moves


def move_modules(dry: bool) -> None:
    log(f"== create {BASE}/ and git mv the base modules")
    if not dry:
        Path(BASE).mkdir()
        Path(BASE, "__init__.py").write_text(INIT_DOC)
        git("add", f"{BASE}/__init__.py")
    for old, name in MOVES.items():
        log(f"git mv {old_path(old)} {BASE}/{name}.py")
        if not dry:
            git("mv", old_path(old), f"{BASE}/{name}.py")


def _node_span(node: ast.stmt) -> tuple[int, int]:
    """1-based first line (decorators included) and last line of a top-level definition."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    assert node.end_lineno is not None
    return first, node.end_lineno


def extract_class(dry: bool) -> None:
    module, cls, target, helpers = EXTRACT
    path = Path(old_path(module))
    log(f"== cut {cls} (and {', '.join(helpers)}) out of {path} into {BASE}/{target}.py")
    lines = path.read_text().splitlines(keepends=True)
    tree = ast.parse("".join(lines))
    wanted = {cls, *helpers}
    nodes = [n for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef) and n.name in wanted]
    if {n.name for n in nodes} != wanted:
        sys.exit(f"refusing: {path} no longer defines {sorted(wanted - {n.name for n in nodes})}")
    spans = sorted(_node_span(n) for n in nodes)
    pieces = ["".join(lines[a - 1 : b]).rstrip() + "\n" for a, b in spans]
    for a, b in reversed(spans):
        del lines[a - 1 : b]
    last_import = max(n.end_lineno or 0 for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom))
    removed_before = sum(b - a + 1 for a, b in spans if b < last_import)
    lines.insert(last_import - removed_before, f"from {new_module(target)} import {cls}\n")
    if not dry:
        path.write_text(re.sub(r"\n{4,}", "\n\n\n", "".join(lines)))
        Path(BASE, f"{target}.py").write_text(TABLE_ID_DOC + "\n" + "\n\n".join(pieces))
        git("add", f"{BASE}/{target}.py")


# ---------------------------------------------------------------------------------------- rewrites


def dotted_pattern(old: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.])" + re.escape(old) + r"(?!\w)")


def path_pattern(old: str) -> re.Pattern[str]:
    return re.compile(r"(?:(?<=\.\./)|(?<![\w./-]))" + re.escape(old) + r"(?![\w/])")


def _text_spans(source: str) -> list[tuple[int, int]]:
    """Offsets of the strings and comments of a Python source."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            spans.append((starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1]))
    return spans


def _import_spans(source: str, tree: ast.Module) -> list[tuple[int, int]]:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return [
        (starts[n.lineno - 1], starts[(n.end_lineno or n.lineno)])
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
    ]


def _plain_imports(tree: ast.Module) -> set[str]:
    return {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.asname is None}


def rewrite_python(source: str, moves: dict[str, str], where: str, skipped: list[str]) -> str:
    """Dotted paths in imports, strings, comments, and in code where the old module is plainly imported."""
    tree = ast.parse(source)
    spans = _text_spans(source) + _import_spans(source, tree)
    plain = _plain_imports(tree)
    for old, new in sorted(moves.items(), key=lambda kv: -len(kv[0])):
        everywhere = any(p == old or p.startswith(old + ".") for p in plain)

        def replace(
            m: re.Match[str],
            old: str = old,
            new: str = new,
            everywhere: bool = everywhere,
            source: str = source,
            spans: list[tuple[int, int]] = spans,
        ) -> str:
            if everywhere or any(a <= m.start() < b for a, b in spans):
                return new
            line = source.count("\n", 0, m.start()) + 1
            skipped.append(f"{where}:{line}: {old} left alone (code, not a module path)")
            return m.group(0)

        source = dotted_pattern(old).sub(replace, source)
        spans = _text_spans(source) + _import_spans(source, ast.parse(source))
    return source


def split_extracted_imports(source: str) -> str:
    """``from ddl.model import A, TableId`` -> ``from ddl.model import A`` + ``from mysql_cdc_base.table_id import TableId``."""
    module, cls, target, _ = EXTRACT
    tree = ast.parse(source)
    nodes = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == module and any(a.name == cls for a in n.names)
    ]
    lines = source.splitlines(keepends=True)
    for node in sorted(nodes, key=lambda n: -n.lineno):
        first = lines[node.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())]
        moved = [a for a in node.names if a.name == cls]
        kept = [a for a in node.names if a.name != cls]

        def names(aliases: list[ast.alias]) -> str:
            return ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in aliases)

        new = [f"{indent}from {module} import {names(kept)}\n"] if kept else []
        new.append(f"{indent}from {new_module(target)} import {names(moved)}\n")
        lines[node.lineno - 1 : node.end_lineno] = new
    return "".join(lines)


def add_base_to_package_lists(source: str) -> str:
    """A one-line tuple or list of the product's packages (``("connector", "ddl", "snapshot", "sink")``,
    quoted in code or inside a string of code) gets the base package as its last item."""
    out = []
    for line in source.splitlines(keepends=True):
        for q in "\"'":
            if f"{q}ddl{q}" in line and f"{q}sink{q}" in line and BASE not in line:
                pattern = r"(" + q + r"(?:connector|ddl|snapshot|sink)" + q + r")(\s*[\])])"
                line = re.sub(pattern, r"\1, " + q + BASE + q + r"\2", line, count=1)
        out.append(line)
    return "".join(out)


def is_text_file(path: Path) -> bool:
    return path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES


def rewrite_tree(dry: bool) -> tuple[list[str], list[str]]:
    """Rewrites every tracked text file; returns the files changed and the matches left alone."""
    moves = all_moves()
    paths = {old_path(old): f"{BASE}/{name}.py" for old, name in MOVES.items()}
    changed: list[str] = []
    skipped: list[str] = []
    log("== rewrite module paths and file paths in tracked files")
    for name in git("ls-files").splitlines():
        path = Path(name)
        if name == THIS or not path.is_file() or not is_text_file(path):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        new = text
        for old, moved in paths.items():
            new = path_pattern(old).sub(moved, new)
        if path.suffix == ".py":
            new = add_base_to_package_lists(rewrite_python(new, moves, name, skipped))
            if name != old_path(EXTRACT[0]):
                new = split_extracted_imports(new)
        else:
            for old, moved in sorted(moves.items(), key=lambda kv: -len(kv[0])):
                new = dotted_pattern(old).sub(moved, new)
        if new != text:
            changed.append(name)
            log(f"rewrote {name}")
            if not dry:
                path.write_text(new)
    return changed, skipped


# ---------------------------------------------------------------------------------------- config


def _append_to_list(text: str, key_regex: str, item: str, where: str) -> str:
    """Appends ``"item"`` to the one-line TOML/Python list or tuple after ``key_regex``."""
    pattern = re.compile(r"(" + key_regex + r"[\[(])([^\])\n]*)([\])])", re.M)
    match = pattern.search(text)
    if match is None:
        log(f"!! {where}: {key_regex!r} not found: add {item!r} by hand")
        return text
    if f'"{item}"' in match.group(2):
        return text
    log(f"{where}: {match.group(1).strip()} ... + {item!r}")
    return text[: match.end(2)] + f', "{item}"' + text[match.end(2) :]


def _drop_moved_layers(block: str, container: str) -> str:
    """Removes the moved modules from a container's layers contract, and renames it after its layers."""
    moved = {name for old, name in MOVES.items() if old.startswith(container + ".")}
    match = re.search(r"^layers = \[(.*)\]$", block, re.M)
    assert match is not None
    layers = [s.strip().strip('"') for s in match.group(1).split('",')]
    kept = []
    for layer in layers:
        names = [n.strip() for n in layer.split("|") if n.strip() not in moved]
        if names:
            kept.append(" | ".join(names))
    block = block[: match.start(1)] + ", ".join(f'"{k}"' for k in kept) + block[match.end(1) :]
    return re.sub(r'^name = ".*"$', f'name = "{container}: {" > ".join(kept)}"', block, count=1, flags=re.M)


BASE_CONTRACTS = f'''
# The base layer imports none of the layers above it (every layer may import it).
[[tool.importlinter.contracts]]
name = "{BASE} imports none of connector, snapshot, sink, ddl"
type = "forbidden"
source_modules = ["{BASE}"]
forbidden_modules = ["connector", "snapshot", "sink", "ddl"]

# Inside the base: the record model over the Connect schemas, over the property machinery, positions,
# flavours and the table identity, over the errors.
[[tool.importlinter.contracts]]
name = "{BASE}: {" > ".join(BASE_LAYERS)}"
type = "layers"
containers = ["{BASE}"]
layers = [{", ".join(f'"{x}"' for x in BASE_LAYERS)}]
'''


def rewrite_contracts(text: str) -> str:
    head, *blocks = text.split("[[tool.importlinter.contracts]]")
    out = []
    for block in blocks:
        container = re.search(r'^containers = \["(\w+)"\]$', block, re.M)
        if container and container.group(1) in ("ddl", "sink"):
            log(
                f"pyproject.toml: contract inside {container.group(1)}: moved modules dropped from its layers"
            )
            block = _drop_moved_layers(block, container.group(1))
        elif re.search(r'^layers = \["connector", "snapshot \| sink", "ddl"\]$', block, re.M):
            log(f"pyproject.toml: layers contract: {BASE} below ddl")
            block = block.replace('"ddl"]', f'"ddl", "{BASE}"]')
            block = re.sub(
                r'^name = ".*"$',
                f'name = "Layers: connector > snapshot | sink > ddl > {BASE}"',
                block,
                count=1,
                flags=re.M,
            )
        out.append(block)
    if not any(f'"ddl", "{BASE}"]' in b for b in out):
        log(f"!! pyproject.toml: the top-level layers contract was not found: put {BASE} below ddl by hand")
    return (
        head
        + "".join("[[tool.importlinter.contracts]]" + b for b in out).rstrip("\n")
        + "\n"
        + BASE_CONTRACTS
    )


PROSE = {
    # pyproject.toml comments that name the old shape.
    "# The layers: connector uses snapshot, sink and ddl; snapshot and sink are independent of each\n"
    "# other; ddl is the base. Nothing imports upward (checked by `lint-imports` in .ci/run).": (
        "# The layers: connector uses snapshot, sink and ddl; snapshot and sink are independent of each\n"
        f"# other; ddl (parser, model, schema history) is over {BASE}, the base every layer may import\n"
        "# (errors, properties, positions, flavours, the record model, the Connect schemas). Nothing\n"
        "# imports upward (checked by `lint-imports` in .ci/run)."
    ),
    "# Inside ddl: the schema history replays DDL through the parser; the parser never reads the history,\n"
    "# and the model, positions and errors under both know neither.": (
        "# Inside ddl: the schema history replays DDL through the parser; the parser never reads the history,\n"
        "# and the model under both knows neither."
    ),
    "# Inside sink: the sinks over the sink contract, over the record model (records, Connect schemas).\n": (
        f"# Inside sink: the sinks over the sink contract (the record model is in {BASE}).\n"
    ),
}


def update_config(dry: bool) -> list[str]:
    log("== pyproject.toml, .ci/run, .ci/package, Dockerfile")
    changed = []
    edits: dict[str, Callable[[str], str]] = {
        "pyproject.toml": lambda t: rewrite_contracts(
            _append_to_list(
                _append_to_list(
                    _append_to_list(t, r"^packages = ", BASE, "pyproject.toml"),
                    r"^known-first-party = ",
                    BASE,
                    "pyproject.toml",
                ),
                r"^root_packages = ",
                BASE,
                "pyproject.toml",
            )
        ),
        ".ci/package": lambda t: _append_to_list(t, r"for pkg in ", BASE, ".ci/package"),
        "Dockerfile": lambda t: t.replace("COPY sink ./sink\n", f"COPY sink ./sink\nCOPY {BASE} ./{BASE}\n"),
    }
    for name in git("ls-files").splitlines():
        path = Path(name)
        if name == THIS or not path.is_file() or not is_text_file(path):
            continue
        text = path.read_text()
        new = re.sub(r"(mypy connector ddl snapshot sink)(?! " + BASE + ")", r"\1 " + BASE, text)
        if name in edits:
            new = edits[name](new)
        if name == "pyproject.toml":
            for old, prose in PROSE.items():
                if old not in new:
                    log(f"!! pyproject.toml: comment not found, check it by hand: {old.splitlines()[0]}")
                new = new.replace(old, prose)
        if new != text:
            log(f"updated {name}")
            changed.append(name)
            if not dry:
                path.write_text(new)
    return changed


# ---------------------------------------------------------------------------------------- main


def find_ruff() -> str | None:
    beside = Path(sys.executable).with_name("ruff")
    return str(beside) if beside.exists() else shutil.which("ruff")


def tidy(files: list[str]) -> None:
    ruff = find_ruff()
    py = [f for f in dict.fromkeys(files) if f.endswith(".py") and Path(f).is_file()]
    if ruff is None:
        log("!! ruff not found: run `ruff check --select I --fix . && ruff format .` by hand")
        return
    log(f"== ruff: sort imports and format {len(py)} files")
    subprocess.run([ruff, "check", "--select", "I", "--fix", "--quiet", *py], check=False)
    subprocess.run([ruff, "format", "--quiet", *py], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print what would change, change nothing")
    parser.add_argument("--allow-dirty", action="store_true", help="run on a tree with uncommitted changes")
    args = parser.parse_args()
    preflight(args.allow_dirty)
    move_modules(args.dry_run)
    extract_class(args.dry_run)
    changed, skipped = rewrite_tree(args.dry_run)
    changed += update_config(args.dry_run)
    moved_files = [f"{BASE}/{n}.py" for n in [*MOVES.values(), EXTRACT[2], "__init__"]]
    if not args.dry_run:
        tidy([*changed, *moved_files, old_path(EXTRACT[0])])
    for line in skipped:
        log(f"-- {line}")
    log(f"== done: {len(MOVES)} modules moved, {EXTRACT[1]} extracted, {len(set(changed))} files rewritten")
    log("next: ruff check . && mypy connector ddl snapshot sink mysql_cdc_base && lint-imports && the tests")


if __name__ == "__main__":
    main()
