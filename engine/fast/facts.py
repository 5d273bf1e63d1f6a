"""Per-hand facts of hands (``replay.derived.facts`` builds the ``facts`` table from them;
docs/LOG_FORMAT.md §12), counted as a hand is played or replayed.

One row of :data:`ROW_SIZE` int64 per hand (offsets ``R_*``; ``A_*`` are the accounting of
the claim round under way) is kept by four calls: :func:`hand_start` on the dealt state,
:func:`before_event` and :func:`after_event` around each event, :func:`hand_end` on the final
state. The compiled play loop (``engine.fast.play``) makes them as it plays, so ``simulate``
writes the facts without replaying; :func:`facts_kernel` makes them while re-applying
recorded hands through the state machine, as :func:`engine.fast.verify.verify_kernel` does
(decks, dealers, the concatenated event columns, rows ``los[h] … his[h] - 1`` hand h's), for
``paohuzi index`` and older shards. Both see the same states and events, so their rows are
the same (tested). The row holds the outcome, the winner's concealed hand at the end, and
per seat the counts the event log and the state give together:

* ``R_CHOUHU + s``: 胡 declined by seat ``s`` (an offered 胡 answered otherwise) in a claim
  round that nobody won by 胡 (a decline in the round another seat won is no 臭胡: the hand
  ends there);
* ``R_RENPENG + s``: 碰 declined by ``s`` (a 碰 on offer, not forced, answered by 过 or 吃:
  the engine's 忍碰, RULES §6.1);
* ``R_BIPAI + s``: executed eats of ``s`` that laid 比 groups (the eat added two or more
  groups to its table, RULES §5.6);
* ``R_CONFLICTS``: claim rounds (the declarations from the offer of a card to its
  resolution) in which two or more seats declared a claim (胡, 碰 or 吃), so priority decided
  (RULES §10.4; every declaration is recorded, the losing ones too).

A round ends when no declaration is outstanding (``N_DECL`` back to 0).

A hand won by 胡 (``OK_HU``, ``OK_TIANHU``) also gets its winning reading: the winner's hu
evaluation again, in the circumstances it was made in (``engine.fast.state.hu_context``; a
亮张 胡 is a 天胡 of the dealt hand or of the 亮张), by :func:`engine.fast.hu.hu_reading_at`
(the reference's reading, C9 included): whether it wins, its option, 胡息 and score (which
the caller holds to the recorded ones), its groups per kind (``R_GROUPS``) and whether it is
a 破跑胡 (``R_POPAO``: option F while a 跑 of the hu card was possible, RULES §10.3 step 2,
as ``replay.derived.facts.run_possible`` states it). The 3提/5坎 天胡 (``OK_TIANHU_AUTO``)
has no compiled reading (``R_OPTION`` stays -1): the caller evaluates those few itself.

No recursion; every code comes from the reference (:mod:`engine.fast.codes`,
:class:`engine.actions.ActionKind`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.actions import ActionKind
from engine.fast import hu as H
from engine.fast import state as S
from engine.fast.cache_guard import guard
from engine.fast.codes import (
    GK_CHOUWEI,
    GK_PENG,
    GK_WEI,
    OK_HU,
    OK_TIANHU,
    OPT_F,
    SRC_DISCARD,
    SRC_LIANG_DEALER,
    SRC_LIANG_OTHER,
    SRC_OTHER_DRAW,
    SRC_OWN_DRAW,
)

_K_HU = int(ActionKind.HU)
_K_PENG = int(ActionKind.PENG)
_K_CHI = int(ActionKind.CHI)

# the row of one hand
R_APPLIED = 0  # events applied (fewer than the hand's: a refused event)
R_KIND = 1  # OUT_KIND
R_WINNER = 2
R_HAND = 3  # 20 counts: the winner's concealed hand at the end (a 3提/5坎 天胡: his deal)
R_CHOUHU = R_HAND + 20  # 4 seats
R_RENPENG = R_CHOUHU + 4
R_BIPAI = R_RENPENG + 4
R_CONFLICTS = R_BIPAI + 4
# the winning reading (a hand won by 胡)
R_WIN = R_CONFLICTS + 1  # 1: the reading wins
R_OPTION = R_WIN + 1  # codes.OPT_*, -1 without a reading
R_HUXI = R_OPTION + 1
R_SCORE = R_HUXI + 1
R_POPAO = R_SCORE + 1
R_GROUPS = R_POPAO + 1  # H.READING_SIZE: count, then 胡息, per GroupKind
# the accounting of the claim round under way (scratch while the hand is played)
A_CLAIMS = R_GROUPS + H.READING_SIZE  # claims declared in the round
A_MELDS = A_CLAIMS + 1  # 4: each seat's table melds when the round began
A_CHOUHU = A_MELDS + 4  # 4: 胡 declined in the round, per seat
ROW_SIZE = A_CHOUHU + 4

# the scratch of the reading (FX_SIZE int64, :func:`facts_scratch`): the reading's hu params,
# then a hu result and the hu kernels' work space
_FX_OUT = H.PARAMS_SIZE
_FX_WS = _FX_OUT + H.OUT_SIZE
FX_SIZE = _FX_WS + H.WS_SIZE


def facts_scratch(rules):
    """The ``fx`` of :func:`facts_kernel` / :func:`hand_end` for ``rules``: the reading's hu
    params (``engine.fast.hu.reading_params``) and the scratch of its evaluation."""
    fx = np.zeros(FX_SIZE, dtype=np.int64)
    fx[:_FX_OUT] = H.reading_params(rules)
    return fx


@njit(cache=True)
def _run_possible(st, w, card, source):
    """Whether option K, P or W applied to ``card`` (``run_possible`` of the reference)."""
    foreign = source == SRC_OTHER_DRAW or source == SRC_LIANG_OTHER or source == SRC_DISCARD  # noqa: SIM109 (numba)
    if st[S.HANDS + w * 20 + card] == 3 and foreign:
        return True
    for j in range(st[S.MELD_N + w]):
        if st[S.MELD_ID + w * S.MAXM + j] != card:
            continue
        mk = st[S.MELD_KIND + w * S.MAXM + j]
        if mk == GK_PENG and (source == SRC_OWN_DRAW or source == SRC_OTHER_DRAW):  # noqa: SIM109 (numba)
            return True
        if (mk == GK_WEI or mk == GK_CHOUWEI) and source != SRC_OWN_DRAW:  # noqa: SIM109 (numba)
            return True
    return False


@njit(cache=True)
def _win_reading(rp, fx, st, row):
    """The reading of a hand won by 胡 into ``row`` (see the module)."""
    w = st[S.OUT_WINNER]
    source = st[S.OUT_SOURCE]
    card = st[S.OUT_CARD]
    tianhu = 0
    haidi = 0
    dihu = 0
    if source == SRC_LIANG_DEALER:
        tianhu = 1
        card = -1
    elif source == SRC_LIANG_OTHER:
        tianhu = 1
    else:
        src, haidi, dihu = S.hu_context(rp, st, w, st[S.OUT_FROM], st[S.CARD_KIND])
        if src != source:  # not the circumstances the hand was won in
            return
    row[R_WIN] = H.hu_reading_at(
        fx, st, S.MELD_KIND + w * S.MAXM, st, S.MELD_ID + w * S.MAXM, st[S.MELD_N + w], st,
        S.HANDS + w * 20, card, source, tianhu, haidi, dihu, fx, _FX_OUT, fx, _FX_WS, row,
        R_GROUPS,
    )  # fmt: skip
    opt = fx[_FX_OUT + H.O_OPTION]
    row[R_OPTION] = opt
    row[R_HUXI] = fx[_FX_OUT + H.O_HUXI]
    row[R_SCORE] = fx[_FX_OUT + H.O_SCORE]
    if card >= 0 and opt == OPT_F and _run_possible(st, w, card, source):
        row[R_POPAO] = 1


@njit(cache=True)
def hand_start(st, row):
    """Begin hand ``row`` on the dealt state ``st``."""
    for i in range(ROW_SIZE):
        row[i] = 0
    row[R_OPTION] = -1
    for s in range(4):
        row[A_MELDS + s] = st[S.MELD_N + s]


@njit(cache=True)
def before_event(row, seat, kind, options, forced):
    """Count the event of ``seat`` (its ActionKind, the options mask and the forced flag it
    was recorded with) before it is applied."""
    if (options >> _K_HU) & 1 and kind != _K_HU:
        row[A_CHOUHU + seat] += 1
    if (options >> _K_PENG) & 1 and kind != _K_PENG and forced == 0:
        row[R_RENPENG + seat] += 1
    if kind == _K_HU or kind == _K_PENG or kind == _K_CHI:  # noqa: SIM109 (numba)
        row[A_CLAIMS] += 1


@njit(cache=True)
def after_event(st, row):
    """Count the round's end once the event applied to ``st`` resolved it."""
    if st[S.N_DECL] != 0:
        return
    won = st[S.PHASE] == S.PH_END and (st[S.OUT_KIND] == OK_HU or st[S.OUT_KIND] == OK_TIANHU)
    for t in range(4):
        if not won:
            row[R_CHOUHU + t] += row[A_CHOUHU + t]
        row[A_CHOUHU + t] = 0
        if st[S.MELD_N + t] - row[A_MELDS + t] >= 2:
            row[R_BIPAI + t] += 1
        row[A_MELDS + t] = st[S.MELD_N + t]
    if row[A_CLAIMS] >= 2:
        row[R_CONFLICTS] += 1
    row[A_CLAIMS] = 0


@njit(cache=True)
def hand_end(rp, fx, st, row, applied, complete):
    """End hand ``row`` on the final state ``st`` after ``applied`` events (``complete``: all
    of the hand's): the outcome, what the winner held and, for a complete hand won by 胡, its
    reading (``fx``: :func:`facts_scratch`)."""
    row[R_APPLIED] = applied
    row[R_KIND] = st[S.OUT_KIND]
    w = st[S.OUT_WINNER]
    row[R_WINNER] = w
    if w < 0:
        return
    for c in range(20):
        row[R_HAND + c] = st[S.HANDS + w * 20 + c]
    if complete and (st[S.OUT_KIND] == OK_HU or st[S.OUT_KIND] == OK_TIANHU):
        _win_reading(rp, fx, st, row)


@njit(cache=True)
def facts_kernel(rp, hp, fx, decks, dealers, los, his, seat, action, kind, options, forced, rows):
    """Fill ``rows`` (n, ROW_SIZE) for the n hands by replaying their events; see the module.
    ``fx``: :func:`facts_scratch`."""
    st = np.zeros(S.STATE_SIZE, dtype=np.int32)
    for h in range(decks.shape[0]):
        row = rows[h]
        S.new_state(rp, hp, decks[h], dealers[h], st)
        hand_start(st, row)
        applied = 0
        for i in range(los[h], his[h]):
            s = seat[i]
            before_event(row, s, kind[i], options[i], forced[i])
            if not S.apply_checked(rp, hp, st, s, action[i]):
                break
            applied += 1
            after_event(st, row)
        hand_end(rp, fx, st, row, applied, applied == his[h] - los[h])


guard("facts", globals())
