"""One compiled pass over a shard's hands and events: every count the event summaries are
made of (``replay.derived.summarize_events``), the per-mask cluster sums included. numpy
would need per-deal cubes (slots × categories × deals) times the mask matrix, and a dozen
passes over hundreds of thousands of events; this loop walks the deals once, keeps a deal's
counts in small local arrays and adds each (policy, seat mask) figure as the deal ends, so
recording with event summaries stays within a few points of recording without.

The kernel takes plain integer arrays and knows nothing of the store. The caller gives the
hands in deal order (``hand_order``; a cluster is a deal, rows with one ``deal`` index in a
row), per hand its rotation (slot base ``4 · rotation``), the rows of its events
(``ev_start[h] … ev_start[h + 1] - 1``, each naming its hand id), the bits of its seated seats
(seat-hands), its winner (-1: none), 破跑胡 flag, claim conflicts and per seat its 比牌 eats;
per event its seat, action kind, forced flag, ``n_legal`` and ``options``; per policy code
``p`` and seat mask ``j`` the slots of the mask that ``p`` plays (``pm_slots[p, j, :pm_len[p,
j]]``; ``pm_bits[p, j, r]``: the bits of their seats in rotation ``r``). The category of an
event is ``kind · 2 + forced``; the offered kinds whose passes are counted are the bits
``offered``.

Every sum is of integers but the paired differences, which are float sums over the deals in
deal order, one addition at a time (as the SQL's ordered ``sum``).
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

#: ``clu[p, j, :]``: clusters with a seat-hand, seat-hands, Σ seat-hands² per cluster.
C_D, C_M, C_MM = range(3)
#: ``act[p, j, c, :]``: events, Σ y² and Σ y·m per cluster (y events, m seat-hands).
A_N, A_YY, A_YM = range(3)
#: ``dec[p, b, j, :]`` and ``frc[p, j, :]``: count, the passed (forced) part, clusters.
K_N, K_K, K_D = range(3)
#: ``fac[p, j, :]``: hands with a selected seat (their clusters, those with a claim conflict,
#: the conflicts), seat-hands with a 比牌 eat and the eats, won seat-hands (their clusters,
#: those won by 破跑胡).
F_HANDS, F_HANDS_D, F_CONFLICTED, F_CONFLICTS, F_BIP_K, F_BIP_Y, F_WON, F_WON_D, F_POPAO = range(9)
FACT_FIELDS = 9


@njit(cache=True)
def count_events(
    hand_order: Any, deal: Any, rotation: Any, ev_start: Any, hand_id: Any, seated: Any,
    winner: Any, popao: Any, conflicts: Any, bipai: Any,
    ev_hand: Any, seat: Any, kind: Any, forced: Any, n_legal: Any, options: Any,
    pm_slots: Any, pm_len: Any, pm_bits: Any, offered: Any, pass_kind: int, four_a: int,
    four_b: int, paired: bool,
    decisions: Any, declined: Any, fours: Any, legal: Any,
    clu: Any, act: Any, dec: Any, frc: Any, fac: Any,
    pair_d: Any, pair_s: Any, pair_played: Any,
) -> int:  # fmt: skip
    """Fill the output arrays (zeroed by the caller); -1, or the first event row whose hand
    id is not its hand's (nothing is then complete).

    Per hand: ``decisions[h]`` events, ``declined[b, h]`` passes on ``offered[b]`` in real
    choices (``n_legal`` ≥ 2), ``fours[h, seat]`` events of kind ``four_a`` or ``four_b``
    (提, 跑); per slot ``legal[slot, n_legal]`` real choices not forced. Per policy ``p`` and
    mask ``j``, over the clusters: ``clu``, ``act`` (per category), ``dec`` (per offered
    kind: real choices offering it, those passed, clusters with one), ``frc`` (events,
    forced ones, clusters with one), ``fac`` (the ``F_*`` fields); with ``paired``, per pair
    of policies ``a < b``: ``pair_d`` clusters where both have a seat-hand, ``pair_s[..., c,
    0/1]`` Σ and Σ² of the difference of events per seat-hand, ``pair_played`` whether one
    of them had such an event there."""
    n_pol, n_masks = pm_len.shape
    n_cats = act.shape[2]
    width = legal.shape[0]
    n_off = offered.shape[0]
    ycnt = np.zeros((width, n_cats), np.int64)
    off = np.zeros((n_off, width, 2), np.int64)
    slot_m = np.zeros(width, np.int64)
    slot_won = np.zeros(width, np.int64)
    slot_popao = np.zeros(width, np.int64)
    slot_bip_k = np.zeros(width, np.int64)
    slot_bip_y = np.zeros(width, np.int64)
    hands_loc = np.zeros((n_pol, n_masks, 3), np.int64)
    ybuf = np.zeros((n_pol, n_masks, n_cats), np.int64)
    mbuf = np.zeros((n_pol, n_masks), np.int64)
    touched = np.zeros(n_cats, np.int64)
    is_touched = np.zeros(n_cats, np.bool_)
    n_hands = hand_order.shape[0]
    i = 0
    while i < n_hands:
        d = deal[hand_order[i]]
        n_touched = 0
        # the deal's hands: seat-hands and facts per slot, events per slot and category
        while i < n_hands and deal[hand_order[i]] == d:
            h = hand_order[i]
            i += 1
            base = MAX_SEATS * rotation[h]
            bits = seated[h]
            for s in range(MAX_SEATS):
                if (bits >> s) & 1:
                    sl = base + s
                    slot_m[sl] += 1
                    b = bipai[s, h]
                    slot_bip_y[sl] += b
                    if b > 0:
                        slot_bip_k[sl] += 1
                    if winner[h] == s:
                        slot_won[sl] += 1
                        slot_popao[sl] += popao[h]
            r = rotation[h]
            for p in range(n_pol):
                for j in range(n_masks):
                    if bits & pm_bits[p, j, r]:
                        hands_loc[p, j, 0] += 1
                        if conflicts[h] > 0:
                            hands_loc[p, j, 1] += 1
                        hands_loc[p, j, 2] += conflicts[h]
            for e in range(ev_start[h], ev_start[h + 1]):
                if ev_hand[e] != hand_id[h]:
                    return e
                s = seat[e]
                sl = base + s
                k = kind[e]
                f = forced[e]
                c = k * 2 + f
                if not is_touched[c]:
                    is_touched[c] = True
                    touched[n_touched] = c
                    n_touched += 1
                ycnt[sl, c] += 1
                decisions[h] += 1
                if k in (four_a, four_b):
                    fours[h, s] += 1
                if n_legal[e] >= 2:
                    if f == 0:
                        legal[sl, n_legal[e]] += 1
                    passed = 1 if k == pass_kind else 0
                    for b in range(n_off):
                        if (options[e] >> offered[b]) & 1:
                            off[b, sl, passed] += 1
                            declined[b, h] += passed
        # the deal's figure per policy and mask
        for p in range(n_pol):
            for j in range(n_masks):
                m = 0
                won = 0
                pop = 0
                bip_k = 0
                bip_y = 0
                for t in range(pm_len[p, j]):
                    sl = pm_slots[p, j, t]
                    m += slot_m[sl]
                    won += slot_won[sl]
                    pop += slot_popao[sl]
                    bip_k += slot_bip_k[sl]
                    bip_y += slot_bip_y[sl]
                mbuf[p, j] = m
                if m > 0:
                    clu[p, j, C_D] += 1
                clu[p, j, C_M] += m
                clu[p, j, C_MM] += m * m
                every = 0
                n_forced = 0
                for u in range(n_touched):
                    c = touched[u]
                    y = 0
                    for t in range(pm_len[p, j]):
                        y += ycnt[pm_slots[p, j, t], c]
                    ybuf[p, j, c] = y
                    act[p, j, c, A_N] += y
                    act[p, j, c, A_YY] += y * y
                    act[p, j, c, A_YM] += y * m
                    every += y
                    if c % 2 == 1:
                        n_forced += y
                frc[p, j, K_N] += every
                frc[p, j, K_K] += n_forced
                if every > 0:
                    frc[p, j, K_D] += 1
                for b in range(n_off):
                    taken = 0
                    passes = 0
                    for t in range(pm_len[p, j]):
                        sl = pm_slots[p, j, t]
                        taken += off[b, sl, 0]
                        passes += off[b, sl, 1]
                    dec[p, b, j, K_N] += taken + passes
                    dec[p, b, j, K_K] += passes
                    if taken + passes > 0:
                        dec[p, b, j, K_D] += 1
                fac[p, j, F_BIP_K] += bip_k
                fac[p, j, F_BIP_Y] += bip_y
                fac[p, j, F_WON] += won
                if won > 0:
                    fac[p, j, F_WON_D] += 1
                fac[p, j, F_POPAO] += pop
                fac[p, j, F_HANDS] += hands_loc[p, j, 0]
                if hands_loc[p, j, 0] > 0:
                    fac[p, j, F_HANDS_D] += 1
                fac[p, j, F_CONFLICTED] += hands_loc[p, j, 1]
                fac[p, j, F_CONFLICTS] += hands_loc[p, j, 2]
                hands_loc[p, j, 0] = 0
                hands_loc[p, j, 1] = 0
                hands_loc[p, j, 2] = 0
        if paired:
            for a in range(n_pol):
                for bb in range(a + 1, n_pol):
                    for j in range(n_masks):
                        ma = mbuf[a, j]
                        mb = mbuf[bb, j]
                        if ma == 0 or mb == 0:
                            continue
                        pair_d[a, bb, j] += 1
                        for u in range(n_touched):
                            c = touched[u]
                            ya = ybuf[a, j, c]
                            yb = ybuf[bb, j, c]
                            if ya == 0 and yb == 0:
                                continue
                            diff = ya / ma - yb / mb
                            pair_s[a, bb, j, c, 0] += diff
                            pair_s[a, bb, j, c, 1] += diff * diff
                            pair_played[a, bb, j, c] = True
        # reset the deal's local counts
        for u in range(n_touched):
            c = touched[u]
            is_touched[c] = False
            for sl in range(width):
                ycnt[sl, c] = 0
        for sl in range(width):
            slot_m[sl] = 0
            slot_won[sl] = 0
            slot_popao[sl] = 0
            slot_bip_k[sl] = 0
            slot_bip_y[sl] = 0
            for b in range(n_off):
                off[b, sl, 0] = 0
                off[b, sl, 1] = 0
    return -1


def counts(
    hand_order: np.ndarray,
    deal: np.ndarray,
    rotation: np.ndarray,
    ev_start: np.ndarray,
    hand_id: np.ndarray,
    seated: np.ndarray,
    winner: np.ndarray,
    popao: np.ndarray,
    conflicts: np.ndarray,
    bipai: np.ndarray,
    events: tuple[np.ndarray, ...],
    pm_slots: np.ndarray,
    pm_len: np.ndarray,
    rotations: int,
    n_kinds: int,
    offered: tuple[int, ...],
    pass_kind: int,
    four: tuple[int, int],
    paired: bool,
) -> dict[str, np.ndarray]:
    """The arrays of :func:`count_events`, allocated and filled (int64; ``pair_s`` float64,
    ``pair_played`` bool). ``events``: the columns (hand id, seat, kind, forced, n_legal,
    options), in the rows ``ev_start`` gives; ``pm_bits`` is derived from ``pm_slots``.
    ``ValueError`` when an event's hand id is not
    that of the hand whose rows hold it."""
    width = MAX_SEATS * rotations
    n_hands = len(rotation)
    n_pol, n_masks, _ = pm_slots.shape
    n_cats, n_off = 2 * n_kinds, len(offered)
    pm_bits = np.zeros((n_pol, n_masks, max(rotations, 1)), np.int64)
    for p in range(n_pol):
        for j in range(n_masks):
            for sl in pm_slots[p, j, : pm_len[p, j]]:
                pm_bits[p, j, sl // MAX_SEATS] |= 1 << (sl % MAX_SEATS)
    out = {
        "decisions": np.zeros(n_hands, np.int64),
        "declined": np.zeros((n_off, n_hands), np.int64),
        "fours": np.zeros((n_hands, MAX_SEATS), np.int64),
        "legal": np.zeros((width, LEGAL_BINS), np.int64),
        "clu": np.zeros((n_pol, n_masks, 3), np.int64),
        "act": np.zeros((n_pol, n_masks, n_cats, 3), np.int64),
        "dec": np.zeros((n_pol, n_off, n_masks, 3), np.int64),
        "frc": np.zeros((n_pol, n_masks, 3), np.int64),
        "fac": np.zeros((n_pol, n_masks, FACT_FIELDS), np.int64),
        "pair_d": np.zeros((n_pol, n_pol, n_masks), np.int64),
        "pair_s": np.zeros((n_pol, n_pol, n_masks, n_cats, 2), np.float64),
        "pair_played": np.zeros((n_pol, n_pol, n_masks, n_cats), np.bool_),
    }
    ev_hand, seat, kind, forced, n_legal, options = events
    bad = count_events(
        hand_order, deal, rotation, ev_start, hand_id, seated, winner, popao, conflicts, bipai,
        ev_hand, seat, kind, forced, n_legal, options, pm_slots, pm_len, pm_bits,
        np.asarray(offered, np.int64), pass_kind, four[0], four[1], paired, out["decisions"], out["declined"], out["fours"], out["legal"], out["clu"],
        out["act"], out["dec"], out["frc"], out["fac"], out["pair_d"], out["pair_s"],
        out["pair_played"],
    )  # fmt: skip
    if bad >= 0:
        raise ValueError("an event's hand is not in the shard")
    return out
