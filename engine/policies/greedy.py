"""``greedy``: takes every 胡, takes a 碰/吃 unless it breaks good structure, discards the least
useful card.

* **胡**: always declared when offered (a 胡 on the 亮张 too).
* **碰 / 吃**: a take is scored as the value of the groups it lays on the table (3 × ``full``
  each, plus ``hx`` per 胡息) plus the change of the hand's value (the cards it uses lose
  their roles, the kinds that shared a shape with them are valued again) minus the least
  valuable card left, which the take obliges it to discard (§7). The best take is made when
  it scores above ``margin``, else PASS. A hand never grows (§3): a take is the only way to
  bring in a card, so ``margin`` is negative and only a take that breaks complete groups
  (above all ones with 胡息) for little is declined. A take that completes a partial shape or
  uses otherwise isolated cards always scores well, and among several the one with more
  胡息 wins.
* **Discard**: the card of lowest value (:class:`~engine.policies.features.Scorer`):
  isolated cards first (no pair, no partner within 一句话 / 2-7-10 / 绞 reach), then cards of
  partial shapes with few live copies; among equals small faces and faces with no unseen
  copy left (dead) first.

The weights (``margin``, ``hx`` and :class:`~engine.policies.features.Weights`) were tuned
by seat-rotated self-play; they are rows of the one parameter table
(:data:`engine.policies.weights.PARAMS`, docs/POLICIES.md), and ``greedy@WEIGHTS`` plays
another table. Deterministic given (observation, legal actions, rng); the rng
only breaks exact ties.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.actions import CHI_BASE, DISCARD_BASE, HU, PASS, PENG, TI_BASE, chi_groups
from engine.cards import NUM_KINDS
from engine.observation import Observation
from engine.policies import features as F
from engine.policies import weights as _W

_CHI_CACHE: dict[int, tuple[tuple[tuple[int, int, int], ...], tuple[int, ...]]] = {}


def chi_cards(code: int) -> tuple[tuple[tuple[int, int, int], ...], tuple[int, ...]]:
    """The groups of a 吃 code and all their cards (cached)."""
    r = _CHI_CACHE.get(code)
    if r is None:
        gs = chi_groups(code)
        r = _CHI_CACHE[code] = (gs, tuple(k for g in gs for k in g))
    return r


def take_cards(a: int, c: int, t: F.Tables) -> tuple[tuple[int, ...], int, int] | None:
    """(the hand's cards, the groups, their 胡息) a 碰 or 吃 ``a`` of card ``c`` lays on the
    table; None for another action."""
    if a == PENG:
        return (c, c), 1, t.peng_hx[c]
    if a >= CHI_BASE:
        gs, cards = chi_cards(a)
        lst = list(cards)
        lst.remove(c)
        return tuple(lst), len(gs), F.int_sum(t.shape_hx[g] for g in gs)
    return None


class GreedyPolicy:
    name = "greedy"
    # The parameters are rows of the one table, engine.policies.weights.PARAMS (defaults,
    # ranges and meanings there and in docs/POLICIES.md); a table plays via from_weights.
    #: A take is made when it scores above this (see the module docstring).
    margin = _W.DEFAULT_GREEDY["margin"]
    #: A table group is worth ``table`` × 3 × ``full`` (a complete hand group: 3 × ``full``).
    table = _W.DEFAULT_GREEDY["table"]
    #: Weight of one 胡息 against structure (a card of a complete group is worth 10).
    hx = _W.DEFAULT_GREEDY["hx"]
    #: Count the least valuable card left after a take (the discard it owes) against it.
    discard_term = bool(_W.DEFAULT_GREEDY["discard_term"])

    def __init__(self, weights: F.Weights | None = None, **params: float) -> None:
        """Defaults are the tuned values; ``weights`` and keyword ``params`` (class attributes
        such as ``margin=-10``) override them, for experiments."""
        self.wt = weights if weights is not None else F.DEFAULT
        for key, value in params.items():
            if not hasattr(self, key):
                raise TypeError(f"unknown {self.name} parameter {key!r}")
            setattr(self, key, value)

    @classmethod
    def from_weights(cls, table: _W.PolicyWeights, name: str | None = None) -> GreedyPolicy:
        """The policy playing ``table`` (a table of this policy; ``name``: its spec, e.g.
        ``heuristic@tuned.json``, default the policy's own name)."""
        if table.policy != cls.name:
            raise ValueError(f"a {table.policy} table for the {cls.name} policy")
        return cls.from_values(table.typed(), name)

    @classmethod
    def from_values(
        cls, values: dict[str, float | int | bool], name: str | None = None
    ) -> GreedyPolicy:
        """The policy with parameters ``values`` (a table's :meth:`~engine.policies.weights.
        PolicyWeights.typed`, every parameter the class holds)."""
        values = dict(values)
        card = {slot: values.pop(param) for param, slot in F.Weights.PARAMS.items()}
        policy = cls(F.Weights(**card), **values)
        if name is not None:
            policy.name = name
        return policy

    def act(
        self, observation: Observation, legal_actions: Sequence[int], rng: random.Random
    ) -> int:
        if len(legal_actions) == 1:
            return legal_actions[0]
        if HU in legal_actions:
            return HU
        first = legal_actions[0]
        if DISCARD_BASE <= first < TI_BASE:
            return self.choose_discard(self.view(observation, False), legal_actions, rng)
        if first == PASS:
            return self.choose_claim(self.view(observation, True), legal_actions, rng)
        return legal_actions[0]  # pragma: no cover - every other decision is forced

    # ------------------------------------------------------------------ hooks

    def view(self, observation: Observation, claim: bool) -> F.View:
        v = F.View(observation, claim)
        v.scorer = F.Scorer(v.un, v.t, self.hx, self.wt)
        return v

    def discard_loss(self, v: F.View, k: int, value: float) -> float:
        """What discarding one copy of kind ``k`` (worth ``value`` in hand) costs."""
        return value

    def discard_bonus(self, v: F.View) -> dict[int, float] | None:
        """Extra value of discarding some kinds (none for greedy)."""
        return None

    def pass_value(self, v: F.View) -> float:
        """The value of declining every take on the offered card (0: the hand stays)."""
        return 0.0

    def take_bonus(self, v: F.View, h2: list[int], table_hx: int) -> float:
        """Extra value of a take beyond structure (none for greedy)."""
        return 0.0

    # ------------------------------------------------------------------ decisions

    def choose_discard(self, v: F.View, legal: Sequence[int], rng: random.Random) -> int:
        h, f = v.h, v.f
        assert v.scorer is not None
        value = v.scorer.value
        bonus = self.discard_bonus(v)
        best: list[int] = []
        best_loss = 0.0
        for a in legal:
            k = a - DISCARD_BASE
            loss = self.discard_loss(v, k, value(k, h, f))
            if bonus:
                loss -= bonus.get(k, 0.0)
            if not best or loss < best_loss - 1e-9:
                best, best_loss = [a], loss
            elif loss < best_loss + 1e-9:
                best.append(a)
        return best[0] if len(best) == 1 else best[rng.randrange(len(best))]

    def choose_claim(self, v: F.View, legal: Sequence[int], rng: random.Random) -> int:
        c = v.card
        if c is None:  # pragma: no cover - a claim always shows its card
            return PASS
        w = self.hx
        h, t = v.h, v.t
        vals = [-1.0] * NUM_KINDS  # card values in the hand, computed on demand
        # the kinds in no complete group: where the discard a take owes is looked for
        loose = F.loose_kinds(h, v.f, t) if self.discard_term else ()
        group = 3 * self.wt.full * self.table
        best_score = self.pass_value(v) + self.margin
        best: list[int] = [PASS]
        for a in legal:
            take = take_cards(a, c, t)
            if take is None:
                continue
            used, groups, table_hx = take
            table = group * groups + w * table_hx
            score = table + self._hand_change(v, vals, loose, used, table_hx)
            if score > best_score + 1e-9:
                best_score, best = score, [a]
            elif score > best_score - 1e-9:
                best.append(a)
        return best[0] if len(best) == 1 else best[rng.randrange(len(best))]

    def _hand_change(
        self,
        v: F.View,
        vals: list[float],
        loose: Sequence[int],
        used: tuple[int, ...],
        table_hx: int,
    ) -> float:
        """Hand value after removing ``used`` (and the discard owed, §7) minus before: the
        used cards and every kind they shared a shape with are valued again; the discard is
        the least valuable of those and of the ``loose`` kinds (of every kind if there is
        none; its heuristic extras are left out here)."""
        delta, owed, h2 = self.hand_parts(v, vals, loose, used)
        if owed is not None:
            delta -= owed
        return delta + self.take_bonus(v, h2, table_hx)

    def hand_parts(
        self, v: F.View, vals: list[float], loose: Sequence[int], used: tuple[int, ...]
    ) -> tuple[float, float | None, list[int]]:
        """(the change of the hand's card values when ``used`` leaves it, the value of the
        discard the take owes or None, the hand after) of :meth:`_hand_change`."""
        h, t = v.h, v.t
        assert v.scorer is not None
        value = v.scorer.value
        h2 = h[:]
        f2 = v.f[:]
        for k in used:
            h2[k] -= 1
            f2[k] -= 1
        touched: set[int] = set()
        nbr = t.nbr
        for k in used:
            touched.update(nbr[k])
        delta = 0.0
        f = v.f
        worst = None
        for j in touched:
            n = h[j]
            if n:
                old = vals[j]
                if old < 0.0:
                    old = vals[j] = value(j, h, f)
                n2 = h2[j]
                if n2:
                    nv = value(j, h2, f2)
                    delta += n2 * nv - n * old
                    if n2 < 3 and (worst is None or nv < worst):
                        worst = nv
                else:
                    delta -= n * old
        if self.discard_term and v.discard_follows(v.hand_size - len(used)):
            for j in loose if loose else range(NUM_KINDS):
                if j not in touched and 0 < h2[j] < 3:
                    x = vals[j]
                    if x < 0.0:
                        x = vals[j] = value(j, h, f)
                    if worst is None or x < worst:
                        worst = x
            if worst is None:  # every card left is in a 坎 (C13)
                worst = min(value(j, h2, f2) for j in range(NUM_KINDS) if h2[j])
            return delta, worst, h2
        return delta, None, h2
