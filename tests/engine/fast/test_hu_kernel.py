"""Differential tests: the compiled hu kernels (engine.fast.hu) against engine.hu.

Every output field of :func:`engine.fast.hu.hu_eval` / :func:`~engine.fast.hu.hu_auto_tianhu`
is compared with :func:`engine.fast.hu.reference_vector` of the Python result, on

1. every hu evaluation of seeded hands played by the reference engine (all five presets and
   some ``--set`` overrides, three policies), recorded by wrapping the functions engine.state
   calls;
2. random hands built to be wins (often with high 胡息, every option F/K/P/W/0 and ties
   between options), perturbed ones, dealt hands and 3提/5坎 hands; a hypothesis test on top;
3. extreme hands under hunan-full (the largest 胡息, 番 and score).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sizes import size

import engine.state as engine_state
from engine.cards import NUM_KINDS, format_cards
from engine.deck import derive_seed, shuffle_deck
from engine.errors import InvalidNotation
from engine.fast import hu as F
from engine.groups import EAT_SHAPES, Group, GroupKind, eat_shapes_for, same_face_huxi
from engine.hu import (
    HuContext,
    HuResult,
    Source,
    best_split,
    evaluate_auto_tianhu,
    evaluate_hu_counts,
)
from engine.play import play_to_end
from engine.policies import load_policy
from engine.rules import PRESETS, RuleSet, find_rules
from engine.state import Game

# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HuCall:
    """One evaluate_hu_counts input (auto: an evaluate_auto_tianhu input, ``hand`` = cards)."""

    melds: tuple[Group, ...]
    hand: tuple[int, ...]
    card: int | None
    ctx: HuContext
    auto: bool = False

    def describe(self) -> str:
        if self.auto:
            return f"auto_tianhu cards={format_cards(self.hand)}"
        hand = format_cards([k for k in range(NUM_KINDS) for _ in range(self.hand[k])])
        melds = " ".join(str(g) for g in self.melds)
        card = "None" if self.card is None else format_cards([self.card])
        return f"melds=[{melds}] hand={hand} card={card} ctx={self.ctx}"


_FIELDS = [
    "win",
    "reason",
    "option",
    "huxi",
    "deng",
    "fan",
    "score",
    "mingtang",
    "zimo",
    "tianhu",
] + [
    "r10",
    "r11",
    "r12",
    "r13",
    "r14",
    "r15",
]


def python_vector(rules: RuleSet, call: HuCall, res: HuResult | None) -> np.ndarray:
    """The reference's ``out`` vector of ``call``: ``res`` is its result (non-auto; None
    where it raises InvalidNotation)."""
    if call.auto:
        return F.reference_vector(rules, evaluate_auto_tianhu(rules, call.hand))
    if res is None:
        v = F.reference_vector(rules, HuResult(False, None))
        v[F.O_REASON] = F.R_INVALID
        return v
    return F.reference_vector(rules, res)


def kernel_vector(params: np.ndarray, call: HuCall) -> np.ndarray:
    out = np.zeros(F.OUT_SIZE, dtype=np.int64)
    if call.auto:
        cards = np.zeros(NUM_KINDS, dtype=np.int64)
        for k in call.hand:
            cards[k] += 1
        F.hu_auto_tianhu(params, cards, out)
        return out
    c = call.ctx
    return F.evaluate(params, call.melds, call.hand, call.card, c.source, c.tianhu, c.haidi, c.dihu)


def python_result(rules: RuleSet, call: HuCall) -> HuResult | None:
    """The reference's result of a non-auto input (None where it raises InvalidNotation)."""
    try:
        return evaluate_hu_counts(rules, list(call.melds), list(call.hand), call.card, call.ctx)
    except InvalidNotation:
        return None


def check_reading(rules: RuleSet, call: HuCall, got: np.ndarray, res: HuResult | None) -> None:
    """hu_reading_at on the input: the same ``out`` as hu_eval (the chosen candidate aside)
    and, when the reference has a reading, its groups' kinds and 胡息 (C9 included)."""
    c = call.ctx
    out, groups = F.reading(
        F.reading_params(rules), call.melds, call.hand, call.card, c.source, c.tianhu, c.haidi,
        c.dihu,
    )  # fmt: skip
    out[F.O_CHOSEN] = 0
    want = F.reference_reading(res) if res is not None and res.huxi is not None else groups * 0
    if not np.array_equal(out, got) or not np.array_equal(groups, want):
        raise AssertionError(
            f"reading != python for {rules.to_json()}\n  {call.describe()}\n"
            f"  out {out.tolist()} / {got.tolist()}\n  groups {groups.tolist()} / {want.tolist()}"
        )


def check(rules: RuleSet, call: HuCall, res: Any = None, recorded: bool = False) -> np.ndarray:
    """Compare one input (``recorded``: ``res`` is the reference's result of it, given); a
    mismatch names the input and both outputs. Non-auto inputs are also held to the reading
    (:func:`check_reading`)."""
    if not call.auto and not recorded:
        res = python_result(rules, call)
    want = F.reference_vector(rules, res) if recorded else python_vector(rules, call, res)
    got = kernel_vector(F.rule_params(rules), call)
    if not np.array_equal(got, want):
        diff = {f: (int(want[i]), int(got[i])) for i, f in enumerate(_FIELDS) if want[i] != got[i]}
        raise AssertionError(
            f"kernel != python for {rules.to_json()}\n  {call.describe()}\n"
            f"  python={want.tolist()}\n  kernel={got.tolist()}\n  (python, kernel) {diff}"
        )
    if not call.auto:
        check_reading(rules, call, got, res)
    return want


# ---------------------------------------------------------------------------------------------
# 1. Recorded inputs of reference play
# ---------------------------------------------------------------------------------------------

# (preset, overrides, hands per policy under make test-long; a third of them under make test)
_CONFIGS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("hunan", (), 160),
    ("hunan-basic", (), 80),
    ("hunan-full", (), 160),
    ("hunan-4p", (), 100),
    ("luzhou", (), 140),
    ("hunan", ("one_five_ten=on", "min_huxi=10"), 60),
    ("hunan-full", ("hu_on_discards=on", "tianhu_formula=plain"), 60),
    ("hunan", ("chouhu=off", "peng_compulsory=on"), 40),
    ("luzhou", ("luzhou_di_mode=a", "one_five_ten=on"), 60),
    ("hunan-4p", ("ruleset=luzhou", "min_huxi=10", "hu_on_discards=on"), 40),
)
_POLICIES = ("random", "greedy", "heuristic")


def record_calls(rules: RuleSet, n_hands: int, policy: str, seed: int) -> list[tuple[HuCall, Any]]:
    """Play ``n_hands`` with the reference engine; every hu evaluation and its result."""
    calls: list[tuple[HuCall, Any]] = []
    orig_hu: Callable[..., HuResult] = engine_state.evaluate_hu_counts
    orig_auto: Callable[..., HuResult | None] = engine_state.evaluate_auto_tianhu

    def hu(r: RuleSet, melds: Sequence[Group], hc: Sequence[int], card: int | None, ctx: Any):
        res = orig_hu(r, melds, hc, card, ctx)
        calls.append((HuCall(tuple(melds), tuple(hc), card, ctx), res))
        return res

    def auto(r: RuleSet, cards: Sequence[int]) -> HuResult | None:
        res = orig_auto(r, cards)
        calls.append((HuCall((), tuple(cards), None, HuContext(Source.OWN_DRAW), True), res))
        return res

    engine_state.evaluate_hu_counts = hu  # type: ignore[assignment]
    engine_state.evaluate_auto_tianhu = auto  # type: ignore[assignment]
    try:
        game = Game(rules)
        policies = [load_policy(policy)] * (4 if rules.players == 4 else 3)
        for i in range(n_hands):
            s = derive_seed(seed, "hand", i)
            play_to_end(game, shuffle_deck(s), i % rules.players, policies, s)
    finally:
        engine_state.evaluate_hu_counts = orig_hu  # type: ignore[assignment]
        engine_state.evaluate_auto_tianhu = orig_auto  # type: ignore[assignment]
    return calls


def _rules_of(preset: str, overrides: tuple[str, ...]) -> RuleSet:
    return find_rules(preset).with_overrides(list(overrides))


@pytest.fixture(scope="module")
def recorded() -> dict[str, tuple[RuleSet, list[tuple[HuCall, Any]]]]:
    out = {}
    for i, (preset, overrides, n) in enumerate(_CONFIGS):
        rules = _rules_of(preset, overrides)
        calls: list[tuple[HuCall, Any]] = []
        for policy in _POLICIES:
            hands = size(n // 3, n) // len(_POLICIES) + 1
            calls += record_calls(rules, hands, policy, 1000 + i)
        out[" ".join((preset, *overrides))] = (rules, calls)
    return out


def test_recorded_play(recorded: dict[str, tuple[RuleSet, list[tuple[HuCall, Any]]]]) -> None:
    counts = {}
    total = 0
    for name, (rules, calls) in recorded.items():
        wins = 0
        for call, res in calls:
            wins += int(check(rules, call, res, recorded=True)[F.O_WIN])
        counts[name] = (len(calls), wins)
        total += len(calls)
    print("\ncompared recorded calls (calls, wins):", counts, "total", total)
    assert total > size(6000, 20000)
    assert all(w > 0 for _, w in counts.values())


# ---------------------------------------------------------------------------------------------
# 2. Random hands
# ---------------------------------------------------------------------------------------------

_SHAPES_ALL = eat_shapes_for(RuleSet(one_five_ten=True))
_SHAPE_BY_LOW: dict[int, list[tuple[int, int, int]]] = {}
for _s in _SHAPES_ALL:
    _SHAPE_BY_LOW.setdefault(_s[0], []).append(_s)


class _Deck:
    def __init__(self) -> None:
        self.left = [4] * NUM_KINDS

    def take(self, cards: Sequence[int]) -> bool:
        need = [0] * NUM_KINDS
        for k in cards:
            need[k] += 1
        if any(need[k] > self.left[k] for k in range(NUM_KINDS)):
            return False
        for k in range(NUM_KINDS):
            self.left[k] -= need[k]
        return True


def _face(rng: random.Random, big_bias: float) -> int:
    k = rng.randrange(10)
    return k + 10 if rng.random() < big_bias else k


def _shape(rng: random.Random, big_bias: float, one_five_ten: bool) -> tuple[int, int, int]:
    while True:
        s = rng.choice(_SHAPES_ALL)
        if not one_five_ten and s[0] % 10 == 0 and s[1] == s[0] + 4:
            continue
        if s[0] < 10 and s[2] < 10 and rng.random() < big_bias:
            s = (s[0] + 10, s[1] + 10, s[2] + 10)
        if rng.random() < 0.4 and s[1] != s[0] + 1:
            return s
        if rng.random() < 0.6:
            return s


def random_call(rng: random.Random, rules: RuleSet) -> HuCall:
    """A plausible hu chance: mostly wins by construction, sometimes perturbed."""
    big_bias = rng.choice((0.5, 0.8, 1.0))
    deck = _Deck()
    melds: list[Group] = []
    hand: list[int] = []
    mode = rng.choice("FFFKPWD")
    n_quads = rng.choice((0, 0, 0, 1, 1, 2, 3))
    # The groups: 7 of 3 or 4 cards (+ the 将 iff a quad, or a run option).
    for _ in range(n_quads):
        f = _face(rng, big_bias)
        if deck.take([f] * 4):
            if mode == "D" and rng.random() < 0.5:
                hand += [f] * 4
            else:
                melds.append(Group(rng.choice((GroupKind.PAO, GroupKind.TI)), (f,) * 4))
    need_jiang = n_quads > 0 or mode in "PWK"
    # 7 groups of 3, or with a 将: 6 groups (a quad among them) and the 将.
    n_groups = (6 if need_jiang else 7) - len(melds) - len(hand) // 4  # hand: quads only
    special = None
    if mode in "PW":
        f = _face(rng, big_bias)
        if deck.take([f] * 4):
            kind = GroupKind.PENG if mode == "P" else rng.choice((GroupKind.WEI, GroupKind.CHOUWEI))
            melds.append(Group(kind, (f,) * 3))
            special = f
            n_groups -= 1
    elif mode == "K":
        f = _face(rng, big_bias)
        if deck.take([f] * 4):
            hand += [f] * 3
            special = f
            n_groups -= 1
    tries = 0
    while n_groups > 0 and tries < 200:
        tries += 1
        r = rng.random()
        if r < 0.3:
            s = _shape(rng, big_bias, rules.one_five_ten)
            if deck.take(s):
                if rng.random() < 0.5:
                    melds.append(Group(GroupKind.CHI, s))
                else:
                    hand += s
                n_groups -= 1
        elif r < 0.55:
            s = _shape(rng, big_bias, rules.one_five_ten)
            if deck.take(s):
                hand += s
                n_groups -= 1
        else:
            f = _face(rng, big_bias)
            if deck.take([f] * 3):
                table = rng.choice(
                    (GroupKind.PENG, GroupKind.WEI, GroupKind.CHOUWEI, None, None, None)
                )
                if table is None:
                    hand += [f] * 3
                else:
                    melds.append(Group(table, (f,) * 3))
                n_groups -= 1
    if need_jiang:
        for _ in range(50):
            f = _face(rng, big_bias)
            if deck.take([f, f]):
                hand += [f, f]
                break
    # The hu card.
    if rng.random() < 0.3:
        source = rng.choice(list(Source))
    elif mode == "P":
        source = rng.choice((Source.OWN_DRAW, Source.OTHER_DRAW))
    elif mode in "WK":
        source = rng.choice((Source.OTHER_DRAW, Source.LIANG_OTHER, Source.DISCARD))
    else:
        source = rng.choice((Source.OWN_DRAW, Source.OTHER_DRAW, Source.OTHER_DRAW))
    ctx = HuContext(
        source,
        tianhu=rng.random() < 0.1,
        haidi=rng.random() < 0.2,
        dihu=rng.random() < 0.15,
    )
    if rng.random() < 0.15 and hand:  # perturb: swap a hand card for a free one
        free = [k for k in range(NUM_KINDS) if deck.left[k]]
        hand[rng.randrange(len(hand))] = rng.choice(free)
    if rng.random() < 0.05 and hand:  # a wrong card count
        hand.pop(rng.randrange(len(hand)))
    counts = [0] * NUM_KINDS
    for k in hand:
        counts[k] += 1
    if mode == "D" or not hand:
        card = None if rng.random() < 0.6 or not hand else hand[0]
        if card is not None:
            counts[card] -= 1
            ctx = HuContext(Source.LIANG_DEALER, tianhu=True)
        return HuCall(tuple(melds), tuple(counts), card, ctx)
    if special is not None and rng.random() < 0.9:
        card = special  # the 4th copy: option P/W onto the meld, K (or F) with the 坎
    else:
        card = rng.choice(hand)
        counts[card] -= 1
    return HuCall(tuple(melds), tuple(counts), card, ctx)


_RANDOM_RULES = (
    *PRESETS.values(),
    RuleSet(one_five_ten=True, huayang="full", min_huxi=10),
    RuleSet(huayang="full", tianhu_formula="plain", hu_on_discards=True),
    RuleSet(ruleset="luzhou", min_huxi=10, hu_on_discards=True, luzhou_di_mode="a"),
    RuleSet(ruleset="luzhou", min_huxi=12, one_five_ten=True, hu_on_discards=True),
    RuleSet(huayang="basic", min_huxi=25),
)


def test_random_hands() -> None:
    rng = random.Random(20240601)
    stats: dict[str, int] = {}
    for i in range(24000):
        rules = _RANDOM_RULES[i % len(_RANDOM_RULES)]
        call = random_call(rng, rules)
        want = check(rules, call)
        key = "win" if want[F.O_WIN] else f"reason{int(want[F.O_REASON])}"
        stats[key] = stats.get(key, 0) + 1
        if want[F.O_WIN]:
            opt = int(want[F.O_OPTION])
            stats[f"opt{opt}"] = stats.get(f"opt{opt}", 0) + 1
    print("\nrandom hands:", dict(sorted(stats.items())))
    assert stats["win"] > 3000
    for opt in (F.OPT_F, F.OPT_K, F.OPT_P, F.OPT_W, F.OPT_DEALT):
        assert stats.get(f"opt{opt}", 0) > 20, opt


# Option ties (C9 by the canonical groups): hands where option F and a run option (K/P/W)
# both split. A = S1 - {f} + S2 for two triples S1 ∋ f, S2 that also splits as 将 + triple.
def _tie_parts() -> list[tuple[int, tuple[int, ...]]]:
    triples = [tuple(s) for s in _SHAPES_ALL] + [(k, k, k) for k in range(NUM_KINDS)]
    out = set()
    for f in range(NUM_KINDS):
        for s1 in triples:
            if f not in s1:
                continue
            rest = list(s1)
            rest.remove(f)
            for s2 in triples:
                a = tuple(sorted(rest + list(s2)))
                if a.count(f) or max(a.count(k) for k in a) > 2:
                    continue
                for x in set(a):
                    if a.count(x) < 2:
                        continue
                    b = list(a)
                    b.remove(x)
                    b.remove(x)
                    if tuple(b) in triples or tuple(sorted(b)) in triples:
                        out.add((f, a))
    return sorted(out)


_TIE_PARTS = _tie_parts()


def _local_ties(variant: int, mode: str) -> list[tuple[int, tuple[int, ...]]]:
    """The parts whose F reading gains exactly what the run option gains (a 胡息 tie)."""
    rules = (RuleSet(), RuleSet(one_five_ten=True), RuleSet(ruleset="luzhou"))[variant]
    kind = {"K": GroupKind.KAN, "P": GroupKind.PENG, "W": GroupKind.WEI}[mode]
    out = []
    for f, a in _TIE_PARTS:
        c = [0] * NUM_KINDS
        for k in a:
            c[k] += 1
        run = best_split(tuple(c), True, -1, variant)
        c[f] += 1
        fo = best_split(tuple(c), False, -1, variant)
        if run is None or fo is None:
            continue
        bonus = same_face_huxi(GroupKind.PAO, f, rules) - same_face_huxi(kind, f, rules)
        if fo[0] - run[0] == bonus:
            out.append((f, a))
    return out


_LOCAL_TIES = {(v, m): _local_ties(v, m) for v in (0, 1, 2) for m in "KPW"}


def tie_call(rng: random.Random, rules: RuleSet) -> HuCall | None:
    """A hand where option F and a run option both split (no quad on the table), mostly with
    the same 胡息 locally."""
    mode = rng.choice("KPW")
    ties = _LOCAL_TIES[
        (2 if rules.luzhou else 0) + int(rules.one_five_ten and not rules.luzhou), mode
    ]
    f, a = rng.choice(ties if ties and rng.random() < 0.8 else _TIE_PARTS)
    deck = _Deck()
    if not deck.take([f] * 4) or not deck.take(a):
        return None
    melds: list[Group] = []
    hand = list(a)
    if mode == "K":
        hand += [f] * 3
    else:
        kind = GroupKind.PENG if mode == "P" else rng.choice((GroupKind.WEI, GroupKind.CHOUWEI))
        melds.append(Group(kind, (f,) * 3))
    n = 0
    for _ in range(100):
        if n == 4:
            break
        if rng.random() < 0.7:
            s = _shape(rng, rng.random(), rules.one_five_ten)
        else:
            k = rng.randrange(NUM_KINDS)
            s = (k, k, k)
        if deck.take(s):
            if rng.random() < 0.3:
                melds.append(Group(GroupKind.CHI if s[0] != s[2] else GroupKind.PENG, s))
            else:
                hand += s
            n += 1
    if n < 4:
        return None
    counts = [0] * NUM_KINDS
    for k in hand:
        counts[k] += 1
    if mode == "P":
        source = rng.choice((Source.OWN_DRAW, Source.OTHER_DRAW))
    else:
        source = rng.choice((Source.OTHER_DRAW, Source.LIANG_OTHER, Source.DISCARD))
    ctx = HuContext(source, haidi=rng.random() < 0.2, dihu=rng.random() < 0.2)
    return HuCall(tuple(melds), tuple(counts), f, ctx)


def test_option_ties() -> None:
    """F against K/P/W with equal score and 胡息: the canonical groups decide (C9)."""
    rng = random.Random(11)
    rules_list = (*_RANDOM_RULES, RuleSet(min_huxi=3), RuleSet(huayang="basic", min_huxi=6))
    options: dict[int, int] = {}
    for i in range(6000):
        rules = rules_list[i % len(rules_list)]
        call = tie_call(rng, rules)
        if call is None:
            continue
        v = check(rules, call)
        options[int(v[F.O_OPTION])] = options.get(int(v[F.O_OPTION]), 0) + 1
    print("\noption ties, chosen options:", options)
    assert len(options) >= 4


def random_auto(rng: random.Random) -> HuCall:
    """20 or 21 dealt cards with many quads and triples."""
    deck = _Deck()
    cards: list[int] = []
    target = rng.choice((20, 21))
    for _ in range(rng.choice((2, 3, 3, 4, 5))):
        f = rng.randrange(NUM_KINDS)
        n = rng.choice((3, 4))
        if deck.take([f] * n) and len(cards) + n <= target:
            cards += [f] * n
    while len(cards) < target:
        f = rng.randrange(NUM_KINDS)
        if deck.take([f]):
            cards.append(f)
    rng.shuffle(cards)
    return HuCall((), tuple(cards), None, HuContext(Source.OWN_DRAW), True)


def test_random_auto_tianhu() -> None:
    rng = random.Random(7)
    wins = 0
    for i in range(6000):
        rules = _RANDOM_RULES[i % len(_RANDOM_RULES)]
        wins += int(check(rules, random_auto(rng))[F.O_WIN])
    assert wins > 1000


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**63 - 1), st.sampled_from(_RANDOM_RULES))
def test_hypothesis_hands(seed: int, rules: RuleSet) -> None:
    rng = random.Random(seed)
    check(rules, random_call(rng, rules))
    check(rules, random_auto(rng))


def test_invalid_and_edge_inputs() -> None:
    rules = find_rules("hunan")
    five = [0] * NUM_KINDS
    five[3] = 4
    five[4] = 2
    check(rules, HuCall((), tuple(five), 3, HuContext(Source.OTHER_DRAW)))  # 5 copies
    check(rules, HuCall((), tuple(five), None, HuContext(Source.OWN_DRAW)))
    check(rules, HuCall((), (0,) * NUM_KINDS, 3, HuContext(Source.DISCARD)))  # no discards
    check(rules, HuCall((), (0,) * NUM_KINDS, None, HuContext(Source.OWN_DRAW)))
    check(rules, HuCall((), (0,) * NUM_KINDS, 5, HuContext(Source.LIANG_DEALER)))
    # The 亮张 inside a 提 on the table is not added (4p dealer).
    ti = Group(GroupKind.TI, (17,) * 4)
    hand = [0] * NUM_KINDS
    for s in ((0, 1, 2), (10, 11, 12), (1, 6, 9), (11, 16, 19), (3, 4, 5)):
        for k in s:
            hand[k] += 1
    hand[7] += 2
    for r in PRESETS.values():
        check(r, HuCall((ti,), tuple(hand), 17, HuContext(Source.LIANG_DEALER, tianhu=True)))
        check(r, HuCall((ti,), tuple(hand), None, HuContext(Source.OWN_DRAW)))


# ---------------------------------------------------------------------------------------------
# 3. Extremes under hunan-full
# ---------------------------------------------------------------------------------------------


def _groups_call(
    melds: Sequence[Group], hand_groups: Sequence[Sequence[int]], card: int, ctx: HuContext
) -> HuCall:
    counts = [0] * NUM_KINDS
    for g in hand_groups:
        for k in g:
            counts[k] += 1
    counts[card] -= 1
    return HuCall(tuple(melds), tuple(counts), card, ctx)


def test_extremes_hunan_full() -> None:
    full = find_rules("hunan-full")
    rules_all = (full, full.with_overrides(["tianhu_formula=plain"]), find_rules("luzhou"))
    ti = GroupKind.TI
    calls = [
        # Four big 提s, big 1-2-3 and 2-7-10, 将: the most 胡息 in a hand.
        _groups_call(
            [Group(ti, (k,) * 4) for k in (13, 14, 17, 18)],
            [(10, 11, 12), (11, 16, 19), (15, 15)],
            11,
            HuContext(Source.OWN_DRAW, haidi=True),
        ),
        # All big, 对对: 大字胡 + 对对胡 + 地胡 + 海底.
        _groups_call(
            [Group(ti, (10,) * 4), Group(GroupKind.PENG, (12,) * 3)],
            [(13, 13, 13), (14, 14, 14), (15, 15, 15), (17, 17, 17), (19, 19)],
            19,
            HuContext(Source.OTHER_DRAW, haidi=True, dihu=True),
        ),
        # All small, no red, 对对, single-card 耍猴: 小字胡 + 乌胡 + 对对胡 + 耍猴 + 地胡.
        _groups_call(
            [Group(GroupKind.PAO, (0,) * 4)]
            + [Group(GroupKind.WEI, (k,) * 3) for k in (2, 3, 4, 7)]
            + [Group(GroupKind.WEI, (8,) * 3)],
            [(5, 5)],
            5,
            HuContext(Source.OTHER_DRAW, haidi=True, dihu=True),
        ),
    ]
    # A dealt 天胡 with many quads (4 in hand), and the 3提/5坎 天胡 at its largest.
    dealt = [0] * NUM_KINDS
    for k in (13, 14, 17, 18):
        dealt[k] = 4
    for k in (10, 11, 12, 11, 16, 19, 15, 15):
        dealt[k] += 1
    calls.append(HuCall((), tuple(dealt), None, HuContext(Source.LIANG_DEALER, tianhu=True)))
    auto = [k for k in (10, 11, 12, 13, 14) for _ in range(4)]
    calls.append(HuCall((), tuple(auto), None, HuContext(Source.OWN_DRAW), True))
    best = {"huxi": 0, "fan": 0, "score": 0}
    for rules in rules_all:
        for call in calls:
            v = check(rules, call)
            assert v[F.O_WIN], call.describe()
            best["huxi"] = max(best["huxi"], int(v[F.O_HUXI]))
            best["fan"] = max(best["fan"], int(v[F.O_FAN]))
            best["score"] = max(best["score"], int(v[F.O_SCORE]))
    # A biased random search for large results (all big or all small cards, quads).
    rng = random.Random(99)
    for _ in range(3000):
        call = random_call(rng, full)
        v = check(full, call)
        if v[F.O_WIN]:
            best["score"] = max(best["score"], int(v[F.O_SCORE]))
    print("\nextremes:", best)
    assert best["huxi"] >= 60 and best["fan"] >= 20 and best["score"] >= 300


def test_mingtang_bits_match_replay_schema() -> None:
    from replay import schema  # the log's bits are the kernel's

    assert schema.MINGTANG_BITS == F.MINGTANG_BITS


def test_rule_params_layout() -> None:
    p = F.rule_params(find_rules("luzhou"), size=40)
    assert p.shape == (40,) and p.dtype == np.int64
    assert p[F.P_LUZHOU] == 1 and p[F.P_VARIANT] == 2 and p[F.P_MIN_HUXI] == 10
    assert p[F.P_HU_ON_DISCARDS] == 1 and not p[F.HU_PARAMS_END :].any()
    assert len(EAT_SHAPES) == 40


# ---------------------------------------------------------------------------------------------
# Speed (a measurement, not a test): python -m tests.engine.fast.test_hu_kernel
# ---------------------------------------------------------------------------------------------


if __name__ == "__main__":
    from bench.hu_kernel import bench

    bench()
