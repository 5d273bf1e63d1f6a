"""The state machine's two calls into the hu kernels (:mod:`engine.fast.hu`), in one place.

``eval_hu(rp, hp, hand, meld_kind, meld_id, card, source, tianhu, haidi, dihu, res)`` and
``auto_tianhu(rp, hp, hand, res)`` fill ``res[0:7]`` with (win, huxi, deng, fan, score,
mingtang mask, zimo) and return whether the hand wins; ``card`` is -1 for "no card".

``hp`` (:func:`hu_params`) is ``engine.fast.hu.rule_params(rules)`` followed by the scratch
of these calls (the hand copy, the result and ``hu_eval_ws``'s work space), so that an
evaluation allocates nothing: about 30 per hand, each allocation of three arrays costing more
than the search itself often does. Every call overwrites the scratch before reading it; one
process runs one kernel at a time (the kernels hold the GIL), so sharing ``hp`` between the
calls of a process is safe.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.fast import hu as H
from engine.fast.cache_guard import guard

AVAILABLE = True


# hp: the rule parameters, then the scratch (hand copy, result, work space)
_HC = H.PARAMS_SIZE
_OUT = _HC + 20
_WS = _OUT + H.OUT_SIZE
HP_SIZE = _WS + H.WS_SIZE


def hu_params(rules):
    """The hu kernel's rule parameters (engine.fast.hu.rule_params) and the scratch of
    :func:`eval_hu` / :func:`auto_tianhu` (see the module doc)."""
    hp = np.zeros(HP_SIZE, dtype=np.int64)
    hp[:_HC] = H.rule_params(rules)
    return hp


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
    h = hp[_HC:_OUT]
    for k in range(20):
        h[k] = hand[k]
    out = hp[_OUT:_WS]
    n = meld_kind.shape[0]
    win = H.hu_eval_ws(
        hp, meld_kind, meld_id, n, h, card, source, tianhu, haidi, dihu, out, hp[_WS:HP_SIZE]
    )
    _copy_out(out, res)
    return win != 0


@njit(cache=True)
def auto_tianhu(rp, hp, hand, res):
    h = hp[_HC:_OUT]
    for k in range(20):
        h[k] = hand[k]
    out = hp[_OUT:_WS]
    win = H.hu_auto_tianhu(hp, h, out)
    _copy_out(out, res)
    return win != 0


guard("hu_bridge", globals())
