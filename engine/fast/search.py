"""Search from any state, compiled (mirrors engine.search): the determinization.

:func:`determinize` is :func:`engine.search.determinize` over the flat state ``st`` of
:mod:`engine.fast.state` and an MT19937 generator of :mod:`engine.fast.pyrandom`: from the same
position and a generator in the same state as the reference's ``random.Random`` it draws
exactly the reference's sample — the same random numbers in the same order (``randbelow`` for
each hidden 偎's face, Python's ``shuffle`` of the rest), the same rejections and the same
pending decision asked again of the new hands — and leaves the generator where the reference
leaves its ``Random``. What it conditions on and what it does not infer: docs/SEARCH.md.

Kernels (the reference's functions of the same name): ``hidden_counts(st, seat, out)``,
``revealed_faces(st, seat)``, ``determinize(rp, hp, st, seat, mt, out, max_tries)`` and its
parts ``_draw`` (one candidate), ``_reask`` and ``_same_view`` (the reference's comparison of
``observation(seat).to_dict()`` and ``pending[seat]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from engine.fast.cache_guard import guard
from engine.fast.codes import (
    CK_DISCARDED,
    CK_LIANG,
    GK_CHI,
    GK_PAO,
    GK_TI,
    GK_WEI,
    PH_CLAIM_HU,
    PH_CLAIM_TAKE,
    PH_DRAW_TAKE,
    PH_LIANG_HU,
    SHAPES,
    STOCK_SIZE,
)
from engine.fast.features import weights_array
from engine.fast.policies import POLICY_CODES, choose
from engine.fast.pyrandom import N as MT_N
from engine.fast.pyrandom import genrand_uint32, mt_seed64, randbelow
from engine.fast.state import (
    ACTIVE,
    BOTTOM,
    CARD,
    CARD_KIND,
    CHOUHU,
    DEALER,
    DECL,
    DISCARDS,
    DISCARDS_N,
    FORCED,
    HAND_SIZE,
    HANDS,
    LIANG,
    LIANG_KNOWN,
    MAXA,
    MAXD,
    MAXM,
    MELD_ID,
    MELD_KIND,
    MELD_N,
    N_DECL,
    N_SHOWN,
    OUT_DELTA,
    OUT_HUXI,
    OUT_KIND,
    OUT_WINNER,
    OWNER,
    PEND_A,
    PEND_N,
    PEND_NS,
    PEND_SEATS,
    PHASE,
    RENPENG,
    RIGHT,
    RIGHT_N,
    STINKY,
    STOCK,
    STOCK_POS,
    _claim_hu,
    _claim_take,
    _liang_hu,
    _run,
    apply,
    current_player,
)
from engine.search import Z2

#: engine.search.MAX_TRIES, restated for the kernels' callers (tests hold them equal).
MAX_TRIES = 2000

# determinize's results besides the number of draws it took (>= 1)
NOT_TO_ACT = -1  # the hand is over or the seat has no decision to make
NO_DEAL = 0  # no consistent deal in max_tries draws


@njit(cache=True)
def _seen_card(st, seat):
    """Observation.card: the card on offer if ``seat`` sees it, else -1."""
    c = st[CARD]
    if c < 0 or (st[PHASE] == PH_DRAW_TAKE and st[OWNER] != seat):
        return -1
    return c


@njit(cache=True)
def _is_decider(st, seat):
    if st[OUT_KIND] >= 0 or st[DECL + seat] >= 0:
        return False
    found = False
    for i in range(st[PEND_NS]):
        found |= st[PEND_SEATS + i] == seat
    return found


@njit(cache=True)
def hidden_counts(st, seat, out):
    """Copies of each face ``seat`` has not seen into ``out`` (20): 4 minus
    Observation.seen_counts, the 亮张 on offer counted once."""
    for k in range(20):
        out[k] = st[HANDS + seat * 20 + k]
    for i in range(3):
        s = st[ACTIVE + i]
        for j in range(st[MELD_N + s]):
            kind = st[MELD_KIND + s * MAXM + j]
            mid = st[MELD_ID + s * MAXM + j]
            if kind == GK_WEI and s != seat:
                continue  # face-down
            if kind == GK_CHI:
                for q in range(3):
                    out[SHAPES[mid, q]] += 1
            elif kind in (GK_PAO, GK_TI):
                out[mid] += 4
            else:
                out[mid] += 3
        for j in range(st[RIGHT_N + s]):
            out[st[RIGHT + s * MAXD + j]] += 1
    if st[LIANG] >= 0 and st[LIANG_KNOWN] and seat != st[DEALER]:
        out[st[LIANG]] += 1
    card = _seen_card(st, seat)
    if card >= 0 and st[OWNER] >= 0:
        out[card] += 1
    for k in range(20):
        if out[k] > 4:
            out[k] = 4
    if card >= 0 and st[CARD_KIND] == CK_LIANG:
        out[card] -= 1
    for k in range(20):
        out[k] = 4 - out[k]


@njit(cache=True)
def revealed_faces(st, seat):
    """Bitmask of faces shown face-up since the deal and past their 跑 (discards, dead cards to
    the right, the card on offer ``seat`` sees once a take is offered): no other seat holds a
    坎 of one (§8.4). A discard on offer for 胡 is not yet past its 跑 (胡 is settled first)."""
    mask = 0
    skip = -1  # the owner whose last discard is the card on offer for 胡
    if st[PHASE] == PH_CLAIM_HU and st[CARD_KIND] == CK_DISCARDED:
        skip = st[OWNER]
    for i in range(3):
        s = st[ACTIVE + i]
        n = st[DISCARDS_N + s] - (1 if s == skip else 0)
        for j in range(n):
            mask |= 1 << st[DISCARDS + s * MAXD + j]
        for j in range(st[RIGHT_N + s]):
            mask |= 1 << st[RIGHT + s * MAXD + j]
    card = _seen_card(st, seat)
    if card >= 0 and st[PHASE] == PH_CLAIM_TAKE:
        mask |= 1 << card
    return mask


@njit(cache=True)
def determinize(rp, hp, st, seat, mt, out, max_tries):
    """A state ``seat`` cannot tell from ``st`` into ``out`` (same observation, same legal
    options), its hidden cards drawn with ``mt`` from those the seat has not seen; ``st`` is
    untouched. Returns the number of draws it took (>= 1), ``NO_DEAL`` (0) when none of
    ``max_tries`` was consistent, ``NOT_TO_ACT`` (-1) when ``seat`` is not to act."""
    if seat < 0 or seat > 3 or not _is_decider(st, seat):
        return -1
    others = np.empty(2, dtype=np.int64)
    no = 0
    for i in range(3):
        if st[ACTIVE + i] != seat:
            others[no] = st[ACTIVE + i]
            no += 1
    pool = np.empty(20, dtype=np.int64)
    hidden_counts(st, seat, pool)
    liang = st[LIANG] if (st[LIANG] >= 0 and st[LIANG_KNOWN] and seat != st[DEALER]) else -1
    if liang >= 0:  # the 亮张 is publicly in the dealer's hand (C32): keep it there
        pool[liang] += 1
    left = STOCK_SIZE - st[STOCK_POS]
    shown = st[N_SHOWN] if st[N_SHOWN] < left else left
    for i in range(shown):  # 4 players: the shown bottom cards stay where they are
        pool[st[STOCK + STOCK_SIZE - 1 - i]] -= 1
    weis = np.empty(2 * MAXM, dtype=np.int64)  # seat * MAXM + meld index
    nw = 0
    for i in range(no):
        s = others[i]
        for j in range(st[MELD_N + s]):
            if st[MELD_KIND + s * MAXM + j] == GK_WEI:
                weis[nw] = s * MAXM + j
                nw += 1
    no_kan = revealed_faces(st, seat)
    work = np.empty(100, dtype=np.int64)
    for t in range(max_tries):
        ok = _draw(rp, hp, st, seat, mt, out, pool, others, weis[:nw], liang, shown, no_kan, work)
        if ok and _same_view(st, out, seat):
            return t + 1
    return 0


@njit(cache=True)
def _draw(rp, hp, st, seat, mt, out, pool, others, weis, liang, shown, no_kan, work):
    """One candidate into ``out``: the hidden cards dealt anew (False when a rule it must
    keep fails). ``work`` (100): the faces of the 偎 and the shuffled rest."""
    left = work[:20]
    for k in range(20):
        left[k] = pool[k]
    if liang >= 0:
        left[liang] -= 1  # dealt to the dealer below, before any 偎 takes a face
    faces = work[20:40]
    nw = len(weis)
    for w in range(nw):  # a hidden 偎 takes three copies of one unseen face
        n_opt = 0
        for k in range(20):
            if left[k] >= 3:
                n_opt += 1
        if n_opt == 0:
            return False
        r = randbelow(mt, n_opt)  # options[rng.randrange(len(options))]
        face = -1
        for k in range(20):
            if left[k] >= 3:
                if r == 0:
                    face = k
                    break
                r -= 1
        left[face] -= 3
        faces[w] = face
    rest = work[40:]
    n = 0
    for k in range(20):
        for _ in range(left[k]):
            rest[n] = k
            n += 1
    for i in range(n - 1, 0, -1):  # random.shuffle
        j = randbelow(mt, i + 1)
        v = rest[i]
        rest[i] = rest[j]
        rest[j] = v
    out[:] = st
    pos = 0
    dealer = st[DEALER]
    for i in range(len(others)):
        s = others[i]
        m = st[HAND_SIZE + s] - (1 if s == dealer and liang >= 0 else 0)
        h = HANDS + s * 20
        for k in range(20):
            out[h + k] = 0
        for j in range(pos, pos + m):
            out[h + rest[j]] += 1
        pos += m
        if s == dealer and liang >= 0:
            out[h + liang] += 1
        for k in range(20):
            c = out[h + k]
            if c > 3 or (c == 3 and no_kan >> k & 1):
                return False  # a concealed 4 would have been 提; a revealed face's 坎 跑'd
        # what the seat cannot see of the others' past choices is not carried over
        out[STINKY + s] = 0
        out[RENPENG + s] = 0
        for k in range(20):
            out[CHOUHU + s * 20 + k] = -1
    on_offer = st[CARD] if st[PHASE] == PH_CLAIM_TAKE else -1
    for w in range(nw):
        s = weis[w] // MAXM
        k = faces[w]
        if out[HANDS + s * 20 + k] or k == on_offer:
            return False  # a 偎 of k beside a k in hand, or a 跑 owed on the card on offer
        out[MELD_ID + weis[w]] = k
    size = STOCK_SIZE - st[STOCK_POS]
    if n - pos != size - shown:
        return False  # the reference asserts this; never seen
    for i in range(shown, size):  # reference stock index i is STOCK[STOCK_SIZE - 1 - i]
        out[STOCK + STOCK_SIZE - 1 - i] = rest[pos + i - shown]
    return _reask(rp, hp, out, seat)


@njit(cache=True)
def _reask(rp, hp, out, seat):
    """The pending decision asked again of the new hands (the others' options and hidden
    declarations depend on cards the seat cannot see)."""
    phase = out[PHASE]
    if phase == PH_CLAIM_HU:
        cont, s = _claim_hu(rp, hp, out)
        _run(rp, hp, out, cont, s)
    elif phase == PH_CLAIM_TAKE:
        cont, s = _claim_take(rp, out)
        _run(rp, hp, out, cont, s)
    elif phase == PH_LIANG_HU:
        cont, s = _liang_hu(rp, hp, out)
        _run(rp, hp, out, cont, s)
    else:  # one seat decides: nothing of the others is asked
        for s in range(4):
            out[DECL + s] = -1
        out[N_DECL] = 0
    return _is_decider(out, seat)


@njit(cache=True)
def _same_view(st, out, seat):
    """``observation(seat).to_dict()`` and ``pending[seat]`` equal in both states."""
    for k in range(20):
        if st[HANDS + seat * 20 + k] != out[HANDS + seat * 20 + k]:
            return False
    for s in range(4):
        if st[HAND_SIZE + s] != out[HAND_SIZE + s] or st[MELD_N + s] != out[MELD_N + s]:
            return False
        for j in range(st[MELD_N + s]):
            i = s * MAXM + j
            kind = st[MELD_KIND + i]
            if kind != out[MELD_KIND + i]:
                return False
            if (kind != GK_WEI or s == seat) and st[MELD_ID + i] != out[MELD_ID + i]:
                return False
        if st[RIGHT_N + s] != out[RIGHT_N + s] or st[DISCARDS_N + s] != out[DISCARDS_N + s]:
            return False
        for j in range(st[RIGHT_N + s]):
            if st[RIGHT + s * MAXD + j] != out[RIGHT + s * MAXD + j]:
                return False
        for j in range(st[DISCARDS_N + s]):
            if st[DISCARDS + s * MAXD + j] != out[DISCARDS + s * MAXD + j]:
                return False
    if st[STOCK_POS] != out[STOCK_POS]:
        return False
    left = STOCK_SIZE - st[STOCK_POS]
    shown = st[N_SHOWN] if st[N_SHOWN] < left else left
    for i in range(shown):
        if st[STOCK + STOCK_SIZE - 1 - i] != out[STOCK + STOCK_SIZE - 1 - i]:
            return False
    # liang and bottom: the rules' fields, equal unless the game moved on (then STOCK_POS,
    # a hand or the card differs)
    if st[LIANG_KNOWN] != out[LIANG_KNOWN] or st[BOTTOM] != out[BOTTOM]:
        return False
    card = _seen_card(st, seat)
    if card != _seen_card(out, seat) or (card >= 0 and st[OWNER] != out[OWNER]):
        return False
    if st[STINKY + seat] != out[STINKY + seat] or st[RENPENG + seat] != out[RENPENG + seat]:
        return False
    n = st[PEND_N + seat]
    if n != out[PEND_N + seat]:
        return False
    for i in range(min(n, MAXA)):
        if st[PEND_A + seat * MAXA + i] != out[PEND_A + seat * MAXA + i]:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Rollouts and option values (engine.search.play_out, evaluate, best_option)
# ---------------------------------------------------------------------------------------------

#: A search policy's compiled code: ``rollouts << 4 | SEARCH_FLAG | rollout policy code``
#: (the built-in codes of engine.fast.policies are below SEARCH_FLAG).
SEARCH_FLAG = 8
# evaluate_kernel's result columns, per option and rollout
R_DELTA, R_WIN, R_HUANG, R_HUXI = 0, 1, 2, 3


def search_code(spec: str) -> int:
    """The compiled code of a ``search@N[/POLICY]`` spec (its checks and errors:
    engine.policies.search_policy.parse_spec); a ``POLICY@WEIGHTS`` rollout policy is
    ``POLICY``'s code, its table the seat's weight array (engine.fast.play.seat_policy)."""
    from engine.policies.search_policy import parse_spec

    rollouts, rollout = parse_spec(spec)
    return rollouts << 4 | SEARCH_FLAG | POLICY_CODES[rollout.partition("@")[0]]


@njit(cache=True)
def getrandbits64(mt):
    """random.Random.getrandbits(64) as an int64 bit pattern (the low word drawn first)."""
    lo = genrand_uint32(mt)
    hi = genrand_uint32(mt)
    return lo | (hi << 32)


@njit(cache=True)
def play_out(rp, hp, w, st, code, mt):
    """engine.search.play_out: ``st`` played to the end in place, every seat by the built-in
    policy ``code`` with weights ``w`` (forced moves and single options applied), all drawing
    from ``mt``."""
    while st[OUT_KIND] < 0:
        seat = current_player(st)
        nl = st[PEND_N + seat]
        base = PEND_A + seat * MAXA
        if st[FORCED] or nl == 1:
            a = st[base]
        else:
            a = choose(code, rp, hp, w, st, seat, mt)
        apply(rp, hp, st, seat, a)


@njit(cache=True)
def evaluate_kernel(rp, hp, w, st, seat, rollouts, code, seed, actions, res):
    """engine.search.evaluate's rollouts: for each of ``rollouts`` determinizations (the r-th
    from the r-th getrandbits(64) of a generator seeded with ``seed``), each option
    ``actions[i]`` applied and played out by policy ``code`` (weights ``w``: the defaults,
    as the reference's rollout policy plays) from the same stream (the next 64
    bits of the determinization's generator). ``res[i, r]`` (int64, 4): the seat's score
    delta, 1 for its win, 1 for a 荒庄, the 胡息 of its win (0 otherwise). Returns
    1, or determinize's NO_DEAL / NOT_TO_ACT; ``st`` is untouched."""
    root = np.zeros(MT_N + 1, dtype=np.int64)
    base = np.zeros(MT_N + 1, dtype=np.int64)
    roll = np.zeros(MT_N + 1, dtype=np.int64)
    mt_seed64(root, seed)
    det = np.empty_like(st)
    work = np.empty_like(st)
    for r in range(rollouts):
        mt_seed64(base, getrandbits64(root))
        got = determinize(rp, hp, st, seat, base, det, MAX_TRIES)
        if got <= 0:
            return got
        stream = getrandbits64(base)
        for i in range(len(actions)):
            work[:] = det
            apply(rp, hp, work, seat, actions[i])
            mt_seed64(roll, stream)
            play_out(rp, hp, w, work, code, roll)
            won = work[OUT_WINNER] == seat
            res[i, r, R_DELTA] = work[OUT_DELTA + seat]
            res[i, r, R_WIN] = 1 if won else 0
            res[i, r, R_HUANG] = 1 if work[OUT_WINNER] < 0 else 0
            res[i, r, R_HUXI] = work[OUT_HUXI] if won else 0
    return 1


@njit(cache=True)
def improve(actions, res, default):
    """engine.search.improve over ``res[:, :, R_DELTA]``: the index of the option taken."""
    n = res.shape[1]
    best = default
    best_t = 0
    for i in range(len(actions)):
        if i == default:
            continue
        t = 0
        q = 0
        for r in range(n):
            d = res[i, r, R_DELTA] - res[default, r, R_DELTA]
            t += d
            q += d * d
        beats = t > 0 and t * t * (n - 1) > Z2 * (n * q - t * t)
        if beats and (
            best == default or t > best_t or (t == best_t and actions[i] < actions[best])
        ):
            best = i
            best_t = t
    return best


@njit(cache=True)
def search_act(rp, hp, w, st, seat, mt, code):
    """The search policy ``code`` (:func:`search_code`) at a decision of ``seat`` with more than
    one option: engine.policies.search_policy.SearchPolicy.act — from the seat's generator
    ``mt`` the next two getrandbits(64), the rollouts' seed and the key of the generator the
    rollout policy makes its own choice with; every legal option played out, and
    :func:`improve` decides; when no deal consistent with the seat's view is found, the
    rollout policy's own choice. The rollout policy plays the weights ``w`` (the defaults, or
    the table a ``search@N/POLICY@WEIGHTS`` names), as the reference's rollout policy does."""
    rollouts = code >> 4
    n = st[PEND_N + seat]
    actions = np.empty(n, dtype=np.int64)
    for i in range(n):
        actions[i] = st[PEND_A + seat * MAXA + i]
    seed = getrandbits64(mt)
    own_mt = np.zeros(MT_N + 1, dtype=np.int64)
    mt_seed64(own_mt, getrandbits64(mt))
    own = choose(code & 7, rp, hp, w, st, seat, own_mt)
    default = 0
    for i in range(n):
        if actions[i] == own:
            default = i
    res = np.zeros((n, rollouts, 4), dtype=np.int64)
    got = evaluate_kernel(rp, hp, w, st, seat, rollouts, code & 7, seed, actions, res)
    return decide(got, own, actions, res, default)


@njit(cache=True)
def decide(got, own, actions, res, default):
    """The search's action from evaluate_kernel's result ``got`` and values ``res``:
    :func:`improve`'s choice, or ``own`` (the rollout policy's) when no deal consistent with
    the seat's view was found (``got`` <= 0), as SearchPolicy.act decides."""
    if got <= 0:
        return own
    return actions[improve(actions, res, default)]


@njit(cache=True)
def act(code, rp, hp, w, st, seat, mt):
    """The action of policy ``code`` (built-in or search) with weights ``w`` at a real choice
    of ``seat``."""
    if code & SEARCH_FLAG:
        return search_act(rp, hp, w, st, seat, mt, code)
    return choose(code, rp, hp, w, st, seat, mt)


def flat_state(state: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rp, hp, st): the compiled state of a reference ``State`` (a live one, or the
    replayer's at step k), its deal and history replayed. :class:`~engine.search.SearchError`
    when that does not reach ``state`` (its cards or pending decision were changed in place)."""
    from engine.fast.rule_arrays import rule_arrays
    from engine.fast.state import STATE_SIZE, apply_checked, new_state
    from engine.search import SearchError

    rp, hp = rule_arrays(state.rules)
    st = np.zeros(STATE_SIZE, dtype=np.int32)
    new_state(rp, hp, np.array(state.deck, dtype=np.int64), state.dealer, st)
    for i, (seat, action) in enumerate(state.history):
        if not apply_checked(rp, hp, st, seat, action):
            raise SearchError(f"the compiled engine refuses step {i} (seat {seat}, {action})")
    pos = int(st[STOCK_POS])
    same = (
        all(st[HANDS + s * 20 : HANDS + s * 20 + 20].tolist() == list(h)
            for s, h in enumerate(state.hands))
        and st[STOCK + pos : STOCK + STOCK_SIZE].tolist()[::-1] == list(state.stock)
        and all(st[PEND_A + s * MAXA : PEND_A + s * MAXA + st[PEND_N + s]].tolist() == list(a)
                for s, a in state.pending.items())
    )  # fmt: skip
    if not same:
        raise SearchError("the state is not the one its deck and history reach")
    return rp, hp, st


def evaluate(
    state: Any,
    seat: int,
    rollouts: int,
    rollout_policy: str,
    seed: int,
    actions: Sequence[int] | None = None,
) -> list[Any]:
    """engine.search.evaluate in one compiled call (``rollout_policy`` a built-in name): the
    same option values, number for number, from the same arguments."""
    from engine.search import SearchError, check_budget, option_values, options_of

    check_budget(rollouts, seed)
    code = POLICY_CODES.get(rollout_policy)
    if code is None:
        raise SearchError(
            f"unknown rollout policy {rollout_policy!r} (one of {', '.join(POLICY_CODES)})"
        )
    options = options_of(state, seat, actions)
    rp, hp, st = flat_state(state)
    res = np.zeros((len(options), rollouts, 4), dtype=np.int64)
    acts = np.array(options, dtype=np.int64)
    w = weights_array()
    got = evaluate_kernel(rp, hp, w, st, seat, rollouts, code, np.uint64(seed), acts, res)
    if got == NO_DEAL:
        raise SearchError(f"no deal consistent with seat {seat}'s view in {MAX_TRIES} draws")
    if got == NOT_TO_ACT:
        raise SearchError(f"seat {seat} is not to act (deciders {list(state.deciders())})")
    cols = []
    for r in res:
        won = r[:, R_WIN] == 1
        cols.append(
            (
                r[:, R_DELTA].astype(float).tolist(),
                r[:, R_WIN].astype(float).tolist(),
                r[:, R_HUANG].astype(float).tolist(),
                r[won, R_HUXI].astype(float).tolist(),
            )
        )
    return option_values(options, cols)


guard("search", globals())
