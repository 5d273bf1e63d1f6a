"""The report's charts as plain SVG text (no fonts, scripts or times: the same counts give the
same bytes).

>>> from replay.analysis.figures.results import Distribution
>>> svg = bars_svg(Distribution.of("score", [(2, 5), (4, 10)]), "score of a win")
>>> svg.startswith("<svg") and svg.count("<rect") == 3  # the frame and two bars
True
"""

from __future__ import annotations

from html import escape

from replay.analysis.figures.results import Distribution

#: At most this many bars: the values above the cut are drawn as one bar "≥ cut".
MAX_BARS = 40


def bars_svg(dist: Distribution, title: str, width: int = 640, height: int = 240) -> str:
    """A histogram of ``dist`` (share of the wins per value); the largest values pooled into
    one last bar when there are more than :data:`MAX_BARS` values."""
    values, counts = list(dist.values), list(dist.counts)
    if len(values) > MAX_BARS:
        pooled = sum(counts[MAX_BARS - 1 :])
        values, counts = values[: MAX_BARS - 1] + [values[MAX_BARS - 1]], counts[: MAX_BARS - 1]
        counts.append(pooled)
    total = sum(counts) or 1
    left, right, top, bottom = 48, 12, 28, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    top_share = max(counts) / total if counts else 1.0
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none"'
        ' stroke="#999"/>',
        f'<text x="{left}" y="16" font-size="13">{escape(title)}</text>',
        f'<text x="4" y="{top + 10}">{top_share:.1%}</text>',
        f'<text x="4" y="{top + plot_h}">0</text>',
    ]
    n = max(len(values), 1)
    step = plot_w / n
    for i, (v, c) in enumerate(zip(values, counts)):
        h = plot_h * (c / total) / top_share if top_share else 0.0
        x = left + i * step
        label = f"≥{v}" if i == MAX_BARS - 1 and len(dist.values) > MAX_BARS else str(v)
        out.append(
            f'<rect x="{x + 1:.1f}" y="{top + plot_h - h:.1f}" width="{max(step - 2, 1):.1f}"'
            f' height="{h:.1f}" fill="#4c78a8"><title>{escape(label)}: {c} ({c / total:.2%})'
            "</title></rect>"
        )
        if n <= 20 or i % max(n // 10, 1) == 0:
            out.append(
                f'<text x="{x + step / 2:.1f}" y="{top + plot_h + 14}"'
                f' text-anchor="middle">{escape(label)}</text>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def intervals_svg(rows: list[tuple[str, float, float, float]], title: str, width: int = 640) -> str:
    """One row per ``(label, value, lo, hi)``: a dot and its interval on a shared axis."""
    row_h, left, right, top = 22, 190, 20, 30
    height = top + row_h * len(rows) + 30
    finite = [v for _, m, lo, hi in rows for v in (m, lo, hi) if v == v]
    lo_all, hi_all = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if hi_all == lo_all:
        lo_all, hi_all = lo_all - 1.0, hi_all + 1.0
    span = hi_all - lo_all
    lo_all, hi_all = lo_all - 0.05 * span, hi_all + 0.05 * span

    def x(v: float) -> float:
        return left + (width - left - right) * (v - lo_all) / (hi_all - lo_all)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<text x="8" y="16" font-size="13">{escape(title)}</text>',
        f'<line x1="{left}" y1="{height - 24}" x2="{width - right}" y2="{height - 24}"'
        ' stroke="#999"/>',
        f'<text x="{left}" y="{height - 8}">{lo_all:.4g}</text>',
        f'<text x="{width - right}" y="{height - 8}" text-anchor="end">{hi_all:.4g}</text>',
    ]
    for i, (label, m, lo, hi) in enumerate(rows):
        y = top + row_h * i + row_h / 2
        out.append(f'<text x="8" y="{y + 4:.1f}">{escape(label)}</text>')
        if lo == lo and hi == hi:
            out.append(
                f'<line x1="{x(lo):.1f}" y1="{y:.1f}" x2="{x(hi):.1f}" y2="{y:.1f}"'
                ' stroke="#4c78a8" stroke-width="2"/>'
            )
        if m == m:
            out.append(
                f'<circle cx="{x(m):.1f}" cy="{y:.1f}" r="4" fill="#4c78a8">'
                f"<title>{escape(label)}: {m:.4g} [{lo:.4g}, {hi:.4g}]</title></circle>"
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"
