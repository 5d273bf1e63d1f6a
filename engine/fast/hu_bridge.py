"""The state machine's two calls into the hu kernels (engine.fast.hu), in one place.

``eval_hu(rp, hp, hand, meld_kind, meld_id, card, source, tianhu, haidi, dihu, out)`` and
``auto_tianhu(rp, hp, hand, out)`` fill ``out`` with (win, huxi, deng, fan, score, mingtang
mask, zimo) and return whether the hand wins. ``card`` is -1 for "no card".

Stub until engine.fast.hu exists: no hu ever wins (tests then stop at the first reference
decision that offers a 胡).
"""

from __future__ import annotations

from numba import njit

AVAILABLE = False


@njit(cache=True)
def eval_hu(rp, hp, hand, meld_kind, meld_id, card, source, tianhu, haidi, dihu, out):
    out[0] = 0
    return False


@njit(cache=True)
def auto_tianhu(rp, hp, hand, out):
    out[0] = 0
    return False
