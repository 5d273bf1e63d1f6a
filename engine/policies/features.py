"""Hand evaluation shared by the ``greedy`` and ``heuristic`` policies (no policy logic here).

Everything a decision needs is read once from the :class:`~engine.observation.Observation`
into a :class:`View` (plain lists), and the hand is scored **per card**: a card's value is
its best role among

* a member of a complete 一句话 / 绞 that the free hand already holds (``Weights.full``,
  plus the weighted 胡息 share of the shape),
* one card of a pair (``pair``, plus the 偎 胡息 it may grow into),
* one card of a partial shape (two cards of a 一句话 / 绞) whose third card is still live
  (``part`` + ``out`` per unseen completing copy, plus half the shape's 胡息 share),

plus a share (``spill``) of its other roles and a base that prefers big faces and faces that
can still pair. A dealt 坎 (three in hand) is a fixed group. A take's value (see
``engine.policies.greedy``) is the value of the groups it lays on the table plus the change
of the hand's sum. The roles are read from :class:`Tables`, built at import (one per 胡息
table and 1-5-10 switch), so scoring a card is a few dozen list look-ups and no search.

Near the end of a hand :func:`discard_waits` finds the waits (听牌) each discard would leave,
with an exact, memoised split search over the hand packed into one int.

>>> from engine.cards import parse_cards, to_counts
>>> from engine.rules import find_rules
>>> t = tables(find_rules("hunan"))
>>> h = list(to_counts(parse_cards("一二三 九 肆肆"))) + [0]
>>> un = [2] * 20 + [0]
>>> v = card_values(h, free_counts(h), un, t, 1.0)
>>> v[8] < v[13] < v[0]    # the lone 九 < a card of the pair 肆肆 < a card of 一二三
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engine.cards import NUM_KINDS
from engine.groups import Group, GroupKind, eat_shapes_for, huxi, same_face_huxi
from engine.observation import Observation
from engine.policies.weights import DEFAULT_GREEDY as _D
from engine.rules import RuleSet

#: The sentinel kind: index 20 of every count list, count 0 in ``unseen`` and a large count in
#: the free hand, so a table entry with one partner kind needs no branch.
SENT = NUM_KINDS


# Sums. CPython 3.12 made the builtin ``sum()`` of floats a compensated (Neumaier) sum, so the
# same float terms may add up to a different last bit on 3.11 and on 3.12+; a near-tie decided
# by that bit would split the reference from the compiled mirror (whose kernels accumulate
# ``total = 0.0; total += x`` left to right). Policy code therefore never hands floats to the
# builtin: float terms go through :func:`left_sum`, integer ones through :func:`int_sum`
# (tests/engine/test_portable_sum.py reads these modules and holds them to it).


def left_sum(values: Iterable[float]) -> float:
    """The floats ``values`` added one by one from the left, ``((0.0 + x0) + x1) + …``: the
    order of the compiled kernels' ``total += x`` loops and of CPython ≤ 3.11's ``sum()``, on
    every interpreter.

    >>> left_sum([0.1] * 10)
    0.9999999999999999
    >>> left_sum([])
    0.0
    """
    total = 0.0
    for x in values:
        total += x
    return total


def int_sum(values: Iterable[int]) -> int:
    """The sum of ``values``, which must be ints (an int sum is exact on every interpreter, so
    the builtin serves); a float among them raises :class:`TypeError`.

    >>> int_sum([3, 4, 5])
    12
    >>> int_sum([1, 0.5])
    Traceback (most recent call last):
    ...
    TypeError: int_sum over non-ints (their sum: 1.5)
    """
    total = sum(values)
    if type(total) is not int:  # any float (or other number) among them makes the sum one
        raise TypeError(f"int_sum over non-ints (their sum: {total!r})")
    return total


class Weights:
    """Role values of one card (a complete group is worth 3 × ``full``, as on the table).

    The defaults, ranges and meanings are the card-value block of
    :data:`engine.policies.weights.PARAMS` (the slot ``self_`` is the parameter ``self``)."""

    __slots__ = ("full", "pair", "part", "out", "spill", "big", "self_", "kan", "pair_dead",
                 "part_hx")  # fmt: skip

    #: parameter name (engine.policies.weights) → slot
    PARAMS = {s.rstrip("_"): s for s in __slots__}

    def __init__(
        self,
        full: float = _D["full"],
        pair: float = _D["pair"],
        part: float = _D["part"],
        out: float = _D["out"],
        spill: float = _D["spill"],
        big: float = _D["big"],
        self_: float = _D["self"],
        kan: float = _D["kan"],
        pair_dead: float = _D["pair_dead"],
        part_hx: float = _D["part_hx"],
    ) -> None:
        self.full, self.pair, self.part, self.out = full, pair, part, out
        self.spill, self.big, self.self_, self.kan = spill, big, self_, kan
        self.pair_dead, self.part_hx = pair_dead, part_hx


DEFAULT = Weights()


class Tables:
    """Role tables for one 胡息 table (Hunan / Luzhou) and the 1-5-10 switch."""

    __slots__ = (
        "comp",
        "part",
        "nbr",
        "pair_hx",
        "kan_hx",
        "peng_hx",
        "shape_hx",
        "luzhou",
        "variant",
        "starts",
        "memo_rest",
        "same",
        "hidden_wei",
        "wait2",
        "completes",
        "memo_waits",
        "comp1",
        "comp2",
        "hx_shapes",
    )

    def __init__(self, rules: RuleSet) -> None:
        shapes = eat_shapes_for(rules)
        self.luzhou = rules.luzhou
        # the index of engine.hu's split tables: 胡息 table and 1-5-10 switch
        self.variant = (2 if rules.luzhou else 0) + (1 if rules.one_five_ten else 0)
        self.shape_hx: dict[tuple[int, ...], int] = {}
        self.hx_shapes: tuple[tuple[tuple[int, ...], int], ...] = ()
        comp: list[list[tuple[int, int, int, int, int, float]]] = [[] for _ in range(NUM_KINDS)]
        # partial (k, x): the kinds that complete it and the best 胡息 of the completed shape
        part: dict[tuple[int, int], tuple[set[int], int]] = {}
        for s in shapes:
            kind = GroupKind.JIAO if s[0] % 10 == s[2] % 10 else GroupKind.SENTENCE
            hx = huxi(Group(kind, s), rules)
            self.shape_hx[s] = hx
            for k in set(s):
                nk = s.count(k)
                others = sorted({x for x in s if x != k})
                a = others[0] if others else SENT
                b = others[1] if len(others) > 1 else SENT
                na = s.count(a) if a != SENT else 0
                nb = s.count(b) if b != SENT else 0
                comp[k].append((nk, a, na, b, nb, hx / 3.0))
            for i in range(3):
                for j in range(i + 1, 3):
                    x, y = s[i], s[j]
                    if x == y:
                        continue  # a pair is its own role
                    third = s[3 - i - j]
                    for k, o in ((x, y), (y, x)):
                        done, best = part.get((k, o), (set(), 0))
                        done.add(third)
                        part[(k, o)] = (done, max(best, hx))
        self.hx_shapes = tuple((s, hx) for s, hx in self.shape_hx.items() if hx)
        self.comp = tuple(tuple(sorted(c)) for c in comp)
        # the same without the copies of k itself, for 1 and for 2 copies of k in hand
        self.comp1 = tuple(tuple(e[1:] for e in c if e[0] == 1) for c in self.comp)
        self.comp2 = tuple(tuple(e[1:] for e in c) for c in self.comp)
        # per lowest kind: the shapes starting there, packed (see pack), and their 胡息
        starts: list[list[tuple[int, int]]] = [[] for _ in range(NUM_KINDS)]
        for s in shapes:
            starts[s[0]].append((int_sum(1 << (3 * x) for x in s), self.shape_hx[s]))
        self.starts = tuple(tuple(x) for x in starts)
        self.memo_rest: dict[int, dict[int, int]] = {}
        self.memo_waits: dict[tuple[int, bool, bool, int], tuple[tuple[int, int, int], ...]] = {}
        # a waiting pair of cards (a ≤ b) → the cards that complete it and the group's 胡息;
        # a pair may also wait on its third copy, a 碰-valued triple (C8)
        wait2: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for s in shapes:
            for i in range(3):
                rest = s[:i] + s[i + 1 :]
                lst = wait2.setdefault((rest[0], rest[1]), [])
                if (s[i], self.shape_hx[s]) not in lst:
                    lst.append((s[i], self.shape_hx[s]))
        for k in range(NUM_KINDS):
            wait2.setdefault((k, k), []).append((k, same_face_huxi(GroupKind.PENG_HU, k, rules)))
        self.wait2 = {key: tuple(v) for key, v in wait2.items()}
        parts: list[list[tuple[int, int, int, float]]] = [[] for _ in range(NUM_KINDS)]
        for (k, o), (thirds, hx) in sorted(part.items()):
            assert len(thirds) <= 2, (k, o, thirds)
            t = sorted(thirds) + [SENT, SENT]
            parts[k].append((o, t[0], t[1], hx / 3.0))
        self.part = tuple(tuple(p) for p in parts)
        # per face c: the partial shapes (a < b, their completed shape's 胡息 share) it completes
        completes: list[list[tuple[int, int, float]]] = [[] for _ in range(NUM_KINDS)]
        for k in range(NUM_KINDS):
            for o, c1, c2, share in self.part[k]:
                if o > k:
                    for c in (c1, c2):
                        if c != SENT:
                            completes[c].append((k, o, share))
        self.completes = tuple(tuple(x) for x in completes)
        self.nbr = tuple(
            tuple(sorted({k} | {o for o, *_ in self.part[k]})) for k in range(NUM_KINDS)
        )
        self.kan_hx = tuple(same_face_huxi(GroupKind.KAN, k, rules) for k in range(NUM_KINDS))
        self.pair_hx = tuple(same_face_huxi(GroupKind.WEI, k, rules) for k in range(NUM_KINDS))
        self.peng_hx = tuple(same_face_huxi(GroupKind.PENG, k, rules) for k in range(NUM_KINDS))
        # 胡息 of same-face table groups by kind and face; another seat's hidden 偎 is
        # counted at the small black value (as Observation.visible_meld_huxi does)
        assert GroupKind.CHI == 0
        self.same: list[tuple[int, ...]] = [
            tuple(same_face_huxi(GroupKind(kind), k, rules) for k in range(NUM_KINDS))
            if kind
            else ()
            for kind in range(GroupKind.TI + 1)
        ]
        self.hidden_wei = same_face_huxi(GroupKind.WEI, 0, rules)


_TABLES: dict[tuple[bool, bool], Tables] = {}


def tables(rules: RuleSet) -> Tables:
    """The role tables for ``rules`` (built once per 胡息 table and 1-5-10 switch)."""
    key = (rules.luzhou, rules.one_five_ten)
    t = _TABLES.get(key)
    if t is None:
        t = _TABLES[key] = Tables(rules)
    return t


for _r in (RuleSet(), RuleSet(ruleset="luzhou")):
    tables(_r)


def free_counts(h: Sequence[int]) -> list[int]:
    """Hand counts usable in shapes: a 坎 (3) is fixed (§6.3), so 0; the sentinel is large."""
    f = [n if n < 3 else 0 for n in h[:NUM_KINDS]]
    f.append(9)
    return f


def card_value(
    k: int,
    h: Sequence[int],
    f: Sequence[int],
    un: Sequence[int],
    t: Tables,
    w_hx: float,
    wt: Weights = DEFAULT,
) -> float:
    """The value of one copy of kind ``k`` held in ``h`` (``f``: free counts, ``un``: unseen
    copies per kind, ``w_hx``: weight of one 胡息). See :class:`Scorer`."""
    return Scorer(un, t, w_hx, wt).value(k, h, f)


class Scorer:
    """Card values for one decision: the unseen copies, the tables and the weights are bound
    once; :meth:`value` then scores a kind in any hand (the current one, or the hand after a
    take).

    >>> from engine.cards import parse_cards, to_counts
    >>> from engine.rules import find_rules
    >>> h = list(to_counts(parse_cards("一二三 九"))) + [0]
    >>> s = Scorer([2] * 20 + [0], tables(find_rules("hunan")), 1.0)
    >>> s.value(8, h, free_counts(h)) < s.value(0, h, free_counts(h))
    True
    """

    __slots__ = ("un", "t", "w_hx", "wt")

    def __init__(self, un: Sequence[int], t: Tables, w_hx: float, wt: Weights = DEFAULT) -> None:
        self.un, self.t, self.w_hx, self.wt = un, t, w_hx, wt

    def value(self, k: int, h: Sequence[int], f: Sequence[int]) -> float:
        """The value of one copy of ``k`` in the hand ``h`` (``f``: its free counts)."""
        t, wt, w_hx = self.t, self.wt, self.w_hx
        n = h[k]
        if n >= 3:
            return wt.kan + w_hx * t.kan_hx[k] / 3.0
        un = self.un
        full = wt.full
        best = 0.0
        total = 0.0
        # the shapes this many copies of k can fill (a 绞 may need two)
        for a, na, b, nb, hx in (t.comp2 if n == 2 else t.comp1)[k]:
            if f[a] >= na and f[b] >= nb:
                v = full + w_hx * hx
                total += v
                if v > best:
                    best = v
        if n == 2:
            v = wt.pair + w_hx * t.pair_hx[k] / 3.0 * (1.0 if un[k] else wt.pair_dead)
            total += v
            if v > best:
                best = v
        part, out = wt.part, wt.out
        for o, c1, c2, hx in t.part[k]:
            if f[o]:
                outs = un[c1] + un[c2]
                if outs:
                    v = part + out * outs + w_hx * hx * wt.part_hx
                    total += v
                    if v > best:
                        best = v
        base = wt.self_ * un[k] + (wt.big if k >= 10 else 0.0)
        return base + best + wt.spill * (total - best)

    def values(self, h: Sequence[int], f: Sequence[int]) -> list[float]:
        """:meth:`value` for every kind (0.0 where the hand holds none)."""
        out = [0.0] * NUM_KINDS
        value = self.value
        for k in range(NUM_KINDS):
            if h[k]:
                out[k] = value(k, h, f)
        return out


def in_complete(k: int, h: Sequence[int], f: Sequence[int], t: Tables) -> bool:
    """Whether a copy of ``k`` belongs to some complete 一句话 / 绞 of the free hand (or a 坎)."""
    n = h[k]
    if n >= 3:
        return True
    for nk, a, na, b, nb, _hx in t.comp[k]:  # noqa: SIM110 - a loop is faster here
        if n >= nk and f[a] >= na and f[b] >= nb:
            return True
    return False


def loose_count(h: Sequence[int], f: Sequence[int], t: Tables, limit: int) -> int:
    """The number of free cards in no complete 一句话 / 绞 of the hand, counted up to
    ``limit`` + 1 (a quick necessary test for 听牌: a card that ends in a complete group has
    a complete shape in the hand now)."""
    n_loose = 0
    comp = t.comp
    for k in range(NUM_KINDS):
        n = f[k]
        if not n:
            continue
        for nk, a, na, b, nb, _hx in comp[k]:
            if n >= nk and f[a] >= na and f[b] >= nb:
                break
        else:
            n_loose += n
            if n_loose > limit:
                break
    return n_loose


def loose_kinds(h: Sequence[int], f: Sequence[int], t: Tables) -> list[int]:
    """The kinds with free copies in no complete 一句话 / 绞 of the hand."""
    out = []
    comp = t.comp
    for k in range(NUM_KINDS):
        n = f[k]
        if not n:
            continue
        for nk, a, na, b, nb, _hx in comp[k]:
            if n >= nk and f[a] >= na and f[b] >= nb:
                break
        else:
            out.append(k)
    return out


def card_values(
    h: Sequence[int],
    f: Sequence[int],
    un: Sequence[int],
    t: Tables,
    w_hx: float,
    wt: Weights = DEFAULT,
) -> list[float]:
    """:func:`card_value` for every kind (0.0 where the hand holds none)."""
    return Scorer(un, t, w_hx, wt).values(h, f)


class View:
    """What one decision needs from an observation, as plain lists, read in one pass.

    ``h``: own hand counts (+ the sentinel); ``f``: free counts (:func:`free_counts`); ``un``:
    copies of each face this seat has not seen (4 − :meth:`Observation.seen_counts`);
    ``opps``: per opponent ``(seat, visible table 胡息, hand size, faces he discarded)``.
    """

    __slots__ = (
        "obs",
        "seat",
        "rules",
        "t",
        "h",
        "f",
        "un",
        "hand_size",
        "table_cards",
        "quads",
        "meld_hx",
        "card",
        "banned",
        "opps",
        "scorer",
        "extra",
    )

    def __init__(self, obs: Observation, claim: bool = True) -> None:
        self.obs = obs
        self.seat = seat = obs.seat
        self.rules = rules = obs.rules
        self.t = t = tables(rules)
        h = list(obs.hand)
        h.append(0)
        self.h = h
        self.f = free_counts(h)
        self.hand_size = int_sum(h)
        seen = h[:]  # the sentinel slot collects nothing
        # the card on offer (a claim; a discard decision has none)
        card = obs.card if claim else None
        self.card = card
        if card is not None:
            seen[card] += 1
        liang = obs.liang
        if liang is not None and seat != obs.dealer:
            seen[liang] += 1
        same = t.same
        shape_hx = t.shape_hx
        hidden_wei = t.hidden_wei
        sizes = obs.hand_sizes
        opps = []
        for s in obs.active:
            hx = 0
            n_cards = 0
            for g in obs.melds(s):
                cards = g.cards
                if not cards:
                    hx += hidden_wei
                    continue
                n = len(cards)
                n_cards += n
                kind = g.kind
                if kind:  # a same-face group
                    k = cards[0]
                    seen[k] += n
                    hx += same[kind][k]
                else:  # 吃 (GroupKind.CHI is 0)
                    a, b, c = cards
                    seen[a] += 1
                    seen[b] += 1
                    seen[c] += 1
                    hx += shape_hx[cards]
            for k in obs.right(s):
                seen[k] += 1
            if s == seat:
                self.meld_hx = hx
                self.table_cards = n_cards
            else:
                opps.append((s, hx, sizes[s], obs.discarded_faces(s)))
        self.opps = opps
        un = [4 - n if n < 4 else 0 for n in seen]
        un[NUM_KINDS] = 0
        self.un = un
        self.quads = obs.quads(seat)
        self.banned = obs.stinky | obs.discarded_faces(seat)
        self.scorer: Scorer | None = None  # set by the policy (it owns the weights)
        self.extra: Any = None  # a policy's own per-decision facts

    @property
    def n_cards(self) -> int:
        """N: hand plus table cards (§7)."""
        return self.hand_size + self.table_cards

    @property
    def target(self) -> int:
        """T = 20 + max(0, q − 1) (§7)."""
        return 20 + max(0, self.quads - 1)

    def discard_follows(self, hand_after: int) -> bool:
        """Whether a 碰/吃 (one card more) leaves a discard to make (§7)."""
        return self.n_cards + 1 > self.target and hand_after > 0


def hand_huxi_potential(h: Sequence[int], f: Sequence[int], un: Sequence[int], t: Tables) -> float:
    """A rough estimate of the 胡息 the hand can still bring: 坎s, complete 1-2-3 / 2-7-10
    (counted once per copy set), half of a pair's 偎 value when its face is live, and a third of
    a live partial 胡息 shape."""
    total = 0.0
    for k in range(NUM_KINDS):
        n = h[k]
        if not n:
            continue
        if n >= 3:
            total += t.kan_hx[k]
            continue
        if n == 2 and un[k]:
            total += 0.5 * t.pair_hx[k]
    # 胡息 shapes: 1-2-3 and 2-7-10 of each case (and 1-5-10 with its switch)
    for (a, b, c), hx in t.hx_shapes:
        have = (f[a] > 0) + (f[b] > 0) + (f[c] > 0)
        if have == 3:
            total += hx
        elif have == 2:
            miss = a if not f[a] else b if not f[b] else c
            if un[miss]:
                total += hx / 3.0
    return total


# The split searches below work on a hand packed into one int: 3 bits per kind (counts 0-3),
# so a shape is removed by one subtraction and a guard bit per field catches a missing card.
_BITS = 3
GUARD = int_sum(4 << (_BITS * k) for k in range(NUM_KINDS))


def pack(counts: Sequence[int]) -> int:
    """A count vector (each count ≤ 3) packed 3 bits per kind."""
    x = 0
    for k in range(NUM_KINDS - 1, -1, -1):
        x = (x << _BITS) | counts[k]
    return x


def split_rest(pool: int, jiang: bool, budget: int, t: Tables) -> dict[int, int]:
    """Every way to split the packed ``pool`` into 一句话 / 绞 (+ one 将 iff ``jiang``) with at
    most ``budget`` cards left over: the map leftover (packed) → the most 胡息 of the groups.
    Lowest card first (as :func:`engine.hu.best_split`), so each leftover multiset appears
    once. Memoised.

    >>> from engine.cards import parse_cards, to_counts
    >>> from engine.rules import RuleSet
    >>> t = tables(RuleSet())
    >>> split_rest(pack(to_counts(parse_cards("一二三 贰柒拾"))), False, 0, t)
    {0: 9}
    >>> rest = split_rest(pack(to_counts(parse_cards("一二三 五六"))), False, 2, t)
    >>> rest[pack(to_counts(parse_cards("五六")))]
    3
    """
    key = pool | (jiang << 60) | (budget << 61)
    memo = t.memo_rest
    r = memo.get(key)
    if r is not None:
        return r
    if not pool:
        memo[key] = r = {} if jiang else {0: 0}
        return r
    sh = (pool & -pool).bit_length() - 1
    k = sh // _BITS
    sh = k * _BITS
    n = (pool >> sh) & 7
    res: dict[int, int] = {}
    one = 1 << sh
    if budget:
        for rest, v in split_rest(pool - one, jiang, budget - 1, t).items():
            rest += one
            if v > res.get(rest, -1):
                res[rest] = v
    if jiang and n >= 2:
        for rest, v in split_rest(pool - 2 * one, False, budget, t).items():
            if v > res.get(rest, -1):
                res[rest] = v
    g = pool | GUARD
    for shape, hx in t.starts[k]:
        y = g - shape
        if y & GUARD == GUARD:
            for rest, v in split_rest(y ^ GUARD, jiang, budget, t).items():
                v += hx
                if v > res.get(rest, -1):
                    res[rest] = v
    if len(memo) > 60_000:  # bounded: a long simulation must not grow without end
        memo.clear()
    memo[key] = res
    return res


def _unpack(x: int) -> list[int]:
    """The kinds of a packed multiset, ascending."""
    out = []
    k = 0
    while x:
        n = x & 7
        if n:
            out.extend([k] * n)
        x >>= _BITS
        k += 1
    return out


def discard_waits(
    h: Sequence[int],
    quads: int,
    fixed_hx: int,
    un: Sequence[int],
    t: Tables,
    min_huxi: int,
) -> dict[int, list[tuple[int, int]]]:
    """听牌 after each discard: for a hand that owes a discard (``h``: its counts), the map
    discard kind → ``[(card, 胡息), ...]`` of the faces with an unseen copy whose arrival
    would then complete 7 门子 with at least ``min_huxi``. Discards that leave no wait are
    absent.

    ``quads``: the seat's 跑+提 (a 将 is needed iff ≥ 1); ``fixed_hx``: the 胡息 of its table
    groups. The free cards are split into groups with the discard and the waiting rest left
    over (:func:`split_rest`): a rest of two cards waits on the third card of a 一句话 / 绞
    (or, a pair, on the 碰-valued triple), a lone card (with a 跑/提) on its 将. Only this
    plain reading is tried: 跑胡 and 破跑 options are left out, so a few waits are missed.
    """
    return _waits(h, quads, fixed_hx, un, t, min_huxi, True)


def hand_waits(
    h: Sequence[int],
    quads: int,
    fixed_hx: int,
    un: Sequence[int],
    t: Tables,
    min_huxi: int,
) -> list[tuple[int, int]]:
    """听牌 of a hand that owes no discard: ``[(card, 胡息), ...]`` as in
    :func:`discard_waits`."""
    return _waits(h, quads, fixed_hx, un, t, min_huxi, False).get(-1, [])


def _waits(
    h: Sequence[int],
    quads: int,
    fixed_hx: int,
    un: Sequence[int],
    t: Tables,
    min_huxi: int,
    discard: bool,
) -> dict[int, list[tuple[int, int]]]:
    base = fixed_hx
    for k in range(NUM_KINDS):
        if h[k] >= 3:
            base += t.kan_hx[k]
    jiang = quads >= 1
    need = min_huxi - base
    key = (pack(h), jiang, discard, need)
    raw = t.memo_waits.get(key)
    if raw is None:
        raw = _raw_waits(h, jiang, need, t, discard)
        if len(t.memo_waits) > 50_000:
            t.memo_waits.clear()
        t.memo_waits[key] = raw
    out: dict[int, list[tuple[int, int]]] = {}
    for d, c, hx in raw:
        if un[c]:
            out.setdefault(d, []).append((c, base + hx))
    return out


def _raw_waits(
    h: Sequence[int], jiang: bool, need: int, t: Tables, discard: bool
) -> tuple[tuple[int, int, int], ...]:
    """(discard or −1, winning card, 胡息 of the hand's groups with it) for every wait
    reaching ``need``, whether or not the card is still live. Cached by the callers."""
    free = [n if n < 3 else 0 for n in h[:NUM_KINDS]]
    m = int_sum(free)
    extra = 1 if discard else 0  # the discard is one more card left over
    if (m - extra) % 3 != (1 if jiang else 2):
        return ()
    packed = pack(free)
    rests = [split_rest(packed, jiang, 2 + extra, t)]
    if jiang:  # or no 将 yet: a lone card waits on its pair
        rests.append(split_rest(packed, False, 1 + extra, t))
    wait2 = t.wait2
    best: dict[tuple[int, int], int] = {}  # (discard or -1, card) → 胡息
    for table in rests:
        for rest, v in table.items():
            cards = _unpack(rest)
            if len(cards) != 2 + extra and (not jiang or len(cards) != 1 + extra):
                continue
            for i, d in enumerate(cards if discard else (-1,)):
                if i and cards[i - 1] == d:
                    continue
                r = cards[:i] + cards[i + 1 :] if discard else cards
                if len(r) == 1:
                    opts: Sequence[tuple[int, int]] = ((r[0], 0),)
                else:
                    opts = wait2.get((r[0], r[1]), ())
                for c, hx in opts:
                    total = v + hx
                    if total >= need and h[c] < 3 and total > best.get((d, c), -1):
                        best[(d, c)] = total
    return tuple((d, c, hx) for (d, c), hx in sorted(best.items()))
