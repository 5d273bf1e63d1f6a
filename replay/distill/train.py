"""Fit a ``learned`` table's coefficients to teacher data (numpy only).

For each kind of decision (discards, claims) the model is a softmax over the options of a
decision, the logit of an option its score Σ coefficient × feature. Its target is the
teacher's own softmax over the options' values at temperature ``tau`` (points of score per
hand): an option the search values ``tau`` points higher is e ≈ 2.7 times as likely. The fit
minimises the mean cross-entropy plus ``l2`` × the squared distance from the starting
coefficients (in units of each feature's spread), by Newton's method: the problem has 10 and
13 unknowns, so the exact Hessian costs nothing, the fit converges in a few steps and is a
pure function of the data (no learning rate, no batches, no random start).

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

#: Newton steps at most (the fits here converge in under 15).
MAX_STEPS = 50
#: Stop when a step changes the loss by less than this.
TOLERANCE = 1e-10

KINDS = ((L.DISCARD, L.DISCARD_FEATURES), (L.CLAIM, L.CLAIM_FEATURES))


@dataclass(frozen=True)
class Decisions:
    """The options of one kind of decision: features ``x`` (rows), values ``q``, whether the
    apprentice chose them, and ``starts``: where each decision's rows begin."""

    x: np.ndarray
    q: np.ndarray
    chosen: np.ndarray
    starts: np.ndarray

    @property
    def count(self) -> int:
        return len(self.starts)

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
        chosen = table.column("chosen").to_numpy(zero_copy_only=False)[idx].astype(bool)
        # a decision is (chunk, decision number): rows of one decision are contiguous
        key = (
            table.column("chunk").to_numpy(zero_copy_only=False)[idx].astype(np.int64) << 32
        ) | table.column("decision").to_numpy(zero_copy_only=False)[idx].astype(np.int64)
        starts = (
            np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
        )
        return cls(x, q, chosen, starts)


def _group_max(v: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return np.maximum.reduceat(v, starts)


def _softmax(z: np.ndarray, starts: np.ndarray) -> np.ndarray:
    sizes = np.diff(np.r_[starts, len(z)])
    z = z - np.repeat(_group_max(z, starts), sizes)
    e = np.exp(z)
    return e / np.repeat(np.add.reduceat(e, starts), sizes)


def fit(d: Decisions, start: np.ndarray, tau: float, l2: float) -> np.ndarray:
    """The coefficients minimising the cross-entropy to the teacher's softmax at ``tau``
    plus ``l2`` × ‖(θ − start) · spread‖² (mean over decisions), from ``start``."""
    if d.count == 0:
        return start.copy()
    scale = d.x.std(axis=0)
    live = scale > 0
    scale = np.where(live, scale, 1.0)
    x = d.x / scale  # features in units of their spread
    theta0 = start * scale
    target = _softmax(d.q / tau, d.starts)
    theta = theta0.copy()
    n = d.count
    free = np.flatnonzero(live)

    def loss(th: np.ndarray) -> float:
        p = _softmax(x @ th, d.starts)
        ce = -np.sum(target * np.log(np.maximum(p, 1e-300))) / n
        return float(ce + l2 * np.sum((th - theta0) ** 2))

    current = loss(theta)
    for _ in range(MAX_STEPS):
        p = _softmax(x @ theta, d.starts)
        grad = x.T @ (p - target) / n + 2 * l2 * (theta - theta0)
        xp = x * p[:, None]
        m = np.add.reduceat(xp, d.starts, axis=0)
        hess = (xp.T @ x - m.T @ m) / n + 2 * l2 * np.eye(len(theta))
        step = np.zeros_like(theta)
        step[free] = np.linalg.solve(hess[np.ix_(free, free)], grad[free])
        t = 1.0
        while True:
            trial = theta - t * step
            value = loss(trial)
            if value <= current or t < 1e-6:
                break
            t *= 0.5
        done = current - value < TOLERANCE
        theta, current = trial, value
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
    s = d.x @ coef
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


def train(data: pa.Table, start: W.PolicyWeights, tau: float, l2: float) -> W.PolicyWeights:
    """``start`` with both kinds' coefficients fitted to ``data``."""
    fitted: dict[str, float] = {}
    for kind, names in KINDS:
        d = Decisions.of(data, kind, len(names))
        theta = fit(d, coefficients(start, names), tau, l2)
        fitted.update(zip(names, theta.tolist()))
    return with_coefficients(start, fitted)


def assess_table(data: pa.Table, table: W.PolicyWeights) -> dict[str, Assessment]:
    """:func:`assess` per kind (``discard``, ``claim``)."""
    out = {}
    for kind, names in KINDS:
        d = Decisions.of(data, kind, len(names))
        out["discard" if kind == L.DISCARD else "claim"] = assess(d, coefficients(table, names))
    return out
