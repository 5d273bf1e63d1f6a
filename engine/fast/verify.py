"""Re-apply recorded hands through the compiled state machine and check every column
(``paohuzi verify``'s fast path; replay.replayer.verify turns the codes into messages).

:func:`verify_kernel` takes many hands at once: their decks, dealers and the concatenated
recorded event columns (rows ``los[h] … his[h] - 1`` are hand h's), and the recorded
outcome columns. Each hand is rebuilt with ``new_state``; at every event it checks that the
seat is one asked to decide and the action is in its legal set (``apply_checked``), and that
the recorded kind, card, from_seat, forced, n_legal and options are what
:func:`engine.fast.play.event_fields` derives (the function the recorder itself uses); that
the hand ends exactly after its last event; and that the recorded outcome columns equal
:func:`engine.fast.play.outcome_fields` of the final state. No recursion (see :mod:`engine.fast`).

Encodings: every input is int64; a null is :data:`NULL` (outside every column's range).
Recorded event columns ``cols`` are (6, m) in :data:`EVENT_CHECKED` order; outcome columns
``rec`` (n, 17) in :data:`OUTCOME_CHECKED` order (``zimo`` 0/1).

Per hand the kernel returns ``status`` (``ST_*``), ``seq`` (the event at fault, -1 when the
problem is not one event's) and ``reason``: the extra events (``ST_EXTRA``), the bitmask of
the differing columns (``ST_EVENT``: bit i = EVENT_CHECKED[i]; ``ST_OUTCOME``: bit i =
OUTCOME_CHECKED[i]), 0 otherwise. A bad hand stops at its first problem.

With ``facts`` rows ((n, engine.fast.facts.ROW_SIZE); (n, 0): none) the kernel also counts
each hand's facts as it re-applies it (the four calls of :mod:`engine.fast.facts`, as the
play loop makes them), so that ``paohuzi verify`` checks a shard's facts file without a
second replay; a bad hand's row is left incomplete (``R_APPLIED`` short of its events).

>>> from engine.rules import find_rules
>>> st = np.zeros(S.STATE_SIZE, dtype=np.int32)
>>> rp, hp = rule_arrays(find_rules("hunan"))
>>> int(replay_prefix(rp, hp, _sorted_deck(), 0, np.zeros(0, np.int64), np.zeros(0, np.int64), st))
0
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.fast import facts as F
from engine.fast import state as S
from engine.fast.cache_guard import guard
from engine.fast.play import NULL8, event_fields, outcome_fields
from engine.fast.rule_arrays import rule_arrays

__all__ = ["verify_kernel", "replay_prefix", "NULL", "EVENT_CHECKED", "OUTCOME_CHECKED"]

NULL = -(1 << 40)
EVENT_CHECKED = ("kind", "card", "from_seat", "forced", "n_legal", "options")
OUTCOME_CHECKED = (
    "outcome", "winner", "source", "hu_card", "from_seat", "huxi", "deng", "fan", "score",
    "mingtang", "zimo", "delta_0", "delta_1", "delta_2", "delta_3", "stock_left", "n_events",
)  # fmt: skip

ST_OK, ST_EXTRA, ST_ILLEGAL, ST_EVENT, ST_SHORT, ST_OUTCOME, ST_DECK, ST_DEALER = range(8)
STATUS_NAMES = ("ok", "extra", "illegal", "event", "short", "outcome", "deck", "dealer")
_NO_HUXI = -32768  # the recorder's "win without a 胡息 split" (kept null)


def _sorted_deck() -> np.ndarray:
    return np.repeat(np.arange(20, dtype=np.int64), 4)


@njit(cache=True)
def _nul(v):
    return NULL if v == NULL8 else v


@njit(cache=True)
def expected_outcome(st, n_seats, n_events, o, x):
    """The recorded encoding (NULL for null) of the outcome columns of a finished ``st`` into
    ``x`` (17); ``o`` is scratch for outcome_fields."""
    outcome_fields(st, o)
    won = o[1] != NULL8
    x[0] = o[0]
    for i in range(1, 5):
        x[i] = _nul(o[i])
    x[5] = o[5] if won and o[5] != _NO_HUXI else NULL
    for i in range(6, 9):
        x[i] = o[i] if won else NULL
    x[9] = o[9]
    x[10] = _nul(o[10])
    for s in range(4):
        x[11 + s] = o[11 + s] if s < n_seats else NULL
    x[15] = o[15]
    x[16] = n_events


@njit(cache=True)
def _asked(st, seat):
    """Whether ``seat`` is one the state asks to decide now (and has not declared)."""
    if seat < 0 or seat > 3 or st[S.DECL + seat] >= 0:
        return False
    for i in range(st[S.PEND_NS]):  # noqa: SIM110 (numba: no generators)
        if st[S.PEND_SEATS + i] == seat:
            return True
    return False


@njit(cache=True)
def _deck_ok(decks, h, counts):
    for k in range(20):
        counts[k] = 0
    for i in range(80):
        c = decks[h, i]
        if c < 0 or c >= 20:
            return False
        counts[c] += 1
    for k in range(20):  # noqa: SIM110
        if counts[k] != 4:
            return False
    return True


@njit(cache=True)
def verify_kernel(
    rp, hp, decks, dealers, los, his, seat, action, cols, rec, status, seqs, reason, fx, facts
):
    """Check hands ``0 … n-1`` (see the module doc); fills ``status``, ``seqs``, ``reason``
    and, when it has columns, ``facts`` (``fx``: their scratch). Returns the number of bad
    hands."""
    n = decks.shape[0]
    n_seats = rp[S.RP_PLAYERS]
    st = np.zeros(S.STATE_SIZE, dtype=np.int32)
    deck = np.empty(80, dtype=np.int64)
    counts = np.zeros(20, dtype=np.int64)
    o = np.zeros(16, dtype=np.int64)
    x = np.zeros(17, dtype=np.int64)
    n_bad = 0
    with_facts = facts.shape[1] > 0
    for h in range(n):
        fr = facts[h]
        applied = 0
        code = ST_OK
        at = -1
        why = 0
        lo = los[h]
        hi = his[h]
        if not _deck_ok(decks, h, counts):
            code = ST_DECK
        elif dealers[h] < 0 or dealers[h] >= n_seats:
            code = ST_DEALER
        else:
            for i in range(80):
                deck[i] = decks[h, i]
            S.new_state(rp, hp, deck, dealers[h], st)
            if with_facts:
                F.hand_start(st, fr)
            for p in range(lo, hi):
                k = p - lo
                if st[S.OUT_KIND] >= 0:
                    code, at, why = ST_EXTRA, k, hi - p
                    break
                s = seat[p]
                a = action[p]
                if not _asked(st, s):
                    code, at = ST_ILLEGAL, k
                    break
                kind, card, frm, forced, nl, opts = event_fields(st, s, a)
                m = 0
                if cols[0, p] != kind:
                    m |= 1
                if cols[1, p] != (NULL if card == NULL8 else card):
                    m |= 2
                if cols[2, p] != (NULL if frm == NULL8 else frm):
                    m |= 4
                if cols[3, p] != forced:
                    m |= 8
                if cols[4, p] != nl:
                    m |= 16
                if cols[5, p] != opts:
                    m |= 32
                if with_facts:
                    F.before_event(fr, s, kind, opts, forced)
                if not S.apply_checked(rp, hp, st, s, a):
                    code, at = ST_ILLEGAL, k
                    break
                applied += 1
                if with_facts:
                    F.after_event(st, fr)
                if m:
                    code, at, why = ST_EVENT, k, m
                    break
            if code == ST_OK and st[S.OUT_KIND] < 0:
                code, at = ST_SHORT, hi - lo
            if code == ST_OK:
                expected_outcome(st, n_seats, hi - lo, o, x)
                m = 0
                for c in range(17):
                    got = rec[h, c]
                    if c == 14 and n_seats == 3 and (got == NULL or got == 0):
                        continue
                    if got != x[c]:
                        m |= 1 << c
                if m:
                    code, why = ST_OUTCOME, m
            if with_facts:
                F.hand_end(rp, fx, st, fr, applied, code == ST_OK)
        status[h] = code
        seqs[h] = at
        reason[h] = why
        if code != ST_OK:
            n_bad += 1
    return n_bad


@njit(cache=True)
def replay_prefix(rp, hp, deck, dealer, seat, action, st):
    """Deal ``deck`` into ``st`` and apply the events ``(seat[i], action[i])`` through
    apply_checked; the number applied (it stops at the first refused one)."""
    S.new_state(rp, hp, deck, dealer, st)
    for i in range(seat.shape[0]):
        if not S.apply_checked(rp, hp, st, seat[i], action[i]):
            return i
    return seat.shape[0]


def run_kernel(
    rules: object,
    decks: np.ndarray,
    dealers: np.ndarray,
    los: np.ndarray,
    his: np.ndarray,
    seat: np.ndarray,
    action: np.ndarray,
    cols: np.ndarray,
    rec: np.ndarray,
    facts: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`verify_kernel` with the rule arrays of ``rules``; (status, seq, reason). With
    ``facts`` ((n, engine.fast.facts.ROW_SIZE) int64) the hands' facts rows are counted into
    it."""
    rp, hp = rule_arrays(rules)  # type: ignore[arg-type]
    n = decks.shape[0]
    if facts is None:
        facts, fx = np.zeros((n, 0), dtype=np.int64), np.zeros(0, dtype=np.int64)
    else:
        fx = F.facts_scratch(rules)
    status = np.zeros(n, dtype=np.int32)
    seqs = np.zeros(n, dtype=np.int32)
    reason = np.zeros(n, dtype=np.int64)

    def i64(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=np.int64)  # no copy when it already is

    verify_kernel(
        rp, hp, i64(decks), i64(dealers), i64(los), i64(his), i64(seat), i64(action), i64(cols),
        i64(rec), status, seqs, reason, fx, facts,
    )  # fmt: skip
    return status, seqs, reason


guard("verify", globals())
