"""The text and rows of ``paohuzi stats`` (its tables; ``--format csv|parquet``'s rows), from
the figures of :mod:`replay.analysis.stats`."""

from __future__ import annotations

import math
from typing import Any

from paohuzi.cli.tabular import Column
from paohuzi.cli.text_table import aligned, ci, ci_pct, num, pct
from replay.analysis.stats import QUANTILES, GroupRow, RunStats, Winning
from replay.store.params import policies_label

_WIN_LABELS = {"huxi": "胡息", "deng": "等", "fan": "番", "score": "score 等×番"}


# ---------------------------------------------------------------------------------------------
# Text rendering
# ---------------------------------------------------------------------------------------------


def _sci(x: float) -> str:
    return f"{x:.3e}"


def render(s: RunStats) -> str:
    """The text summary of one run."""
    pol = policies_label(s.policies)  # as paohuzi runs names them
    dup = " · duplicate" if s.duplicate else ""
    unit = "deal (its rotations are one unit)" if s.duplicate else "hand"
    out = [
        f"run {s.run} · rules {s.rules} · {s.players} players · policies {pol}{dup} · {s.status}",
        f"  {s.hands:,} hands, {s.deals:,} deals; 95 % intervals, independent unit: {unit}",
    ]
    if not s.hands:
        out.append("  no hands recorded yet")
        return "\n".join(out)
    for section in (_outcomes, _win_rates, _paired, _winning, _mingtang, _auto_tianhu, _reviews):
        text = section(s)
        if text:
            out += ["", text]
    return "\n".join(out)


def _outcomes(s: RunStats) -> str:
    rows = [["outcome", "hands", "rate", "95 % CI (%)"]]
    for label, key in (
        ("胡 (any win)", "win"),
        ("  胡 in play", "hu"),
        ("  天胡 on the 亮张", "tianhu"),
        ("  3提/5坎 天胡", "tianhu_auto"),
        ("荒庄", "huangzhuang"),
    ):
        r = s.outcomes[key]
        rows.append([label, f"{r.k:,}", pct(r.p), ci_pct(r)])
    return aligned(rows, right=(1, 2))


def _win_rates(s: RunStats) -> str:
    rows = [["win rate", "wins", "of", "rate", "95 % CI (%)", "mean score", "95 % CI"]]
    rows += [_group_row(g, "") for g in s.seats + s.dealer]
    rows += [_group_row(g, "policy ") for g in s.policy]
    note = "  (non-dealer: per non-dealer seat; mean score: score change per seat-hand)"
    return aligned(rows, right=(1, 2, 3, 5)) + "\n" + note


def _paired(s: RunStats) -> str:
    if not s.paired:
        return ""
    rows = [["paired over duplicate deals", "deals", "win rate a − b (pp)", "score a − b"]]
    for p in s.paired:
        w = p.win_diff
        win = f"{100 * w.mean:+.2f}"
        if not math.isnan(w.lo):
            win += f" [{100 * w.lo:+.2f}, {100 * w.hi:+.2f}]"
        score = f"{num(p.score_diff.mean, True)} {ci(p.score_diff, True)}".rstrip()
        rows.append([f"{p.a} − {p.b}", f"{p.deals:,}", win, score])
    return aligned(rows, right=(1,))


def _reviews(s: RunStats) -> str:
    """The rates of the run's stored reviews (``paohuzi review``), one table per key."""
    from paohuzi.cli.review import render_rates

    parts = []
    for r in s.reviews:
        text = render_rates(s.run, r.hands, r.rollouts, r.rollout_policy, r.seed, r.rates)
        lines = ("stored " + text).splitlines()
        parts.append("\n".join(f"  {x}" if x else "" for x in lines))
    return "\n\n".join(parts)


def _winning(s: RunStats) -> str:
    if not s.winning:
        return ""
    head = [f"winning hands ({s.outcomes['win'].k:,})", "mean", "95 % CI"]
    head += [f"p{round(100 * q)}" for q in QUANTILES] + ["min", "max"]
    rows = [head] + [_dist_row(_WIN_LABELS.get(k, k), d) for k, d in s.winning.items()]
    text = aligned(rows, right=(1, *range(3, len(head))))
    if s.zimo is not None:
        z = s.zimo
        text += f"\n  自摸: {z.k:,} of {z.n:,} wins, {pct(z.p, 1)} {ci_pct(z, 1)}"
    return text


def _mingtang(s: RunStats) -> str:
    if not s.mingtang:
        return ""
    rows = [[f"名堂 (share of {s.outcomes['win'].k:,} wins)", "wins", "share", "95 % CI (%)"]]
    for m in s.mingtang:
        rows.append([m.name, f"{m.share.k:,}", pct(m.share.p, 1), ci_pct(m.share, 1)])
    return aligned(rows, right=(1, 2))


def _auto_tianhu(s: RunStats) -> str:
    a = s.auto_tianhu
    if a is None:
        return ""
    rows = [[f"3提/5坎 天胡 over {a.any.n:,} deals", "deals", "observed", "95 % CI", "exact"]]
    for label, r, p in (
        ("any seat", a.any, a.exact_any),
        ("dealer (21 cards)", a.dealer, a.exact_dealer),
        ("non-dealers (20 cards)", a.non_dealer, a.exact_non_dealer),
    ):
        rows.append([label, f"{r.k:,}", _sci(r.p), f"[{_sci(r.lo)}, {_sci(r.hi)}]", _sci(p)])
    note = (
        "  (exact: RULES §9 checks the dealer first, then 下家, 上家; any seat and non-dealers"
        f" are exact within {a.exact_bound:.0e})"
    )
    return aligned(rows, right=(1, 2)) + "\n" + note


def _group_row(g: GroupRow, prefix: str) -> list[str]:
    return [
        prefix + g.key,
        f"{g.win.k:,}",
        f"{g.win.n:,}",
        pct(g.win.p),
        ci_pct(g.win),
        num(g.score.mean, True),
        ci(g.score, True),
    ]


def _dist_row(label: str, d: Winning) -> list[str]:
    return [
        label,
        num(d.mean.mean),
        ci(d.mean),
        *(f"{q:g}" for q in d.quantiles),
        f"{d.min:g}",
        f"{d.max:g}",
    ]


# ---------------------------------------------------------------------------------------------
# Rows (--format csv / parquet): what the tables show, one row per run, section and row
# ---------------------------------------------------------------------------------------------

_Q = [f"p{round(100 * q)}" for q in QUANTILES]
#: The columns of ``paohuzi stats --format csv|parquet``: a row's run, section (the table it
#: is a row of) and label, then what that table shows of it (empty where it shows nothing).
STATS_COLUMNS = [
    Column("run"),
    Column("section"),
    Column("label"),
    Column("count", "int64"),
    Column("of", "int64"),
    Column("rate", "float64"),
    Column("rate_lo", "float64"),
    Column("rate_hi", "float64"),
    Column("mean", "float64"),
    Column("mean_lo", "float64"),
    Column("mean_hi", "float64"),
    *(Column(q, "float64") for q in _Q),
    Column("min", "float64"),
    Column("max", "float64"),
    Column("exact", "float64"),
]
_AT = {c.name: i for i, c in enumerate(STATS_COLUMNS)}


def _finite(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _row(run: str, section: str, label: str, **values: Any) -> list[Any]:
    out: list[Any] = [None] * len(STATS_COLUMNS)
    out[:3] = [run, section, label]
    for k, v in values.items():
        out[_AT[k]] = v if k in ("count", "of") else _finite(v)
    return out


def _rate(r: Any) -> dict[str, Any]:
    return {"count": r.k, "of": r.n, "rate": r.p, "rate_lo": r.lo, "rate_hi": r.hi}


def _mean(m: Any) -> dict[str, Any]:
    return {"mean": m.mean, "mean_lo": m.lo, "mean_hi": m.hi}


def rows(s: RunStats) -> list[list[Any]]:
    """The rows of one run's tables (:data:`STATS_COLUMNS`), in the order the text shows
    them: the run's hands and deals (its header), outcomes, win rates (seat, dealer, policy), paired
    differences, winning hands, 名堂, 3提/5坎 天胡 and stored reviews' rates."""
    run = s.run
    out = [_row(run, "run", "hands", count=s.hands), _row(run, "run", "deals", count=s.deals)]
    if not s.hands:
        return out
    for label, key in (
        ("胡 (any win)", "win"),
        ("胡 in play", "hu"),
        ("天胡 on the 亮张", "tianhu"),
        ("3提/5坎 天胡", "tianhu_auto"),
        ("荒庄", "huangzhuang"),
    ):
        out.append(_row(run, "outcome", label, **_rate(s.outcomes[key])))
    for g, prefix in [(g, "") for g in s.seats + s.dealer] + [(g, "policy ") for g in s.policy]:
        out.append(_row(run, "win rate", prefix + g.key, **_rate(g.win), **_mean(g.score)))
    for p in s.paired:
        pair = f"{p.a} − {p.b}"
        out.append(_row(run, "paired win rate", pair, count=p.deals, **_mean(p.win_diff)))
        out.append(_row(run, "paired score", pair, count=p.deals, **_mean(p.score_diff)))
    for key, d in s.winning.items():
        qs = dict(zip(_Q, d.quantiles, strict=True))
        out.append(_row(run, "winning hands", _WIN_LABELS.get(key, key), **_mean(d.mean), **qs,
                        min=d.min, max=d.max))  # fmt: skip
    if s.zimo is not None:
        out.append(_row(run, "winning hands", "自摸", **_rate(s.zimo)))
    for m in s.mingtang:
        out.append(_row(run, "名堂", m.name, **_rate(m.share)))
    a = s.auto_tianhu
    if a is not None:
        for label, r, exact in (
            ("any seat", a.any, a.exact_any),
            ("dealer (21 cards)", a.dealer, a.exact_dealer),
            ("non-dealers (20 cards)", a.non_dealer, a.exact_non_dealer),
        ):
            out.append(_row(run, "3提/5坎 天胡", label, **_rate(r), exact=exact))
    for rev in s.reviews:
        section = f"review {rev.rollouts} by {rev.rollout_policy} seed {rev.seed}"
        for t in rev.rates:
            for what in ("blunder", "mistake", "inaccuracy", "best"):
                out.append(_row(run, section, f"{t.policy} {t.kind} {what}",
                                **_rate(getattr(t, what))))  # fmt: skip
            out.append(_row(run, section, f"{t.policy} {t.kind} score loss", **_mean(t.score_loss)))
            out.append(_row(run, section, f"{t.policy} {t.kind} win loss", **_mean(t.win_loss)))
    return out
