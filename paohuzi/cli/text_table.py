"""Text tables and numbers as the ``stats`` commands print them (``paohuzi stats``,
``paohuzi stats --events``): columns aligned by display width (CJK characters take two),
percentages, means and their intervals."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Sequence

from engine.errors import printable
from replay.analysis.figures.results import Mean, Rate


def _width(text: str) -> int:
    """Terminal columns: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _ljust(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _rjust(text: str, width: int) -> str:
    return " " * max(0, width - _width(text)) + text


def _table(rows: Sequence[Sequence[str]], right: Iterable[int] = (), indent: str = "  ") -> str:
    """Columns aligned by display width; column indices in ``right`` are right-aligned; a
    cell's control characters (of a stored policy name …) escaped first
    (:func:`engine.errors.printable`)."""
    right = set(right)
    rows = [[printable(c) for c in r] for r in rows]
    widths = [max(_width(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [(_rjust if i in right else _ljust)(c, widths[i]) for i, c in enumerate(r)]
        lines.append((indent + "  ".join(cells)).rstrip())
    return "\n".join(lines)


def _pct(x: float, digits: int = 2) -> str:
    if math.isnan(x):
        return "–"
    return f"{100 * x:.{digits}f} %"


def _ci_pct(r: Rate, digits: int = 2) -> str:
    return f"[{100 * r.lo:.{digits}f}, {100 * r.hi:.{digits}f}]"


def _num(x: float, signed: bool = False, digits: int = 2) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "–"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def _ci(m: Mean, signed: bool = False, digits: int = 2) -> str:
    if math.isnan(m.lo):
        return ""
    return f"[{_num(m.lo, signed, digits)}, {_num(m.hi, signed, digits)}]"
