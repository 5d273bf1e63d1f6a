"""The figures' values: rates and means with their 95 % intervals, per-group rows, paired
differences, distributions — shaped from the rows of the statements of this package, the same
way for every front end (``paohuzi stats``, the dashboard, later the HTTP service).

Intervals are those of :mod:`replay.analysis.intervals`: Wilson for rates (on the effective
size when observations come in clusters), cluster-robust for means, paired for policy
differences.

>>> r = Rate.of(30, 100)
>>> round(r.p, 2), round(r.lo, 4), round(r.hi, 4)
(0.3, 0.2189, 0.3958)
>>> d = Distribution.of("huxi", [(15, 2), (18, 1), (21, 1)])
>>> d.n, d.quantiles[0.5], d.min, d.max
(4, 15.0, 15, 21)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from replay.analysis.intervals import (
    Z95,
    ClusterSums,
    CrossSums,
    Moments,
    cluster_mean_ci,
    mean_ci,
    paired_diff_ci,
    paired_ratio_diff_ci,
    wilson,
)

#: Quantiles shown for the winning 胡息, 等, 番 and score: the inverse empirical distribution
#: function (DuckDB ``quantile_disc``), i.e. the ⌈n·q⌉-th smallest value, always a real value.
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def num(x: Any) -> float:
    """A SQL value as a float (NULL, NaN and non-numbers as NaN)."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def count(x: Any) -> int:
    """A SQL count as an int (NULL and NaN as 0: a sum over no rows)."""
    v = num(x)
    return 0 if math.isnan(v) else int(v)


@dataclass(frozen=True)
class Rate:
    """``k`` of ``n`` with a 95 % interval ``[lo, hi]`` on k/n."""

    k: int
    n: int
    lo: float
    hi: float

    @property
    def p(self) -> float:
        return self.k / self.n if self.n else math.nan

    @classmethod
    def of(cls, k: int, n: int, clusters: int | None = None) -> Rate:
        """Wilson's interval; with ``clusters`` < n, on the effective size (clusters)."""
        k, n = int(k or 0), int(n or 0)
        d = n if clusters is None else int(clusters or 0)
        if n == 0 or d == 0:
            return cls(k, n, 0.0, 1.0)
        lo, hi = wilson(k * d / n, d) if d < n else wilson(k, n)
        return cls(k, n, lo, hi)


@dataclass(frozen=True)
class Mean:
    """A mean of ``n`` observations with its 95 % interval (NaN below two clusters)."""

    mean: float
    lo: float
    hi: float
    n: int

    @classmethod
    def of(cls, sums: ClusterSums) -> Mean:
        """The cluster-robust mean of per-cluster sums."""
        m, lo, hi = cluster_mean_ci(sums)
        return cls(m, lo, hi, int(sums.m))

    @classmethod
    def of_moments(cls, total: Any, total_sq: Any, n: Any) -> Mean:
        """A mean with its normal interval (observations taken as independent)."""
        m, lo, hi = mean_ci(Moments(num(total), num(total_sq), count(n)))
        return cls(m, lo, hi, count(n))

    @classmethod
    def none(cls, n: int = 0) -> Mean:
        return cls(math.nan, math.nan, math.nan, n)


@dataclass(frozen=True)
class GroupRow:
    """Win rate and mean score of a seat, a policy, or the dealer / non-dealers."""

    key: str
    win: Rate
    score: Mean


@dataclass(frozen=True)
class PairedRow:
    """Policy ``a`` minus policy ``b`` over the same duplicate deals (``deals`` of them):
    the difference of win rates and of mean scores per seat."""

    a: str
    b: str
    deals: int
    win_diff: Mean
    score_diff: Mean


def rate_diff(a: Rate, b: Rate) -> Mean:
    """``a − b`` of two independent proportions (the dashboard's Compare page; any
    comparison of two selections) with Newcombe's hybrid score interval
    (method 10), built from the two Wilson intervals."""
    if not a.n or not b.n:
        return Mean(math.nan, math.nan, math.nan, a.n + b.n)
    d = a.p - b.p
    lo = d - math.sqrt((a.p - a.lo) ** 2 + (b.hi - b.p) ** 2)
    hi = d + math.sqrt((a.hi - a.p) ** 2 + (b.p - b.lo) ** 2)
    return Mean(d, lo, hi, a.n + b.n)


def mean_diff(a: Mean, b: Mean) -> Mean:
    """``a − b`` of two independent means: the half-widths combine in quadrature."""
    if any(math.isnan(x) for x in (a.mean, a.lo, b.mean, b.lo)):
        return Mean(math.nan, math.nan, math.nan, a.n + b.n)
    sa, sb = (a.hi - a.lo) / (2 * Z95), (b.hi - b.lo) / (2 * Z95)
    d = a.mean - b.mean
    half = Z95 * math.sqrt(sa * sa + sb * sb)
    return Mean(d, d - half, d + half, a.n + b.n)


def quantile_disc(values: list[int], counts: list[int], q: float) -> float:
    """The ⌈n·q⌉-th smallest value (at least the first) of a histogram, as DuckDB's
    ``quantile_disc``; NaN for an empty one.

    >>> quantile_disc([1, 2, 3], [1, 1, 2], 0.5)
    2.0
    """
    n = sum(counts)
    if n == 0:
        return math.nan
    target = max(1, math.ceil(n * q))
    acc = 0
    for v, c in zip(values, counts):
        acc += c
        if acc >= target:
            return float(v)
    return float(values[-1])


@dataclass(frozen=True)
class Distribution:
    """A metric's histogram over the selected wins: ``values`` ascending, ``counts`` of each."""

    metric: str
    values: tuple[int, ...]
    counts: tuple[int, ...]

    @classmethod
    def of(cls, metric: str, pairs: Iterable[tuple[Any, Any]]) -> Distribution:
        """From ``(value, count)`` pairs in any order."""
        items = sorted((int(v), int(c)) for v, c in pairs)
        return cls(metric, tuple(v for v, _ in items), tuple(c for _, c in items))

    @property
    def n(self) -> int:
        return sum(self.counts)

    @property
    def quantiles(self) -> dict[float, float]:
        return {q: quantile_disc(list(self.values), list(self.counts), q) for q in QUANTILES}

    @property
    def min(self) -> float:
        return self.values[0] if self.values else math.nan

    @property
    def max(self) -> float:
        return self.values[-1] if self.values else math.nan


# ---------------------------------------------------------------------------------------------
# Shaping rows (mappings of column name to value) into figures
# ---------------------------------------------------------------------------------------------


def cluster_mean(row: Mapping[str, Any], col: str) -> Mean:
    """The mean of ``col`` from a row of ``winning_moments`` (``d_col``, ``y_col`` …)."""
    sums = ClusterSums(
        count(row[f"d_{col}"]),
        num(row[f"y_{col}"]),
        num(row[f"m_{col}"]),
        num(row[f"yy_{col}"]),
        num(row[f"ym_{col}"]),
        num(row[f"mm_{col}"]),
    )
    if sums.m <= 0:
        return Mean.none()
    return Mean.of(sums)


def group_rows(rows: Iterable[Mapping[str, Any]]) -> list[GroupRow]:
    """Rows of ``group_rates_by``: win rate (Wilson on the clusters) and mean score change
    (cluster-robust), per group."""
    out = []
    for r in rows:
        n, d = count(r["n"]), count(r["d"])
        sums = ClusterSums(d, num(r["y"]), float(n), num(r["yy"]), num(r["ym"]), num(r["mm"]))
        out.append(GroupRow(str(r["key"]), Rate.of(count(r["won"]), n, d), Mean.of(sums)))
    return out


def paired_rows(rows: Iterable[Mapping[str, Any]]) -> list[PairedRow]:
    """Rows of ``paired``: the paired differences with their intervals."""
    out = []
    for r in rows:
        n = count(r["deals"])
        w = paired_diff_ci(Moments(num(r["dw"]), num(r["dww"]), n))
        y = paired_diff_ci(Moments(num(r["dy"]), num(r["dyy"]), n))
        out.append(PairedRow(str(r["a"]), str(r["b"]), n, Mean(*w, n), Mean(*y, n)))
    return out


def distribution(rows: Iterable[Mapping[str, Any]], metric: str) -> Distribution:
    """One metric's histogram from the rows of ``value_counts`` (``metric, v, n``)."""
    return Distribution.of(metric, ((r["v"], r["n"]) for r in rows if r["metric"] == metric))


@dataclass(frozen=True)
class Effect:
    """One figure of two runs of the same deals (:mod:`replay.analysis.figures.effects`):
    each run's mean and ``a − b`` paired by deal, over ``deals`` deals."""

    a: Mean
    b: Mean
    diff: Mean
    deals: int


def _cluster_sums(row: Mapping[str, Any], side: str, name: str, clusters: int) -> ClusterSums:
    k = f"{side}_{name}_"
    return ClusterSums(
        clusters, num(row[k + "sy"]), num(row[k + "sm"]), num(row[k + "syy"]),
        num(row[k + "sym"]), num(row[k + "smm"]),
    )  # fmt: skip


def run_means(row: Mapping[str, Any], names: Iterable[str]) -> dict[str, Mean]:
    """Each figure of ``names`` from the row of ``effects.run_moments``."""
    d = count(row["clusters"])
    return {n: Mean.of(_cluster_sums(row, "a", n, d)) for n in names}


def effects(row: Mapping[str, Any], names: Iterable[str]) -> dict[str, Effect]:
    """Each figure of ``names`` from the row of ``effects.paired_moments``."""
    d = count(row["clusters"])
    out = {}
    for n in names:
        a, b = _cluster_sums(row, "a", n, d), _cluster_sums(row, "b", n, d)
        cross = CrossSums(*(num(row[f"x_{n}_{c}"]) for c in ("yu", "yn", "mu", "mn")))
        diff, lo, hi = paired_ratio_diff_ci(a, b, cross)
        out[n] = Effect(Mean.of(a), Mean.of(b), Mean(diff, lo, hi, d), d)
    return out
