"""The compiled state machine: one hand of 跑胡子 in a flat int32 array (mirrors engine.state).

Every kernel is ``@njit(cache=True)`` over integer arrays. A hand is ``(rules, deck, dealer,
decisions)`` exactly as in :mod:`engine.state`; the kernels take the same decisions, offer the
same sorted legal action codes (``engine.actions``) and record the same outcome.

Arrays (their layout: :mod:`engine.fast`): ``rp`` (int64, :func:`rule_table`), the rule
switches the state machine reads, the 吃 shape tables of the rule set and the 胡息 of every
table meld (offsets ``RP_*``); ``hp`` (int64), the hu kernels' parameters and scratch
(:func:`engine.fast.hu_bridge.hu_params`); ``st`` (int32, ``STATE_SIZE``), the state (offsets
from :data:`OFFSETS`).

Kernels
-------
``new_state(rp, hp, deck, dealer, st)`` (State()), ``current_player(st)``,
``legal_actions(st, seat, out) -> n``, ``apply(rp, hp, st, seat, action)`` (trusted),
``apply_checked(...) -> bool`` (refuses an illegal action, state untouched), ``stock_left``,
``n_cards``, ``target``, ``meld_huxi``, ``chi_options``. The reference's private methods are
kernels of the same name (``_deal``, ``_draw``, ``_claim_hu``, ``_take_pao`` …): where one
method calls the next, its kernel returns the continuation and :func:`_run` loops (cached
kernels may not recurse). Codes (``PH_*``, ``CK_*``, ``OK_*``, ``SRC_*``, ``GK_*``, the action
codes) come from :mod:`engine.fast.codes`. A policy kernel reads the state directly
(engine.fast.features.read_view builds the reference policies' View from it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.fast.cache_guard import guard
from engine.fast.codes import (
    CHI_BASE,
    CK_DISCARDED,
    CK_DRAWN,
    CK_LIANG,
    DEALT,
    DISCARD_BASE,
    GK_CHI,
    GK_CHOUWEI,
    GK_PAO,
    GK_PENG,
    GK_TI,
    GK_WEI,
    HAND_CARDS,
    HU,
    LONELY_ANY,
    LONELY_NONE,
    OK_HU,
    OK_HUANGZHUANG,
    OK_TIANHU,
    OK_TIANHU_AUTO,
    PAO_BASE,
    PASS,
    PENG,
    PH_CLAIM_HU,
    PH_CLAIM_PAO,
    PH_CLAIM_TAKE,
    PH_DISCARD,
    PH_DRAW_TAKE,
    PH_END,
    PH_INIT_TI,
    PH_LIANG_HU,
    RADIX,
    RANK_OWNER_CHI,
    RANK_PENG,
    RANK_XIA_CHI,
    RED,
    SHAPES,
    SRC_DISCARD,
    SRC_LIANG_DEALER,
    SRC_LIANG_OTHER,
    SRC_OTHER_DRAW,
    SRC_OWN_DRAW,
    STOCK_SIZE,
    TI_BASE,
    WEI_BASE,
)
from engine.groups import EAT_SHAPES, Group, GroupKind, huxi
from engine.rules import RuleSet

MAXM = 16  # table melds per seat (a seat holds at most 7 groups + 4-card melds; 16 is ample)
MAXA = 96  # legal actions per seat
MAXD = 48  # discards / right cards per seat (≤ 21 discards, ≤ 19 + 21 dead cards)
HR_W = 8  # hu result width

# ---------------------------------------------------------------------------------------------
# State layout
# ---------------------------------------------------------------------------------------------

_layout: list[tuple[str, int]] = [
    ("HANDS", 80),
    ("HAND_SIZE", 4),
    ("MELD_N", 4),
    ("MELD_KIND", 4 * MAXM),
    ("MELD_ID", 4 * MAXM),
    ("TABLE_CARDS", 4),
    ("QUADS", 4),
    ("DISCARDED", 4),
    ("STINKY", 4),
    ("RENPENG", 4),
    ("CHOUHU", 80),
    ("DISCARDS", 4 * MAXD),
    ("DISCARDS_N", 4),
    ("RIGHT", 4 * MAXD),
    ("RIGHT_N", 4),
    ("STOCK", STOCK_SIZE),
    ("STOCK_POS", 1),
    ("QUEUE", 16),
    ("QUEUE_N", 1),
    ("QUEUE_POS", 1),
    ("PEND_SEATS", 3),
    ("PEND_NS", 1),
    ("PEND_N", 4),
    ("PEND_A", 4 * MAXA),
    ("DECL", 4),
    ("N_DECL", 1),
    ("HURES", 4 * HR_W),
    ("BEST_RANK", 4),
    ("PENG_SEAT", 1),
    ("OUT_KIND", 1),
    ("OUT_WINNER", 1),
    ("OUT_SOURCE", 1),
    ("OUT_CARD", 1),
    ("OUT_FROM", 1),
    ("OUT_HUXI", 1),
    ("OUT_DENG", 1),
    ("OUT_FAN", 1),
    ("OUT_SCORE", 1),
    ("OUT_MT", 1),
    ("OUT_ZIMO", 1),
    ("OUT_DELTA", 4),
    ("N_SEATS", 1),
    ("DEALER", 1),
    ("SITTER", 1),
    ("ACTIVE", 3),
    ("XIA", 4),
    ("SHANG", 4),
    ("N_DRAWS", 1),
    ("DEALER_DISCARDS", 1),
    ("CARD", 1),
    ("CARD_KIND", 1),
    ("OWNER", 1),
    ("PHASE", 1),
    ("FORCED", 1),
    ("LIANG", 1),
    ("LIANG_KNOWN", 1),
    ("BOTTOM", 1),
    ("N_SHOWN", 1),
    ("BOTTOM_SWAPS", 1),
    ("N_HIST", 1),
    ("SCRATCH", 24),
]
_o = 0
OFFSETS: dict[str, int] = {}
for _name, _w in _layout:
    OFFSETS[_name] = _o
    _o += _w
STATE_SIZE = _o

HANDS = OFFSETS["HANDS"]
HAND_SIZE = OFFSETS["HAND_SIZE"]
MELD_N = OFFSETS["MELD_N"]
MELD_KIND = OFFSETS["MELD_KIND"]
MELD_ID = OFFSETS["MELD_ID"]
TABLE_CARDS = OFFSETS["TABLE_CARDS"]
QUADS = OFFSETS["QUADS"]
DISCARDED = OFFSETS["DISCARDED"]
STINKY = OFFSETS["STINKY"]
RENPENG = OFFSETS["RENPENG"]
CHOUHU = OFFSETS["CHOUHU"]
DISCARDS = OFFSETS["DISCARDS"]
DISCARDS_N = OFFSETS["DISCARDS_N"]
RIGHT = OFFSETS["RIGHT"]
RIGHT_N = OFFSETS["RIGHT_N"]
STOCK = OFFSETS["STOCK"]
STOCK_POS = OFFSETS["STOCK_POS"]
QUEUE = OFFSETS["QUEUE"]
QUEUE_N = OFFSETS["QUEUE_N"]
QUEUE_POS = OFFSETS["QUEUE_POS"]
PEND_SEATS = OFFSETS["PEND_SEATS"]
PEND_NS = OFFSETS["PEND_NS"]
PEND_N = OFFSETS["PEND_N"]
PEND_A = OFFSETS["PEND_A"]
DECL = OFFSETS["DECL"]
N_DECL = OFFSETS["N_DECL"]
HURES = OFFSETS["HURES"]
BEST_RANK = OFFSETS["BEST_RANK"]
PENG_SEAT = OFFSETS["PENG_SEAT"]
OUT_KIND = OFFSETS["OUT_KIND"]
OUT_WINNER = OFFSETS["OUT_WINNER"]
OUT_SOURCE = OFFSETS["OUT_SOURCE"]
OUT_CARD = OFFSETS["OUT_CARD"]
OUT_FROM = OFFSETS["OUT_FROM"]
OUT_HUXI = OFFSETS["OUT_HUXI"]
OUT_DENG = OFFSETS["OUT_DENG"]
OUT_FAN = OFFSETS["OUT_FAN"]
OUT_SCORE = OFFSETS["OUT_SCORE"]
OUT_MT = OFFSETS["OUT_MT"]
OUT_ZIMO = OFFSETS["OUT_ZIMO"]
OUT_DELTA = OFFSETS["OUT_DELTA"]
N_SEATS = OFFSETS["N_SEATS"]
DEALER = OFFSETS["DEALER"]
SITTER = OFFSETS["SITTER"]
ACTIVE = OFFSETS["ACTIVE"]
XIA = OFFSETS["XIA"]
SHANG = OFFSETS["SHANG"]
N_DRAWS = OFFSETS["N_DRAWS"]
DEALER_DISCARDS = OFFSETS["DEALER_DISCARDS"]
CARD = OFFSETS["CARD"]
CARD_KIND = OFFSETS["CARD_KIND"]
OWNER = OFFSETS["OWNER"]
PHASE = OFFSETS["PHASE"]
FORCED = OFFSETS["FORCED"]
LIANG = OFFSETS["LIANG"]
LIANG_KNOWN = OFFSETS["LIANG_KNOWN"]
BOTTOM = OFFSETS["BOTTOM"]
N_SHOWN = OFFSETS["N_SHOWN"]
BOTTOM_SWAPS = OFFSETS["BOTTOM_SWAPS"]
N_HIST = OFFSETS["N_HIST"]
SCRATCH = OFFSETS["SCRATCH"]

# ---------------------------------------------------------------------------------------------
# Rule table
# ---------------------------------------------------------------------------------------------

RP_PLAYERS = 0
RP_LUZHOU = 1
RP_HU_ON_DISCARDS = 2
RP_ONE_FIVE_TEN = 3
RP_CHOUHU = 4
RP_PENG_COMPULSORY = 5
RP_PARTNERS = 8  # 20: Game.partners (bitmask of kinds sharing an eat shape)
RP_SW_N = RP_PARTNERS + 20  # 20: number of legal eat shapes containing kind c
RP_SW = RP_SW_N + 20  # 20 × 8: their shape ids (ascending)
RP_SW_A = RP_SW + 160  # 20 × 8: the shape minus one copy of c, first card
RP_SW_B = RP_SW_A + 160  # 20 × 8: second card
RP_MHX = RP_SW_B + 160  # 6 × 40: 胡息 of a table meld by GroupKind and face / shape id
RP_SIZE = RP_MHX + 6 * 40


def rule_table(rules: RuleSet) -> np.ndarray:
    """The ``rp`` array of a rule set (built from the reference's own tables)."""
    from engine.state import Game

    game = Game(rules)
    rp = np.zeros(RP_SIZE, dtype=np.int64)
    rp[RP_PLAYERS] = rules.players
    rp[RP_LUZHOU] = int(rules.luzhou)
    rp[RP_HU_ON_DISCARDS] = int(rules.hu_on_discards)
    rp[RP_ONE_FIVE_TEN] = int(rules.one_five_ten)
    rp[RP_CHOUHU] = int(rules.chouhu)
    rp[RP_PENG_COMPULSORY] = int(rules.peng_compulsory)
    shape_id = {s: i for i, s in enumerate(EAT_SHAPES)}
    for k in range(20):
        rp[RP_PARTNERS + k] = game.partners[k]
        sw = game.shapes_with[k]
        assert len(sw) <= 8
        rp[RP_SW_N + k] = len(sw)
        for j, (shape, (a, b)) in enumerate(sw):
            rp[RP_SW + k * 8 + j] = shape_id[shape]
            rp[RP_SW_A + k * 8 + j] = a
            rp[RP_SW_B + k * 8 + j] = b
    for kind in (GroupKind.PENG, GroupKind.WEI, GroupKind.CHOUWEI, GroupKind.PAO, GroupKind.TI):
        size = 4 if kind in (GroupKind.PAO, GroupKind.TI) else 3
        for k in range(20):
            rp[RP_MHX + int(kind) * 40 + k] = huxi(Group(kind, (k,) * size), rules)
    for i, s in enumerate(EAT_SHAPES):
        rp[RP_MHX + int(GroupKind.CHI) * 40 + i] = huxi(Group(GroupKind.CHI, s), rules)
    return rp


# ---------------------------------------------------------------------------------------------
# The hu bridge (engine.fast.hu); see hu_bridge.py
# ---------------------------------------------------------------------------------------------

from engine.fast.hu_bridge import auto_tianhu, eval_hu  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def n_cards(st, seat):
    return st[HAND_SIZE + seat] + st[TABLE_CARDS + seat]


@njit(cache=True)
def target(st, seat):
    q = st[QUADS + seat]
    return 20 + (q - 1 if q > 1 else 0)


@njit(cache=True)
def stock_left(st):
    return STOCK_SIZE - st[STOCK_POS]


@njit(cache=True)
def meld_huxi(rp, st, seat):
    t = 0
    for i in range(st[MELD_N + seat]):
        t += rp[RP_MHX + st[MELD_KIND + seat * MAXM + i] * 40 + st[MELD_ID + seat * MAXM + i]]
    return t


@njit(cache=True)
def _has_wei(st, seat, k):
    for i in range(st[MELD_N + seat]):
        kd = st[MELD_KIND + seat * MAXM + i]
        if (kd in (GK_WEI, GK_CHOUWEI)) and st[MELD_ID + seat * MAXM + i] == k:
            return True
    return False


@njit(cache=True)
def _meld_index(st, seat, k, kinds_mask):
    for i in range(st[MELD_N + seat]):
        kd = st[MELD_KIND + seat * MAXM + i]
        if kinds_mask >> kd & 1 and kd != GK_CHI and st[MELD_ID + seat * MAXM + i] == k:
            return i
    return -1


@njit(cache=True)
def _ask1(st, phase, seat, code, forced):
    st[PHASE] = phase
    st[PEND_NS] = 1
    st[PEND_SEATS] = seat
    for s in range(4):
        st[PEND_N + s] = 0
        st[DECL + s] = -1
    st[PEND_N + seat] = 1
    st[PEND_A + seat * MAXA] = code
    st[N_DECL] = 0
    st[FORCED] = forced


@njit(cache=True)
def _clear_pending(st):
    st[PEND_NS] = 0
    for s in range(4):
        st[PEND_N + s] = 0
        st[DECL + s] = -1
    st[N_DECL] = 0


@njit(cache=True)
def _add_pending_seat(st, seat):
    """Insert ``seat`` into the pending order if absent (dict insertion order)."""
    for i in range(st[PEND_NS]):
        if st[PEND_SEATS + i] == seat:
            return
    st[PEND_SEATS + st[PEND_NS]] = seat
    st[PEND_NS] += 1


@njit(cache=True)
def _finish(st, kind, winner, source, res_seat, card, from_seat):
    """Outcome; ``res_seat`` >= 0: the hu result stored at HURES + res_seat."""
    st[OUT_KIND] = kind
    st[OUT_WINNER] = winner
    st[OUT_SOURCE] = source
    st[OUT_CARD] = card
    st[OUT_FROM] = from_seat
    for s in range(4):
        st[OUT_DELTA + s] = 0
    if winner >= 0:
        b = HURES + res_seat * HR_W
        st[OUT_HUXI] = st[b + 1]
        st[OUT_DENG] = st[b + 2]
        st[OUT_FAN] = st[b + 3]
        st[OUT_SCORE] = st[b + 4]
        st[OUT_MT] = st[b + 5]
        st[OUT_ZIMO] = st[b + 6]
        score = st[b + 4]
        n = 0
        for i in range(3):
            s = st[ACTIVE + i]
            if s != winner:
                st[OUT_DELTA + s] = -score
                n += 1
        st[OUT_DELTA + winner] = score * n
    else:
        st[OUT_HUXI] = 0
        st[OUT_DENG] = 0
        st[OUT_FAN] = 0
        st[OUT_SCORE] = 0
        st[OUT_MT] = 0
        st[OUT_ZIMO] = -1
    st[PHASE] = PH_END
    _clear_pending(st)
    st[FORCED] = 0


@njit(cache=True)
def _from_hand(st, seat, k, n):
    st[HANDS + seat * 20 + k] -= n
    st[HAND_SIZE + seat] -= n
    if seat == st[DEALER] and k == st[LIANG]:
        st[LIANG_KNOWN] = 0


@njit(cache=True)
def _add_meld(st, seat, kind, mid, ncards):
    i = st[MELD_N + seat]
    st[MELD_KIND + seat * MAXM + i] = kind
    st[MELD_ID + seat * MAXM + i] = mid
    st[MELD_N + seat] = i + 1
    st[TABLE_CARDS + seat] += ncards
    if kind in (GK_PAO, GK_TI):
        st[QUADS + seat] += 1


@njit(cache=True)
def _replace_meld(st, seat, i, kind):
    # the replaced meld is a 3-card same-face meld; the new one a 4-card quad
    st[MELD_KIND + seat * MAXM + i] = kind
    st[TABLE_CARDS + seat] += 1
    st[QUADS + seat] += 1


# ---------------------------------------------------------------------------------------------
# Deal and the automatic part of the hand
# ---------------------------------------------------------------------------------------------

# The reference's methods call each other until a decision is asked; here each kernel of the
# same name returns the continuation (the next method, and its seat) and _run loops over them
# (cached kernels may not recurse).
C_DONE, C_DRAW, C_CLAIM_HU, C_CLAIM_PAO, C_CLAIM_TAKE = 0, 1, 2, 3, 4
C_NOBODY_TAKES, C_POST_TAKE, C_NEXT_INIT_TI, C_LIANG_HU, C_DEALER_TURN = 5, 6, 7, 8, 9


@njit(cache=True)
def new_state(rp, hp, deck, dealer, st):
    """Deal ``deck`` with ``dealer`` into ``st`` and run to the first decision (State())."""
    st[:] = 0
    n = rp[RP_PLAYERS]
    st[N_SEATS] = n
    st[DEALER] = dealer
    if n == 4:
        st[SITTER] = (dealer + 2) % 4
        st[ACTIVE] = dealer
        st[ACTIVE + 1] = (dealer + 1) % 4
        st[ACTIVE + 2] = (dealer + 3) % 4
    else:
        st[SITTER] = -1
        st[ACTIVE] = dealer
        st[ACTIVE + 1] = (dealer + 1) % 3
        st[ACTIVE + 2] = (dealer + 2) % 3
    for i in range(3):
        s = st[ACTIVE + i]
        st[XIA + s] = st[ACTIVE + (i + 1) % 3]
        st[SHANG + s] = st[ACTIVE + (i + 2) % 3]
    for s in range(4):
        st[DECL + s] = -1
        for k in range(20):
            st[CHOUHU + s * 20 + k] = -1
    st[CARD] = -1
    st[CARD_KIND] = -1
    st[OWNER] = -1
    st[PENG_SEAT] = -1
    st[OUT_KIND] = -1
    st[OUT_WINNER] = -1
    st[PHASE] = PH_END
    cont, seat = _deal(rp, hp, deck, st)
    _run(rp, hp, st, cont, seat)


@njit(cache=True)
def _deal(rp, hp, deck, st):
    """The hands, the stock (4 players: the shown bottom card, §13), the automatic 3提/5坎
    天胡 (§9 step 2) and the queue of dealt 提s (§9 step 3)."""
    for i in range(3):
        seat = st[ACTIVE + i]
        lo = HAND_CARDS * i
        for j in range(lo, lo + HAND_CARDS):
            st[HANDS + seat * 20 + deck[j]] += 1
        st[HAND_SIZE + seat] = HAND_CARDS
    d = st[ACTIVE]
    st[HANDS + d * 20 + deck[DEALT - 1]] += 1
    st[HAND_SIZE + d] = HAND_CARDS + 1
    stock = np.empty(STOCK_SIZE, dtype=np.int64)
    for i in range(STOCK_SIZE):
        stock[i] = deck[DEALT + i]
    swaps = 0
    if st[N_SEATS] == 4:
        shown = 2 if rp[RP_LUZHOU] else 1
        while swaps < STOCK_SIZE:
            red = -1
            for i in range(STOCK_SIZE - 1, STOCK_SIZE - 1 - shown, -1):
                if RED[stock[i]]:
                    red = i
                    break
            if red < 0:
                break
            c = stock[red]
            for i in range(red, 0, -1):
                stock[i] = stock[i - 1]
            stock[0] = c
            swaps += 1
        st[LIANG] = -1
        st[BOTTOM] = stock[STOCK_SIZE - 1]
        st[N_SHOWN] = shown
    else:
        st[LIANG] = deck[DEALT - 1]
        st[BOTTOM] = -1
        st[N_SHOWN] = 0
    st[BOTTOM_SWAPS] = swaps
    st[LIANG_KNOWN] = 1 if st[LIANG] >= 0 else 0
    for i in range(STOCK_SIZE):
        st[STOCK + i] = stock[i]
    st[STOCK_POS] = 0
    for i in range(3):
        seat = st[ACTIVE + i]
        if auto_tianhu(hp, st, HANDS + seat * 20, HURES + seat * HR_W):
            _finish(st, OK_TIANHU_AUTO, seat, -1, seat, -1, -1)
            return C_DONE, 0
    qn = 0
    for i in range(3):
        seat = st[ACTIVE + i]
        for k in range(20):
            if st[HANDS + seat * 20 + k] == 4:
                st[QUEUE + qn] = seat * 20 + k
                qn += 1
    st[QUEUE_N] = qn
    st[QUEUE_POS] = 0
    return C_NEXT_INIT_TI, 0


@njit(cache=True)
def _run(rp, hp, st, cont, seat):
    """Run the automatic part of the hand from continuation ``cont`` (its seat ``seat``) to
    the next decision or the end."""
    while cont != C_DONE:
        if cont == C_NEXT_INIT_TI:
            cont, seat = _next_init_ti(st)
        elif cont == C_LIANG_HU:
            cont, seat = _liang_hu(rp, hp, st)
        elif cont == C_DEALER_TURN:
            cont, seat = _dealer_turn(st)
        elif cont == C_POST_TAKE:
            cont, seat = _post_take(st, seat)
        elif cont == C_DRAW:
            cont, seat = _draw(st, seat)
        elif cont == C_CLAIM_HU:
            cont, seat = _claim_hu(rp, hp, st)
        elif cont == C_CLAIM_PAO:
            cont, seat = _claim_pao(st)
        elif cont == C_CLAIM_TAKE:
            cont, seat = _claim_take(rp, st)
        else:
            cont, seat = _nobody_takes(st)


@njit(cache=True)
def _next_init_ti(st):
    """The next dealt 提, a forced decision (§9 step 3); then the 天胡 chance."""
    if st[QUEUE_POS] < st[QUEUE_N]:
        e = st[QUEUE + st[QUEUE_POS]]
        st[QUEUE_POS] += 1
        _ask1(st, PH_INIT_TI, e // 20, TI_BASE + e % 20, 1)
        return C_DONE, 0
    return C_LIANG_HU, 0


@njit(cache=True)
def _liang_hu(rp, hp, st):
    """§9 step 4 (3 players) / §13 C21 (4 players): the optional 天胡."""
    _clear_pending(st)
    d = st[DEALER]
    if st[QUADS + d] < 2 and _hu_for(rp, hp, st, d, -1, SRC_LIANG_DEALER, 1, 0, 0):
        _set_pass_hu(st, d)
    liang = st[LIANG]
    if liang >= 0:
        st[CARD] = liang
        st[CARD_KIND] = CK_LIANG
        st[OWNER] = d
        for i in range(1, 3):
            seat = st[ACTIVE + i]
            if st[QUADS + seat] >= 2:
                continue
            if _hu_for(rp, hp, st, seat, liang, SRC_LIANG_OTHER, 1, 0, 0):
                _set_pass_hu(st, seat)
    if st[PEND_NS] > 0:
        st[PHASE] = PH_LIANG_HU
        st[FORCED] = 0
        return C_DONE, 0
    return C_DEALER_TURN, 0


@njit(cache=True)
def _dealer_turn(st):
    st[CARD] = -1
    st[CARD_KIND] = -1
    st[OWNER] = -1
    return C_POST_TAKE, st[DEALER]


@njit(cache=True)
def _post_take(st, seat):
    """§7: discard if N > T and a hand card is left, else the 下家 draws."""
    if n_cards(st, seat) > target(st, seat) and st[HAND_SIZE + seat] > 0:
        _clear_pending(st)
        st[PEND_N + seat] = _discard_options(st, seat)
        _add_pending_seat(st, seat)
        st[PHASE] = PH_DISCARD
        st[FORCED] = 0
        return C_DONE, 0
    return C_DRAW, st[XIA + seat]


@njit(cache=True)
def _discard_options(st, seat):
    """The discard codes of ``seat`` into its legal actions; their number."""
    h = HANDS + seat * 20
    b = PEND_A + seat * MAXA
    m = 0
    for k in range(20):
        v = st[h + k]
        if 0 < v < 3:
            st[b + m] = DISCARD_BASE + k
            m += 1
    if m == 0:  # C13: every hand card is in a 坎
        for k in range(20):
            if st[h + k]:
                st[b + m] = DISCARD_BASE + k
                m += 1
    return m


@njit(cache=True)
def _draw(st, seat):
    """DRAW(P), §8.2."""
    if st[STOCK_POS] >= STOCK_SIZE:
        _finish(st, OK_HUANGZHUANG, -1, -1, -1, -1, -1)
        return C_DONE, 0
    c = st[STOCK + st[STOCK_POS]]
    st[STOCK_POS] += 1
    st[N_DRAWS] += 1
    st[CARD] = c
    st[CARD_KIND] = CK_DRAWN
    st[OWNER] = seat
    v = st[HANDS + seat * 20 + c]
    if v == 3 or v == 2 or _has_wei(st, seat, c):
        code = WEI_BASE + c if v == 2 else TI_BASE + c
        _ask1(st, PH_DRAW_TAKE, seat, code, 1)
        return C_DONE, 0
    return C_CLAIM_HU, 0


@njit(cache=True)
def _claim_hu(rp, hp, st):
    """§8.4 H: offer HU to every eligible player."""
    c = st[CARD]
    owner = st[OWNER]
    kind = st[CARD_KIND]
    no = 0
    o0 = owner
    o1 = st[XIA + owner]
    o2 = st[SHANG + owner]
    if kind == CK_DRAWN:
        if stock_left(st) >= st[N_SHOWN]:  # §13: nobody may hu a shown bottom card
            no = 3
    elif rp[RP_HU_ON_DISCARDS]:
        o0 = o1
        o1 = o2
        no = 2
    _clear_pending(st)
    for i in range(no):
        seat = o0 if i == 0 else (o1 if i == 1 else o2)
        if st[HAND_SIZE + seat] == 0:
            continue  # dead hand (§6.5)
        if rp[RP_CHOUHU]:
            blocked = st[CHOUHU + seat * 20 + c]
            if blocked >= 0 and blocked == meld_huxi(rp, st, seat):
                continue
        if n_cards(st, seat) != target(st, seat):
            continue  # N + 1 = T + 1 is needed for 7 门子 (§7)
        only = _lonely_card(rp, st, seat)
        if only != LONELY_ANY and (only != c or st[QUADS + seat] == 0):
            continue
        src, haidi, dihu = hu_context(rp, st, seat, owner, kind)
        if _hu_for(rp, hp, st, seat, c, src, 0, haidi, dihu):
            _set_pass_hu(st, seat)
    if st[PEND_NS] > 0:
        st[PHASE] = PH_CLAIM_HU
        st[FORCED] = 0
        return C_DONE, 0
    return C_CLAIM_PAO, 0


@njit(cache=True)
def hu_context(rp, st, seat, owner, kind):
    """(source, 海底, 地胡) of a hu chance of ``seat`` on ``owner``'s card of CARD_KIND
    ``kind`` (drawn, else discarded), as ``engine.state.State._claim_hu`` gives them; read
    when the chance is offered, and at the end of a hand won on it (nothing they read has
    changed: ``engine.fast.facts``)."""
    if kind == CK_DRAWN:
        src = SRC_OWN_DRAW if seat == owner else SRC_OTHER_DRAW
        haidi = 1 if (stock_left(st) == 0 and st[BOTTOM] < 0) else 0
        dihu = 1 if (st[N_DRAWS] == 1 and seat != st[DEALER] and not rp[RP_LUZHOU]) else 0
        return src, haidi, dihu
    dihu = (
        1
        if (
            rp[RP_LUZHOU]
            and owner == st[DEALER]
            and st[DEALER_DISCARDS] == 1
            and seat == st[XIA + owner]
        )
        else 0
    )
    return SRC_DISCARD, 0, dihu


@njit(cache=True)
def _lonely_card(rp, st, seat):
    """``State._lonely_card``: the hu search's pre-filter (LONELY_ANY / the card / LONELY_NONE)."""
    h = HANDS + seat * 20
    mask = 0
    for k in range(20):
        v = st[h + k]
        if 0 < v < 3:
            mask |= 1 << k
    found = LONELY_ANY
    for k in range(20):
        if st[h + k] == 1 and not (rp[RP_PARTNERS + k] & mask):
            if found != LONELY_ANY:
                return LONELY_NONE
            found = k
    return found


@njit(cache=True)
def _hu_for(rp, hp, st, seat, card, source, tianhu, haidi, dihu):
    """Evaluate a hu chance of ``seat`` into HURES + seat; True if it wins."""
    return eval_hu(
        hp,
        st,
        HANDS + seat * 20,
        MELD_KIND + seat * MAXM,
        MELD_ID + seat * MAXM,
        st[MELD_N + seat],
        card,
        source,
        tianhu,
        haidi,
        dihu,
        HURES + seat * HR_W,
    )


@njit(cache=True)
def _set_pass_hu(st, seat):
    st[PEND_N + seat] = 2
    st[PEND_A + seat * MAXA] = PASS
    st[PEND_A + seat * MAXA + 1] = HU
    _add_pending_seat(st, seat)


@njit(cache=True)
def _claim_pao(st):
    """§8.4 R: a forced 跑 (5.3)."""
    c = st[CARD]
    owner = st[OWNER]
    drawn = st[CARD_KIND] == CK_DRAWN
    for i in range(3):
        seat = st[ACTIVE + i]
        if (seat != owner and (st[HANDS + seat * 20 + c] == 3 or _has_wei(st, seat, c))) or (
            drawn and _meld_index(st, seat, c, 1 << GK_PENG) >= 0
        ):
            _ask1(st, PH_CLAIM_PAO, seat, PAO_BASE + c, 1)
            return C_DONE, 0
    return C_CLAIM_TAKE, 0


@njit(cache=True)
def _must_discard_after(st, seat, hand_after):
    """Would a 碰/吃 leave ``seat`` owing a discard with no hand card (C14)?"""
    return n_cards(st, seat) + 1 > target(st, seat) and hand_after == 0


@njit(cache=True)
def _claim_take(rp, st):
    """§8.4 C: offer 碰 and 吃 simultaneously."""
    c = st[CARD]
    owner = st[OWNER]
    bit = 1 << c
    _clear_pending(st)
    for s in range(4):
        st[BEST_RANK + s] = 0
    st[PENG_SEAT] = -1
    for i in range(3):
        seat = st[ACTIVE + i]
        if seat == owner:
            continue
        if st[HANDS + seat * 20 + c] == 2:
            if (st[STINKY + seat] | st[DISCARDED + seat]) & bit:
                break
            if _must_discard_after(st, seat, st[HAND_SIZE + seat] - 2):
                break
            st[PENG_SEAT] = seat
            if rp[RP_PENG_COMPULSORY]:
                _ask1(st, PH_CLAIM_TAKE, seat, PENG, 1)
                return C_DONE, 0
            st[PEND_A + seat * MAXA] = PENG
            st[PEND_N + seat] = 1
            _add_pending_seat(st, seat)
            st[BEST_RANK + seat] = RANK_PENG
            break
    xo = st[XIA + owner]
    ne = 2 if st[CARD_KIND] == CK_DRAWN else 1
    for e in range(ne):
        if ne == 2 and e == 0:
            seat = owner
            rank = RANK_OWNER_CHI
        else:
            seat = xo
            rank = RANK_XIA_CHI
        if (st[STINKY + seat] | st[DISCARDED + seat]) & bit:
            continue
        b = PEND_A + seat * MAXA
        p = st[PEND_N + seat]
        m = chi_options(rp, st, seat, c, st[b + p : b + MAXA])
        if m:
            st[PEND_N + seat] = p + m
            _add_pending_seat(st, seat)
            if st[BEST_RANK + seat] == 0:
                st[BEST_RANK + seat] = rank
    if st[PEND_NS] == 0:
        return C_NOBODY_TAKES, 0
    for i in range(st[PEND_NS]):
        seat = st[PEND_SEATS + i]
        b = PEND_A + seat * MAXA
        p = st[PEND_N + seat]
        _sort_small(st[b : b + p], p)
        for j in range(p, 0, -1):
            st[b + j] = st[b + j - 1]
        st[b] = PASS
        st[PEND_N + seat] = p + 1
    st[PHASE] = PH_CLAIM_TAKE
    st[FORCED] = 0
    return C_DONE, 0


@njit(cache=True)
def _nobody_takes(st):
    """§8.4 E: the card goes to the owner's right; his 下家 draws."""
    c = st[CARD]
    owner = st[OWNER]
    st[RIGHT + owner * MAXD + st[RIGHT_N + owner]] = c
    st[RIGHT_N + owner] += 1
    st[CARD] = -1
    st[CARD_KIND] = -1
    st[OWNER] = -1
    return C_DRAW, st[XIA + owner]


@njit(cache=True)
def _sort_small(a, n):
    for i in range(1, n):
        v = a[i]
        j = i - 1
        while j >= 0 and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


@njit(cache=True)
def _add_code(out, n, i0, i1, i2, m):
    # the code of the sorted shape ids (i0, i1[, i2]) of m groups
    if m >= 2 and i1 < i0:
        i0, i1 = i1, i0
    if m == 3:
        if i2 < i1:
            i1, i2 = i2, i1
        if i1 < i0:
            i0, i1 = i1, i0
    if m == 1:
        code = CHI_BASE + i0 + 1
    elif m == 2:
        code = CHI_BASE + (i0 + 1) * RADIX + i1 + 1
    else:
        code = CHI_BASE + ((i0 + 1) * RADIX + i1 + 1) * RADIX + i2 + 1
    for i in range(n):
        if out[i] == code:
            return n
    out[n] = code
    return n + 1


@njit(cache=True)
def _fits(free, sid, c):
    """need[x] <= free[x] for the shape's cards; returns need[c] or -1 if it does not fit."""
    a = SHAPES[sid, 0]
    b = SHAPES[sid, 1]
    d = SHAPES[sid, 2]
    na = 1 + (a == b) + (a == d)
    nb = 1 + (b == a) + (b == d)
    nd = 1 + (d == a) + (d == b)
    if na > free[a] or nb > free[b] or nd > free[d]:
        return -1
    return (a == c) + (b == c) + (d == c)


@njit(cache=True)
def chi_options(rp, st, seat, c, out):
    """Every legal 吃 code of ``seat`` on ``c`` into ``out`` (unsorted, unique); the count."""
    h = HANDS + seat * 20
    if st[h + c] >= 3:
        return 0
    free = st[SCRATCH : SCRATCH + 20]
    for k in range(20):
        v = st[h + k]
        free[k] = v if v < 3 else 0
    n = 0
    ns = rp[RP_SW_N + c]
    for j in range(ns):
        sid = rp[RP_SW + c * 8 + j]
        a = rp[RP_SW_A + c * 8 + j]
        b = rp[RP_SW_B + c * 8 + j]
        if free[a] < 1 + (a == b) or free[b] < 1:
            continue
        free[a] -= 1
        free[b] -= 1
        k = free[c]
        if k == 0:
            n = _add_code(out, n, sid, 0, 0, 1)
        else:
            for j1 in range(ns):
                s1 = rp[RP_SW + c * 8 + j1]
                used = _fits(free, s1, c)
                if used < 0 or used > k:
                    continue
                if used == k:
                    n = _add_code(out, n, sid, s1, 0, 2)
                    continue
                for q in range(3):
                    free[SHAPES[s1, q]] -= 1
                for j2 in range(j1, ns):
                    s2 = rp[RP_SW + c * 8 + j2]
                    if _fits(free, s2, c) == 1:
                        n = _add_code(out, n, sid, s1, s2, 3)
                for q in range(3):
                    free[SHAPES[s1, q]] += 1
        free[a] += 1
        free[b] += 1
    if n == 0:
        return 0
    hand = st[HAND_SIZE + seat]
    if hand > 8:
        return n
    m = 0
    for i in range(n):
        code = out[i]
        v = code - CHI_BASE
        ng = 0
        for _ in range(3):
            if v % RADIX:
                ng += 1
            v //= RADIX
        if not _must_discard_after(st, seat, hand - 3 * ng + 1):
            out[m] = code
            m += 1
    return m


# ---------------------------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _resolve_hu(rp, st, o0, o1, o2, no, card):
    """Winner = first HU declarer in (o0, o1, o2)[:no]; else 臭胡 for every declarer."""
    winner = -1
    for i in range(no):
        s = o0 if i == 0 else (o1 if i == 1 else o2)
        if st[DECL + s] == HU:
            winner = s
            break
    if winner >= 0:
        if st[PHASE] == PH_LIANG_HU:
            kind = OK_TIANHU
            src = SRC_LIANG_DEALER if winner == st[DEALER] else SRC_LIANG_OTHER
        else:
            kind = OK_HU
            if st[CARD_KIND] == CK_DISCARDED:
                src = SRC_DISCARD
            else:
                src = SRC_OWN_DRAW if winner == st[OWNER] else SRC_OTHER_DRAW
        _finish(st, kind, winner, src, winner, card, st[OWNER])
        return True
    if rp[RP_CHOUHU] and card >= 0:
        for i in range(st[PEND_NS]):
            seat = st[PEND_SEATS + i]
            st[CHOUHU + seat * 20 + card] = meld_huxi(rp, st, seat)
    return False


@njit(cache=True)
def _resolve_take(rp, st):
    """碰 over 吃 (the owner's over his 下家's, C29); 臭牌 and 忍碰 of the seats that passed."""
    c = st[CARD]
    owner = st[OWNER]
    drawn = st[CARD_KIND] == CK_DRAWN
    winner = -1
    code = PASS
    rank = 0
    ps = st[PENG_SEAT]
    if ps >= 0 and st[DECL + ps] == PENG:
        winner = ps
        code = PENG
        rank = RANK_PENG
    else:
        xo = st[XIA + owner]
        ne = 2 if drawn else 1
        for e in range(ne):
            seat = owner if (ne == 2 and e == 0) else xo
            a = st[DECL + seat] if st[PEND_N + seat] > 0 else PASS
            if a >= CHI_BASE:
                winner = seat
                code = a
                rank = RANK_OWNER_CHI if (seat == owner and drawn) else RANK_XIA_CHI
                break
    bit = 1 << c
    if not st[FORCED]:
        for i in range(st[PEND_NS]):
            seat = st[PEND_SEATS + i]
            a = st[DECL + seat]
            if a == PASS and st[BEST_RANK + seat] > rank:
                st[STINKY + seat] |= bit
            if seat == ps and a != PENG:
                st[RENPENG + seat] |= bit
    if winner < 0:
        return C_NOBODY_TAKES, 0
    if code == PENG:
        _take_peng(st, winner, c)
    else:
        _take_chi(st, winner, c, code)
    _clear_card(st)
    return C_POST_TAKE, winner


@njit(cache=True)
def _resolve(rp, hp, st):
    """Carry out the declared decision, then run to the next one."""
    phase = st[PHASE]
    seat = st[PEND_SEATS]
    action = st[DECL + seat]  # the decider's, in the phases with one decider
    cont = C_DONE
    if phase == PH_INIT_TI:
        _take_ti_from_hand(st, seat, action - TI_BASE)
        cont = C_NEXT_INIT_TI
    elif phase == PH_LIANG_HU:
        if not _resolve_hu(rp, st, st[ACTIVE], st[ACTIVE + 1], st[ACTIVE + 2], 3, st[LIANG]):
            cont = C_DEALER_TURN
    elif phase == PH_DISCARD:
        cont, seat = _discard(st, seat, action - DISCARD_BASE)
    elif phase == PH_DRAW_TAKE:
        if action >= WEI_BASE:
            _take_wei(st, seat, st[CARD])
        else:
            _take_ti_on_draw(st, seat, st[CARD])
        _clear_card(st)
        cont = C_POST_TAKE
    elif phase == PH_CLAIM_HU:
        owner = st[OWNER]
        if st[CARD_KIND] == CK_DRAWN:
            won = _resolve_hu(rp, st, owner, st[XIA + owner], st[SHANG + owner], 3, st[CARD])
        else:
            won = _resolve_hu(rp, st, st[XIA + owner], st[SHANG + owner], -1, 2, st[CARD])
        if not won:
            cont = C_CLAIM_PAO
    elif phase == PH_CLAIM_PAO:
        _take_pao(st, seat, action - PAO_BASE)
        _clear_card(st)
        cont = C_POST_TAKE
    elif phase == PH_CLAIM_TAKE:
        cont, seat = _resolve_take(rp, st)
    _run(rp, hp, st, cont, seat)


# ---------------------------------------------------------------------------------------------
# Takes and the discard
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _clear_card(st):
    st[CARD] = -1
    st[CARD_KIND] = -1
    st[OWNER] = -1


@njit(cache=True)
def _take_ti_from_hand(st, seat, k):
    _from_hand(st, seat, k, 4)
    _add_meld(st, seat, GK_TI, k, 4)


@njit(cache=True)
def _take_ti_on_draw(st, seat, k):
    if st[HANDS + seat * 20 + k] == 3:
        _from_hand(st, seat, k, 3)
        _add_meld(st, seat, GK_TI, k, 4)
    else:
        i = _meld_index(st, seat, k, (1 << GK_WEI) | (1 << GK_CHOUWEI))
        _replace_meld(st, seat, i, GK_TI)


@njit(cache=True)
def _take_wei(st, seat, k):
    _from_hand(st, seat, k, 2)
    kind = GK_CHOUWEI if st[RENPENG + seat] >> k & 1 else GK_WEI
    _add_meld(st, seat, kind, k, 3)


@njit(cache=True)
def _take_pao(st, seat, k):
    if st[HANDS + seat * 20 + k] == 3:
        _from_hand(st, seat, k, 3)
        _add_meld(st, seat, GK_PAO, k, 4)
    else:
        i = _meld_index(st, seat, k, (1 << GK_WEI) | (1 << GK_CHOUWEI) | (1 << GK_PENG))
        _replace_meld(st, seat, i, GK_PAO)


@njit(cache=True)
def _take_peng(st, seat, k):
    _from_hand(st, seat, k, 2)
    _add_meld(st, seat, GK_PENG, k, 3)


@njit(cache=True)
def _take_chi(st, seat, c, code):
    """The groups of 吃 ``code`` (ascending shape ids) from the hand but the card ``c``."""
    v = code - CHI_BASE
    ids = np.empty(3, dtype=np.int64)
    ng = 0
    for _ in range(3):
        dgt = v % RADIX
        v //= RADIX
        if dgt:
            ids[ng] = dgt - 1
            ng += 1
    # digits came out least significant first: reverse to ascending shape ids
    for i in range(ng // 2):
        t = ids[i]
        ids[i] = ids[ng - 1 - i]
        ids[ng - 1 - i] = t
    skipped = False
    for g in range(ng):
        for q in range(3):
            k = SHAPES[ids[g], q]
            if k == c and not skipped:
                skipped = True
                continue
            _from_hand(st, seat, k, 1)
    for g in range(ng):
        _add_meld(st, seat, GK_CHI, ids[g], 3)


@njit(cache=True)
def _discard(st, seat, k):
    _from_hand(st, seat, k, 1)
    st[DISCARDED + seat] |= 1 << k
    st[DISCARDS + seat * MAXD + st[DISCARDS_N + seat]] = k
    st[DISCARDS_N + seat] += 1
    if seat == st[DEALER]:
        st[DEALER_DISCARDS] += 1
    st[CARD] = k
    st[CARD_KIND] = CK_DISCARDED
    st[OWNER] = seat
    return C_CLAIM_HU, 0


# ---------------------------------------------------------------------------------------------
# Public kernels
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def current_player(st):
    """The first seat that must decide, -1 when the hand is over."""
    for i in range(st[PEND_NS]):
        s = st[PEND_SEATS + i]
        if st[DECL + s] < 0:
            return s
    return -1


@njit(cache=True)
def legal_actions(st, seat, out):
    """The sorted legal codes of ``seat`` into ``out``; their number (0 if none)."""
    if seat < 0 or st[DECL + seat] >= 0:
        return 0
    n = st[PEND_N + seat]
    b = PEND_A + seat * MAXA
    for i in range(n):
        out[i] = st[b + i]
    return n


@njit(cache=True)
def apply(rp, hp, st, seat, action):
    """Declare ``action`` for ``seat`` (trusted); resolves once every decider has declared."""
    st[N_HIST] += 1
    st[DECL + seat] = action
    st[N_DECL] += 1
    if st[N_DECL] == st[PEND_NS]:
        _resolve(rp, hp, st)


@njit(cache=True)
def apply_checked(rp, hp, st, seat, action):
    """:func:`apply` after checking legality; returns False (state untouched) if illegal."""
    if st[OUT_KIND] >= 0 or seat < 0 or seat > 3 or st[PEND_N + seat] == 0:
        return False
    if st[DECL + seat] >= 0:
        return False
    b = PEND_A + seat * MAXA
    for i in range(st[PEND_N + seat]):
        if st[b + i] == action:
            apply(rp, hp, st, seat, action)
            return True
    return False


guard("state", globals())
