"""The SQL page's limits: what DuckDB may use for a typed query (memory, spill space on disk,
threads) and how much of its result the page takes (rows, bytes per cell, bytes in all) and
for how long. No streamlit.

Each limit is an environment variable of the dashboard's process (``paohuzi dashboard``
passes its environment on to Streamlit), read when the SQL page runs:

=============================  ==========  ====================================================
variable                       default     meaning
=============================  ==========  ====================================================
``PAOHUZI_SQL_MEMORY``         ``1GiB``    DuckDB ``memory_limit`` of the SQL page's connection
``PAOHUZI_SQL_TEMP``           ``2GiB``    DuckDB ``max_temp_directory_size`` (spill to disk)
``PAOHUZI_SQL_THREADS``        ``4``       DuckDB ``threads`` (at most the machine's CPUs)
``PAOHUZI_SQL_MAX_ROWS``       ``100000``  highest row limit the page offers
``PAOHUZI_SQL_MAX_SECONDS``    ``60``      highest time limit the page offers
``PAOHUZI_SQL_MAX_CELL``       ``100KB``   a longer value is cut to this many bytes, with a note
``PAOHUZI_SQL_MAX_RESULT``     ``32MB``    the result stops at this many bytes, with a note
=============================  ==========  ====================================================

Sizes are a number with an optional unit (``B``, ``KB``, ``MB``, ``GB``, ``TB``, ``KiB``,
``MiB``, ``GiB``, ``TiB``; ``bytes`` as DuckDB writes them).

>>> lim = from_env({"PAOHUZI_SQL_MEMORY": "512MiB", "PAOHUZI_SQL_THREADS": "2"})
>>> lim.duckdb_settings()
{'memory_limit': '536870912B', 'max_temp_directory_size': '2147483648B', 'threads': '2'}
>>> from_env({"PAOHUZI_SQL_MEMORY": "lots"})
Traceback (most recent call last):
...
dashboard.services.sqllimits.LimitsError: PAOHUZI_SQL_MEMORY='lots' is not a size such as 1GiB or 512MB
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replay.store.sizes import fmt_size, parse_size, read_limit

__all__ = [
    "ENV", "FIXED_TYPES", "LimitsError", "SqlLimits", "bounded_select", "fit_cell", "fmt_size",
    "from_env", "parse_size", "settings_off",
]  # fmt: skip


class LimitsError(ValueError):
    """A limit set to a value the page cannot use; the message names the variable."""


@dataclass(frozen=True)
class SqlLimits:
    memory: int = 1024**3
    temp: int = 2 * 1024**3
    threads: int = 4
    max_rows: int = 100_000
    max_seconds: int = 60
    max_cell: int = 100_000
    max_result: int = 32_000_000

    def duckdb_settings(self) -> dict[str, str]:
        """The DuckDB settings of the SQL page's connection, as ``SET`` values."""
        return {
            "memory_limit": f"{self.memory}B",
            "max_temp_directory_size": f"{self.temp}B",
            "threads": str(self.threads),
        }

    def describe(self) -> str:
        return (
            f"memory {fmt_size(self.memory)}, spill to disk {fmt_size(self.temp)},"
            f" {self.threads} thread{'s' if self.threads != 1 else ''}; a value is cut at"
            f" {fmt_size(self.max_cell)}, the result at {fmt_size(self.max_result)}"
        )


#: field → (environment variable, kind, lowest value)
ENV: dict[str, tuple[str, str, int]] = {
    "memory": ("PAOHUZI_SQL_MEMORY", "size", 16 * 1024**2),
    "temp": ("PAOHUZI_SQL_TEMP", "size", 0),
    "threads": ("PAOHUZI_SQL_THREADS", "int", 1),
    "max_rows": ("PAOHUZI_SQL_MAX_ROWS", "int", 1),
    "max_seconds": ("PAOHUZI_SQL_MAX_SECONDS", "int", 1),
    "max_cell": ("PAOHUZI_SQL_MAX_CELL", "size", 16),
    "max_result": ("PAOHUZI_SQL_MAX_RESULT", "size", 1024),
}


def from_env(environ: Mapping[str, str] | None = None) -> SqlLimits:
    """The limits from the environment (unset or empty: the default); :class:`LimitsError`
    for a value that is not one."""
    env = os.environ if environ is None else environ
    values: dict[str, int] = {"threads": max(1, min(4, os.cpu_count() or 1))}
    for name, (var, kind, lowest) in ENV.items():
        raw = (env.get(var) or "").strip()
        if not raw:
            continue
        try:
            values[name] = read_limit(var, raw, lowest, "1GiB or 512MB", whole=kind != "size")
        except ValueError as e:
            raise LimitsError(str(e)) from None
    return SqlLimits(**values)


def settings_off(have: Mapping[str, str], limits: SqlLimits) -> list[str]:
    """One line for each DuckDB setting of ``have`` (as DuckDB writes them) that is not
    the one ``limits`` asks for (sizes within 1 %: DuckDB rounds them).

    >>> settings_off({"memory_limit": "1.0 GiB", "max_temp_directory_size": "2.0 GiB", "threads": "3"}, SqlLimits(threads=4))
    ['threads is 3, not 4']
    """
    off = []
    for name, value in limits.duckdb_settings().items():
        got = have.get(name, "?")
        a, b = parse_size(got), parse_size(value)
        if a is None or b is None or abs(a - b) > max(1, b) * 0.01:
            off.append(f"{name} is {got}, not {value}")
    return off


# --- the result, bounded ------------------------------------------------------------------------

#: DuckDB type ids of fixed, small size: their values pass as they are; any other type (text,
#: BLOB, BIT, BIGNUM, lists, structs, maps, arrays, unions) is cut in DuckDB to the cell limit.
FIXED_TYPES = frozenset(
    {
        "boolean", "tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint",
        "usmallint", "uinteger", "ubigint", "uhugeint", "float", "double", "decimal", "date",
        "time", "time with time zone", "time_ns", "timestamp", "timestamp_s", "timestamp_ms",
        "timestamp_ns", "timestamp with time zone", "interval", "uuid", "enum", "null",
    }
)  # fmt: skip


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def bounded_select(stmt: str, names: Sequence[str], type_ids: Sequence[str], max_cell: int) -> str:
    """``stmt`` (one checked SELECT) wrapped so that DuckDB hands over no value longer than
    ``max_cell`` + 1 characters: text cut with ``left``, other variable-size values as their
    text, cut the same way (one character more than the limit, so that a cut shows).
    Columns are taken by position and named ``names`` (unique).

    >>> bounded_select("SELECT 1 AS n, 'abc' AS s -- note", ["n", "s"], ["integer", "varchar"], 8)
    'SELECT #1 AS "n", left(#2, 9) AS "s" FROM (\\nSELECT 1 AS n, \\'abc\\' AS s -- note\\n) AS _q'
    """
    cols = []
    for i, (name, tid) in enumerate(zip(names, type_ids), start=1):
        if tid in FIXED_TYPES:
            expr = f"#{i}"
        elif tid == "varchar":
            expr = f"left(#{i}, {max_cell + 1})"
        else:
            expr = f"left(CAST(#{i} AS VARCHAR), {max_cell + 1})"
        cols.append(f"{expr} AS {_quote(name)}")
    return f"SELECT {', '.join(cols) or '*'} FROM (\n{stmt}\n) AS _q"


def fit_cell(value: Any, max_cell: int) -> tuple[Any, int, bool]:
    """``(value shown, its size in bytes, whether it was cut)``: text longer than
    ``max_cell`` bytes in UTF-8 is cut to that (on a character boundary) and ends in ``…``.

    >>> fit_cell("abcdef", 4)
    ('abcd…', 4, True)
    >>> fit_cell(12, 4)
    (12, 8, False)
    """
    if isinstance(value, str):
        raw = value.encode("utf-8", "surrogatepass")
        if len(raw) <= max_cell:
            return value, len(raw), False
        cut = raw[:max_cell].decode("utf-8", "ignore")
        return cut + "…", max_cell, True
    if isinstance(value, (bytes, bytearray, memoryview)):
        b = bytes(value)
        if len(b) <= max_cell:
            return b, len(b), False
        return b[:max_cell], max_cell, True
    return value, 8, False
