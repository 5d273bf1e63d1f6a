"""Confidence intervals and a goodness-of-fit test: small, pure, standard-library only.

Shared by ``paohuzi stats`` and the dashboard. Every interval is two-sided; ``z`` is the normal
quantile (1.96 for 95 %, see :func:`z_for`).

* :func:`wilson`: a proportion (win rate, 荒庄 rate), well behaved at 0 and near 0 or 1.
* :func:`mean_ci`: a mean by the normal approximation, from the values or from their
  :class:`Moments` (sum, sum of squares, count), which SQL aggregates give directly.
* :func:`bootstrap_mean_ci`: a percentile bootstrap of a mean, seeded, for small skewed samples.
* :func:`cluster_mean_ci`: a mean over observations that come in correlated clusters (the
  rotations of one duplicate deal, the seats of one hand), from per-cluster sums.
* :func:`paired_diff_ci`: the mean of paired differences (policy A minus policy B on the same
  duplicate deals), which removes the luck of the deal from the comparison.
* :func:`chi_square_gof`: Pearson's goodness of fit with sparse cells pooled, and
  :func:`chi2_sf`, its p-value.

>>> lo, hi = wilson(30, 100)
>>> round(lo, 4), round(hi, 4)
(0.2189, 0.3958)
>>> mean, lo, hi = mean_ci([1, 2, 3, 4])
>>> mean, round(lo, 3), round(hi, 3)
(2.5, 1.235, 3.765)
>>> mean_ci(Moments.of([1, 2, 3, 4])) == mean_ci([1, 2, 3, 4])
True
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from typing import NamedTuple

#: The two-sided 95 % normal quantile.
Z95 = 1.959963984540054


def z_for(level: float) -> float:
    """The two-sided normal quantile for a confidence level.

    >>> round(z_for(0.95), 4), round(z_for(0.999), 4)
    (1.96, 3.2905)
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1): {level!r}")
    from statistics import NormalDist  # statistics imports fractions and decimal: 5 ms

    return NormalDist().inv_cdf(0.5 + level / 2.0)


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval ``(lo, hi)`` for ``successes`` out of ``n``.

    With ``n == 0`` nothing is known: ``(0.0, 1.0)``. Zero successes give ``lo == 0``.
    Non-integer counts are accepted: an effective sample size (``k·D/n`` of ``D`` for ``n``
    observations in ``D`` fully correlated clusters) gives a conservative clustered interval.

    >>> wilson(0, 0)
    (0.0, 1.0)
    >>> lo, hi = wilson(0, 50)
    >>> lo, round(hi, 4)
    (0.0, 0.0713)
    >>> [round(x, 4) for x in wilson(9, 10)]
    [0.5958, 0.9821]
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n: {successes!r} of {n!r}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return (lo, hi)


class Moments(NamedTuple):
    """Sufficient statistics of a sample for its mean and variance: Σx, Σx², n.

    Add two of them to pool samples. In SQL: ``sum(x), sum(x*x), count(x)``.

    >>> Moments.of([1, 2]) + Moments.of([3])
    Moments(total=6.0, total_sq=14.0, n=3)
    """

    total: float
    total_sq: float
    n: int

    @classmethod
    def of(cls, values: Iterable[float]) -> Moments:
        s = ss = 0.0
        n = 0
        for v in values:
            s += v
            ss += v * v
            n += 1
        return cls(s, ss, n)

    def __add__(self, other: object) -> Moments:  # type: ignore[override]
        if not isinstance(other, Moments):
            return NotImplemented
        return Moments(self.total + other.total, self.total_sq + other.total_sq, self.n + other.n)

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan

    @property
    def variance(self) -> float:
        """The sample variance (n − 1 in the denominator); NaN below two values."""
        if self.n < 2:
            return math.nan
        ss = self.total_sq - self.total * self.total / self.n
        return max(ss, 0.0) / (self.n - 1)


def mean_ci(values: Iterable[float] | Moments, z: float = Z95) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the mean and its normal-approximation interval, mean ± z·s/√n.

    ``values`` is the sample itself or its :class:`Moments`. An empty sample gives NaNs; a
    single value has a mean but no interval (NaN bounds).

    >>> mean_ci([])
    (nan, nan, nan)
    >>> mean_ci([5.0])
    (5.0, nan, nan)
    >>> [round(x, 3) for x in mean_ci(Moments(total=20.0, total_sq=76.0, n=10))]
    [2.0, 0.76, 3.24]
    """
    m = values if isinstance(values, Moments) else Moments.of(values)
    if m.n == 0:
        return (math.nan, math.nan, math.nan)
    mean = m.mean
    if m.n < 2:
        return (mean, math.nan, math.nan)
    half = z * math.sqrt(m.variance / m.n)
    return (mean, mean - half, mean + half)


def bootstrap_mean_ci(
    values: Sequence[float], level: float = 0.95, reps: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` with a percentile-bootstrap interval; deterministic for a seed.

    >>> mean, lo, hi = bootstrap_mean_ci([1, 2, 3, 4, 100], reps=500)
    >>> mean, lo < mean < hi, lo >= 1, hi <= 100
    (22.0, True, True, True)
    """
    n = len(values)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = math.fsum(values) / n
    if n < 2:
        return (mean, math.nan, math.nan)
    rng = random.Random(seed)
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(reps))
    alpha = (1.0 - level) / 2.0
    return (mean, _quantile(means, alpha), _quantile(means, 1.0 - alpha))


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default, type 7)."""
    pos = q * (len(sorted_values) - 1)
    i = math.floor(pos)
    j = min(i + 1, len(sorted_values) - 1)
    return sorted_values[i] + (sorted_values[j] - sorted_values[i]) * (pos - i)


def paired_diff_ci(
    a: Sequence[float] | Moments, b: Sequence[float] | None = None, z: float = Z95
) -> tuple[float, float, float]:
    """``(mean difference, lo, hi)`` of paired observations ``a[i] − b[i]``.

    Pass the two aligned samples, or the :class:`Moments` of the differences alone (SQL:
    ``sum(d), sum(d*d), count(d)``). Pairing on the same deal removes the deal's luck, so the
    interval is much narrower than the difference of two independent means.

    >>> mean, lo, hi = paired_diff_ci([3, 5, 4, 6], [2, 4, 4, 4])
    >>> mean, round(lo, 3), round(hi, 3)
    (1.0, 0.2, 1.8)
    >>> paired_diff_ci(Moments.of([1, 1, 0, 2])) == paired_diff_ci([3, 5, 4, 6], [2, 4, 4, 4])
    True
    """
    if isinstance(a, Moments):
        if b is not None:
            raise ValueError("give the Moments of the differences alone, or two samples")
        return mean_ci(a, z)
    if b is None or len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    return mean_ci([x - y for x, y in zip(a, b)], z)


class ClusterSums(NamedTuple):
    """Sums over clusters for :func:`cluster_mean_ci`. With y_d a cluster's total and m_d its
    number of observations: clusters D, Σy_d, Σm_d, Σy_d², Σy_d·m_d, Σm_d².

    In SQL: ``SELECT count(*), sum(y), sum(m), sum(y*y), sum(y*m), sum(m*m) FROM (SELECT
    sum(x) AS y, count(x) AS m FROM t GROUP BY cluster)``.
    """

    clusters: int
    y: float
    m: float
    yy: float
    ym: float
    mm: float

    @classmethod
    def of(cls, groups: Iterable[Iterable[float]]) -> ClusterSums:
        d = 0
        y = m = yy = ym = mm = 0.0
        for g in groups:
            vals = list(g)
            t, c = math.fsum(vals), float(len(vals))
            d += 1
            y, m, yy, ym, mm = y + t, m + c, yy + t * t, ym + t * c, mm + c * c
        return cls(d, y, m, yy, ym, mm)


def cluster_mean_ci(sums: ClusterSums, z: float = Z95) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of observations in clusters: the ratio estimator Σy/Σm with its
    linearised (cluster-robust) variance D/(D − 1)·Σ(y_d − R·m_d)² / (Σm)².

    With one observation per cluster this is :func:`mean_ci` exactly.

    >>> a = cluster_mean_ci(ClusterSums.of([[1], [2], [3], [4]]))
    >>> b = mean_ci([1, 2, 3, 4])
    >>> all(math.isclose(x, y) for x, y in zip(a, b))
    True
    >>> mean, lo, hi = cluster_mean_ci(ClusterSums.of([[1, 1, 1], [4, 4, 4]]))
    >>> mean, round(hi - lo, 3)  # two clusters, not six independent values
    (2.5, 5.88)
    """
    if sums.m <= 0:
        return (math.nan, math.nan, math.nan)
    r = sums.y / sums.m
    if sums.clusters < 2:
        return (r, math.nan, math.nan)
    resid = max(sums.yy - 2.0 * r * sums.ym + r * r * sums.mm, 0.0)
    var = sums.clusters / (sums.clusters - 1) * resid / (sums.m * sums.m)
    half = z * math.sqrt(var)
    return (r, r - half, r + half)


class CrossSums(NamedTuple):
    """Cross sums of two samples over the same clusters, for :func:`paired_ratio_diff_ci`:
    with (y_d, m_d) of the one and (u_d, n_d) of the other, Σy_d·u_d, Σy_d·n_d, Σm_d·u_d,
    Σm_d·n_d."""

    yu: float
    yn: float
    mu: float
    mn: float


def paired_ratio_diff_ci(
    a: ClusterSums, b: ClusterSums, cross: CrossSums, z: float = Z95
) -> tuple[float, float, float]:
    """``(difference, lo, hi)`` of two ratio estimators over the same clusters, Σy/Σm of
    ``a`` minus Σu/Σn of ``b`` (two runs of the same deals: the difference of a rule or a
    policy, paired by deal), with the linearised variance D/(D − 1)·Σ(e_d − f_d)², e_d =
    (y_d − R_a·m_d)/Σm and f_d = (u_d − R_b·n_d)/Σn. The clusters are those present in both.

    With one observation per cluster it is :func:`paired_diff_ci` of the two samples:

    >>> x, y = [3, 5, 4, 6], [2, 4, 4, 4]
    >>> sums = lambda v: ClusterSums.of([[t] for t in v])
    >>> cross = CrossSums(sum(p * q for p, q in zip(x, y)), sum(x), sum(y), len(x))
    >>> got, want = paired_ratio_diff_ci(sums(x), sums(y), cross), paired_diff_ci(x, y)
    >>> all(math.isclose(p, q) for p, q in zip(got, want))
    True

    Two samples equal cluster for cluster (Σ(y − u)² = Σ(m − n)² = 0, read from the sums
    exactly) differ by exactly 0, with no width: the rounding of the linearised form would
    leave a trace of one.

    >>> s = ClusterSums.of([[1]] * 9 + [[0]] * 14)  # the form leaves 3.5e-18 here
    >>> paired_ratio_diff_ci(s, s, CrossSums(s.yy, s.ym, s.ym, s.mm))
    (0.0, 0.0, 0.0)
    """
    if a.clusters != b.clusters:
        raise ValueError("paired samples must have the same clusters")
    if a.m <= 0 or b.m <= 0:
        return (math.nan, math.nan, math.nan)
    if _equal(a, b, cross):
        return (0.0, 0.0, 0.0) if a.clusters >= 2 else (0.0, math.nan, math.nan)
    ra, rb = a.y / a.m, b.y / b.m
    diff = ra - rb
    if a.clusters < 2:
        return (diff, math.nan, math.nan)
    ee = (a.yy - 2.0 * ra * a.ym + ra * ra * a.mm) / (a.m * a.m)
    ff = (b.yy - 2.0 * rb * b.ym + rb * rb * b.mm) / (b.m * b.m)
    ef = (cross.yu - rb * cross.yn - ra * cross.mu + ra * rb * cross.mn) / (a.m * b.m)
    var = a.clusters / (a.clusters - 1) * max(ee + ff - 2.0 * ef, 0.0)
    half = z * math.sqrt(var)
    return (diff, diff - half, diff + half)


def _equal(a: ClusterSums, b: ClusterSums, cross: CrossSums) -> bool:
    """Whether the sums say the two samples are equal in every cluster: Σy² − 2Σyu + Σu² = 0
    and Σm² − 2Σmn + Σn² = 0, each side equal to the cross sum (sums of whole counts, or of
    values held exactly, are exact in floating point)."""
    return (
        a.y == b.y
        and a.m == b.m
        and a.yy == cross.yu == b.yy
        and a.mm == cross.mn == b.mm
        and a.ym == cross.yn
        and b.ym == cross.mu
    )


# ---------------------------------------------------------------------- chi-square


def chi2_sf(x: float, df: int) -> float:
    """P(X ≥ x) for X ~ χ²(df): the regularised upper incomplete gamma Q(df/2, x/2).

    >>> round(chi2_sf(2.0, 2), 12) == round(math.exp(-1.0), 12)
    True
    >>> round(chi2_sf(3.841458820694124, 1), 6)
    0.05
    >>> chi2_sf(0.0, 5)
    1.0
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be ≥ 1: {df!r}")
    if x <= 0.0:
        return 1.0
    a, h = df / 2.0, x / 2.0
    if h < a + 1.0:
        return max(0.0, 1.0 - _gamma_p_series(a, h))
    return _gamma_q_fraction(a, h)


def _gamma_p_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    ap = a
    for _ in range(100_000):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * 1e-16:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_q_fraction(a: float, x: float) -> float:
    # Lentz's method for the continued fraction of Q(a, x) (Numerical Recipes, gcf).
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h * math.exp(-x + a * math.log(x) - math.lgamma(a))


class ChiSquare(NamedTuple):
    """A goodness-of-fit result: the statistic, its degrees of freedom, the p-value and the
    (observed, expected) counts of the cells actually tested, after pooling."""

    statistic: float
    df: int
    p_value: float
    cells: tuple[tuple[float, float], ...]


def chi_square_gof(
    observed: Sequence[float],
    probs: Sequence[float],
    min_expected: float = 5.0,
    ddof: int = 0,
) -> ChiSquare:
    """Pearson's χ² test of counts ``observed`` against cell probabilities ``probs``.

    Cells whose expected count is below ``min_expected`` are pooled, smallest first, into one
    cell (which takes further small cells until it is large enough), so the χ² approximation
    holds. ``df`` = cells after pooling − 1 − ``ddof``.

    >>> r = chi_square_gof([18, 22, 20, 1, 0], [0.3, 0.35, 0.3, 0.04, 0.01])
    >>> r.df, len(r.cells), round(r.statistic, 3)
    (2, 3, 0.436)
    """
    if len(observed) != len(probs):
        raise ValueError("observed and probs must have the same length")
    n = math.fsum(observed)
    total_p = math.fsum(probs)
    if not math.isclose(total_p, 1.0, rel_tol=1e-9):
        raise ValueError(f"probabilities must sum to 1 (they sum to {total_p!r})")
    cells = sorted(((float(o), n * p) for o, p in zip(observed, probs)), key=lambda c: c[1])
    for o, e in cells:
        if e == 0.0 and o > 0:
            raise ValueError("an observation fell in a cell of probability 0")
    pooled_o = pooled_e = 0.0
    while cells and (cells[0][1] < min_expected or 0.0 < pooled_e < min_expected):
        o, e = cells.pop(0)
        pooled_o += o
        pooled_e += e
    if pooled_e > 0.0:
        cells.append((pooled_o, pooled_e))
    df = len(cells) - 1 - ddof
    if df < 1:
        raise ValueError(f"too few cells left after pooling for a χ² test ({len(cells)})")
    stat = math.fsum((o - e) ** 2 / e for o, e in cells)
    return ChiSquare(stat, df, chi2_sf(stat, df), tuple(cells))
