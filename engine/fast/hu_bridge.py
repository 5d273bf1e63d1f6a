"""The state machine's two calls into the hu kernels (:mod:`engine.fast.hu`), in one place.

``eval_hu(rp, hp, hand, meld_kind, meld_id, card, source, tianhu, haidi, dihu, res)`` and
``auto_tianhu(rp, hp, hand, res)`` fill ``res[0:7]`` with (win, huxi, deng, fan, score,
mingtang mask, zimo) and return whether the hand wins; ``card`` is -1 for "no card" and
``hp`` is ``engine.fast.hu.rule_params(rules)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.fast import hu as H
from engine.fast.cache_guard import guard

AVAILABLE = True


def hu_params(rules):
    """The hu kernel's rule parameters (engine.fast.hu.rule_params)."""
    return H.rule_params(rules)


@njit(cache=True)
def _copy_out(out, res):
    res[0] = out[H.O_WIN]
    res[1] = out[H.O_HUXI]
    res[2] = out[H.O_DENG]
    res[3] = out[H.O_FAN]
    res[4] = out[H.O_SCORE]
    res[5] = out[H.O_MINGTANG]
    res[6] = out[H.O_ZIMO]


@njit(cache=True)
def eval_hu(rp, hp, hand, meld_kind, meld_id, card, source, tianhu, haidi, dihu, res):
    h = np.empty(20, dtype=np.int64)
    for k in range(20):
        h[k] = hand[k]
    out = np.zeros(H.OUT_SIZE, dtype=np.int64)
    win = H.hu_eval(
        hp, meld_kind, meld_id, meld_kind.shape[0], h, card, source, tianhu, haidi, dihu, out
    )
    _copy_out(out, res)
    return win != 0


@njit(cache=True)
def auto_tianhu(rp, hp, hand, res):
    h = np.empty(20, dtype=np.int64)
    for k in range(20):
        h[k] = hand[k]
    out = np.zeros(H.OUT_SIZE, dtype=np.int64)
    win = H.hu_auto_tianhu(hp, h, out)
    _copy_out(out, res)
    return win != 0


guard("hu_bridge", globals())
