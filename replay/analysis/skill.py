"""Skill against luck: how much of the variance of a seat's score is explained by who plays
it and how much by the cards, from a duplicate run (every deal played once per rotation, so
each seat's cards are played by every policy of the table in turn).

The decomposition is a two-way analysis of variance without replication of the cells (the
method of moments): a seat-hand's score change is y = μ_p + c + e, with μ_p the mean of the
policy playing it, c the cards (the deal seen from that seat: one cell per deal and seat)
and e the rest (the same cards played out differently: the interaction of the play with the
deal and with the other seats). With N seat-hands, C cells of R rotations and P policies:

* total  V = Σ(y − ȳ)² / N;
* policy V_P = Σ_p (n_p / N)(μ_p − ȳ)²;
* rest   V_E = (Σ(y − ȳ_cell)² − N·V_P) / (N − C − P + 1);
* cards  V_C = Var(ȳ_cell) − V_E / R.

The shares are each component over V_P + V_C + V_E. Over a session of n hands (hands taken
as independent) the policy's part grows as n²·V_P against n·(V_C + V_E):
share_P(n) = n·V_P / (n·V_P + V_C + V_E). Intervals: the 2.5 and 97.5 % points of a bootstrap
over deals (:data:`BOOTSTRAP` resamples from a fixed seed, so the same run gives the same
numbers).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

#: Bootstrap resamples of the deals, and the seed of their generator.
BOOTSTRAP = 400
BOOTSTRAP_SEED = 20261205
#: The session lengths the growth of the policy's share is given for.
SESSION_HANDS = (1, 8, 32, 100, 400, 1000)


@dataclass(frozen=True)
class Share:
    share: float
    lo: float
    hi: float


@dataclass(frozen=True)
class Decomposition:
    """The shares of one duplicate run, with the per-hand variances they come from."""

    deals: int
    seat_hands: int
    policies: tuple[str, ...]
    means: tuple[float, ...]  # each policy's mean score change per seat-hand
    variance: float  # V_P + V_C + V_E
    policy: Share
    cards: Share
    rest: Share
    #: (hands, share of the policy over that many hands) for SESSION_HANDS
    growth: tuple[tuple[int, Share], ...]
    #: hands after which the policy explains half the variance (NaN: never)
    half_at: Share


def _stats(rows: Iterable[tuple[int, int, int, str, float]]) -> tuple[np.ndarray, list[str], int]:
    """Per deal: n_p and S_p of each policy, Σy², Σ_cell T²/R, Σ_cell (T/R)², cells; and R."""
    by_deal: dict[int, dict[tuple[int, str] | int, float]] = {}
    cells: dict[tuple[int, int], list[float]] = {}
    pols: set[str] = set()
    for deal, _rot, seat, policy, y in rows:
        cells.setdefault((deal, seat), []).append(float(y))
        d = by_deal.setdefault(deal, {})
        d[(0, policy)] = d.get((0, policy), 0.0) + 1.0
        d[(1, policy)] = d.get((1, policy), 0.0) + float(y)
        pols.add(policy)
    names = sorted(pols)
    deals = sorted(by_deal)
    at = {d: i for i, d in enumerate(deals)}
    k = len(names)
    out = np.zeros((len(deals), 2 * k + 4))
    reps = {len(v) for v in cells.values()}
    if len(reps) > 1 or len(pols) != max(reps, default=0):
        raise ValueError(
            "not a whole duplicate run: every deal and seat must be played once by each policy"
            f" ({len(pols)} policies, {sorted(reps)} plays of a deal's seat)"
        )
    for (deal, _seat), ys in cells.items():
        i = at[deal]
        t, r = sum(ys), len(ys)
        out[i, 2 * k] += sum(y * y for y in ys)
        out[i, 2 * k + 1] += t * t / r
        out[i, 2 * k + 2] += (t / r) ** 2
        out[i, 2 * k + 3] += 1
    for deal, d in by_deal.items():
        for j, p in enumerate(names):
            out[at[deal], j] = d.get((0, p), 0.0)
            out[at[deal], k + j] = d.get((1, p), 0.0)
    return out, names, max(reps) if reps else 0


def _components(tot: np.ndarray, k: int, reps: int) -> np.ndarray:
    """(V_P, V_C, V_E) from the column sums ``tot`` (one row per resample)."""
    n_p, s_p = tot[:, :k], tot[:, k : 2 * k]
    q, a, b, c = (tot[:, 2 * k + i] for i in range(4))
    n = n_p.sum(axis=1)
    mu = s_p.sum(axis=1) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        mu_p = np.where(n_p > 0, s_p / np.maximum(n_p, 1), 0.0)
    v_p = ((n_p / n[:, None]) * (mu_p - mu[:, None]) ** 2).sum(axis=1)
    df = n - c - k + 1
    v_e = np.maximum((q - a) - n * v_p, 0.0) / np.maximum(df, 1)
    v_c = np.maximum(b / c - mu**2 - v_e / reps, 0.0)
    return np.stack([v_p, v_c, v_e], axis=1)


def _share(point: float, boot: np.ndarray) -> Share:
    good = boot[~np.isnan(boot)]
    if good.size == 0:
        return Share(point, float("nan"), float("nan"))
    lo, hi = np.percentile(good, [2.5, 97.5])
    return Share(float(point), float(lo), float(hi))


def decompose(rows: Iterable[tuple[int, int, int, str, float]]) -> Decomposition:
    """The decomposition of the seat-hands ``rows`` (``deal_id, rotation, seat, policy,
    delta``) of one duplicate run."""
    per_deal, names, reps = _stats(rows)
    k = len(names)
    if per_deal.shape[0] < 2 or reps < 2 or k < 2:
        raise ValueError("a duplicate run of at least two deals and two policies is needed")
    point = _components(per_deal.sum(axis=0)[None, :], k, reps)[0]
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    d = per_deal.shape[0]
    counts = rng.multinomial(d, np.full(d, 1.0 / d), size=BOOTSTRAP).astype(float)
    boot = _components(counts @ per_deal, k, reps)

    def shares(v: np.ndarray) -> np.ndarray:
        return v / v.sum(axis=-1, keepdims=True)

    ps, bs = shares(point), shares(boot)

    def grown(v: np.ndarray, hands: int) -> np.ndarray:
        return hands * v[..., 0] / (hands * v[..., 0] + v[..., 1] + v[..., 2])

    with np.errstate(invalid="ignore", divide="ignore"):
        half_p = (point[1] + point[2]) / point[0] if point[0] > 0 else float("nan")
        half_b = np.where(boot[:, 0] > 0, (boot[:, 1] + boot[:, 2]) / boot[:, 0], np.nan)
    totals = per_deal.sum(axis=0)
    means = tuple(float(totals[k + j] / totals[j]) for j in range(k))
    return Decomposition(
        deals=d, seat_hands=int(totals[:k].sum()), policies=tuple(names), means=means,
        variance=float(point.sum()), policy=_share(ps[0], bs[:, 0]),
        cards=_share(ps[1], bs[:, 1]), rest=_share(ps[2], bs[:, 2]),
        growth=tuple((h, _share(float(grown(point, h)), grown(boot, h))) for h in SESSION_HANDS),
        half_at=_share(half_p, half_b),
    )  # fmt: skip
