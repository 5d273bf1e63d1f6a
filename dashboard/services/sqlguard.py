"""The SQL page's statement check: exactly one read-only SELECT (or WITH … SELECT) that reads
only the page's own tables and nothing of the host.

DuckDB's own parser splits and classifies the text (``duckdb.extract_statements``), so a
second statement hidden after a ``;`` or in a comment trick is seen as DuckDB sees it. The
statement must be of type SELECT and begin with ``SELECT``, ``WITH``, ``FROM`` or
``VALUES`` (DESCRIBE, SUMMARIZE, PRAGMA, SET, COPY, ATTACH, INSTALL, CREATE, … are refused).

Then DuckDB's parse tree of it (``json_serialize_sql``) is walked, every subquery, CTE and
lambda included: the host is refused at its sources, not looked for in what is printed (a
string function can turn a path into text no redaction recognises). Refused are the
functions that read the server's settings or names (:data:`DENIED_FUNCTIONS`, every
``pg_*``), every table function but :data:`TABLE_FUNCTIONS` (``read_*``, ``glob``,
``parquet_metadata``, ``duckdb_*()``, ``pragma_*``, ``query`` … name or read files and the
catalog's definitions), DESCRIBE/SHOW as a subquery, any table of another schema or catalog
(``information_schema``, ``pg_catalog``, ``system``) and :data:`HIDDEN_TABLES`; given the
page's ``tables``, any other name that is not a CTE in scope (``pg_views``, ``sqlite_master``,
``'file.parquet'``, which would be a file scan).

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
>>> check_select("SELECT reverse(current_setting('secret_directory'))")
Traceback (most recent call last):
...
dashboard.services.sqlguard.RefusedSQL: current_setting() is not available here: it reads the server's settings
>>> check_select("SELECT * FROM catalog_meta", tables={"hands", "runs"})
Traceback (most recent call last):
...
dashboard.services.sqlguard.RefusedSQL: catalog_meta is not available here: it is the catalog's own record and names the store's location
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Collection
from typing import Any

import duckdb

_LEADING = re.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/|\()*", re.S)
_FIRST_WORD = re.compile(r"[A-Za-z_]+")
ALLOWED_FIRST = {"SELECT", "WITH", "FROM", "VALUES"}
MAX_CHARS = 20_000

#: Scalar functions that return the server's settings or names, as text a string function
#: can turn into anything (reverse, replace, hex, ascii codes …): never run.
DENIED_FUNCTIONS: dict[str, str] = {
    "current_setting": "it reads the server's settings",
    "getvariable": "it reads the server's settings",
    "current_database": "it names the server's temporary catalog file",
    "current_catalog": "it names the server's temporary catalog file",
    "current_schemas": "it names the server's catalogs",
    "in_search_path": "it reads the server's settings",
    "json_serialize_plan": "a plan names the files the views read",
    "write_log": "it writes to the server's log",
    "parse_duckdb_log_message": "it reads the server's log",
}
#: The table functions a query may call: they make rows and read nothing.
TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})
#: Tables of the catalog that the page does not show: the catalog's own bookkeeping.
HIDDEN_TABLES: dict[str, str] = {
    "catalog_meta": "it is the catalog's own record and names the store's location",
}
#: System tables and views DuckDB finds without a schema (``pg_views`` shows each view's
#: definition, its absolute file paths): refused even before the page's tables are known.
_SYSTEM_TABLE = re.compile(r"^(?:duckdb_|pg_|sqlite_|pragma_)")


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


def check_select(text: str, tables: Collection[str] | None = None) -> str:
    """The statement without a trailing ``;`` if it is one SELECT that reads nothing of the
    host (see the module) and, when ``tables`` is given, no table but those (lower case) and
    its own CTEs; else :class:`RefusedSQL`."""
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
        kind = stmt.type.name if first in ALLOWED_FIRST or not first else first
        kind = "PIVOT" if kind == "MULTI" else kind  # PIVOT runs several statements
        raise RefusedSQL(f"only a SELECT (or WITH … SELECT) is allowed, not {kind}")
    _check_tree(parse_tree(query), None if tables is None else {t.lower() for t in tables})
    return query


# --- the parse tree ------------------------------------------------------------------------------

_PARSER: duckdb.DuckDBPyConnection | None = None
_PARSER_LOCK = threading.Lock()


def _parser() -> duckdb.DuckDBPyConnection:
    """A connection of the guard's own, only for parsing: no files, no extensions."""
    global _PARSER
    if _PARSER is None:
        con = duckdb.connect(
            ":memory:",
            config={
                "enable_external_access": False,
                "autoload_known_extensions": False,
                "autoinstall_known_extensions": False,
            },
        )
        con.execute("SET lock_configuration = true")
        _PARSER = con
    return _PARSER


def parse_tree(query: str) -> dict[str, Any]:
    """DuckDB's parse tree of one SELECT (``json_serialize_sql``), as a dict."""
    with _PARSER_LOCK:
        (raw,) = _parser().execute("SELECT json_serialize_sql(?)", [query]).fetchone() or ("",)
    try:
        tree = json.loads(raw)
    except RecursionError:
        raise RefusedSQL("nested too deeply to be checked") from None
    except ValueError:
        raise RefusedSQL("cannot be checked") from None
    if not isinstance(tree, dict) or tree.get("error"):
        why = str(tree.get("error_message", "")) if isinstance(tree, dict) else ""
        if "Only SELECT" in why:  # PIVOT, UNPIVOT … as a statement inside the query
            why = "PIVOT (as a statement or subquery) cannot be checked; use GROUP BY or FILTER"
        raise RefusedSQL(f"cannot be checked: {why}" if why else "cannot be checked")
    return tree


def _check_tree(tree: dict[str, Any], tables: set[str] | None) -> None:
    """Walk every node (iteratively: a deep tree is no RecursionError) with the CTE names in
    scope there: a CTE is seen by the main query and the CTEs after it, a recursive one by
    its own recursive part."""
    stack: list[tuple[Any, frozenset[str]]] = [(tree.get("statements", []), frozenset())]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, list):
            stack.extend((x, scope) for x in node)
            continue
        if not isinstance(node, dict):
            continue
        skip = {"cte_map"}
        ctes = node.get("cte_map")
        entries = ctes.get("map") if isinstance(ctes, dict) else None
        if isinstance(entries, list) and entries:
            seen = set(scope)
            for entry in entries:
                if isinstance(entry, dict):
                    stack.append((entry.get("value"), frozenset(seen)))
                    seen.add(str(entry.get("key", "")).lower())
            scope = frozenset(seen)
        if node.get("type") == "RECURSIVE_CTE_NODE":
            skip |= {"left", "right"}
            stack.append((node.get("left"), scope))
            stack.append((node.get("right"), scope | {str(node.get("cte_name", "")).lower()}))
        _check_node(node, scope, tables)
        stack.extend((v, scope) for k, v in node.items() if k not in skip)


def _check_node(node: dict[str, Any], scope: frozenset[str], tables: set[str] | None) -> None:
    name = node.get("function_name")
    if isinstance(name, str):
        fn = name.lower()
        if fn in DENIED_FUNCTIONS:
            raise RefusedSQL(f"{fn}() is not available here: {DENIED_FUNCTIONS[fn]}")
        if fn.startswith("pg_"):
            raise RefusedSQL(f"{fn}() is not available here: it reads the catalog's definitions")
    kind = node.get("type")
    if node.get("class") == "COLUMN_REF":  # `SELECT current_catalog` calls the function
        names = node.get("column_names") or []
        if len(names) == 1 and str(names[0]).lower() in DENIED_FUNCTIONS:
            fn = str(names[0]).lower()
            raise RefusedSQL(f"{fn} is not available here: {DENIED_FUNCTIONS[fn]}")
    elif kind == "TABLE_FUNCTION":
        fn_node = node.get("function")
        fn = str(fn_node.get("function_name", "")).lower() if isinstance(fn_node, dict) else ""
        if fn not in TABLE_FUNCTIONS:
            raise RefusedSQL(
                f"the table function {fn or '?'}() is not available here: only"
                f" {', '.join(sorted(TABLE_FUNCTIONS))} (files and the catalog are read"
                " through the views: hands, events, seats, runs, …)"
            )
    elif kind == "SHOW_REF":
        raise RefusedSQL(
            "DESCRIBE, SUMMARIZE and SHOW are not available here (see the views below)"
        )
    elif kind == "BASE_TABLE":
        _check_table(node, scope, tables)


def _check_table(node: dict[str, Any], scope: frozenset[str], tables: set[str] | None) -> None:
    table = str(node.get("table_name", ""))
    t = table.lower()
    schema = str(node.get("schema_name", "")).lower()
    catalog = str(node.get("catalog_name", ""))
    if catalog or schema not in ("", "main"):
        where = ".".join(p for p in (catalog, schema, table) if p)
        raise RefusedSQL(f"{where} is not available here: only the page's tables and views")
    if t in HIDDEN_TABLES:
        raise RefusedSQL(f"{t} is not available here: {HIDDEN_TABLES[t]}")
    if t in scope:
        return
    if "/" in t or "." in t:  # a file name: DuckDB would scan the file
        raise RefusedSQL(f"{table!r} is not available here: files are read through the views")
    if _SYSTEM_TABLE.match(t) or (tables is not None and t not in tables):
        shown = f" (the page's: {', '.join(sorted(tables))})" if tables else ""
        raise RefusedSQL(f"no table or view {table!r} here{shown}")
