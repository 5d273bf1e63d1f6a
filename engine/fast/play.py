"""The compiled play loop (mirrors engine.play): whole hands in one njit call, log columns out.

:func:`play_batch` plays ``n`` hands (deck, dealer, policy seed each) with one policy per seat
and returns the ``events`` and ``hands`` columns exactly as ``replay.recorder.ShardRecorder``
buffers them (nullable uint8 columns hold ``NULL8`` = 255, ``huxi``… are 0 for 荒庄, ``zimo``
255 for 荒庄).

:func:`play_sessions` plays whole sessions of a runner ``RunSpec`` (seeds from
``engine.session.RunSeeds``, decks by the compiled shuffle, dealers following the outcomes,
duplicate rotations, the run's hand ids) and returns
the same columns plus the hand ids, session fields and decks: everything a shard needs.

Policies: ``random``, ``greedy`` and ``heuristic`` (:mod:`engine.fast.policies`, codes
``POLICY_CODES``), each seat with its weight array (``wts[s]``, float64 in the order of
engine.policies.weights.PARAMS: a ``greedy@WEIGHTS`` / ``heuristic@WEIGHTS`` seat its table,
every other seat the defaults; :func:`seat_policy`). The policy RNG of seat ``s`` is Python's
``random.Random(engine.play.seat_seeds(seed, n)[s])`` (``engine.play._play``), reproduced by
:mod:`engine.fast.pyrandom`; forced decisions and legal sets of one never consult a policy,
as in the reference.

Event columns (``EVENT_COLUMNS``): hand (batch index, or the run's hand id from
play_sessions), seq, seat, action, kind, card, from_seat, forced, n_legal, options. Hand
columns (``HAND_COLUMNS``): outcome, winner, source, hu_card, from_seat, huxi, deng, fan,
score, mingtang, zimo, delta_0..3, stock_left, n_events, dealer, huang_streak.

>>> from engine.deck import shuffle_deck
>>> from engine.rules import find_rules
>>> decks = np.array([shuffle_deck(7)], dtype=np.uint8)
>>> ev, hands = play_batch(find_rules("hunan"), decks, [0], [7], ["random"] * 3)
>>> int(hands["n_events"][0]) == len(ev["seq"])
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numba import njit

from engine.actions import CHI_BASE, DISCARD_BASE, HU, PAO_BASE, PASS, PENG, TI_BASE, WEI_BASE
from engine.cards import COPIES, DECK_SIZE, NUM_KINDS
from engine.fast import facts as F
from engine.fast import state as S
from engine.fast.cache_guard import guard
from engine.fast.codes import (
    AK_CHI,
    AK_DISCARD,
    AK_HU,
    AK_PAO,
    AK_PASS,
    AK_PENG,
    AK_TI,
    AK_WEI,
)
from engine.fast.features import weights_array
from engine.fast.policies import POLICY_CODES
from engine.fast.pyrandom import N as MT_N
from engine.fast.pyrandom import mt_seed64
from engine.fast.rule_arrays import rule_arrays
from engine.fast.search import SEARCH_FLAG, act, search_code
from engine.play import seat_seeds
from engine.policies.search_policy import MAX_ROLLOUTS
from engine.policies.weights import PolicyWeights
from engine.rules import RuleSet
from engine.session import RunSeeds

NULL8 = 255
_NO_FX = np.zeros(0, dtype=np.int64)  # the facts scratch of a loop that counts no facts
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
    "dealer",
    "huang_streak",
)
HC_DEALER = 17
HC_STREAK = 18
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
    "dealer": np.uint8,
    "huang_streak": np.uint8,
}


@njit(cache=True)
def action_kind(a):
    """ActionKind of a code (engine.actions.kind_of)."""
    if a >= CHI_BASE:
        return AK_CHI
    if a == PASS:
        return AK_PASS
    if a == HU:
        return AK_HU
    if a == PENG:
        return AK_PENG
    if a < TI_BASE:
        return AK_DISCARD
    if a < WEI_BASE:
        return AK_TI
    if a < PAO_BASE:
        return AK_WEI
    return AK_PAO


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
def event_fields(st, seat, a):
    """The derived event columns of ``seat`` declaring ``a`` in ``st`` (before it is applied):
    (kind, card, from_seat, forced, n_legal, options), nullable ones NULL8 for null; what
    :func:`play_one` records and engine.fast.verify checks (docs/LOG_FORMAT.md §4)."""
    nl = st[S.PEND_N + seat]
    kind = action_kind(a)
    if DISCARD_BASE <= a < PAO_BASE + 20:
        card = (a - DISCARD_BASE) % 20
    else:
        card = _u8(st[S.CARD])
    from_seat = NULL8 if kind == AK_DISCARD else _u8(st[S.OWNER])
    options = options_mask(st, S.PEND_A + seat * S.MAXA, nl) if nl > 0 else 0
    return kind, card, from_seat, st[S.FORCED], nl, options


@njit(cache=True)
def play_one(rp, hp, deck, dealer, keys, pol, wts, st, mts, ev, p, hand_index, o, fx, fr):
    """Play one hand; its events go to ev[:, p:], its outcome to ``o``; the next position.

    ``keys[s]``: the uint64 policy seed of seat s (``engine.play.seat_seeds``; a
    seat's generator is seeded when the seat first chooses); ``pol[s]``: its policy code;
    ``wts[s]``: its weight array. ``fr``: the hand's facts row (:mod:`engine.fast.facts`,
    ``fx`` its scratch), or an empty row for none.
    """
    S.new_state(rp, hp, deck, dealer, st)
    facts = fr.shape[0] > 0
    if facts:
        F.hand_start(st, fr)
    seq = 0
    seeded = 0
    while st[S.OUT_KIND] < 0:
        seat = S.current_player(st)
        nl = st[S.PEND_N + seat]
        base = S.PEND_A + seat * S.MAXA
        forced = st[S.FORCED]
        if forced or nl == 1:
            a = st[base]
        else:
            if not (seeded >> seat) & 1:
                mt_seed64(mts[seat], keys[seat])
                seeded |= 1 << seat
            a = act(pol[seat], rp, hp, wts[seat], st, seat, mts[seat])
        kind, card, from_seat, forced, nl, options = event_fields(st, seat, a)
        ev[0, p] = hand_index
        ev[1, p] = seq
        ev[2, p] = seat
        ev[3, p] = a
        ev[4, p] = kind
        ev[5, p] = card
        ev[6, p] = from_seat
        ev[7, p] = forced
        ev[8, p] = nl
        ev[9, p] = options
        p += 1
        seq += 1
        if facts:
            F.before_event(fr, seat, kind, options, forced)
        S.apply(rp, hp, st, seat, a)
        if facts:
            F.after_event(st, fr)
    outcome_fields(st, o)
    o[16] = seq
    if facts:
        F.hand_end(rp, fx, st, fr, seq, True)
    return p


@njit(cache=True)
def outcome_fields(st, o):
    """The outcome columns ``HAND_COLUMNS[:16]`` (outcome … stock_left) of a finished ``st``
    into ``o``, as :func:`play_one` records them (nullable uint8 ones NULL8 for null; 胡息,
    等, 番, score 0 and zimo NULL8 for 荒庄)."""
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


@njit(cache=True)
def play_kernel(rp, hp, decks, dealers, keys, pol, wts, start, ev, ev_pos, hands, fx, facts):
    """Play hands ``start…`` until done or the event buffer is nearly full.

    ``keys[h, s]``: the policy seed of seat s of hand h (uint64); ``pol[s]``, ``wts[s]``
    (float64, (4, N_WEIGHTS)): seat s's policy code and weights. ``ev``: int32 (10, cap) event columns,
    filled from ``ev_pos``; ``hands``: int32 (n, len(HAND_COLUMNS)); ``facts``: int64 (n,
    engine.fast.facts.ROW_SIZE) facts rows (``fx`` their scratch), or (n, 0) for none.
    Returns (next hand, next event position).
    """
    n = decks.shape[0]
    cap = ev.shape[1]
    st = np.zeros(S.STATE_SIZE, dtype=np.int32)
    mts = np.zeros((4, MT_N + 1), dtype=np.int64)
    deck = np.empty(80, dtype=np.int64)
    h = start
    p = ev_pos
    while h < n:
        if p + MAX_EVENTS_PER_HAND > cap:
            break
        for i in range(80):
            deck[i] = decks[h, i]
        p = play_one(
            rp, hp, deck, dealers[h], keys[h], pol, wts, st, mts, ev, p, h, hands[h], fx, facts[h]
        )
        h += 1
    return h, p


@njit(cache=True)
def sessions_kernel(
    rp, hp, decks, first_dealers, session_deals, rotations, pols, wts, keys, rotate, start, ev,
    hands, fx, facts,
):  # fmt: skip
    """Play whole sessions (replay runner ``play_sessions``): dealers follow the outcomes.

    Session i plays deals ``session_deals[i] … session_deals[i + 1] - 1`` (rows of
    ``decks``, relative to the batch); deal d is played once per rotation r as hand
    ``d · rotations + r`` with seat policies ``pols[r]``, their weights ``wts[r]`` (float64,
    (rotations, 4, N_WEIGHTS)) and seed keys ``keys[hand]``. The
    dealer starts at ``first_dealers[i]`` and moves by engine.session.next_dealer on the
    winner of rotation 0. ``hands[h, HC_DEALER]`` / ``[h, HC_STREAK]`` receive the dealer
    and the 荒庄 streak of each hand; ``facts[h]`` its facts row (as :func:`play_kernel`).
    Returns (next session, next event position); stops early when the event buffer could
    overflow.
    """
    n_sessions = first_dealers.shape[0]
    players = rp[S.RP_PLAYERS]
    cap = ev.shape[1]
    st = np.zeros(S.STATE_SIZE, dtype=np.int32)
    mts = np.zeros((4, MT_N + 1), dtype=np.int64)
    deck = np.empty(80, dtype=np.int64)
    p = 0
    i = start
    while i < n_sessions:
        lo = session_deals[i]
        hi = session_deals[i + 1]
        if p + MAX_EVENTS_PER_HAND * (hi - lo) * rotations > cap:
            break
        dealer = first_dealers[i]
        streak = 0
        for d in range(lo, hi):
            for q in range(80):
                deck[q] = decks[d, q]
            board_winner = -1
            for r in range(rotations):
                h = d * rotations + r
                o = hands[h]
                p = play_one(
                    rp,
                    hp,
                    deck,
                    dealer,
                    keys[h],
                    pols[r],
                    wts[r],
                    st,
                    mts,
                    ev,
                    p,
                    h,
                    o,
                    fx,
                    facts[h],
                )
                o[HC_DEALER] = dealer
                o[HC_STREAK] = streak
                if r == 0:
                    board_winner = st[S.OUT_WINNER]
            if board_winner >= 0:
                dealer = board_winner
                streak = 0
            else:
                streak += 1
                if streak >= rotate:
                    dealer = (dealer + 1) % players
                    streak = 0
        i += 1
    return i, p


def policy_keys(seeds: Sequence[int], n_seats: int) -> np.ndarray:
    """The policy seeds (n, 4) uint64 of every seat of every hand (``engine.play.seat_seeds``
    of each hand's seed)."""
    keys = np.zeros((len(seeds), 4), dtype=np.uint64)
    for h, seed in enumerate(seeds):
        keys[h, :n_seats] = seat_seeds(int(seed), n_seats)
    return keys


def seat_policy(
    name: str, tables: Mapping[str, PolicyWeights] | None = None
) -> tuple[int, np.ndarray]:
    """(policy code, weight array) of a seat's policy spec: a ``POLICY@WEIGHTS`` spec plays
    its table (from ``tables``, by canonical spec, else read now from its file or shipped set,
    as engine.policies.load_policy does), and so do the rollouts of a
    ``search@N/POLICY@WEIGHTS`` (the array is the rollout policy's); every other spec the
    defaults."""
    from engine.policies import table_spec
    from engine.policies import weights as W

    played = table_spec(name)
    if played is None:
        return policy_code(name), weights_array()
    key = W.canonical(played)
    table = (tables or {}).get(key) or W.load_spec(played)
    if W.is_weighted_spec(name):
        return POLICY_CODES[table.policy], weights_array(table)
    return policy_code(name), weights_array(table)


def policy_code(name: str) -> int:
    """The compiled policy of a built-in policy name (as engine.policies.load_policy reads
    it; ``POLICY@WEIGHTS``: the code of ``POLICY``, its weights from :func:`seat_policy`).
    A name that is no policy at all raises load_policy's own InvalidNotation (same
    text); a ``module:Class`` policy, which the fast engine cannot play, InvalidNotation
    "… has no compiled version"."""
    from engine.errors import InvalidNotation, did_you_mean
    from engine.policies import BUILTIN, NAMES
    from engine.policies.search_policy import is_search_spec
    from engine.policies.weights import is_weighted_spec, parse_spec

    key = name.strip().lower()
    if is_search_spec(key):
        return search_code(name)
    if is_weighted_spec(name):
        return POLICY_CODES[parse_spec(name)[0]]
    code = POLICY_CODES.get(key)
    if code is None:
        if key not in BUILTIN and ":" not in name:
            raise InvalidNotation(
                f"unknown policy {name!r} (built-in: {', '.join(BUILTIN)}; or module:Class)"
                f"{did_you_mean(key, NAMES)}"
            )
        have = ", ".join(POLICY_CODES)
        raise InvalidNotation(f"policy {name!r} has no compiled version (compiled: {have})")
    return code


def _known_code(code: int) -> int:
    from engine.errors import InvalidNotation

    if code not in POLICY_CODES.values() and not (
        code & SEARCH_FLAG and code & 7 in POLICY_CODES.values() and 1 <= code >> 4 <= MAX_ROLLOUTS
    ):
        raise InvalidNotation(f"unknown compiled policy code {code}")
    return code


_SORTED_DECK = np.repeat(np.arange(NUM_KINDS, dtype=np.int64), COPIES)


def check_decks(decks: object) -> np.ndarray:
    """``decks`` as a contiguous, writable (n, 80) uint8 array, after engine.state.State's
    own check: the first deck that is not a permutation of the 80 cards raises the same
    IllegalAction (or, for a code that is no card, format_cards' InvalidNotation)."""
    from engine.cards import format_cards
    from engine.errors import IllegalAction

    d = np.asarray(decks)
    if d.ndim == 2 and d.shape[1] == DECK_SIZE and d.dtype.kind in "iu":
        bad = np.flatnonzero(np.any(np.sort(d.astype(np.int64), axis=1) != _SORTED_DECK, 1))
        rows = [d[bad[0]]] if len(bad) else []
    else:
        rows = list(d) if d.ndim >= 2 else [d]
    for row in rows:
        deck = tuple(int(k) for k in np.asarray(row).reshape(-1))
        if len(deck) != DECK_SIZE or sorted(deck) != _SORTED_DECK.tolist():
            raise IllegalAction(
                f"deck is not a permutation of the 80 cards: {format_cards(deck)!r}"
            )
    out = np.ascontiguousarray(d, dtype=np.uint8)
    # a read-only view (of a Parquet column, a broadcast) is another type to numba: a second
    # compiled play kernel (minutes) for the same work, so the kernel always gets a writable one
    return out if out.flags.writeable else out.copy()


def check_dealers(dealers: Sequence[int] | np.ndarray, n: int, n_seats: int) -> np.ndarray:
    """``dealers`` as int64, one per hand; the first that is not a seat raises
    engine.state.State's IllegalAction (same text)."""
    from engine.errors import IllegalAction

    d = np.asarray(dealers, dtype=np.int64).reshape(-1)
    if len(d) != n:
        raise IllegalAction(f"{len(d)} dealers for {n} decks")
    bad = np.flatnonzero((d < 0) | (d >= n_seats))
    if len(bad):
        raise IllegalAction(f"dealer {int(d[bad[0]])} out of range for {n_seats} players")
    return d


def _typed_columns(hands: np.ndarray) -> dict[str, np.ndarray]:
    """The int32 hand columns as their HAND_DTYPES; OverflowError (as the reference
    recorder's typed buffers raise) for a value its column cannot hold, never a silent wrap
    (e.g. a 荒庄 streak past 255 with a large huangzhuang_rotate)."""
    out = {}
    for i, name in enumerate(HAND_COLUMNS):
        col = hands[:, i]
        dt: Any = HAND_DTYPES[name]
        info = np.iinfo(dt)
        # nullable uint8 columns hold NULL8 = 255 for null, in range by construction
        if len(col) and (int(col.min()) < info.min or int(col.max()) > info.max):
            j = int(np.flatnonzero((col < info.min) | (col > info.max))[0])
            raise OverflowError(
                f"hand {j}: {name} = {int(col[j])} does not fit its column ({np.dtype(dt).name})"
            )
        out[name] = col.astype(dt)
    return out


def play_batch(
    rules: RuleSet,
    decks: np.ndarray,
    dealers: Sequence[int] | np.ndarray,
    seeds: Sequence[int],
    policies: Sequence[str] | Sequence[int],
    keys: np.ndarray | None = None,
    tables: Mapping[str, PolicyWeights] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Play ``len(decks)`` hands; (event columns, hand outcome columns) as numpy arrays.

    ``decks``: (n, 80) card kinds; ``dealers``: n seats; ``seeds``: the per-hand policy seed
    given to ``engine.play.play_hand``; ``policies``: one name (or POLICY_CODES code) per seat.
    ``keys`` may pass precomputed :func:`policy_keys`; ``tables``: weights by spec, as
    :func:`seat_policy` takes them (a code plays the defaults). Event ``hand`` is the batch index;
    the hand columns ``dealer`` echo the input and ``huang_streak`` is 0 (use
    :func:`play_sessions` for session play).
    """
    from engine.errors import InvalidNotation

    n_seats = rules.players
    decks = check_decks(decks)
    n = decks.shape[0]
    dealers = check_dealers(dealers, n, n_seats)
    if len(policies) != n_seats:
        raise InvalidNotation(
            f"{len(policies)} policies given for {n_seats} seats: {list(policies)!r}"
        )
    pol = np.zeros(4, dtype=np.int64)
    wts = np.tile(weights_array(), (4, 1))
    for s, p in enumerate(policies):
        if isinstance(p, str):
            pol[s], wts[s] = seat_policy(p, tables)
        else:
            pol[s] = _known_code(int(p))  # type: ignore[call-overload]
    rp, hp = rule_arrays(rules)
    if keys is None:
        keys = policy_keys(seeds, n_seats)
    hands = np.zeros((n, len(HAND_COLUMNS)), dtype=np.int32)
    cap = max(n * 120, MAX_EVENTS_PER_HAND * 2)
    chunks = []
    h = 0
    while h < n:
        ev = np.zeros((len(EVENT_COLUMNS), cap), dtype=np.int32)
        h, p = play_kernel(
            rp,
            hp,
            decks,
            dealers,
            keys,
            pol,
            wts,
            h,
            ev,
            0,
            hands,
            _NO_FX,
            np.zeros((n, 0), np.int64),
        )
        chunks.append(ev[:, :p])
    ev_all = np.concatenate(chunks, axis=1) if len(chunks) > 1 else chunks[0]
    events = {name: ev_all[i].astype(EVENT_DTYPES[i]) for i, name in enumerate(EVENT_COLUMNS)}
    hands[:, HC_DEALER] = dealers
    out = _typed_columns(hands)
    return events, out


def play_sessions(
    spec, sessions: range, facts: bool = False
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The hands of ``sessions`` of a run, exactly as ``replay`` runner ``play_sessions``
    records them (same seeds, decks, dealers, rotations; hand ids of the run).

    ``spec`` is a runner ``RunSpec`` (rules, policies, their weight tables, seed, deals,
    session_length, duplicate). Hand columns add hand_id, session, session_hand, rotation,
    deal_id and the 80-byte decks (``deck``: (n, 80) uint8); with ``facts``, ``facts`` holds
    the hands' facts rows ((n, engine.fast.facts.ROW_SIZE) int64, counted as they were
    played), which ``replay.derived.facts.facts_table`` turns into the facts table.
    """
    from engine.fast.deck import shuffle_decks

    rules = spec.rules
    n_seats = rules.players
    tables = spec.tables() if hasattr(spec, "tables") else {}
    seats = {name: seat_policy(name, tables) for name in spec.policies}  # refuse before work
    rotations = n_seats if spec.duplicate else 1
    L = spec.session_length
    if len(sessions) == 0:
        raise ValueError("no sessions")
    first_deal = sessions.start * L
    last_deal = min(sessions.stop * L, spec.deals)
    n_deals = last_deal - first_deal
    seeds = RunSeeds(spec.seed)
    deal_seeds = np.array(seeds.deals(range(first_deal, last_deal)), dtype=np.uint64)
    decks = shuffle_decks(deal_seeds)  # engine.deck.shuffle_deck, compiled
    first_dealers = np.array(
        [seeds.first_dealer(rules, i).dealer for i in sessions], dtype=np.int64
    )
    bounds = [min(i * L, spec.deals) - first_deal for i in sessions] + [n_deals]
    session_deals = np.array(bounds, dtype=np.int64)
    pols = np.zeros((rotations, 4), dtype=np.int64)
    wts = np.tile(weights_array(), (rotations, 4, 1))
    for r in range(rotations):
        for s in range(n_seats):
            pols[r, s], wts[r, s] = seats[spec.policies[(s - r) % n_seats]]
    n = n_deals * rotations
    hand_ids = first_deal * rotations + np.arange(n, dtype=np.int64)
    keys = policy_keys(seeds.hands(hand_ids.tolist()), n_seats)
    rp, hp = rule_arrays(rules)
    hands = np.zeros((n, len(HAND_COLUMNS)), dtype=np.int32)
    rows = np.zeros((n, F.ROW_SIZE if facts else 0), dtype=np.int64)
    fx = F.facts_scratch(rules) if facts else _NO_FX
    chunks = []
    i = 0
    cap = max(n * 120, MAX_EVENTS_PER_HAND * L * rotations * 2)
    while i < len(first_dealers):
        ev = np.zeros((len(EVENT_COLUMNS), cap), dtype=np.int32)
        i2, p = sessions_kernel(
            rp, hp, decks, first_dealers, session_deals, rotations, pols, wts, keys,
            rules.huangzhuang_rotate, i, ev, hands, fx, rows,
        )  # fmt: skip
        if i2 == i:
            cap *= 2
            continue
        chunks.append(ev[:, :p])
        i = i2
    ev_all = np.concatenate(chunks, axis=1) if len(chunks) > 1 else chunks[0]
    events = {name: ev_all[j].astype(EVENT_DTYPES[j]) for j, name in enumerate(EVENT_COLUMNS)}
    events["hand"] = (events["hand"].astype(np.int64) + first_deal * rotations).astype(np.uint32)
    out = _typed_columns(hands)
    deal_rel = np.arange(n, dtype=np.int64) // rotations
    deal_ids = first_deal + deal_rel
    out["hand_id"] = hand_ids.astype(np.uint32)
    out["deal_id"] = deal_ids.astype(np.uint32)
    out["rotation"] = (np.arange(n) % rotations).astype(np.uint8)
    out["session"] = (deal_ids // L).astype(np.uint32)
    out["session_hand"] = (deal_ids % L).astype(np.uint16)
    out["deck"] = np.repeat(decks, rotations, axis=0)
    if facts:
        out["facts"] = rows
    return events, out


guard("play", globals())
