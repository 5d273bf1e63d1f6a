"""The SQL page's statement check: exactly one read-only SELECT (or WITH … SELECT).

DuckDB's own parser splits and classifies the text (``duckdb.extract_statements``), so a
second statement hidden after a ``;`` or in a comment trick is seen as DuckDB sees it. The
statement must be of type SELECT and begin with ``SELECT``, ``WITH``, ``FROM`` or
``VALUES`` (DESCRIBE, SUMMARIZE, PRAGMA, SET, COPY, ATTACH, INSTALL, CREATE, … are refused).

>>> check_select("SELECT count(*) FROM hands")
'SELECT count(*) FROM hands'
>>> check_select("WITH t AS (SELECT 1 AS x) SELECT x FROM t;")
'WITH t AS (SELECT 1 AS x) SELECT x FROM t'
>>> check_select("SELECT 1; DROP TABLE runs")
Traceback (most recent call last):
...
dashboard.services.sqlguard.RefusedSQL: one statement only (found 2)
>>> check_select("COPY hands TO '/tmp/x.csv'")
Traceback (most recent call last):
...
dashboard.services.sqlguard.RefusedSQL: only a SELECT (or WITH … SELECT) is allowed, not COPY
"""

from __future__ import annotations

import re

import duckdb

_LEADING = re.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/|\()*", re.S)
_FIRST_WORD = re.compile(r"[A-Za-z_]+")
ALLOWED_FIRST = {"SELECT", "WITH", "FROM", "VALUES"}
MAX_CHARS = 20_000


_NAMED = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def named_params(text: str, available: dict[str, object]) -> dict[str, object]:
    """The named parameters (``$runs``, ``$seats``, ``$policies``) a statement uses, with
    their values; an unknown ``$name`` is left for DuckDB to report.

    >>> named_params("SELECT * FROM hands WHERE list_contains($runs, run)", {"runs": ["a"], "seats": [0]})
    {'runs': ['a']}
    """
    return {n: available[n] for n in dict.fromkeys(_NAMED.findall(text)) if n in available}


class RefusedSQL(ValueError):
    """A statement the SQL page does not run."""


def check_select(text: str) -> str:
    """The statement without a trailing ``;`` if it is one SELECT; else :class:`RefusedSQL`."""
    if not text or not text.strip():
        raise RefusedSQL("empty query")
    if len(text) > MAX_CHARS:
        raise RefusedSQL(f"query longer than {MAX_CHARS:,} characters")
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RefusedSQL(f"cannot parse: {first}") from None
    if len(statements) != 1:
        raise RefusedSQL(f"one statement only (found {len(statements)})")
    (stmt,) = statements
    query = stmt.query.strip().rstrip(";").strip()
    m = _FIRST_WORD.match(_LEADING.sub("", query))
    first = m.group(0).upper() if m else ""
    if stmt.type != duckdb.StatementType.SELECT or first not in ALLOWED_FIRST:
        kind = first or stmt.type.name
        raise RefusedSQL(f"only a SELECT (or WITH … SELECT) is allowed, not {kind}")
    return query
