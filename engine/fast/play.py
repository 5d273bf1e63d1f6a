"""The compiled play loop (mirrors engine.play): whole hands in one njit call, log columns out.

:func:`play_batch` plays ``n`` hands (deck, dealer, policy seed each) with one policy per seat
and returns the ``events`` and ``hands`` columns exactly as ``replay.recorder.ShardRecorder``
buffers them (nullable uint8 columns hold ``NULL8`` = 255, ``huxi``… are 0 for 荒庄, ``zimo``
255 for 荒庄).

The policy RNG of seat ``s`` is Python's ``random.Random(derive_seed(seed, "policy", s))``
(``engine.play._play``), reproduced by :mod:`engine.fast.pyrandom`; forced decisions and
legal sets of one never consult a policy, as in the reference.

>>> from engine.deck import shuffle_deck
>>> from engine.rules import find_rules
>>> decks = np.array([shuffle_deck(7)], dtype=np.uint8)
>>> ev, hands = play_batch(find_rules("hunan"), decks, [0], [7], ["random"] * 3)
>>> int(hands["n_events"][0]) == len(ev["seq"])
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from engine.actions import CHI_BASE, DISCARD_BASE, PAO_BASE
from engine.deck import derive_seed
from engine.fast import state as S
from engine.fast.policies import POLICY_CODES, choose
from engine.fast.pyrandom import KEY_MAX, mt_seed, seed_key
from engine.fast.pyrandom import N as MT_N
from engine.rules import RuleSet

NULL8 = 255
MAX_EVENTS_PER_HAND = 1024  # a hand has ~19 draws; far fewer events than this

# Columns of the hands output (int32 matrix), in the recorder's order.
HAND_COLUMNS = (
    "outcome",
    "winner",
    "source",
    "hu_card",
    "from_seat",
    "huxi",
    "deng",
    "fan",
    "score",
    "mingtang",
    "zimo",
    "delta_0",
    "delta_1",
    "delta_2",
    "delta_3",
    "stock_left",
    "n_events",
)
HC = {name: i for i, name in enumerate(HAND_COLUMNS)}
EVENT_COLUMNS = (
    "hand",
    "seq",
    "seat",
    "action",
    "kind",
    "card",
    "from_seat",
    "forced",
    "n_legal",
    "options",
)
EVENT_DTYPES = (
    np.uint32,
    np.uint16,
    np.uint8,
    np.int32,
    np.uint8,
    np.uint8,
    np.uint8,
    np.uint8,
    np.uint8,
    np.uint8,
)
HAND_DTYPES = {
    "outcome": np.uint8,
    "winner": np.uint8,
    "source": np.uint8,
    "hu_card": np.uint8,
    "from_seat": np.uint8,
    "huxi": np.int16,
    "deng": np.int16,
    "fan": np.int16,
    "score": np.int32,
    "mingtang": np.uint16,
    "zimo": np.uint8,
    "delta_0": np.int32,
    "delta_1": np.int32,
    "delta_2": np.int32,
    "delta_3": np.int32,
    "stock_left": np.uint8,
    "n_events": np.uint16,
}


@njit(cache=True)
def action_kind(a):
    """ActionKind of a code (engine.actions.kind_of)."""
    if a >= CHI_BASE:
        return 7
    if a < DISCARD_BASE:
        return a  # PASS 0, HU 1, PENG 2
    return 3 + (a - DISCARD_BASE) // 20


@njit(cache=True)
def options_mask(st, base, n):
    """schema.options_mask of the legal codes st[base : base + n]."""
    m = 1 << action_kind(st[base]) | 1 << action_kind(st[base + n - 1])
    if n > 2:
        m |= 1 << action_kind(st[base + 1])
    return m


@njit(cache=True)
def _u8(v):
    return NULL8 if v < 0 else v


@njit(cache=True)
def play_kernel(rp, hp, decks, dealers, keys, pol, start, ev, ev_pos, hands):
    """Play hands ``start…`` until done or the event buffer is nearly full.

    ``keys[h, s]``: the MT seed key of seat s of hand h. ``ev``: int32 (10, cap) event columns,
    filled from ``ev_pos``; ``hands``: int32 (n, len(HAND_COLUMNS)). Returns (next hand,
    next event position).
    """
    n = decks.shape[0]
    cap = ev.shape[1]
    st = np.zeros(S.STATE_SIZE, dtype=np.int32)
    n_seats = rp[S.RP_PLAYERS]
    mts = np.zeros((4, MT_N + 1), dtype=np.int64)
    deck = np.empty(80, dtype=np.int64)
    h = start
    p = ev_pos
    while h < n:
        if p + MAX_EVENTS_PER_HAND > cap:
            break
        for s in range(n_seats):
            mt_seed(mts[s], keys[h, s])
        for i in range(80):
            deck[i] = decks[h, i]
        S.new_state(rp, hp, deck, dealers[h], st)
        seq = 0
        while st[S.OUT_KIND] < 0:
            seat = S.current_player(st)
            nl = st[S.PEND_N + seat]
            base = S.PEND_A + seat * S.MAXA
            forced = st[S.FORCED]
            if forced or nl == 1:
                a = st[base]
            else:
                a = choose(pol[seat], rp, hp, st, seat, mts[seat])
            kind = action_kind(a)
            if DISCARD_BASE <= a < PAO_BASE + 20:
                card = (a - DISCARD_BASE) % 20
            else:
                card = _u8(st[S.CARD])
            ev[0, p] = h
            ev[1, p] = seq
            ev[2, p] = seat
            ev[3, p] = a
            ev[4, p] = kind
            ev[5, p] = card
            ev[6, p] = NULL8 if kind == 3 else _u8(st[S.OWNER])
            ev[7, p] = forced
            ev[8, p] = nl
            ev[9, p] = options_mask(st, base, nl)
            p += 1
            seq += 1
            S.apply(rp, hp, st, seat, a)
        o = hands[h]
        o[0] = st[S.OUT_KIND]
        o[1] = _u8(st[S.OUT_WINNER])
        o[2] = _u8(st[S.OUT_SOURCE])
        o[3] = _u8(st[S.OUT_CARD])
        o[4] = _u8(st[S.OUT_FROM])
        o[5] = st[S.OUT_HUXI]
        o[6] = st[S.OUT_DENG]
        o[7] = st[S.OUT_FAN]
        o[8] = st[S.OUT_SCORE]
        o[9] = st[S.OUT_MT]
        o[10] = _u8(st[S.OUT_ZIMO])
        for s in range(4):
            o[11 + s] = st[S.OUT_DELTA + s]
        o[15] = S.stock_left(st)
        o[16] = seq
        h += 1
    return h, p


def policy_keys(seeds: Sequence[int], n_seats: int) -> np.ndarray:
    """MT seed keys (n, 4, KEY_MAX + 1) of every seat of every hand (engine.play._play)."""
    keys = np.zeros((len(seeds), 4, KEY_MAX + 1), dtype=np.int64)
    for h, seed in enumerate(seeds):
        for s in range(n_seats):
            keys[h, s] = seed_key(derive_seed(int(seed), "policy", s))
    return keys


_HP_CACHE: dict[RuleSet, tuple[np.ndarray, np.ndarray]] = {}


def rule_arrays(rules: RuleSet) -> tuple[np.ndarray, np.ndarray]:
    """(rp, hp) of a rule set, cached."""
    got = _HP_CACHE.get(rules)
    if got is None:
        from engine.fast.hu_bridge import hu_params

        got = (S.rule_table(rules), hu_params(rules))
        _HP_CACHE[rules] = got
    return got


def play_batch(
    rules: RuleSet,
    decks: np.ndarray,
    dealers: Sequence[int] | np.ndarray,
    seeds: Sequence[int],
    policies: Sequence[str] | Sequence[int],
    keys: np.ndarray | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Play ``len(decks)`` hands; (event columns, hand outcome columns) as numpy arrays.

    ``decks``: (n, 80) card kinds; ``dealers``: n seats; ``seeds``: the per-hand policy seed
    given to ``engine.play.play_hand``; ``policies``: one name (or POLICY_CODES code) per seat.
    ``keys`` may pass precomputed :func:`policy_keys`. Event ``hand`` is the batch index.
    """
    rp, hp = rule_arrays(rules)
    n_seats = rules.players
    decks = np.ascontiguousarray(decks, dtype=np.uint8)
    n = decks.shape[0]
    dealers = np.asarray(dealers, dtype=np.int64)
    if keys is None:
        keys = policy_keys(seeds, n_seats)
    pol = np.zeros(4, dtype=np.int64)
    if len(policies) != n_seats:
        raise ValueError(f"{len(policies)} policies for {n_seats} seats")
    for s, p in enumerate(policies):
        pol[s] = POLICY_CODES[p] if isinstance(p, str) else int(p)
    hands = np.zeros((n, len(HAND_COLUMNS)), dtype=np.int32)
    cap = max(n * 120, MAX_EVENTS_PER_HAND * 2)
    chunks = []
    h = 0
    while h < n:
        ev = np.zeros((len(EVENT_COLUMNS), cap), dtype=np.int32)
        h, p = play_kernel(rp, hp, decks, dealers, keys, pol, h, ev, 0, hands)
        chunks.append(ev[:, :p])
    ev_all = np.concatenate(chunks, axis=1) if len(chunks) > 1 else chunks[0]
    events = {name: ev_all[i].astype(EVENT_DTYPES[i]) for i, name in enumerate(EVENT_COLUMNS)}
    out = {name: hands[:, i].astype(HAND_DTYPES[name]) for i, name in enumerate(HAND_COLUMNS)}
    return events, out
