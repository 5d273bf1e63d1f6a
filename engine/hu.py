"""Hu evaluation 胡牌 (RULES.md §10.3): every option, every partition, the best one by C9.

>>> from engine.cards import parse_cards
>>> from engine.rules import find_rules
>>> from engine.melds import parse_meld
>>> melds = [parse_meld("chi:一,二,三"), parse_meld("peng:伍")]
>>> r = evaluate_hu(find_rules("hunan"), melds, parse_cards("壹贰叁四五六七八九陆柒捌贰柒"),
...                 parse_cards("拾")[0], HuContext(Source.OTHER_DRAW))
>>> (r.win, r.huxi, r.deng, r.fan, r.score)
(True, 18, 2, 1, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache

from engine.cards import NUM_KINDS, Counts, card_char, is_big, is_red, to_counts
from engine.errors import InvalidNotation
from engine.groups import (
    EAT_SHAPES,
    SAME_FACE_KINDS,
    Group,
    GroupKind,
    eat_shapes_for,
    huxi,
    is_sentence,
    same_face_huxi,
)
from engine.mingtang import MingTangContext, mingtang_context
from engine.outcome import Source  # defined apart: the log's codes, light to import
from engine.rules import RuleSet
from engine.scoring import Score, score_hu


class NoWin(IntEnum):
    """Why a hand is not a win (a typed result, not an exception, STYLE §11)."""

    CARD_COUNT = 1  # not N + 1 = T + 1 cards, so 7 门子 are impossible
    NO_SPLIT = 2  # the cards cannot be split into 7 门子 (with a 将 iff a 跑/提)
    BELOW_MIN = 3  # best split is below the 胡息 threshold
    OWN_PAIR = (
        4  # own draw onto own pair/坎/偎: it is 偎/提'd unrevealed, never hu'd (§10.3 step 1)
    )
    DISCARD = 5  # a discard cannot be hu'd under these rules (§10.2)


NOWIN_TEXT = {
    NoWin.CARD_COUNT: "wrong number of cards for 7 门子",
    NoWin.NO_SPLIT: "cannot be split into 7 门子",
    NoWin.BELOW_MIN: "below the 胡息 threshold",
    NoWin.OWN_PAIR: "own draw onto own pair/坎/偎 is 偎/提, never a hu",
    NoWin.DISCARD: "a discard cannot be hu'd under these rules",
}


@dataclass(frozen=True, slots=True)
class HuContext:
    """Circumstances of a hu chance that the cards alone do not tell.

    * ``tianhu``: a 天胡 (亮张 hu, the 4p/Luzhou dealer's 21-card hu, the 3提/5坎 hu).
    * ``haidi``: the hu card is the last stock card.
    * ``dihu``: Hunan full: a non-dealer wins on the first stock card; Luzhou: the 下家 wins on
      the dealer's first discard.
    """

    source: Source
    tianhu: bool = False
    haidi: bool = False
    dihu: bool = False


@dataclass(frozen=True, slots=True)
class HuResult:
    """The best reading of a hand (§10.3 step 5) and its score (§11, §14).

    When ``win`` is false, ``reason`` says why; ``huxi`` is still the best 胡息 over the splits
    when a split exists (None otherwise) and ``groups`` that split.
    """

    win: bool
    reason: NoWin | None
    option: str | None = None  # 'F', 'K', 'P', 'W', '0' (step 0) or 'A' (3提/5坎 天胡)
    groups: tuple[Group, ...] = ()
    group_huxi: tuple[int, ...] = ()
    huxi: int | None = None
    deng: int = 0
    mingtang: tuple[tuple[str, int], ...] = ()
    fan: int = 0  # Hunan 番; Luzhou multiplier
    score: int = 0
    zimo: bool = False
    tianhu: bool = False
    extra: dict[str, int] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Partition search (STYLE §9): a pure, memoised function over immutable count tuples.
# ---------------------------------------------------------------------------------------------

_NUM = NUM_KINDS
_QUAD = (GroupKind.PAO, GroupKind.TI)
_WEI_KINDS = (GroupKind.WEI, GroupKind.CHOUWEI)
# Sources whose hu card belongs to someone else: option K and the C8 碰-valued triple.
_FOREIGN = frozenset({Source.OTHER_DRAW, Source.LIANG_OTHER, Source.DISCARD})
_P_SOURCES = frozenset({Source.OWN_DRAW, Source.OTHER_DRAW})
_TIANHU_SOURCES = frozenset({Source.LIANG_DEALER, Source.LIANG_OTHER})

_VARIANT_RULES = (
    RuleSet(),
    RuleSet(one_five_ten=True),
    RuleSet(ruleset="luzhou"),
    RuleSet(ruleset="luzhou", one_five_ten=True),
)


def _variant(rules: RuleSet) -> int:
    """Index of the table a partition depends on: the 胡息 table and the 1-5-10 switch."""
    return (2 if rules.luzhou else 0) + (1 if rules.one_five_ten else 0)


Shape = tuple[tuple[int, int, int], int, int, int, int]


def _shapes_for(v: int) -> tuple[tuple[Shape, ...], ...]:
    """Per lowest kind k: the 一句话/绞 containing k as their lowest card, with 胡息."""
    rules = _VARIANT_RULES[v]
    out: list[list[Shape]] = [[] for _ in range(_NUM)]
    for cards in eat_shapes_for(rules):
        kind = GroupKind.SENTENCE if is_sentence(cards, rules) else GroupKind.JIAO
        a, b, c = cards
        out[a].append((cards, a, b, c, huxi(Group(kind, cards), rules)))
    return tuple(tuple(s) for s in out)


_SHAPES = tuple(_shapes_for(v) for v in range(4))
_PENG_HX = tuple(
    tuple(same_face_huxi(GroupKind.PENG_HU, k, r) for k in range(_NUM)) for r in _VARIANT_RULES
)


def _group_table(v: int) -> dict[GroupKind, dict[tuple[int, ...], int]]:
    """胡息 of every possible group, by kind and cards (a lookup on the hot path)."""
    rules = _VARIANT_RULES[v]
    table: dict[GroupKind, dict[tuple[int, ...], int]] = {kind: {} for kind in GroupKind}
    for kind in SAME_FACE_KINDS:
        size = 4 if kind in _QUAD else 3
        for k in range(_NUM):
            table[kind][(k,) * size] = same_face_huxi(kind, k, rules)
    for cards in EAT_SHAPES:
        for kind in (GroupKind.CHI, GroupKind.SENTENCE, GroupKind.JIAO):
            table[kind][cards] = huxi(Group(kind, cards), rules)
    for k in range(_NUM):
        table[GroupKind.JIANG][(k, k)] = 0
    return table


_GROUP_HX = tuple(_group_table(v) for v in range(4))


def _group_huxi(g: Group, variant: int) -> int:
    return _GROUP_HX[variant][g.kind][g.cards]


Split = tuple[int, tuple[tuple[int, ...], ...]]


def _better(a: Split | None, b: Split) -> bool:
    """b beats a: more 胡息, then the smaller canonical list (C9)."""
    return a is None or b[0] > a[0] or (b[0] == a[0] and b[1] < a[1])


def _with(g: tuple[int, ...], rest: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(sorted((g, *rest)))


@lru_cache(maxsize=1 << 18)
def best_split(pool: Counts, jiang: bool, peng: int, variant: int) -> Split | None:
    """The best exact partition of ``pool`` into 一句话/绞 (+ one 将 iff ``jiang``), or None.

    ``peng`` is the face whose triple may be used as the C8 碰-valued group (−1: none).
    Returns (胡息, groups) with the groups as ascending card tuples, sorted; among partitions of
    equal 胡息 the smallest such list (C9). The group holding the lowest card is chosen first,
    so an unusable lowest card fails at once.

    >>> best_split(to_counts([0, 1, 2, 1, 6, 9]), False, -1, 0)
    (6, ((0, 1, 2), (1, 6, 9)))
    >>> best_split(to_counts([0, 1, 3]), False, -1, 0) is None
    True
    """
    k = 0
    for n in pool:
        if n:
            break
        k += 1
    else:
        return None if jiang else (0, ())
    best: Split | None = None
    lst = list(pool)
    nxt_peng = peng if peng > k else -1
    if jiang and n >= 2:
        lst[k] -= 2
        sub = best_split(tuple(lst), False, nxt_peng, variant)
        lst[k] += 2
        if sub is not None:
            best = (sub[0], _with((k, k), sub[1]))
    if peng == k and n >= 3:
        lst[k] -= 3
        sub = best_split(tuple(lst), jiang, -1, variant)
        lst[k] += 3
        if sub is not None:
            cand = (sub[0] + _PENG_HX[variant][k], _with((k, k, k), sub[1]))
            if _better(best, cand):
                best = cand
    for cards, a, b, c, hx in _SHAPES[variant][k]:
        lst[a] -= 1
        lst[b] -= 1
        lst[c] -= 1
        if lst[a] >= 0 and lst[b] >= 0 and lst[c] >= 0:
            sub = best_split(tuple(lst), jiang, nxt_peng, variant)
            if sub is not None:
                cand = (sub[0] + hx, _with(cards, sub[1]))
                if _better(best, cand):
                    best = cand
        lst[a] += 1
        lst[b] += 1
        lst[c] += 1
    return best


@lru_cache(maxsize=1 << 14)
def best_packing(pool: Counts, variant: int) -> Split:
    """The most 胡息 from disjoint 一句话/绞 in ``pool``, leftovers ignored (C6), then the
    smallest canonical list.

    >>> best_packing(to_counts([0, 1, 2, 7, 10, 11, 12]), 0)
    (9, ((0, 1, 2), (10, 11, 12)))
    """
    k = 0
    for n in pool:
        if n:
            break
        k += 1
    else:
        return (0, ())
    lst = list(pool)
    lst[k] -= 1
    best = best_packing(tuple(lst), variant)  # k left over
    lst[k] += 1
    for cards, a, b, c, hx in _SHAPES[variant][k]:
        lst[a] -= 1
        lst[b] -= 1
        lst[c] -= 1
        if lst[a] >= 0 and lst[b] >= 0 and lst[c] >= 0:
            sub = best_packing(tuple(lst), variant)
            cand = (sub[0] + hx, _with(cards, sub[1]))
            if _better(best, cand):
                best = cand
        lst[a] += 1
        lst[b] += 1
        lst[c] += 1
    return best


@lru_cache(maxsize=1024)
def pool_group(cards: tuple[int, ...]) -> Group:
    if len(cards) == 2:
        return Group(GroupKind.JIANG, cards)
    a, _, c = cards
    if a == c:
        return Group(GroupKind.PENG_HU, cards)
    if a % 10 == c % 10:
        return Group(GroupKind.JIAO, cards)
    return Group(GroupKind.SENTENCE, cards)


def _duidui_split(pool: list[int], jiang: bool, peng: int, variant: int) -> Split | None:
    """The partition of ``pool`` with no 一句话/绞 (C8 triple and 将 only), if there is one."""
    groups: list[tuple[int, ...]] = []
    hx = 0
    for k in range(_NUM):
        n = pool[k]
        if not n:
            continue
        if n == 3 and k == peng:
            groups.append((k, k, k))
            hx += _PENG_HX[variant][k]
        elif n == 2 and jiang and not any(len(g) == 2 for g in groups):
            groups.append((k, k))
        else:
            return None
    if jiang and not any(len(g) == 2 for g in groups):
        return None
    return hx, tuple(sorted(groups))


# ---------------------------------------------------------------------------------------------
# Evaluation (§10.3)
# ---------------------------------------------------------------------------------------------


def _nowin(reason: NoWin) -> HuResult:
    return HuResult(False, reason)


def _check_hand(hc: list[int], card: int | None) -> None:
    if card is not None and not 0 <= card < _NUM:
        raise InvalidNotation(f"hu card kind out of range: {card!r}")
    for k in range(_NUM):
        if hc[k] + (1 if k == card else 0) > 4:
            raise InvalidNotation(
                f"{hc[k] + (k == card)} copies of {card_char(k)} in hand + hu card (the deck has 4)"
            )


_KAN = tuple(Group(GroupKind.KAN, (k, k, k)) for k in range(_NUM))
_PAO = tuple(Group(GroupKind.PAO, (k, k, k, k)) for k in range(_NUM))


def _card_stats(cards: tuple[int, ...]) -> tuple[int, int, int]:
    return (
        sum(1 for k in cards if is_red(k)),
        sum(1 for k in cards if is_big(k)),
        len(cards),
    )


# (red, big, number of cards) of every possible group, by its cards.
_STATS: dict[tuple[int, ...], tuple[int, int, int]] = {
    cards: _card_stats(cards) for table in _GROUP_HX[1].values() for cards in table
}


@dataclass(slots=True)
class _Candidate:
    """One reading: an option, its fixed groups (table, 坎, 跑) and a pool split."""

    option: str
    huxi: int
    fixed: list[Group]
    pool: tuple[tuple[int, ...], ...]

    def groups(self) -> tuple[Group, ...]:
        gs = self.fixed + [pool_group(c) for c in self.pool]
        gs.sort(key=_group_key)
        return tuple(gs)


def _group_key(g: Group) -> tuple[tuple[int, ...], int]:
    return (g.cards, g.kind)


def _canonical(groups: Sequence[Group]) -> list[tuple[int, ...]]:
    return [g.cards for g in groups]  # ``groups`` are already in canonical order


def _score(
    rules: RuleSet,
    c: _Candidate,
    gs: tuple[Group, ...],
    hand_size: int,
    ctx: HuContext,
    zimo: bool,
    tianhu: bool,
) -> Score:
    red = big = n = 0
    for g in gs:
        r, b, m = _STATS[g.cards]
        red += r
        big += b
        n += m
    mctx = MingTangContext(red, big, n - big, gs, hand_size, ctx.haidi, ctx.dihu, zimo, tianhu)
    return score_hu(rules, c.huxi, mctx)


def _finish(
    rules: RuleSet,
    variant: int,
    cands: list[_Candidate],
    hand_size: int,
    ctx: HuContext,
    zimo: bool,
    tianhu: bool,
) -> HuResult:
    """Pick the reading by C9 and build the result (or BELOW_MIN with the best 胡息)."""
    table = _GROUP_HX[variant]
    wins = [c for c in cands if c.huxi >= rules.min_huxi]
    if not wins:
        best_c = cands[0]
        best_gs = best_c.groups()
        for c in cands[1:]:
            gs = c.groups()
            if (-c.huxi, _canonical(gs)) < (-best_c.huxi, _canonical(best_gs)):
                best_c, best_gs = c, gs
        return HuResult(
            False,
            NoWin.BELOW_MIN,
            option=best_c.option,
            groups=best_gs,
            group_huxi=tuple([table[g.kind][g.cards] for g in best_gs]),
            huxi=best_c.huxi,
        )
    c = wins[0]
    gs = c.groups()
    sc = _score(rules, c, gs, hand_size, ctx, zimo, tianhu)
    for c2 in wins[1:]:
        gs2 = c2.groups()
        sc2 = _score(rules, c2, gs2, hand_size, ctx, zimo, tianhu)
        if (-sc2.score, -c2.huxi, _canonical(gs2)) < (-sc.score, -c.huxi, _canonical(gs)):
            c, gs, sc = c2, gs2, sc2
    return HuResult(
        True,
        None,
        option=c.option,
        groups=gs,
        group_huxi=tuple([table[g.kind][g.cards] for g in gs]),
        huxi=c.huxi,
        deng=sc.deng,
        mingtang=sc.mingtang,
        fan=sc.fan,
        score=sc.score,
        zimo=zimo,
        tianhu=tianhu,
    )


def evaluate_hu(
    rules: RuleSet,
    melds: Sequence[Group],
    hand: Sequence[int],
    card: int | None,
    ctx: HuContext,
) -> HuResult:
    """Evaluate a hu chance by §10.3 and score the best reading (§11; Luzhou §14).

    ``melds`` are the table groups, ``hand`` the concealed hand before the hu card, ``card``
    the hu card, or None to evaluate the hand as a dealt hand (§10.3 step 0: triples are
    fixed 坎, quads are 提). The source LIANG_DEALER is always step 0, with ``card`` (the
    亮张) added to the hand unless a 提 on the table already holds it.

    Non-wins are results, not exceptions: ``reason`` says why, and ``huxi``/``groups`` give
    the best split when one exists (BELOW_MIN). Malformed input (5 copies of a face) raises
    :class:`~engine.errors.InvalidNotation`.
    """
    hc = [0] * _NUM
    for k in hand:
        hc[k] += 1
    return evaluate_hu_counts(rules, melds, hc, card, ctx)


def evaluate_hu_counts(
    rules: RuleSet,
    melds: Sequence[Group],
    hand_counts: Sequence[int],
    card: int | None,
    ctx: HuContext,
) -> HuResult:
    """:func:`evaluate_hu` with the hand as a count vector (the simulator's fast path)."""
    source = ctx.source
    if source == Source.DISCARD and not rules.hu_on_discards:
        return HuResult(False, NoWin.DISCARD)
    hc = list(hand_counts)
    hand_size = sum(hc)
    tianhu = ctx.tianhu or source in _TIANHU_SOURCES
    zimo = tianhu or source == Source.OWN_DRAW
    variant = (2 if rules.ruleset == "luzhou" else 0) + (1 if rules.one_five_ten else 0)
    if card is None or source == Source.LIANG_DEALER:
        return _evaluate_dealt(rules, variant, melds, hc, card, ctx, hand_size, zimo, tianhu)
    if hc[card] >= 4 or max(hc) > 4:
        _check_hand(hc, card)
    q0 = 0
    n = hand_size + 1
    run_i = -1  # the 碰 (option P) or 偎/臭偎 (option W) of the hu card's face
    run_opt = ""
    for i, g in enumerate(melds):
        cards = g.cards
        n += len(cards)
        kind = g.kind
        if kind >= GroupKind.PAO:  # PAO, TI
            q0 += 1
        elif kind != GroupKind.CHI and cards[0] == card:
            run_i = i
            run_opt = "P" if kind == GroupKind.PENG else "W"
    nc = hc[card]
    if source == Source.OWN_DRAW and (nc >= 2 or run_opt == "W"):
        return HuResult(False, NoWin.OWN_PAIR)
    opt_f = n == (21 if q0 <= 1 else 20 + q0)
    opt_run = n == 21 + q0
    if not opt_f and not opt_run:
        return HuResult(False, NoWin.CARD_COUNT)
    foreign = source in _FOREIGN

    pool = hc[:]
    if 3 in hc:
        kans = [k for k in range(_NUM) if hc[k] == 3]
        for k in kans:
            pool[k] = 0
    else:
        kans = []
    # (option, pool, 将?, C8 face, split)
    found: list[tuple[str, list[int], bool, int, Split]] = []
    if opt_f:
        p = pool[:]
        p[card] += 1
        peng = card if foreign and nc == 2 else -1
        res = best_split(tuple(p), q0 >= 1, peng, variant)
        if res is not None:
            found.append(("F", p, q0 >= 1, peng, res))
    if opt_run:
        runs = []
        if nc == 3 and foreign:
            runs.append("K")
        if run_opt == "P" and source in _P_SOURCES:
            runs.append("P")
        if run_opt == "W" and source != Source.OWN_DRAW:
            runs.append("W")
        if runs:
            res = best_split(tuple(pool), True, -1, variant)
            if res is not None:
                found.extend((opt, pool, True, -1, res) for opt in runs)
        elif not opt_f:
            return HuResult(False, NoWin.CARD_COUNT)
    if not found:
        return HuResult(False, NoWin.NO_SPLIT)

    # A split exists: now build the fixed groups and their 胡息.
    table = _GROUP_HX[variant]
    cands: list[_Candidate] = []
    for opt, p, j, pg, res in found:
        fixed = list(melds)
        if opt == "P" or opt == "W":
            fixed[run_i] = _PAO[card]
        for k in kans:
            fixed.append(_PAO[k] if opt == "K" and k == card else _KAN[k])
        fixed_hx = 0
        for g in fixed:
            fixed_hx += table[g.kind][g.cards]
        cands.append(_Candidate(opt, fixed_hx + res[0], fixed, res[1]))
        if any(len(g) == 3 and g[0] != g[2] for g in res[1]):
            dd = _duidui_split(p, j, pg, variant)
            if dd is not None:
                cands.append(_Candidate(opt, fixed_hx + dd[0], fixed, dd[1]))
    return _finish(rules, variant, cands, hand_size, ctx, zimo, tianhu)


def _evaluate_dealt(
    rules: RuleSet,
    variant: int,
    melds: Sequence[Group],
    hc: list[int],
    card: int | None,
    ctx: HuContext,
    hand_size: int,
    zimo: bool,
    tianhu: bool,
) -> HuResult:
    """§10.3 step 0: the hand (plus the 亮张) as dealt: triples are 坎, quads 提 (C4)."""
    q = 0
    n = 0
    in_ti = False
    for g in melds:
        n += len(g.cards)
        if g.kind in _QUAD:
            q += 1
            if g.kind == GroupKind.TI and g.cards[0] == card:
                in_ti = True
    if card is not None and not in_ti:
        hc[card] += 1
    _check_hand(hc, None)
    n += sum(hc)
    q += sum(1 for k in range(_NUM) if hc[k] == 4)
    if n != 21 + max(0, q - 1):
        return _nowin(NoWin.CARD_COUNT)
    pool = hc[:]
    fixed_hand: list[Group] = []
    for k in range(_NUM):
        if hc[k] >= 3:
            pool[k] = 0
            kind = GroupKind.TI if hc[k] == 4 else GroupKind.KAN
            fixed_hand.append(Group(kind, (k,) * hc[k]))
    res = best_split(tuple(pool), q >= 1, -1, variant)
    if res is None:
        return _nowin(NoWin.NO_SPLIT)
    fixed = list(melds) + fixed_hand
    fixed_hx = sum([_group_huxi(g, variant) for g in fixed])
    cands = [_Candidate("0", fixed_hx + res[0], fixed, res[1])]
    if any(len(g) == 3 and g[0] != g[2] for g in res[1]):
        dd = _duidui_split(pool, q >= 1, -1, variant)
        if dd is not None:
            cands.append(_Candidate("0", fixed_hx + dd[0], fixed, dd[1]))
    return _finish(rules, variant, cands, hand_size, ctx, zimo, tianhu)


def evaluate_auto_tianhu(rules: RuleSet, cards: Sequence[int]) -> HuResult | None:
    """The automatic 3提/5坎 天胡 (§9 step 2, §11.5) of one player's dealt cards, or None.

    ``cards``: the 20 dealt cards (the dealer's 21 including the 亮张). He qualifies with ≥3
    four-of-a-kinds, or 提 + 坎 ≥ 5. 胡息: the 提s and 坎s plus the best disjoint 一句话/绞 of
    the rest, leftovers ignored (C6); 天胡 等; card-count 名堂 only (C7); 自摸.

    >>> from engine.cards import parse_cards
    >>> from engine.rules import find_rules
    >>> r = evaluate_auto_tianhu(find_rules("hunan"),
    ...     parse_cards("五五五五捌捌捌捌十十十十一二三壹贰叁八九玖"))
    >>> (r.huxi, r.deng, r.score)
    (39, 23, 23)
    """
    c = list(to_counts(cards))
    if max(c) > 4:
        _check_hand(c, None)
    ti = [k for k in range(_NUM) if c[k] == 4]
    kan = [k for k in range(_NUM) if c[k] == 3]
    if len(ti) < 3 and len(ti) + len(kan) < 5:
        return None
    fixed = [Group(GroupKind.TI, (k,) * 4) for k in ti] + [
        Group(GroupKind.KAN, (k,) * 3) for k in kan
    ]
    for k in ti + kan:
        c[k] = 0
    hx, rest = best_packing(tuple(c), _variant(rules))
    gs = fixed + [pool_group(g) for g in rest]
    gs.sort(key=lambda g: (g.cards, g.kind))
    group_huxi = tuple(huxi(g, rules) for g in gs)
    total = sum(group_huxi)
    mctx = mingtang_context(cards, gs, zimo=True, tianhu=True, auto_tianhu=True)
    sc = score_hu(rules, total, mctx)
    return HuResult(
        True,
        None,
        option="A",
        groups=tuple(gs),
        group_huxi=group_huxi,
        huxi=total,
        deng=sc.deng,
        mingtang=sc.mingtang,
        fan=sc.fan,
        score=sc.score,
        zimo=True,
        tianhu=True,
        extra={"auto_tianhu": 1, "leftover": sum(c) - sum(len(g) for g in rest)},
    )
