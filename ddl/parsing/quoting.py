"""Debezium 3.6's rewriting of double-quoted string literals in DDL text.

Debezium 3.6.3's MySQL DDL parser reads a double-quoted string as a single-quoted one: the ``ddl`` text
of its schema changes and history shows ``DEFAULT "it's"`` as ``DEFAULT 'it''s'``, and the literal's
text (``defaultValueExpression``) is that single-quoted body (recorded in
``tests/golden/debezium/fidelity/defaults.jsonl``).
"""

from __future__ import annotations


def single_quoted_strings(sql: str) -> str:
    """The DDL text as Debezium 3.6 records it (``ddl`` of schema changes and history): every
    double-quoted string literal written single-quoted (``DEFAULT "it's"`` -> ``DEFAULT 'it''s'``);
    backslash escapes stay as written. Single-quoted strings, backquoted names and comments are
    left alone."""
    if '"' not in sql:
        return sql
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        end = _skip_end(sql, i)
        if end > i:
            out.append(sql[i:end])
            i = end
        elif ch == '"':
            end = _quoted_end(sql, i, '"')
            if end > n:  # unterminated: leave the rest as it is
                out.append(sql[i:])
                break
            out.append("'" + as_single_quoted_body(sql[i + 1 : end - 1]) + "'")
            i = end
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _skip_end(sql: str, i: int) -> int:
    """The end of a single-quoted string, backquoted name or comment starting at ``i``, else ``i``."""
    ch = sql[i]
    if ch in "'`":
        return min(_quoted_end(sql, i, ch), len(sql))
    if sql.startswith("/*", i):
        close = sql.find("*/", i + 2)
        return len(sql) if close < 0 else close + 2
    if ch == "#" or sql.startswith("-- ", i):
        close = sql.find("\n", i)
        return len(sql) if close < 0 else close
    return i


def _quoted_end(sql: str, start: int, quote: str) -> int:
    """The index after the closing ``quote`` of the literal opened at ``start`` (a doubled quote is
    part of it; backslash escapes except in backquoted names); past the end when unterminated."""
    i, n = start + 1, len(sql)
    while i < n:
        ch = sql[i]
        if ch == "\\" and quote != "`":
            i += 2
        elif ch == quote:
            if i + 1 < n and sql[i + 1] == quote:
                i += 2
            else:
                return i + 1
        else:
            i += 1
    return n + 1


def as_single_quoted_body(body: str) -> str:
    """The inside of a double-quoted literal as the inside of a single-quoted one: ``'`` doubled,
    ``""`` as ``"``, backslash escapes as written (Debezium 3.6 keeps that text verbatim, e.g. in
    ``defaultValueExpression``)."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch == "\\" and i + 1 < n:
            out.append(body[i : i + 2])
            i += 2
        elif ch == '"' and i + 1 < n and body[i + 1] == '"':
            out.append('"')
            i += 2
        else:
            out.append("''" if ch == "'" else ch)
            i += 1
    return "".join(out)
