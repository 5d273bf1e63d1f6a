"""The deck shuffle in numba (mirrors engine.deck): SplitMix64 Fisher–Yates, version 1.

>>> from engine.deck import shuffle_deck
>>> seeds = np.array([0, 12345, 2**64 - 1], dtype=np.uint64)
>>> [tuple(int(k) for k in d) for d in shuffle_decks(seeds)] == [shuffle_deck(int(s)) for s in seeds]
True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.deck import SHUFFLE_VERSION
from engine.fast.cache_guard import guard

assert SHUFFLE_VERSION == 1  # a new shuffle version needs a new kernel here

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True)
def shuffle_into(seed, out):
    """engine.deck.shuffle_deck(seed) into ``out`` (80 entries); ``seed`` a uint64."""
    for i in range(80):
        out[i] = i // 4
    state = np.uint64(seed)
    for i in range(79, 0, -1):
        n = np.uint64(i + 1)
        q = _ALL // n
        exact = _ALL % n == n - np.uint64(1)  # 2**64 divisible by n: no rejection
        limit = q * n
        while True:
            state = state + _GAMMA
            z = state
            z = (z ^ (z >> np.uint64(30))) * _M1
            z = (z ^ (z >> np.uint64(27))) * _M2
            x = z ^ (z >> np.uint64(31))
            if exact or x < limit:
                break
        j = np.int64(x % n)
        t = out[i]
        out[i] = out[j]
        out[j] = t


@njit(cache=True)
def shuffle_decks(seeds):
    """(n, 80) uint8 decks of n uint64 seeds."""
    n = seeds.shape[0]
    out = np.empty((n, 80), dtype=np.uint8)
    for h in range(n):
        shuffle_into(seeds[h], out[h])
    return out


guard("deck", globals())
