"""Numbers for the pages, shaped from query results: rates with Wilson intervals, means with
cluster-robust intervals, paired differences, distributions, curves. No streamlit.

The figures and their intervals are those of the statistics layer
(:mod:`replay.analysis.figures.results`: ``Rate``, ``Mean``, ``GroupRow``, ``PairedRow``,
``Distribution``), shaped from the same rows, so the dashboard and ``paohuzi stats`` agree to
the last digit on the same run; this module turns query frames into them and them into
display tables.

>>> r = Rate.of(30, 100)
>>> fmt_rate(r)
'30.0 %'
>>> fmt_interval(r)
'21.9 – 39.6 %'
>>> d = rate_diff(Rate.of(56, 70), Rate.of(48, 80))  # Newcombe (1998), method 10
>>> round(d.mean, 4), round(d.lo, 4), round(d.hi, 4)
(0.2, 0.0524, 0.3339)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from engine.cards import card_char
from engine.hu import Source
from replay.analysis.figures import results
from replay.analysis.figures.results import (
    QUANTILES,
    Distribution,
    GroupRow,
    Mean,
    PairedRow,
    Rate,
    cluster_mean,
    mean_diff,
    rate_diff,
)
from replay.analysis.figures.results import count as _i
from replay.analysis.figures.results import num as _f
from replay.analysis.intervals import wilson

__all__ = [
    "QUANTILES",
    "Distribution",
    "GroupRow",
    "Mean",
    "PairedRow",
    "Rate",
    "Headline",
    "headline",
    "group_rows",
    "rate_table",
    "paired_rows",
    "paired_table",
    "convergence_curve",
    "distribution",
    "source_table",
    "mingtang_table",
    "huang_table",
    "survival_curve",
    "retention_table",
    "rate_diff",
    "mean_diff",
    "compare_table",
    "rules_table",
    "rules_long_table",
    "fmt_rate",
    "fmt_with_interval",
    "fmt_interval",
    "fmt_mean",
]

SOURCE_LABELS: dict[int, str] = {
    int(Source.OWN_DRAW): "自摸 (own draw)",
    int(Source.OTHER_DRAW): "other's draw",
    int(Source.LIANG_DEALER): "亮张 (dealer's 21 cards)",
    int(Source.LIANG_OTHER): "亮张 (non-dealer)",
    int(Source.DISCARD): "discard",
    255: "3提/5坎 天胡 (dealt)",
}

OUTCOME_LABELS = {0: "胡", 1: "荒庄", 2: "3提/5坎 天胡", 3: "天胡"}

METRIC_LABELS = {"huxi": "胡息", "deng": "等", "fan": "番", "score": "score"}


# ---------------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------------


def fmt_rate(r: Rate) -> str:
    return "–" if not r.n else f"{100 * r.p:.1f} %"


def fmt_interval(r: Rate | Mean, pct: bool | None = None) -> str:
    """``lo – hi`` (in % for a :class:`Rate`); ``–`` when there is none."""
    pct = isinstance(r, Rate) if pct is None else pct
    if isinstance(r, Rate) and not r.n:
        return "–"
    if math.isnan(r.lo) or math.isnan(r.hi):
        return "–"
    if pct:
        return f"{100 * r.lo:.1f} – {100 * r.hi:.1f} %"
    return f"{r.lo:.2f} – {r.hi:.2f}"


def fmt_mean(m: Mean, digits: int = 2) -> str:
    if math.isnan(m.mean):
        return "–"
    text = f"{m.mean:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text  # no "-0.00"


# ---------------------------------------------------------------------------------------------
# Headline
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """The selection's headline numbers (hand level, and over its wins)."""

    hands: int
    runs: int
    win: Rate  # hands ending in a win (anything but 荒庄)
    huang: Rate  # 荒庄
    tianhu: Rate  # 天胡 of either kind
    dealer_win: Rate  # hands won by the dealer
    zimo: Rate  # 自摸 among the selected wins
    wins: int
    huxi: Mean
    deng: Mean
    fan: Mean
    score: Mean

    def rates(self) -> dict[str, Rate]:
        return {
            "win (hand ends in a 胡)": self.win,
            "荒庄": self.huang,
            "天胡 (any)": self.tianhu,
            "dealer wins the hand": self.dealer_win,
            "自摸 among wins": self.zimo,
        }

    def means(self) -> dict[str, Mean]:
        return {
            "winning 胡息": self.huxi,
            "等": self.deng,
            "番": self.fan,
            "score per loser": self.score,
        }


def headline(hl: Mapping[str, Any], wm: Mapping[str, Any]) -> Headline:
    """From one row of ``headline`` and one of ``winning_moments``."""
    n, d = _i(hl["n"]), _i(hl["clusters"])
    wins_sel, d_w = _i(wm["wins"]), _i(wm["clusters"])
    return Headline(
        hands=n,
        runs=_i(hl["runs"]),
        win=Rate.of(_i(hl["wins"]), n, d),
        huang=Rate.of(_i(hl["huang"]), n, d),
        tianhu=Rate.of(_i(hl["tianhu"]) + _i(hl["tianhu_auto"]), n, d),
        dealer_win=Rate.of(_i(hl["dealer_wins"]), n, d),
        zimo=Rate.of(_i(wm["zimo"]), wins_sel, d_w),
        wins=wins_sel,
        huxi=cluster_mean(wm, "huxi"),
        deng=cluster_mean(wm, "deng"),
        fan=cluster_mean(wm, "fan"),
        score=cluster_mean(wm, "score"),
    )


def winning_means(wm: Mapping[str, Any]) -> tuple[int, dict[str, Mean]]:
    """From one row of ``winning_moments``: the number of wins and the mean 胡息, 等,
    番 and score with their intervals (the part of :class:`Headline` about wins)."""
    return _i(wm["wins"]), {
        "winning 胡息": cluster_mean(wm, "huxi"),
        "等": cluster_mean(wm, "deng"),
        "番": cluster_mean(wm, "fan"),
        "score per loser": cluster_mean(wm, "score"),
    }


def headline_table(h: Headline) -> pd.DataFrame:
    """Every headline number as display rows: value, 95 % interval, what it rests on."""
    rows = []
    for name, r in h.rates().items():
        rows.append(
            {
                "measure": name,
                "value": fmt_rate(r),
                "95 % interval": fmt_interval(r),
                "n": f"{r.n:,} {'wins' if 'among wins' in name else 'hands'}",
            }
        )
    for name, m in h.means().items():
        rows.append(
            {
                "measure": f"mean {name}",
                "value": fmt_mean(m),
                "95 % interval": fmt_interval(m),
                "n": f"{m.n:,} wins",
            }
        )
    return pd.DataFrame(rows)


def fmt_with_interval(r: Rate | Mean) -> str:
    """A figure with its 95 % interval in one cell: ``85.6 % [85.4 – 85.8 %]``, ``18.42
    [18.30 – 18.55]``.

    >>> fmt_with_interval(Rate.of(30, 100))
    '30.0 % [21.9 – 39.6 %]'
    """
    value = fmt_rate(r) if isinstance(r, Rate) else fmt_mean(r)
    interval = fmt_interval(r)
    return value if interval == "–" else f"{value} [{interval}]"


def rules_table(rows: Mapping[str, tuple[int, Headline]]) -> pd.DataFrame:
    """One row per rule set (``rows``: its label → its number of runs and its headline):
    the hands, and the main headline numbers each with its interval — a selection of several
    rule sets shown side by side, never pooled into one number."""
    out = []
    for rules, (runs, h) in rows.items():
        out.append(
            {
                "rules": rules,
                "runs": runs,
                "hands": h.hands,
                "win (胡)": fmt_with_interval(h.win),
                "荒庄": fmt_with_interval(h.huang),
                "dealer wins": fmt_with_interval(h.dealer_win),
                "mean winning 胡息": fmt_with_interval(h.huxi),
                "mean score per loser": fmt_with_interval(h.score),
            }
        )
    return pd.DataFrame(out)


def rules_long_table(rows: Mapping[str, tuple[int, Headline]]) -> pd.DataFrame:
    """Every headline number of each rule set (:func:`headline_table`'s rows, per rule set)."""
    frames = [headline_table(h).assign(rules=rules) for rules, (_, h) in rows.items()]
    if not frames:
        return pd.DataFrame(columns=["rules", "measure", "value", "95 % interval", "n"])
    df = pd.concat(frames, ignore_index=True)
    return df[["rules", "measure", "value", "95 % interval", "n"]]


# ---------------------------------------------------------------------------------------------
# Seat-level groups, paired differences, convergence
# ---------------------------------------------------------------------------------------------


def group_rows(df: pd.DataFrame) -> list[GroupRow]:
    """Rows of ``group_rates_by``: win rate (Wilson on the clusters) and mean score change
    (cluster-robust), per group."""
    return results.group_rows(df.to_dict("records"))


def relabel(row: GroupRow, key: str) -> GroupRow:
    """The same numbers under another name."""
    return dataclasses.replace(row, key=key)


def rate_table(rows: Iterable[GroupRow], label: str = "group") -> pd.DataFrame:
    """Display table and chart data: win rate with interval and hands, mean score change."""
    return pd.DataFrame(
        [
            {
                label: g.key,
                "win rate": fmt_rate(g.win),
                "95 % interval": fmt_interval(g.win),
                "seat-hands": g.win.n,
                "mean score change": fmt_mean(g.score),
                "score 95 % interval": fmt_interval(g.score),
                "p": g.win.p,
                "lo": g.win.lo,
                "hi": g.win.hi,
            }
            for g in rows
        ],
        columns=[
            label,
            "win rate",
            "95 % interval",
            "seat-hands",
            "mean score change",
            "score 95 % interval",
            "p",
            "lo",
            "hi",
        ],
    )


def paired_rows(df: pd.DataFrame) -> list[PairedRow]:
    """Rows of ``paired``: the paired differences with their intervals."""
    return results.paired_rows(df.to_dict("records"))


def paired_table(rows: Iterable[PairedRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "policy a − policy b": f"{p.a} − {p.b}",
                "win rate difference": (
                    "–" if math.isnan(p.win_diff.mean) else f"{100 * p.win_diff.mean:+.2f} pp"
                ),
                "95 % interval": (
                    "–"
                    if math.isnan(p.win_diff.lo)
                    else f"{100 * p.win_diff.lo:+.2f} – {100 * p.win_diff.hi:+.2f} pp"
                ),
                "score difference": fmt_mean(p.score_diff),
                "score 95 % interval": fmt_interval(p.score_diff),
                "paired deals": p.deals,
            }
            for p in rows
        ]
    )


def convergence_curve(df: pd.DataFrame, width: int) -> pd.DataFrame:
    """Cumulative win rate per group after each bin of ``width`` hands, with its Wilson band
    (hands taken as independent): ``key, hands, seat_hands, rate, lo, hi``."""
    out = []
    for key, g in df.sort_values(["key", "bin"]).groupby("key", sort=True):
        n = g["n"].cumsum()
        k = g["won"].cumsum()
        for b, nn, kk in zip(g["bin"], n, k):
            lo, hi = wilson(int(kk), int(nn))
            out.append(
                {
                    "key": str(key),
                    "hands": int((b + 1) * width),
                    "seat_hands": int(nn),
                    "rate": kk / nn if nn else math.nan,
                    "lo": lo,
                    "hi": hi,
                }
            )
    return pd.DataFrame(out, columns=["key", "hands", "seat_hands", "rate", "lo", "hi"])


# ---------------------------------------------------------------------------------------------
# Distributions
# ---------------------------------------------------------------------------------------------


def distribution(vc: pd.DataFrame, metric: str) -> Distribution:
    """From ``value_counts``: one metric's histogram (quantiles, min, max)."""
    return results.distribution(vc.to_dict("records"), metric)


def counts_frame(d: Distribution) -> pd.DataFrame:
    """A distribution's values, counts and shares (``v, n, share``), for a chart."""
    n = d.n
    return pd.DataFrame(
        {
            "v": list(d.values),
            "n": list(d.counts),
            "share": [c / n if n else 0.0 for c in d.counts],
        }
    )


def quantile_table(dists: Iterable[Distribution]) -> pd.DataFrame:
    rows = []
    for d in dists:
        row: dict[str, Any] = {"measure": METRIC_LABELS.get(d.metric, d.metric), "wins": d.n}
        row["min"] = float(d.min)
        for q, v in d.quantiles.items():
            row[f"q{int(round(q * 100))}"] = v
        row["max"] = float(d.max)
        rows.append(row)
    return pd.DataFrame(rows)


def source_table(df: pd.DataFrame) -> pd.DataFrame:
    """Wins by the source of the hu card: share of wins (Wilson on the clusters), mean 胡息 and
    mean score with normal intervals."""
    n_all = _i(df["n"].sum()) if len(df) else 0
    d_all = _i(df["d"].sum()) if len(df) else 0
    rows = []
    for r in df.to_dict("records"):
        n = _i(r["n"])
        share = Rate.of(n, n_all, min(d_all, n_all) if d_all else None)
        hx = Mean.of_moments(r["huxi"], r["huxi2"], n)
        sc = Mean.of_moments(r["score"], r["score2"], n)
        rows.append(
            {
                "source": SOURCE_LABELS.get(_i(r["source"]), str(r["source"])),
                "code": _i(r["source"]),
                "share of wins": fmt_rate(share),
                "95 % interval": fmt_interval(share),
                "wins": n,
                "mean 胡息": fmt_mean(hx),
                "胡息 95 %": fmt_interval(hx),
                "mean score": fmt_mean(sc),
                "score 95 %": fmt_interval(sc),
                "p": share.p,
                "lo": share.lo,
                "hi": share.hi,
            }
        )
    return pd.DataFrame(rows)


def mingtang_table(df: pd.DataFrame, codes: pd.DataFrame) -> pd.DataFrame:
    """Per 名堂 level and 名堂: share of wins carrying it (Wilson), mean score with it, and its
    contribution: the share of the level's total score earned in hands carrying it, and
    the score above 平胡 (Σ(score − 等)) of those hands."""
    names = {
        int(r["bit"]): (str(r["name"]), str(r["pinyin"]), str(r["level"]))
        for r in codes.to_dict("records")
    }
    totals = {str(r["level"]): r for r in df[df["bit"] == -2].to_dict("records")}
    rows = []
    for r in df[df["bit"] != -2].to_dict("records"):
        level = str(r["level"])
        tot = totals.get(level)
        n_wins = _i(tot["n"]) if tot else 0
        d_wins = _i(tot["d"]) if tot else 0
        total_score = _f(tot["score"]) if tot else math.nan
        bit = _i(r["bit"])
        name, pinyin, _ = (
            names.get(bit, ("平胡", "pinghu", level)) if bit >= 0 else ("平胡", "pinghu", level)
        )
        n = _i(r["n"])
        share = Rate.of(n, n_wins, d_wins if d_wins < n_wins else None)
        sc = Mean.of_moments(r["score"], r["score2"], n)
        score_share = _f(r["score"]) / total_score if total_score else math.nan
        rows.append(
            {
                "level": level,
                "名堂": name,
                "id": pinyin,
                "bit": bit,
                "share of wins": fmt_rate(share),
                "95 % interval": fmt_interval(share),
                "wins with it": n,
                "of wins": n_wins,
                "mean score": fmt_mean(sc),
                "score 95 %": fmt_interval(sc),
                "share of total score": "–"
                if math.isnan(score_share)
                else f"{100 * score_share:.1f} %",
                "score above 平胡": _i(r["extra"]),
                "p": share.p,
                "lo": share.lo,
                "hi": share.hi,
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# 荒庄
# ---------------------------------------------------------------------------------------------


def huang_table(df: pd.DataFrame, label: str) -> pd.DataFrame:
    rows = []
    for r in df.to_dict("records"):
        n, d = _i(r["n"]), _i(r["d"])
        rate = Rate.of(_i(r["huang"]), n, d)
        rows.append(
            {
                label: str(r["key"]),
                "荒庄 rate": fmt_rate(rate),
                "95 % interval": fmt_interval(rate),
                "hands": n,
                "荒庄 keeping the dealer": _i(r["retained"]),
                "p": rate.p,
                "lo": rate.lo,
                "hi": rate.hi,
            }
        )
    return pd.DataFrame(rows)


def survival_curve(df: pd.DataFrame, stock: int = 19) -> pd.DataFrame:
    """Share of hands still in play when the stock is down to ``s`` cards, ``s`` = stock … 0,
    per group, with a Wilson band: a hand that ended with ``e`` cards left was still in play
    at every ``s ≥ e``."""
    out = []
    for key, g in df.groupby("key", sort=True):
        n = int(g["n"].sum())
        by_left = dict(zip(g["stock_left"].astype(int), g["n"].astype(int)))
        top = max([stock, *by_left])
        running = 0
        for s in range(0, top + 1):
            running += by_left.get(s, 0)  # ended with ≤ s left: still in play at s
            lo, hi = wilson(running, n)
            out.append(
                {
                    "key": str(key),
                    "stock_left": s,
                    "share": running / n if n else math.nan,
                    "lo": lo,
                    "hi": hi,
                    "hands": n,
                }
            )
    return pd.DataFrame(out, columns=["key", "stock_left", "share", "lo", "hi", "hands"])


def retention_table(df: pd.DataFrame) -> pd.DataFrame:
    """By the dealer's consecutive 荒庄 before the hand: 荒庄 rate and the dealer's win rate."""
    rows = []
    for r in df.to_dict("records"):
        n, d = _i(r["n"]), _i(r["d"])
        h = Rate.of(_i(r["huang"]), n, d)
        w = Rate.of(_i(r["dealer_wins"]), n, d)
        streak = _i(r["streak"])
        rows.append(
            {
                "荒庄 before (same dealer)": f"{streak}+" if streak >= 3 else str(streak),
                "hands": n,
                "荒庄 rate": fmt_rate(h),
                "荒庄 95 %": fmt_interval(h),
                "dealer win rate": fmt_rate(w),
                "dealer win 95 %": fmt_interval(w),
                "streak": streak,
                "p_dealer": w.p,
                "lo_dealer": w.lo,
                "hi_dealer": w.hi,
            }
        )
    return pd.DataFrame(rows)


def retention_effect(df: pd.DataFrame) -> tuple[Rate, Rate, Mean]:
    """The dealer's win rate in hands after a 荒庄 kept him (streak ≥ 1) and in the others,
    and their difference (Newcombe)."""
    kept = df[df["streak"] >= 1]
    fresh = df[df["streak"] == 0]

    def rate(g: pd.DataFrame) -> Rate:
        n = _i(g["n"].sum())
        return Rate.of(_i(g["dealer_wins"].sum()), n, min(n, _i(g["d"].sum())) or None)

    a, b = rate(kept), rate(fresh)
    return a, b, rate_diff(a, b)


# ---------------------------------------------------------------------------------------------
# Differences (Compare)
# ---------------------------------------------------------------------------------------------


def compare_table(a: Headline, b: Headline) -> pd.DataFrame:
    """Every headline number of two selections side by side, with the difference A − B and
    its 95 % interval (independent samples) and whether the interval excludes 0."""
    rows = []
    for (name, ra), rb in zip(a.rates().items(), b.rates().values()):
        d = rate_diff(ra, rb)
        rows.append(
            {
                "measure": name,
                "A": fmt_rate(ra),
                "A 95 %": fmt_interval(ra),
                "A n": ra.n,
                "B": fmt_rate(rb),
                "B 95 %": fmt_interval(rb),
                "B n": rb.n,
                "A − B": "–" if math.isnan(d.mean) else f"{100 * d.mean:+.2f} pp",
                "A − B 95 %": (
                    "–" if math.isnan(d.lo) else f"{100 * d.lo:+.2f} – {100 * d.hi:+.2f} pp"
                ),
                "differs": _differs(d),
            }
        )
    for (name, ma), mb in zip(a.means().items(), b.means().values()):
        d = mean_diff(ma, mb)
        rows.append(
            {
                "measure": f"mean {name}",
                "A": fmt_mean(ma),
                "A 95 %": fmt_interval(ma),
                "A n": ma.n,
                "B": fmt_mean(mb),
                "B 95 %": fmt_interval(mb),
                "B n": mb.n,
                "A − B": "–" if math.isnan(d.mean) else f"{d.mean:+.2f}",
                "A − B 95 %": "–" if math.isnan(d.lo) else f"{d.lo:+.2f} – {d.hi:+.2f}",
                "differs": _differs(d),
            }
        )
    return pd.DataFrame(rows)


def _differs(d: Mean) -> str:
    if math.isnan(d.lo) or math.isnan(d.hi):
        return "–"
    return "yes" if d.lo > 0 or d.hi < 0 else "no"


def mingtang_compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Two :func:`mingtang_table` results by 名堂 name: the share of all wins of each side
    carrying it (levels pooled), and the difference with its Newcombe interval."""

    def shares(t: pd.DataFrame) -> tuple[dict[str, int], int]:
        if t.empty:
            return {}, 0
        wins = int(t.drop_duplicates("level")["of wins"].sum())
        return {str(k): int(v) for k, v in t.groupby("名堂")["wins with it"].sum().items()}, wins

    ka, na = shares(a)
    kb, nb = shares(b)
    rows = []
    for name in sorted(set(ka) | set(kb), key=lambda x: (x == "平胡", x)):
        ra, rb = Rate.of(ka.get(name, 0), na), Rate.of(kb.get(name, 0), nb)
        d = rate_diff(ra, rb)
        rows.append(
            {
                "名堂": name,
                "A": fmt_rate(ra),
                "A 95 %": fmt_interval(ra),
                "A wins": f"{ra.k:,} of {ra.n:,}",
                "B": fmt_rate(rb),
                "B 95 %": fmt_interval(rb),
                "B wins": f"{rb.k:,} of {rb.n:,}",
                "A − B": "–" if math.isnan(d.mean) else f"{100 * d.mean:+.2f} pp",
                "A − B 95 %": (
                    "–" if math.isnan(d.lo) else f"{100 * d.lo:+.2f} – {100 * d.hi:+.2f} pp"
                ),
            }
        )
    return pd.DataFrame(rows)


def compare_distributions(a: Distribution, b: Distribution) -> pd.DataFrame:
    """Two distributions of one metric on a common axis (shares), for an overlaid chart."""
    fa = counts_frame(a).assign(side="A")
    fb = counts_frame(b).assign(side="B")
    return pd.concat([fa, fb], ignore_index=True)


def card_text(kind: Any) -> str:
    """A card kind as its character (``–`` for none)."""
    try:
        return card_char(int(kind))
    except (TypeError, ValueError):
        return "–"
