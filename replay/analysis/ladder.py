"""A Bradley–Terry rating of policies from duplicate matches (the deal a match: the policy
whose mean score change per seat-hand is higher wins it, a tie is half a win each;
:func:`replay.analysis.figures.groups.duels`), on the Elo scale, with intervals.

P(a beats b) = 1 / (1 + 10^((R_b − R_a) / 400)). The ratings are the maximum-likelihood
estimate (Newton's method) with one ``anchor`` policy at :data:`ANCHOR_ELO`, and each pair
observed given one tied match more (a weak prior that keeps a rating finite when one policy
won every match); the 95 % interval of each rating is from the inverse of the observed
information (the anchor's rating is fixed, so its interval is 0 wide and the others are
relative to it).

>>> rs = bradley_terry([("a", "b", 75, 25, 0), ("b", "c", 75, 25, 0)], anchor="b")
>>> [(r.policy, round(r.elo)) for r in rs]
[('a', 1689), ('b', 1500), ('c', 1311)]
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from replay.analysis.intervals import Z95

#: The rating given to the anchor policy.
ANCHOR_ELO = 1500.0
#: Elo points per unit of the logistic scale (400 / ln 10).
ELO = 400.0 / math.log(10.0)
#: The tied matches added to every observed pair (the prior).
PRIOR_TIES = 1.0


@dataclass(frozen=True)
class Rating:
    policy: str
    elo: float
    lo: float
    hi: float
    matches: int


def bradley_terry(
    duels: Sequence[tuple[str, str, float, float, float]], anchor: str
) -> list[Rating]:
    """The rating of every policy of ``duels`` (``a, b, a_won, b_won, ties`` rows), best
    first; ``anchor`` must be one of them, and every policy linked to it by a path of
    matches (else ``ValueError`` naming the policies that are not)."""
    names = sorted({d[0] for d in duels} | {d[1] for d in duels})
    if anchor not in names:
        raise ValueError(f"the anchor {anchor!r} played no match")
    idx = {n: i for i, n in enumerate(names)}
    k = len(names)
    w = np.zeros((k, k))  # w[i, j]: wins of i over j (ties and the prior half each)
    matches = np.zeros(k, dtype=np.int64)
    for a, b, aw, bw, ties in duels:
        i, j = idx[a], idx[b]
        half = (ties + PRIOR_TIES) / 2.0
        w[i, j] += aw + half
        w[j, i] += bw + half
        matches[i] += int(aw + bw + ties)
        matches[j] += int(aw + bw + ties)
    n = w + w.T
    linked, todo = {idx[anchor]}, [idx[anchor]]
    while todo:
        here = todo.pop()
        for other in (int(x) for x in np.nonzero(n[here] > 0)[0]):
            if other not in linked:
                linked.add(other)
                todo.append(other)
    if len(linked) < k:
        lost = sorted(names[i] for i in range(k) if i not in linked)
        raise ValueError(f"no match links {', '.join(lost)} to the anchor {anchor!r}")
    free = [i for i in range(k) if i != idx[anchor]]
    theta = np.zeros(k)
    info = np.zeros((k, k))
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j] = P(i beats j)
        grad = (w - n * p).sum(axis=1)
        q = n * p * (1.0 - p)
        info = np.diag(q.sum(axis=1)) - q
        sub = info[np.ix_(free, free)]
        try:
            step = np.linalg.solve(sub, grad[free])
        except np.linalg.LinAlgError:
            break
        theta[free] += step
        if np.max(np.abs(step)) < 1e-10:
            break
    cov = np.full((k, k), np.nan)
    with contextlib.suppress(np.linalg.LinAlgError):  # singular: the ratings stay NaN
        cov[np.ix_(free, free)] = np.linalg.inv(info[np.ix_(free, free)])
    out = []
    for name in names:
        i = idx[name]
        elo = ANCHOR_ELO + ELO * theta[i]
        half = 0.0 if name == anchor else Z95 * ELO * math.sqrt(max(cov[i, i], 0.0))
        if name != anchor and math.isnan(cov[i, i]):
            elo = half = math.nan
        out.append(Rating(name, float(elo), float(elo - half), float(elo + half), int(matches[i])))
    return sorted(out, key=lambda r: (-r.elo if not math.isnan(r.elo) else math.inf, r.policy))
