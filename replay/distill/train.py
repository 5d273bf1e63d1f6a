"""Fit a ``learned`` table's coefficients to teacher data (numpy only).

For each kind of decision (discards, claims) the policy is taken as a softmax over the options
of a decision, an option's logit its score Σ coefficient × feature. The fit minimises the
**expected regret** under that softmax: the mean over decisions of Σ π(option) × (the
search's best value − the option's value), in points of score per hand, plus ``l2`` × the
squared distance from the starting coefficients (in units of each feature's spread). The
search's values are unbiased but noisy estimates, so the objective is an unbiased estimate
of the true one for any coefficients: noise averages out over many decisions, and more
decisions valued by fewer rollouts teach as well as fewer valued by more. As the scores
sharpen, the softmax tends to the policy's own choice, and the objective to its regret.

Gradient descent with a backtracking step from the start table and from softened copies of
it, chosen by cross-validation (:func:`fit`; the start is kept when no fit beats it): a
pure function of the data and the start (no random initialisation, no batches, no BLAS: the
sums are ``einsum``'s, in a fixed order on any machine and thread count); 20 or 21 unknowns
per kind.
Cross-entropy to a softmax of the values and pairwise ranking were tried first and lost
strength in play while agreeing more with the teacher (docs/DISTILL.md).

:func:`assess` measures a table against held-out teacher data: how often its choice is the
search's best option (agreement) and the mean value it gives up by its choice (regret, in
points per decision, as the teacher values it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from engine.policies import learned as L
from engine.policies import weights as W
from replay.distill.teacher import FEATURE_COLUMNS

#: Descent steps at most (fits here stop after 100 to 300).
MAX_STEPS = 500
#: Stop when a step lowers the objective by less than this (points per decision).
TOLERANCE = 1e-9
#: The fit descends from the start scaled by each of these (:func:`fit`).
SOFTENING = (1.0, 0.3, 0.1)
#: The folds of the cross-validation that chooses a descent (:func:`fit`): decision i is
#: in fold i mod INNER. (A hand's decisions fall in different folds, so a fold is not fully
#: independent of the others; the validation on fresh deals is the judge of a table.)
INNER = 5

KINDS = ((L.DISCARD, L.DISCARD_FEATURES), (L.CLAIM, L.CLAIM_FEATURES))


@dataclass(frozen=True)
class Decisions:
    """The options of one kind of decision: features ``x`` (rows), values ``q``, and
    ``starts``: where each decision's rows begin."""

    x: np.ndarray
    q: np.ndarray
    starts: np.ndarray

    @property
    def count(self) -> int:
        return len(self.starts)

    def subset(self, keep: np.ndarray) -> Decisions:
        """The decisions where ``keep`` (one flag per decision) is set, in order."""
        sizes = np.diff(np.r_[self.starts, len(self.q)])
        rows = np.repeat(keep, sizes)
        kept = sizes[keep]
        starts = np.cumsum(np.r_[0, kept])[:-1].astype(np.int64)
        return Decisions(self.x[rows], self.q[rows], starts)

    @classmethod
    def of(cls, table: pa.Table, kind: int, n_features: int) -> Decisions:
        """The decisions of ``kind`` in teacher rows (decisions contiguous, as written)."""
        mask = np.asarray(table.column("kind").to_numpy(zero_copy_only=False)) == kind
        idx = np.flatnonzero(mask)
        x = np.stack(
            [
                table.column(c).to_numpy(zero_copy_only=False)[idx]
                for c in FEATURE_COLUMNS[:n_features]
            ],
            axis=1,
        ).astype(np.float64)
        q = table.column("value").to_numpy(zero_copy_only=False)[idx].astype(np.float64)
        # a decision is (chunk, decision number): rows of one decision are contiguous
        key = (
            table.column("chunk").to_numpy(zero_copy_only=False)[idx].astype(np.int64) << 32
        ) | table.column("decision").to_numpy(zero_copy_only=False)[idx].astype(np.int64)
        starts = (
            np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
        )
        return cls(x, q, starts)


def _group_max(v: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return np.maximum.reduceat(v, starts)


def _softmax(z: np.ndarray, starts: np.ndarray) -> np.ndarray:
    sizes = np.diff(np.r_[starts, len(z)])
    z = z - np.repeat(_group_max(z, starts), sizes)
    e = np.exp(z)
    return e / np.repeat(np.add.reduceat(e, starts), sizes)


def fit(d: Decisions, start: np.ndarray, l2: float = 0.0) -> np.ndarray:
    """The coefficients fitted to ``d`` from ``start``, chosen by cross-validation: the
    decisions are dealt into :data:`INNER` folds (decision i to fold i mod INNER); each of
    :data:`SOFTENING`'s descents is fitted on the other folds and judged by its regret on
    each fold in turn, so every decision judges once; the softening of least regret over all
    decisions, if it beats ``start``'s, is fitted again on all of ``d`` (else ``start`` is
    kept). A start whose scores are far apart is a near-argmax softmax whose gradient
    vanishes: a softer start lets the fit move (the scale of the coefficients does not change
    the choices). ``l2`` pulls toward ``start``. (A single held-out fifth judged too few
    decisions: its noise kept the start where the descents were better on held-out data.)"""
    if d.count < INNER:
        return start.copy()
    fold = np.arange(d.count) % INNER
    parts = [(d.subset(fold != f), d.subset(fold == f)) for f in range(INNER)]
    best_c, best_regret = None, assess(d, start).regret
    for c in SOFTENING:
        lost = sum(
            assess(judge, descend(rest, start * c, l2, start)).regret * judge.count
            for rest, judge in parts
        )
        regret = lost / d.count
        if regret < best_regret - 1e-12:
            best_c, best_regret = c, regret
    if best_c is None:
        return start.copy()
    return descend(d, start * best_c, l2, start)


def descend(d: Decisions, start: np.ndarray, l2: float, anchor: np.ndarray) -> np.ndarray:
    """Gradient descent on the expected regret on ``d`` (plus ``l2`` × ‖(θ − anchor) ·
    spread‖²) from ``start``; a feature that never varies keeps its start."""
    scale = d.x.std(axis=0)
    live = scale > 0
    scale = np.where(live, scale, 1.0)
    x = d.x / scale  # features in units of their spread
    theta0 = anchor * scale
    sizes = np.diff(np.r_[d.starts, len(d.q)])
    regret = np.repeat(_group_max(d.q, d.starts), sizes) - d.q
    n = d.count

    def objective(th: np.ndarray) -> tuple[float, np.ndarray]:
        p = _softmax(np.einsum("ij,j->i", x, th), d.starts)
        return float(np.sum(p * regret) / n + l2 * np.sum((th - theta0) ** 2)), p

    theta = start * scale
    current, p = objective(theta)
    rate = 1.0
    for _ in range(MAX_STEPS):
        mean_regret = np.repeat(np.add.reduceat(p * regret, d.starts), sizes)
        grad = np.einsum("ij,i->j", x, p * (regret - mean_regret)) / n + 2 * l2 * (theta - theta0)
        grad[~live] = 0.0
        while rate >= 1e-8:
            trial = theta - rate * grad
            value, p_trial = objective(trial)
            if value < current:
                break
            rate *= 0.5
        else:
            break
        done = current - value < TOLERANCE
        theta, current, p = trial, value, p_trial
        rate *= 1.5
        if done:
            break
    return theta / scale


@dataclass(frozen=True)
class Assessment:
    """A table against teacher data: decisions, the share where its choice is the search's
    best option, and the mean value given up (points per decision)."""

    decisions: int
    agreement: float
    regret: float


def assess(d: Decisions, coef: np.ndarray) -> Assessment:
    """How a coefficient vector chooses on ``d`` (the first best-scoring option; the rng's
    tie-break aside, as the policy chooses)."""
    if d.count == 0:
        return Assessment(0, 0.0, 0.0)
    s = np.einsum("ij,j->i", d.x, coef)
    sizes = np.diff(np.r_[d.starts, len(s)])
    gid = np.repeat(np.arange(d.count), sizes)
    # the first option of highest score / value in each decision
    pick = _first_max(s, d.starts, gid)
    best = _first_max(d.q, d.starts, gid)
    qmax = d.q[best]
    return Assessment(
        d.count,
        float(np.mean(d.q[pick] >= qmax)),
        float(np.mean(qmax - d.q[pick])),
    )


def _first_max(v: np.ndarray, starts: np.ndarray, gid: np.ndarray) -> np.ndarray:
    top = np.repeat(_group_max(v, starts), np.diff(np.r_[starts, len(v)]))
    hit = np.flatnonzero(v >= top)
    first = np.full(len(starts), -1, dtype=np.int64)
    g = gid[hit]
    keep = np.r_[True, g[1:] != g[:-1]]
    first[g[keep]] = hit[keep]
    return first


def coefficients(table: W.PolicyWeights, names: tuple[str, ...]) -> np.ndarray:
    return np.array([table[n] for n in names], dtype=np.float64)


def with_coefficients(table: W.PolicyWeights, fitted: dict[str, float]) -> W.PolicyWeights:
    """``table`` with the coefficients ``fitted`` (rounded to 6 significant digits, clipped to
    the parameter's range: the file a person reads, the same bytes on any machine)."""
    values = list(table.values)
    for name, v in fitted.items():
        p = W.BY_NAME[name]
        x = float(f"{min(max(v, p.low), p.high):.6g}") + 0.0
        values[W.INDEX[name]] = x
    return W.PolicyWeights(table.policy, tuple(values))


def train(data: pa.Table, start: W.PolicyWeights, l2: float = 0.0) -> W.PolicyWeights:
    """``start`` with both kinds' coefficients fitted to ``data``."""
    fitted: dict[str, float] = {}
    for kind, names in KINDS:
        d = Decisions.of(data, kind, len(names))
        theta = fit(d, coefficients(start, names), l2)
        fitted.update(zip(names, theta.tolist()))
    return with_coefficients(start, fitted)


def assess_table(data: pa.Table, table: W.PolicyWeights) -> dict[str, Assessment]:
    """:func:`assess` per kind (``discard``, ``claim``)."""
    out = {}
    for kind, names in KINDS:
        d = Decisions.of(data, kind, len(names))
        out["discard" if kind == L.DISCARD else "claim"] = assess(d, coefficients(table, names))
    return out
