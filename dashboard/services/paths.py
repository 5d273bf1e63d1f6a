"""File-system paths as the pages show them: relative to the store, never the server's
absolute paths (the store's location, the temporary catalog, a home directory). No streamlit.

Messages come from several places (the store's scan, DuckDB errors, the replayer, the SQL
page's results) and name files absolutely; :func:`redact` rewrites every path it knows of
inside a text: a path in the store becomes relative to it (``runs/run=base/…``), the store
itself its label (:func:`store_label`), the dashboard's private catalog ``<catalog>``, and
what is left in the home directory ``~/…``.

>>> r = Redactor("/srv/data/paohuzi", private=("/tmp/paohuzi-dashboard-x1.duckdb",), home="/home/ann")
>>> r("shard file /srv/data/paohuzi/runs/run=base/hands/part-00000.parquet is missing")
'shard file runs/run=base/hands/part-00000.parquet is missing'
>>> r("No store at /srv/data/paohuzi.")
'No store at …/paohuzi.'
>>> r("/tmp/paohuzi-dashboard-x1.duckdb.tmp and /home/ann/.duckdb/extensions")
'<catalog>.tmp and ~/.duckdb/extensions'
>>> r("database paohuzi-dashboard-q_7z, /var/tmp/paohuzi-dashboard-q_7z.duckdb.wal")
'database <catalog>, <catalog>.wal'
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

#: The dashboard's temporary catalogs (``replay.store.catalog``), by path or by database name,
#: wherever they are: never shown, even when not known to the redactor.
_CATALOG = re.compile(r"(?:(?:/[^\s'\"/]+)*/)?paohuzi-dashboard-[A-Za-z0-9_]+(?:\.duckdb)?")


#: The end of a path: not followed by more of a file name (a sentence's full stop is fine).
_END = r"(?![\w-]|\.[\w])"


def store_label(root: str | os.PathLike[str], cwd: str | None = None) -> str:
    """How a page names the store: relative to the working directory when it is inside it
    (``data``), else ``…/`` and its folder's name.

    >>> store_label("/work/x/data", cwd="/work/x")
    'data'
    >>> store_label("/var/lib/paohuzi/data", cwd="/work/x")
    '…/data'
    """
    p = Path(root)
    base = Path(cwd if cwd is not None else os.getcwd())
    try:
        rel = p.relative_to(base)
    except ValueError:
        return f"…/{p.name}"
    return str(rel) if str(rel) != "." else "."


class Redactor:
    """Rewrites the absolute paths of one store's dashboard inside texts (see the module)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        private: Iterable[str] = (),
        home: str | None = None,
        cwd: str | None = None,
    ) -> None:
        root_s = str(root).rstrip("/") or "/"
        real = os.path.realpath(root_s)
        self._roots = sorted({root_s, real}, key=len, reverse=True)
        self._label = store_label(root_s, cwd)
        self._private = sorted({p for p in private if p and p != "/"}, key=len, reverse=True)
        h = home if home is not None else os.path.expanduser("~")
        self._home = h.rstrip("/") if h and h.rstrip("/") not in ("", "/") else None

    @staticmethod
    def touches(text: str) -> bool:
        """Whether ``text`` may hold something to rewrite (a quick test for table cells)."""
        return "/" in text or "paohuzi-dashboard-" in text

    def __call__(self, text: str) -> str:
        if not self.touches(text):
            return text
        for p in self._private:
            text = text.replace(p, "<catalog>")
        text = _CATALOG.sub("<catalog>", text)
        for root in self._roots:
            text = text.replace(root + "/", "")
            text = re.sub(re.escape(root) + _END, self._label, text)
        if self._home:
            text = re.sub(re.escape(self._home) + _END, "~", text)
        return text
