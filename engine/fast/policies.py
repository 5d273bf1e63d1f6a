"""Compiled policies (mirrors engine.policies): a code per built-in policy and one dispatch.

``choose(code, rp, hp, st, seat, mt)`` returns the action the policy takes at a decision of
``seat`` with more than one legal option (legal codes: ``st[PEND_A + seat·MAXA …]``);
``mt`` is that seat's :mod:`engine.fast.pyrandom` generator (the reference policy's
``random.Random``).

* ``random`` (engine.policies.random_policy): ``legal[rng.randrange(len(legal))]``.
"""

from __future__ import annotations

from numba import njit

from engine.fast import state as S
from engine.fast.pyrandom import randbelow

RANDOM = 0
POLICY_CODES = {"random": RANDOM}


@njit(cache=True)
def choose(code, rp, hp, st, seat, mt):
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    return st[base + randbelow(mt, n)]
