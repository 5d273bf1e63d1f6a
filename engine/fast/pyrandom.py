"""Python's ``random.Random`` (MT19937) in numba: same seeding, same ``randrange(n)``.

A generator is an int64 array of 625 words: the 624-word Mersenne Twister state and the
index of the next word. :func:`seed_key` turns a Python int seed into the key CPython's
``random.seed(int)`` uses (its absolute value as 32-bit words, least significant first),
:func:`mt_seed` runs ``init_by_array`` on it, :func:`randbelow` is
``Random._randbelow_with_getrandbits`` (``getrandbits(n.bit_length())`` with rejection), so
``choice``/``randrange(n)`` of the reference policies give the same values.

>>> import random
>>> mt = new_generator(2**40 + 7)
>>> r = random.Random(2**40 + 7)
>>> [randbelow(mt, 6) for _ in range(8)] == [r.randrange(6) for _ in range(8)]
True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.fast.cache_guard import guard

N = 624
M = 397
MASK = 0xFFFFFFFF
MATRIX_A = 0x9908B0DF
UPPER = 0x80000000
LOWER = 0x7FFFFFFF
KEY_MAX = 8  # words of key (seeds up to 256 bits)


def seed_key(seed: int) -> np.ndarray:
    """CPython's init_by_array key of an int seed: [length, word0, word1, …]."""
    n = abs(int(seed))
    words = []
    while n:
        words.append(n & MASK)
        n >>= 32
    if not words:
        words = [0]
    if len(words) > KEY_MAX:
        raise ValueError("seed too large")
    key = np.zeros(KEY_MAX + 1, dtype=np.int64)
    key[0] = len(words)
    key[1 : 1 + len(words)] = words
    return key


def _init_genrand(s: int) -> np.ndarray:
    mt = np.zeros(N, dtype=np.int64)
    mt[0] = s
    for i in range(1, N):
        mt[i] = (1812433253 * (int(mt[i - 1]) ^ (int(mt[i - 1]) >> 30)) + i) & MASK
    return mt


_GENRAND_19650218 = _init_genrand(19650218)


@njit(cache=True)
def mt_seed(mt, key):
    """init_by_array(key[1 : 1 + key[0]]) into the 625-word generator ``mt``."""
    mt[:N] = _GENRAND_19650218  # init_genrand(19650218), the same for every seed
    klen = key[0]
    i = 1
    j = 0
    k = N if klen < N else klen
    while k:
        mt[i] = (
            (mt[i] ^ (((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525) & MASK)) + key[1 + j] + j
        ) & MASK
        i += 1
        j += 1
        if i >= N:
            mt[0] = mt[N - 1]
            i = 1
        if j >= klen:
            j = 0
        k -= 1
    k = N - 1
    while k:
        mt[i] = ((mt[i] ^ (((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941) & MASK)) - i) & MASK
        i += 1
        if i >= N:
            mt[0] = mt[N - 1]
            i = 1
        k -= 1
    mt[0] = 0x80000000
    mt[N] = N


@njit(cache=True)
def mt_seed64(mt, seed):
    """random.Random(seed) for 0 <= seed < 2**64 (``seed`` as a uint64 or int64 pattern)."""
    key = np.zeros(3, dtype=np.int64)
    v = np.uint64(seed)
    lo = np.int64(v & np.uint64(MASK))
    hi = np.int64(v >> np.uint64(32))
    key[0] = 2 if hi else 1
    key[1] = lo
    key[2] = hi
    mt_seed(mt, key)


@njit(cache=True)
def _twist(mt):
    for kk in range(N - M):
        y = (mt[kk] & UPPER) | (mt[kk + 1] & LOWER)
        mt[kk] = mt[kk + M] ^ (y >> 1) ^ (MATRIX_A if y & 1 else 0)
    for kk in range(N - M, N - 1):
        y = (mt[kk] & UPPER) | (mt[kk + 1] & LOWER)
        mt[kk] = mt[kk + (M - N)] ^ (y >> 1) ^ (MATRIX_A if y & 1 else 0)
    y = (mt[N - 1] & UPPER) | (mt[0] & LOWER)
    mt[N - 1] = mt[M - 1] ^ (y >> 1) ^ (MATRIX_A if y & 1 else 0)
    mt[N] = 0


@njit(cache=True)
def genrand_uint32(mt):
    if mt[N] >= N:
        _twist(mt)
    y = mt[mt[N]]
    mt[N] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & MASK


@njit(cache=True)
def getrandbits(mt, k):
    """getrandbits(k) for 1 <= k <= 32."""
    return genrand_uint32(mt) >> (32 - k)


@njit(cache=True)
def randbelow(mt, n):
    """random.Random.randrange(n) for 1 <= n < 2**32."""
    k = 0
    v = n
    while v:
        k += 1
        v >>= 1
    r = getrandbits(mt, k)
    while r >= n:
        r = getrandbits(mt, k)
    return r


def new_generator(seed: int) -> np.ndarray:
    mt = np.zeros(N + 1, dtype=np.int64)
    mt_seed(mt, seed_key(seed))
    return mt


guard("pyrandom", globals())
