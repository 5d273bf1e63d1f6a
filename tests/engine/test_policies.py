"""The built-in policies ``greedy`` and ``heuristic`` (engine/policies): loading, legality and
determinism over seeded playouts (3 players, 4 players, Luzhou), single decisions in crafted
situations, the shared hand evaluation, and a seat-rotated strength check against ``random``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from builders import deck_for, new_state

from engine.actions import DISCARD_BASE, HU, PASS, PENG, action_str, encode_chi
from engine.cards import NUM_KINDS, parse_card, parse_cards, to_counts
from engine.deck import derive_seed, shuffle_deck
from engine.groups import Group, GroupKind
from engine.hu import best_split
from engine.observation import Observation
from engine.play import play_hand, play_to_end
from engine.policies import Policy, load_policies, load_policy
from engine.policies import features as F
from engine.policies.greedy import GreedyPolicy
from engine.policies.heuristic import HeuristicPolicy
from engine.rules import RuleSet, find_rules
from engine.state import Game, Phase

NAMES = ("greedy", "heuristic")
RULES = ("hunan", "hunan-4p", "luzhou")


class Checked:
    """Wraps a policy and asserts that every chosen action is legal."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0

    def act(
        self, observation: Observation, legal_actions: Sequence[int], rng: random.Random
    ) -> int:
        assert list(legal_actions) == sorted(set(legal_actions))
        a = self.inner.act(observation, legal_actions, rng)
        assert a in legal_actions, (
            self.name,
            action_str(a),
            [action_str(x) for x in legal_actions],
        )
        self.calls += 1
        return a


def _deal(run: int, i: int, rules: RuleSet) -> tuple[tuple[int, ...], int, int]:
    seed = derive_seed(run, "hand", i)
    return shuffle_deck(seed), i % rules.players, seed


def _actions(game: Game, deck: Sequence[int], dealer: int, policies, seed: int) -> list:  # noqa: ANN001
    return [(s.seat, s.action) for s in play_hand(game, deck, dealer, policies, seed)]


# ---------------------------------------------------------------------------- loading


@pytest.mark.parametrize(
    ("spec", "cls"),
    [
        ("greedy", GreedyPolicy),
        ("heuristic", HeuristicPolicy),
        ("Greedy ", GreedyPolicy),
        ("engine.policies.greedy:GreedyPolicy", GreedyPolicy),
        ("engine.policies.heuristic:HeuristicPolicy", HeuristicPolicy),
    ],
)
def test_load_by_name_and_module(spec: str, cls: type) -> None:
    p = load_policy(spec)
    assert type(p) is cls
    assert isinstance(p, Policy)
    assert p.name == cls.name


def test_load_mixed_table() -> None:
    ps = load_policies("heuristic,greedy,random", 3)
    assert [p.name for p in ps] == ["heuristic", "greedy", "random"]


def test_unknown_parameter_is_rejected() -> None:
    with pytest.raises(TypeError):
        GreedyPolicy(nope=1.0)


# ---------------------------------------------------------------------------- legality


@pytest.mark.parametrize("rules_name", RULES)
@pytest.mark.parametrize("name", NAMES)
def test_every_action_is_legal(name: str, rules_name: str) -> None:
    rules = find_rules(rules_name)
    game = Game(rules)
    policy = Checked(load_policy(name))
    wins = 0
    for i in range(100):
        deck, dealer, seed = _deal(11, i, rules)
        state = play_to_end(game, deck, dealer, [policy] * rules.players, seed)
        assert state.is_terminal()
        assert sum(state.outcome.deltas) == 0
        wins += state.outcome.winner is not None
    assert policy.calls > 1000
    assert wins > 25  # these policies finish hands, unlike random play


@pytest.mark.parametrize("rules_name", RULES)
def test_mixed_tables_are_legal(rules_name: str) -> None:
    rules = find_rules(rules_name)
    game = Game(rules)
    names = ["heuristic", "greedy", "random", "heuristic"][: rules.players]
    for i in range(45):
        deck, dealer, seed = _deal(12, i, rules)
        seats = names[i % len(names) :] + names[: i % len(names)]
        policies = [Checked(load_policy(n)) for n in seats]
        assert play_to_end(game, deck, dealer, policies, seed).is_terminal()


# ---------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("rules_name", ("hunan", "luzhou"))
@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_actions(name: str, rules_name: str) -> None:
    rules = find_rules(rules_name)
    game = Game(rules)
    for i in range(15):
        deck, dealer, seed = _deal(13, i, rules)
        first = _actions(game, deck, dealer, [load_policy(name)] * rules.players, seed)
        # a fresh instance, and one that has played other hands in between (no hidden state)
        again = _actions(game, deck, dealer, [load_policy(name)] * rules.players, seed)
        assert first == again
    warm = load_policy(name)
    deck, dealer, seed = _deal(13, 0, rules)
    before = _actions(game, deck, dealer, [warm] * rules.players, seed)
    for i in range(1, 6):
        d, dl, s = _deal(14, i, rules)
        _actions(game, d, dl, [warm] * rules.players, s)
    assert _actions(game, deck, dealer, [warm] * rules.players, seed) == before


# ---------------------------------------------------------------------------- crafted decisions


class FakeObs:
    """A hand-made observation of seat 1 (下家 of seat 0): only what the policies read."""

    def __init__(
        self,
        hand: str,
        card: str | None = None,
        melds: Sequence[Group] = (),
        opp_melds: Sequence[Group] = (),
        rules: str = "hunan",
        right: str = "",
        opp_hand: int = 20,
        opp_discarded: str = "",
    ) -> None:
        self.seat = 1
        self.rules = find_rules(rules)
        self.hand = to_counts(parse_cards(hand))
        self.card = None if card is None else parse_card(card)
        self.owner = 0 if card is not None else None
        self.dealer = 0
        self.active = (0, 1, 2)
        self.xia, self.shang = 2, 0
        self.liang = None
        self.stinky = 0
        n = sum(self.hand)
        self.hand_sizes = (opp_hand, n, opp_hand)
        self._melds = {0: tuple(opp_melds), 1: tuple(melds), 2: ()}
        self._right = {0: tuple(parse_cards(right)), 1: (), 2: ()}
        self._discarded = {0: 0, 1: 0, 2: sum(1 << k for k in set(parse_cards(opp_discarded)))}

    def melds(self, seat: int) -> tuple[Group, ...]:
        return self._melds[seat]

    def right(self, seat: int) -> tuple[int, ...]:
        return self._right[seat]

    def quads(self, seat: int) -> int:
        return sum(g.kind in (GroupKind.PAO, GroupKind.TI) for g in self._melds[seat])

    def discarded_faces(self, seat: int) -> int:
        return self._discarded[seat]


def _discard(code: int) -> str:
    assert DISCARD_BASE <= code < DISCARD_BASE + NUM_KINDS
    return action_str(code)


def _discards(hand: str) -> list[int]:
    c = to_counts(parse_cards(hand))
    return [DISCARD_BASE + k for k in range(NUM_KINDS) if 0 < c[k] < 3]


def _chi(*groups: str) -> int:
    return encode_chi(tuple(sorted(parse_cards(g))) for g in groups)


@pytest.mark.parametrize("name", NAMES)
def test_takes_every_hu(name: str) -> None:
    p = load_policy(name)
    obs = FakeObs("一二三 四五六 七八九 壹贰叁 肆伍陆 柒捌玖 贰柒", card="拾")
    assert p.act(obs, [PASS, HU], random.Random(0)) == HU


@pytest.mark.parametrize("name", NAMES)
def test_discards_the_isolated_card(name: str) -> None:
    # 十 has no pair and no partner (no 二 七 八 九 拾); every other card is in a 一句话 or pair
    hand = "三四五 四五六 壹贰叁 肆伍陆 陆柒捌 一一 十"
    p = load_policy(name)
    assert _discard(p.act(FakeObs(hand), _discards(hand), random.Random(0))) == "打 十"


@pytest.mark.parametrize("name", NAMES)
def test_discards_small_before_big(name: str) -> None:
    # two lone cards, as many copies unseen: the small one goes (出小不出大)
    hand = "三四五 四五六 壹贰叁 肆伍陆 叁肆伍 一一 六 十 玖"
    p = load_policy(name)
    assert _discard(p.act(FakeObs(hand), _discards(hand), random.Random(0))) == "打 十"


@pytest.mark.parametrize("name", NAMES)
def test_takes_a_chi_that_completes_a_partial(name: str) -> None:
    hand = "一二三 壹贰叁 四五六 柒捌玖 八九 肆肆伍伍陆 十"
    p = load_policy(name)
    legal = [PASS, _chi("七八九")]
    assert p.act(FakeObs(hand, card="七"), legal, random.Random(0)) == legal[1]


@pytest.mark.parametrize("name", NAMES)
def test_prefers_the_take_with_huxi(name: str) -> None:
    # 十 can go to 八九十 (0 胡息) or 二七十 (3 胡息)
    hand = "二七 八九 壹贰叁 柒捌玖 三四五 肆肆伍伍陆陆 六"
    p = load_policy(name)
    legal = sorted([PASS, _chi("八九十"), _chi("二七十")])
    assert p.act(FakeObs(hand, card="十"), legal, random.Random(0)) == _chi("二七十")


@pytest.mark.parametrize("name", NAMES)
def test_pengs_a_big_pair(name: str) -> None:
    hand = "捌捌 一二三 壹贰叁 四五六 肆伍陆 五六七 九"
    p = load_policy(name)
    assert p.act(FakeObs(hand, card="捌"), [PASS, PENG], random.Random(0)) == PENG


def test_greedy_with_no_margin_declines_a_take_that_breaks_two_groups() -> None:
    # 二三四 would take 二三 from 一二三 (3 胡息) and leave 一 and 五六 behind
    hand = "一二三 五六 壹贰叁 肆伍陆 柒捌玖 十 拾 九九"
    obs = FakeObs(hand, card="四")
    legal = [PASS, _chi("二三四")]
    assert GreedyPolicy(margin=0.0).act(obs, legal, random.Random(0)) == PASS


def test_heuristic_does_not_feed_a_threatening_xiajia() -> None:
    # 五 is the cheapest card, but the 下家 (seat 2) shows 24 胡息 with 8 cards in hand and
    # may 吃/碰 it; 玖 he discarded himself (§6.2), so it is safe from him
    hand = "壹贰叁 一一 五 玖"
    legal = _discards(hand)
    h = load_policy("heuristic")
    calm = FakeObs(hand, right="玖", opp_hand=8)
    assert _discard(h.act(calm, legal, random.Random(0))) == "打 五"
    tense = FakeObs(hand, right="玖", opp_hand=8, opp_discarded="玖")
    tense._melds[2] = (
        Group(GroupKind.TI, (19,) * 4),
        Group(GroupKind.PAO, (11,) * 4),
        Group(GroupKind.PENG, (16,) * 3),
    )
    assert _discard(h.act(tense, legal, random.Random(0))) == "打 玖"
    assert _discard(load_policy("greedy").act(tense, legal, random.Random(0))) == "打 五"


def test_heuristic_discards_into_a_wait() -> None:
    # table 12 胡息, hand 一二三 七九 叁肆伍 肆: discarding the second 肆 leaves a hand that
    # wins on 八 (七八九) with 12 + 3 (一二三) = 15 胡息; greedy's per-card choice (九, its
    # partners being seen) leaves no wait
    melds = (
        Group(GroupKind.WEI, (18,) * 3),
        Group(GroupKind.WEI, (16,) * 3),
        Group(GroupKind.CHI, (2, 3, 4)),
        Group(GroupKind.CHI, (5, 6, 7)),
    )
    hand = "一二三 七九 叁肆伍 肆"
    obs = FakeObs(hand, melds=melds, right="九")
    legal = _discards(hand)
    assert _discard(load_policy("heuristic").act(obs, legal, random.Random(0))) == "打 肆"
    assert _discard(load_policy("greedy").act(obs, legal, random.Random(0))) == "打 九"
    v = F.View(obs, claim=False)
    waits = F.discard_waits(v.h, v.quads, v.meld_hx, v.un, v.t, 15)
    assert waits == {parse_card("肆"): [(parse_card("八"), 15)]}


def test_real_state_discard() -> None:
    # the dealer's first discard on a crafted deal: 十 is his only isolated card
    deck = deck_for(
        dealer="三三四四五五六 肆肆伍伍陆陆 叁叁 柒捌捌玖玖",
        xia="一一二二七七八八九九 壹壹贰贰叁 拾拾 五 四 陆",
        shang="一二三四六七八九十 壹贰叁肆伍陆柒捌玖拾 十",
        liang="十",
    )
    state = new_state(deck)
    assert state.phase == Phase.DISCARD and state.deciders() == (0,)
    for name in NAMES:
        a = load_policy(name).act(state.observation(0), state.legal_actions(0), random.Random(0))
        assert _discard(a) == "打 十"


# ---------------------------------------------------------------------------- features


@pytest.mark.parametrize("rules_name", RULES)
def test_view_matches_observation(rules_name: str) -> None:
    """View re-counts what the observation shows; it must agree with Observation."""
    rules = find_rules(rules_name)
    game = Game(rules)
    policy = load_policy("greedy")
    n = 0
    for i in range(12):
        deck, dealer, seed = _deal(15, i, rules)
        for step in play_hand(game, deck, dealer, [policy] * rules.players, seed):
            st = step.state
            if st.is_terminal():
                break
            for seat in st.active:
                obs = st.observation(seat)
                v = F.View(obs, claim=True)
                assert v.un[:NUM_KINDS] == [4 - c for c in obs.seen_counts()]
                assert v.meld_hx == obs.own_meld_huxi
                assert v.n_cards == st.n_cards(seat) and v.target == st.target(seat)
                for o, hx, size, _ in v.opps:
                    assert hx == obs.visible_meld_huxi(o) and size == obs.hand_sizes[o]
                n += 1
    assert n > 500


def _brute_waits(h: list[int], quads: int, fixed: int, un: list[int], variant: int, need: int):  # noqa: ANN202
    free = [x if x < 3 else 0 for x in h[:NUM_KINDS]]
    base = fixed + sum(F.tables(RuleSet()).kan_hx[k] for k in range(NUM_KINDS) if h[k] >= 3)
    out = []
    for c in range(NUM_KINDS):
        if not un[c] or h[c] >= 3:
            continue
        free[c] += 1
        r = best_split(tuple(free), quads >= 1, c if h[c] == 2 else -1, variant)
        free[c] -= 1
        if r is not None and base + r[0] >= need:
            out.append((c, base + r[0]))
    return out


def test_discard_waits_agree_with_the_engine_split() -> None:
    t = F.tables(RuleSet())
    rng = random.Random(5)
    kinds = [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16, 19]
    found = 0
    for _ in range(600):
        size = rng.choice([5, 6, 8, 9, 11, 12, 14, 15])
        h = [0] * (NUM_KINDS + 1)
        while sum(h) < size:
            k = rng.choice(kinds)
            if h[k] < 3:
                h[k] += 1
        quads = 0 if size % 3 == 0 else 1
        un = [rng.choice([0, 1, 2, 2, 3]) for _ in range(NUM_KINDS)] + [0]
        got = F.discard_waits(h, quads, 6, un, t, 9)
        for d in range(NUM_KINDS):
            if 0 < h[d] < 3:
                h[d] -= 1
                want = _brute_waits(h, quads, 6, un, 0, 9)
                h[d] += 1
                assert sorted(got.get(d, [])) == want
                found += bool(want)
    assert found > 50


def test_split_rest_agrees_with_the_engine() -> None:
    # with nothing left over, split_rest is the engine's exact split (胡息 only)
    for rules in (RuleSet(), RuleSet(ruleset="luzhou")):
        t = F.tables(rules)
        rng = random.Random(3)
        for _ in range(800):
            c = [0] * NUM_KINDS
            for _ in range(rng.choice([3, 5, 6, 8, 9, 11, 12])):
                k = rng.choice([0, 1, 2, 3, 4, 6, 9, 10, 11, 12, 13, 16, 19])
                c[k] = min(2, c[k] + 1)
            jiang = rng.random() < 0.5
            want = best_split(tuple(c), jiang, -1, t.variant)
            got = F.split_rest(F.pack(c), jiang, 0, t)
            assert got == ({} if want is None else {0: want[0]})


def test_card_values_order() -> None:
    t = F.tables(RuleSet())
    h = list(to_counts(parse_cards("一二三 九 肆肆"))) + [0]
    un = [2] * NUM_KINDS + [0]
    v = F.card_values(h, F.free_counts(h), un, t, 1.0)
    lone, pair, sentence = v[parse_card("九")], v[parse_card("肆")], v[parse_card("一")]
    assert lone < pair < sentence
    # a partial shape whose completing cards are all seen is worth no more than a lone card
    h = list(to_counts(parse_cards("一三 九"))) + [0]
    un[parse_card("二")] = 0
    v = F.card_values(h, F.free_counts(h), un, t, 1.0)
    assert v[0] == pytest.approx(v[parse_card("九")])


# ---------------------------------------------------------------------------- strength


def _rotated_mean(strong: str, weak: str, n_deals: int, rules_name: str = "hunan") -> float:
    """Mean score per hand of one ``strong`` seat against ``weak`` seats, the strong policy
    sitting in every seat in turn on the same deal (the dealer advantage cancels)."""
    rules = find_rules(rules_name)
    game = Game(rules)
    a, b = load_policy(strong), load_policy(weak)
    total = 0
    hands = 0
    for i in range(n_deals):
        deck, dealer, seed = _deal(21, i, rules)
        for seat in range(3):
            policies = [b] * 3
            policies[seat] = a
            total += play_to_end(game, deck, dealer, policies, seed).outcome.deltas[seat]
            hands += 1
    return total / hands


def test_heuristic_beats_random() -> None:
    assert _rotated_mean("heuristic", "random", 200) > 1.0  # 600 hands


def test_greedy_beats_random() -> None:
    assert _rotated_mean("greedy", "random", 100) > 0.5  # 300 hands
