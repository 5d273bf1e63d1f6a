"""The state machine's two calls into the hu kernels (:mod:`engine.fast.hu`), in one place.

``eval_hu(hp, st, hand, kinds, ids, n_melds, card, source, tianhu, haidi, dihu, res)`` and
``auto_tianhu(hp, st, hand, res)`` read the hand (20 counts) at ``st[hand:]`` and the table
melds at ``st[kinds:]`` / ``st[ids:]`` (GroupKind, face or eat shape id), and write (win,
huxi, deng, fan, score, mingtang mask, zimo) to ``st[res : res + 7]``; they return whether the
hand wins (``auto_tianhu`` writes only a win). ``card`` is -1 for "no card". The offsets into
the state, not views of it: a view costs numba reference-count calls on every call.

``hp`` (:func:`hu_params`) is ``engine.fast.hu.rule_params(rules)`` followed by the scratch
of these calls (the result and ``hu_eval_at``'s work space), so that an evaluation allocates
nothing: about 30 per hand, each allocation of three arrays costing more than the search
itself often does. Every call overwrites the scratch before reading it; one process runs one
kernel at a time (the kernels hold the GIL), so sharing ``hp`` between the calls of a process
is safe.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.fast import hu as H
from engine.fast.cache_guard import guard

AVAILABLE = True


# hp: the rule parameters, then the scratch (the result, the work space)
_OUT = H.PARAMS_SIZE
_WS = _OUT + H.OUT_SIZE
HP_SIZE = _WS + H.WS_SIZE


def hu_params(rules):
    """The hu kernel's rule parameters (engine.fast.hu.rule_params) and the scratch of
    :func:`eval_hu` / :func:`auto_tianhu` (see the module doc)."""
    hp = np.zeros(HP_SIZE, dtype=np.int64)
    hp[:_OUT] = H.rule_params(rules)
    return hp


@njit(cache=True)
def _copy_out(hp, st, res):
    st[res] = hp[_OUT + H.O_WIN]
    st[res + 1] = hp[_OUT + H.O_HUXI]
    st[res + 2] = hp[_OUT + H.O_DENG]
    st[res + 3] = hp[_OUT + H.O_FAN]
    st[res + 4] = hp[_OUT + H.O_SCORE]
    st[res + 5] = hp[_OUT + H.O_MINGTANG]
    st[res + 6] = hp[_OUT + H.O_ZIMO]


@njit(cache=True)
def eval_hu(hp, st, hand, kinds, ids, n_melds, card, source, tianhu, haidi, dihu, res):
    win = H.hu_eval_at(
        hp, st, kinds, st, ids, n_melds, st, hand, card, source, tianhu, haidi, dihu, hp, _OUT,
        hp, _WS,
    )  # fmt: skip
    _copy_out(hp, st, res)
    return win != 0


@njit(cache=True)
def auto_tianhu(hp, st, hand, res):
    win = H.hu_auto_tianhu_at(hp, st, hand, hp, _OUT)
    if win:
        _copy_out(hp, st, res)
    return win != 0


guard("hu_bridge", globals())
