"""Compiled policies (mirrors engine.policies): a code per built-in policy and one dispatch.

``choose(code, rp, hp, w, st, seat, mt)`` returns the action the policy takes at a decision
of ``seat`` with more than one legal option (legal codes: ``st[PEND_A + seat·MAXA …]``);
``w`` is the seat's weight array (float64, engine.policies.weights.PARAMS order,
:func:`engine.fast.features.weights_array`; ``random`` ignores it); ``mt`` is that seat's
:mod:`engine.fast.pyrandom` generator (the reference policy's ``random.Random``, consumed
exactly as the reference consumes it).

* ``random`` (engine.policies.random_policy): ``legal[rng.randrange(len(legal))]``.
* ``greedy`` (:mod:`engine.fast.greedy`): 胡 when offered, the best-scoring take or PASS,
  the least valuable discard; ties broken by ``rng.randrange``.
* ``heuristic`` (:mod:`engine.fast.greedy` with :mod:`engine.fast.heuristic`'s terms).
* ``learned`` (:mod:`engine.fast.learned`): the option of highest Σ coefficient × feature.

Every weight and threshold is read from ``w`` by an index constant derived from the one
table (``I_*`` in those modules and in engine.fast.features), so any table plays compiled,
the same doubles in the same order as the reference.
"""

from __future__ import annotations

from numba import njit

from engine.fast import state as S
from engine.fast.cache_guard import guard
from engine.fast.greedy import greedy_act
from engine.fast.learned import learned_act
from engine.fast.pyrandom import randbelow

RANDOM = 0
GREEDY = 1
HEURISTIC = 2
LEARNED = 3
POLICY_CODES = {"random": RANDOM, "greedy": GREEDY, "heuristic": HEURISTIC, "learned": LEARNED}


@njit(cache=True)
def choose(code, rp, hp, w, st, seat, mt):
    n = st[S.PEND_N + seat]
    base = S.PEND_A + seat * S.MAXA
    if code == GREEDY:
        return greedy_act(rp, w, st, seat, mt, False)
    if code == HEURISTIC:
        return greedy_act(rp, w, st, seat, mt, True)
    if code == LEARNED:
        return learned_act(rp, w, st, seat, mt)
    return st[base + randbelow(mt, n)]


guard("policies", globals())
