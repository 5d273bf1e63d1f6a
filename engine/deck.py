"""The one chance event: the 80-card deck order, derived from a seed (STYLE §3).

Shuffle method, version ``SHUFFLE_VERSION = 1`` (never change it; add a new version):

* a SplitMix64 stream seeded with the 64-bit seed;
* Fisher–Yates from the last position down: for i = 79 … 1, draw 64-bit words ``x`` and take
  ``j = x mod (i + 1)``, rejecting ``x`` ≥ ⌊2⁶⁴ / (i+1)⌋·(i+1) so every j is exactly uniform;
  swap positions i and j of the kind-ordered deck (一×4, 二×4, …, 拾×4).

>>> d = shuffle_deck(12345)
>>> len(d), sorted(d) == full_deck()
(80, True)
>>> shuffle_deck(12345) == d
True
>>> derive_seed(7, "hand", 3) == derive_seed(7, "hand", 3) != derive_seed(7, "hand", 4)
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from engine.cards import full_deck

SHUFFLE_VERSION = 1
_MASK = (1 << 64) - 1


def splitmix64(state: int) -> tuple[int, int]:
    """One SplitMix64 step: (new state, output word)."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def shuffle_deck(seed: int) -> tuple[int, ...]:
    """The deck order for a 64-bit seed (method version 1, above)."""
    deck = full_deck()
    state = seed & _MASK
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        limit = ((1 << 64) // n) * n
        while True:
            state, x = splitmix64(state)
            if x < limit:
                break
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def derive_seed(run_seed: int, *path: object) -> int:
    """A 64-bit seed for a sub-stream (``derive_seed(seed, "session", 12)``): the first 8 bytes
    of SHA-256 over the run seed and the path, so streams never overlap by construction."""
    text = "/".join([str(int(run_seed))] + [str(p) for p in path])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def derive_seeds(run_seed: int, part: str, indices: Iterable[int]) -> list[int]:
    """``[derive_seed(run_seed, part, i) for i in indices]``, the common prefix formatted once
    (many seeds at a time, for the compiled engine's batches).

    >>> derive_seeds(7, "hand", [3, 4]) == [derive_seed(7, "hand", 3), derive_seed(7, "hand", 4)]
    True
    """
    prefix = f"{int(run_seed)}/{part}/"
    sha = hashlib.sha256
    return [
        int.from_bytes(sha(f"{prefix}{int(i)}".encode()).digest()[:8], "little") for i in indices
    ]
