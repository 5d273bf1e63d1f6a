"""One compiled pass over a shard's events: the counts the event summaries are made of
(``replay.analysis.summarize_events``). numpy would need a dozen passes over the events
(hundreds of thousands per shard), which costs more than the recording itself; this loop
makes one, so recording with event summaries stays within a few points of recording without.

The kernel takes plain integer arrays and knows nothing of the store: the caller gives, per
event, its hand's row (``hand``), seat, action kind, forced flag, ``n_legal`` and
``options``; per hand its rotation and deal index. The category of an event is
``kind · 2 + forced``; the offered kinds whose passes are counted are the bits ``offered``.
"""

from __future__ import annotations

from typing import Any

from engine.fast import cache as _cache

_cache.configure()

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

#: The slots of the counts: 4 · rotation + seat (at most 4 rotations of 4 seats).
MAX_SEATS = 4
#: Bins of ``n_legal`` (a uint8).
LEGAL_BINS = 256


@njit(cache=True)
def count_events(
    hand: Any, seat: Any, kind: Any, forced: Any, n_legal: Any, options: Any,
    rotation: Any, deal: Any, n_deals: int, width: int, n_kinds: int, offered: Any,
    pass_kind: int, four_a: int, four_b: int,
    by_kind: Any, offers: Any, legal: Any, decisions: Any, declined: Any, fours: Any,
) -> None:  # fmt: skip
    """Add to the output arrays (zeroed by the caller):

    * ``by_kind[slot, category, deal]`` events per (kind, forced) category;
    * ``offers[j, slot, passed, deal]`` real choices (``n_legal`` ≥ 2) offering the kind
      ``offered[j]``, split by whether the seat passed;
    * ``legal[slot, n_legal]`` real choices not forced;
    * ``decisions[hand]`` events; ``declined[j, hand]`` passes on ``offered[j]`` in real
      choices; ``fours[hand, seat]`` events of kind ``four_a`` or ``four_b`` (提, 跑).
    """
    for i in range(hand.shape[0]):
        h = hand[i]
        s = seat[i]
        slot = MAX_SEATS * rotation[h] + s
        d = deal[h]
        k = kind[i]
        f = forced[i]
        by_kind[slot, k * 2 + f, d] += 1
        decisions[h] += 1
        if k in (four_a, four_b):
            fours[h, s] += 1
        if n_legal[i] >= 2:
            if f == 0:
                legal[slot, n_legal[i]] += 1
            passed = 1 if k == pass_kind else 0
            for j in range(offered.shape[0]):
                if (options[i] >> offered[j]) & 1:
                    offers[j, slot, passed, d] += 1
                    declined[j, h] += passed


def counts(
    hand: np.ndarray,
    seat: np.ndarray,
    kind: np.ndarray,
    forced: np.ndarray,
    n_legal: np.ndarray,
    options: np.ndarray,
    rotation: np.ndarray,
    deal: np.ndarray,
    n_deals: int,
    rotations: int,
    n_kinds: int,
    offered: tuple[int, ...],
    pass_kind: int,
    four: tuple[int, int],
) -> dict[str, np.ndarray]:
    """The arrays of :func:`count_events`, allocated and filled: ``by_kind`` and ``offers``
    as float64 (exact counts, ready for the mask matrix products), the others int64."""
    width = MAX_SEATS * rotations
    n_hands = len(rotation)
    out = {
        "by_kind": np.zeros((width, 2 * n_kinds, n_deals), np.float64),
        "offers": np.zeros((len(offered), width, 2, n_deals), np.float64),
        "legal": np.zeros((width, LEGAL_BINS), np.int64),
        "decisions": np.zeros(n_hands, np.int64),
        "declined": np.zeros((len(offered), n_hands), np.int64),
        "fours": np.zeros((n_hands, MAX_SEATS), np.int64),
    }
    count_events(
        hand, seat, kind, forced, n_legal, options, rotation, deal, n_deals, width, n_kinds,
        np.asarray(offered, np.int64), pass_kind, four[0], four[1],
        out["by_kind"], out["offers"], out["legal"], out["decisions"], out["declined"],
        out["fours"],
    )  # fmt: skip
    return out
