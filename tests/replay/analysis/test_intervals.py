"""replay.analysis.intervals and replay.analysis.exact: doctests, reference values and exact coverage."""

from __future__ import annotations

import doctest
import math

import pytest

from replay.analysis import exact, intervals
from replay.analysis.intervals import (
    Moments,
    bootstrap_mean_ci,
    chi2_sf,
    chi_square_gof,
    mean_ci,
    paired_diff_ci,
    wilson,
    z_for,
)


@pytest.mark.parametrize("module", [intervals, exact], ids=lambda m: m.__name__)
def test_doctests(module) -> None:
    # pytest's testpaths do not collect replay/ doctests; run them here.
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_wilson_reference() -> None:
    # 30/100: the textbook example (Newcombe 1998; R prop.test(30, 100, correct = FALSE)).
    lo, hi = wilson(30, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.2189, 0.3958)


@pytest.mark.parametrize(("k", "n"), [(1, 10), (3, 1000), (5000, 10000), (17, 18), (12, 12)])
def test_wilson_bounds_solve_the_score_equation(k: int, n: int) -> None:
    # Wilson's bounds are the p with |p̂ − p| = z·√(p(1 − p)/n), i.e. the roots of
    # n(p̂ − p)² = z²·p(1 − p); at k = 0 or k = n one root is 0 or 1 itself.
    z = 1.959963984540054
    for p in wilson(k, n):
        assert n * (k / n - p) ** 2 == pytest.approx(z * z * p * (1 - p), abs=1e-9)


def test_wilson_symmetry_and_containment() -> None:
    for n in (1, 7, 40, 333):
        for k in range(n + 1):
            lo, hi = wilson(k, n)
            assert 0.0 <= lo <= k / n <= hi <= 1.0
            lo2, hi2 = wilson(n - k, n)
            assert lo == pytest.approx(1 - hi2, abs=1e-12)
            assert hi == pytest.approx(1 - lo2, abs=1e-12)


@pytest.mark.parametrize("n", [20, 100, 1000])
@pytest.mark.parametrize("p", [0.001, 0.05, 0.3, 0.5])
def test_wilson_exact_coverage(n: int, p: float) -> None:
    # Coverage computed exactly over the binomial law, not by simulation. Wilson's interval
    # is known to hover around the nominal level; allow its known dips.
    cover = 0.0
    for k in range(n + 1):
        lo, hi = wilson(k, n)
        if lo <= p <= hi:
            cover += math.comb(n, k) * p**k * (1 - p) ** (n - k)
    assert 0.90 < cover < 0.995


def test_wilson_rejects_bad_counts() -> None:
    with pytest.raises(ValueError):
        wilson(5, 4)
    with pytest.raises(ValueError):
        wilson(-1, 4)


def test_z_for() -> None:
    assert z_for(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert z_for(0.99) == pytest.approx(2.575829, abs=1e-6)
    with pytest.raises(ValueError):
        z_for(1.0)


def test_mean_ci_moments_and_values_agree() -> None:
    values = [3, -1, 4, 1, -5, 9, 2, 6]
    a = mean_ci(values)
    b = mean_ci(Moments.of(values))
    assert a == pytest.approx(b)
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    assert a == pytest.approx(
        (mean, mean - 1.959964 * sd / math.sqrt(8), mean + 1.959964 * sd / math.sqrt(8))
    )
    # Pooled moments equal the moments of the pooled sample.
    assert Moments.of(values[:3]) + Moments.of(values[3:]) == pytest.approx(Moments.of(values))


def test_mean_ci_constant_sample_has_zero_width() -> None:
    assert mean_ci([7, 7, 7]) == (7.0, 7.0, 7.0)


def test_bootstrap_is_seeded_and_close_to_normal_for_large_samples() -> None:
    values = [(i * 37) % 101 for i in range(400)]
    a = bootstrap_mean_ci(values, reps=1000, seed=3)
    assert a == bootstrap_mean_ci(values, reps=1000, seed=3)
    mean, lo, hi = mean_ci(values)
    assert a[0] == pytest.approx(mean)
    assert a[1] == pytest.approx(lo, abs=0.6) and a[2] == pytest.approx(hi, abs=0.6)


def test_paired_diff_ci() -> None:
    a = [10, 12, 9, 14, 11, 13]
    assert paired_diff_ci(a, a) == (0.0, 0.0, 0.0)
    shifted = [x - 2 for x in a]
    assert paired_diff_ci(a, shifted) == (2.0, 2.0, 2.0)
    with pytest.raises(ValueError):
        paired_diff_ci(a, a[:-1])
    with pytest.raises(ValueError):
        paired_diff_ci(Moments.of(a), a)


@pytest.mark.parametrize("x", [0.01, 0.5, 1.0, 3.0, 10.0, 40.0])
def test_chi2_sf_closed_forms(x: float) -> None:
    assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-10, abs=1e-300)
    assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-10)
    assert chi2_sf(x, 4) == pytest.approx(math.exp(-x / 2) * (1 + x / 2), rel=1e-10)
    assert chi2_sf(x, 6) == pytest.approx(math.exp(-x / 2) * (1 + x / 2 + x * x / 8), rel=1e-10)


@pytest.mark.parametrize(
    ("x", "df", "p"),
    # Upper quantiles of χ² from the standard tables (Abramowitz & Stegun 26.8).
    [(18.307, 10, 0.05), (29.588, 10, 0.001), (124.342, 100, 0.05), (149.449, 100, 0.001)],
)
def test_chi2_sf_table_values(x: float, df: int, p: float) -> None:
    assert chi2_sf(x, df) == pytest.approx(p, rel=2e-3)


@pytest.mark.parametrize("df", [399, 1501])
def test_chi2_sf_large_df(df: int) -> None:
    # For large k the Wilson–Hilferty cube-root approximation is accurate: the median of χ²(k)
    # is k(1 − 2/(9k))³ and the 99.9 % point k(1 − 2/(9k) + 3.0902·√(2/(9k)))³.
    c = 2 / (9 * df)
    assert chi2_sf(df * (1 - c) ** 3, df) == pytest.approx(0.5, abs=0.002)
    assert chi2_sf(df * (1 - c + 3.090232 * math.sqrt(c)) ** 3, df) == pytest.approx(
        0.001, rel=0.03
    )


def test_chi_square_gof_pools_sparse_cells() -> None:
    probs = [0.5, 0.3, 0.15, 0.04, 0.009, 0.001]
    observed = [52, 29, 14, 4, 1, 0]
    r = chi_square_gof(observed, probs)
    assert all(e >= 5.0 for _, e in r.cells)
    assert sum(o for o, _ in r.cells) == 100
    assert sum(e for _, e in r.cells) == pytest.approx(100)
    assert r.df == len(r.cells) - 1
    assert 0.0 < r.p_value <= 1.0


def test_chi_square_gof_errors() -> None:
    with pytest.raises(ValueError):
        chi_square_gof([1, 2], [0.5, 0.6])
    with pytest.raises(ValueError):
        chi_square_gof([10, 1], [1.0, 0.0])
    with pytest.raises(ValueError):
        chi_square_gof([3, 1], [0.5, 0.5])  # nothing left to test after pooling
