"""Per-hand facts of recorded hands by compiled replay (``replay.analysis.facts`` builds the
``facts`` table from it; docs/LOG_FORMAT.md §12).

:func:`facts_kernel` re-applies many recorded hands through the compiled state machine, as
:func:`engine.fast.verify.verify_kernel` does (decks, dealers, the concatenated event
columns, rows ``los[h] … his[h] - 1`` hand h's), and writes one row of :data:`ROW_SIZE`
int64 per hand (offsets ``R_*``): what the winning seat held when the hand ended (its table
melds and its concealed hand, the hu card's circumstances, everything the hu evaluation
reads), and per seat the counts the event log and the state give together:

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

A round ends when no declaration is outstanding (``N_DECL`` back to 0). No recursion; every
code comes from the reference (:mod:`engine.fast.codes`, :class:`engine.actions.ActionKind`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.actions import ActionKind
from engine.fast import state as S
from engine.fast.cache_guard import guard
from engine.fast.codes import OK_HU, OK_TIANHU

_K_HU = int(ActionKind.HU)
_K_PENG = int(ActionKind.PENG)
_K_CHI = int(ActionKind.CHI)

# the row of one hand
R_APPLIED = 0  # events applied (fewer than the hand's: a refused event)
R_KIND = 1  # OUT_KIND
R_WINNER = 2
R_SOURCE = 3
R_CARD = 4
R_FROM = 5
R_CARD_KIND = 6  # CARD_KIND at the end (the hu card's kind)
R_STOCK_LEFT = 7
R_BOTTOM = 8
R_N_DRAWS = 9
R_DEALER_DISCARDS = 10
R_DEALER = 11
R_XIA_FROM = 12  # the 下家 of the hu card's owner (-1 when none)
R_N_MELDS = 13
R_MELD_KIND = 14  # S.MAXM entries
R_MELD_ID = R_MELD_KIND + S.MAXM
R_HAND = R_MELD_ID + S.MAXM  # 20 counts: the winner's concealed hand
R_CHOUHU = R_HAND + 20  # 4 seats
R_RENPENG = R_CHOUHU + 4
R_BIPAI = R_RENPENG + 4
R_CONFLICTS = R_BIPAI + 4
ROW_SIZE = R_CONFLICTS + 1


@njit(cache=True)
def facts_kernel(rp, hp, decks, dealers, los, his, seat, action, kind, options, forced, rows):
    """Fill ``rows`` (n, ROW_SIZE) for the n hands; see the module."""
    st = np.zeros(S.STATE_SIZE, dtype=np.int32)
    melds0 = np.zeros(4, dtype=np.int64)
    round_chouhu = np.zeros(4, dtype=np.int64)
    for h in range(decks.shape[0]):
        row = rows[h]
        for i in range(ROW_SIZE):
            row[i] = 0
        S.new_state(rp, hp, decks[h], dealers[h], st)
        claims = 0
        for s in range(4):
            melds0[s] = st[S.MELD_N + s]
            round_chouhu[s] = 0
        applied = 0
        for i in range(los[h], his[h]):
            s = seat[i]
            k = kind[i]
            opt = options[i]
            if (opt >> _K_HU) & 1 and k != _K_HU:
                round_chouhu[s] += 1
            if (opt >> _K_PENG) & 1 and k != _K_PENG and forced[i] == 0:
                row[R_RENPENG + s] += 1
            if k in (_K_HU, _K_PENG, _K_CHI):
                claims += 1
            if not S.apply_checked(rp, hp, st, s, action[i]):
                break
            applied += 1
            if st[S.N_DECL] == 0:  # the round is resolved
                won = st[S.PHASE] == S.PH_END and (
                    st[S.OUT_KIND] == OK_HU or st[S.OUT_KIND] == OK_TIANHU
                )
                for t in range(4):
                    if not won:
                        row[R_CHOUHU + t] += round_chouhu[t]
                    round_chouhu[t] = 0
                    if st[S.MELD_N + t] - melds0[t] >= 2:
                        row[R_BIPAI + t] += 1
                    melds0[t] = st[S.MELD_N + t]
                if claims >= 2:
                    row[R_CONFLICTS] += 1
                claims = 0
        row[R_APPLIED] = applied
        row[R_KIND] = st[S.OUT_KIND]
        w = st[S.OUT_WINNER]
        row[R_WINNER] = w
        row[R_SOURCE] = st[S.OUT_SOURCE]
        row[R_CARD] = st[S.OUT_CARD]
        row[R_FROM] = st[S.OUT_FROM]
        row[R_CARD_KIND] = st[S.CARD_KIND]
        row[R_STOCK_LEFT] = S.stock_left(st)
        row[R_BOTTOM] = st[S.BOTTOM]
        row[R_N_DRAWS] = st[S.N_DRAWS]
        row[R_DEALER_DISCARDS] = st[S.DEALER_DISCARDS]
        row[R_DEALER] = st[S.DEALER]
        f = st[S.OUT_FROM]
        row[R_XIA_FROM] = st[S.XIA + f] if f >= 0 else -1
        if w >= 0:
            n = st[S.MELD_N + w]
            row[R_N_MELDS] = n
            for j in range(n):
                row[R_MELD_KIND + j] = st[S.MELD_KIND + w * S.MAXM + j]
                row[R_MELD_ID + j] = st[S.MELD_ID + w * S.MAXM + j]
            for c in range(20):
                row[R_HAND + c] = st[S.HANDS + w * 20 + c]


guard("facts", globals())
