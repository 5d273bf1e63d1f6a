"""Text tables and numbers as the commands print them: :func:`aligned` (``paohuzi stats``,
``paohuzi stats --events``: columns aligned by display width, CJK characters taking two),
:func:`headed` (a header row over the rows: ``paohuzi runs``, ``hands``, ``review``), and the
percentages, means and intervals of the statistics (:func:`pct`, :func:`ci_pct`, :func:`num`,
:func:`ci`)."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from engine.errors import printable

if TYPE_CHECKING:
    from replay.analysis.figures.results import Mean, Rate


def _width(text: str) -> int:
    """Terminal columns: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _ljust(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _rjust(text: str, width: int) -> str:
    return " " * max(0, width - _width(text)) + text


def aligned(rows: Sequence[Sequence[str]], right: Iterable[int] = (), indent: str = "  ") -> str:
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


def pct(x: float, digits: int = 2) -> str:
    if math.isnan(x):
        return "–"
    return f"{100 * x:.{digits}f} %"


def ci_pct(r: Rate, digits: int = 2) -> str:
    return f"[{100 * r.lo:.{digits}f}, {100 * r.hi:.{digits}f}]"


def num(x: float, signed: bool = False, digits: int = 2) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "–"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def ci(m: Mean, signed: bool = False, digits: int = 2) -> str:
    if math.isnan(m.lo):
        return ""
    return f"[{num(m.lo, signed, digits)}, {num(m.hi, signed, digits)}]"


def headed(header: list[str], rows: list[list[str]]) -> str:
    """``header`` over ``rows``, columns aligned by terminal cells (:func:`rich.cells.cell_len`);
    a cell's control characters (of a stored policy name, a title …) escaped first
    (:func:`engine.errors.printable`)."""
    from rich.cells import cell_len

    rows = [[printable(c) for c in r] for r in rows]
    widths = [max([cell_len(h)] + [cell_len(r[i]) for r in rows]) for i, h in enumerate(header)]
    lines = []
    for r in [header, *rows]:
        cells = [c + " " * (w - cell_len(c)) for c, w in zip(r, widths, strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
