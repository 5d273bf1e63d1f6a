"""``learned``: a linear scorer of options, its coefficients taught by search (``paohuzi
distill``, docs/DISTILL.md).

At a decision the policy lists each legal option's **features** (:func:`LearnedPolicy.features`)
and plays the option of highest score, the score being Σ coefficient × feature added from the
left; exact ties (within 1e-9) are broken by the rng, as ``heuristic`` breaks them. A 胡 is
always declared, as by ``heuristic``.

The features are the heuristic's own terms taken apart (:mod:`engine.policies.heuristic`),
computed with the table's heuristic parameters (card values, threat, waits), and a few more:

* a **discard** (:data:`DISCARD_FEATURES`): the card's value in hand, its unseen copies, big
  card, the danger of feeding an opponent, the winning copies it leaves (听牌); value and
  unseen copies × the share of the stock left; breaks a pair; its face is in no complete
  group; no copy of its face is unseen; the seat may no longer 吃/碰 its face anyway; the
  opponents' summed chance to 碰/吃 it (whatever their threat); the 胡息 the hand may count
  on that it loses, and the part of it the threshold misses (the heuristic's reach);
* a **claim** (:data:`CLAIM_FEATURES`): for PASS, 1, the shapes lost to a stinky face, the
  waits kept, the share of the stock left; for a 碰/吃, its groups, their 胡息, the change of
  the hand's card values, the discard it owes, the 胡息 it puts out of reach, the waits it
  leaves, 胡息 × stock share, 1 for a 碰, the change × stock share;
* for both kinds, the **名堂** (:func:`_mingtang`, RULES.md §11.3) after the option: the seat's
  red cards R (its table melds and hand) in the bands the 名堂 score (R = 0 乌胡, 1 点胡, 2,
  8–9, 10–12 红胡, ≥ 13 红乌), and 对对胡 within reach (no 吃 on its table, at most one face
  of the hand single; a 吃 ends it). The search's values showed this blind spot of the
  heuristic: it keeps or sheds red cards for a 点胡 ×3 or a 乌胡 ×5 that no term of the
  heuristic sees. These coefficients are :data:`~engine.policies.weights.LATE`: a table
  recorded before them lacks them and plays as before.

The coefficients are rows of the one parameter table (:data:`engine.policies.weights.PARAMS`,
``d_*`` for discards and ``c_*`` for claims, in feature order); their defaults give the
heuristic's own sums with its default weights, so ``learned`` plays as ``heuristic`` does
(up to the order of float additions) and distillation starts from it. The heuristic's weights
that only scale one term (``margin``, ``seen_w`` …, :data:`~engine.policies.weights.LEARNED_SKIPS`)
are not read: their coefficients replace them. The compiled policy (:mod:`engine.fast.learned`)
computes the same features, float for float.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.actions import DISCARD_BASE, PASS, PENG, TI_BASE
from engine.cards import NUM_KINDS, is_red
from engine.groups import GroupKind
from engine.observation import Observation
from engine.policies import features as F
from engine.policies import weights as _W
from engine.policies.greedy import take_cards
from engine.policies.heuristic import HeuristicPolicy, _reach

#: The stock a hand starts with (every preset: 80 cards, three hands of 20 and the 亮张).
STOCK = 19
#: A discard's features, named as their coefficients.
DISCARD_FEATURES = tuple(p.name for p in _W.PARAMS if p.name.startswith("d_"))
#: A claim option's features (PASS and each 碰 / 吃), named as their coefficients.
CLAIM_FEATURES = tuple(p.name for p in _W.PARAMS if p.name.startswith("c_"))
#: Where the coefficients start in the weight array (discards, then claims, contiguous).
FIRST_COEF = _W.INDEX[DISCARD_FEATURES[0]]
assert [_W.INDEX[n] for n in DISCARD_FEATURES + CLAIM_FEATURES] == list(
    range(FIRST_COEF, FIRST_COEF + len(DISCARD_FEATURES) + len(CLAIM_FEATURES))
)
#: 1 for a red face (2, 7, 10), by kind: the red count of the 名堂 (RULES.md §11.3).
RED = tuple(int(is_red(k)) for k in range(NUM_KINDS))
#: Ties within this are broken by the rng (as in ``greedy``).
EPS = 1e-9
#: The kinds of decision :meth:`LearnedPolicy.features` describes.
DISCARD, CLAIM = 0, 1


def from_heuristic(table: _W.PolicyWeights) -> _W.PolicyWeights:
    """The learned table that scores as the heuristic ``table`` does: its feature parameters,
    and coefficients equal to the heuristic's weights of the same terms (new features 0).

    >>> from_heuristic(_W.DEFAULT_HEURISTIC) == _W.DEFAULT_LEARNED
    True
    """
    if table.policy != "heuristic":
        raise ValueError(f"a {table.policy} table, not a heuristic one")
    t = table
    coef = {
        "d_value": -1.0,
        "d_unseen": -t["seen_w"],
        "d_big": -t["big_extra"],
        "d_danger": -t["danger_w"],
        "d_ready": t["ready_w"],
        "c_pass": t["margin"],
        "c_stinky": -t["stinky_w"],
        "c_pass_ready": t["ready_w"],
        "c_groups": 3 * t["full"] * t["table"],
        "c_hx": t["hx"],
        "c_structure": 1.0,
        "c_owed": -1.0,
        "c_path": -t["path_w"],
        "c_take_ready": t["ready_w"],
    }
    values = [
        _W.DEFAULT_VALUES[i]
        if p.name in _W.LEARNED_SKIPS
        else (coef.get(p.name, 0.0) if p.policy == "learned" else t.values[i]) + 0.0
        for i, p in enumerate(_W.PARAMS)
    ]
    return _W.PolicyWeights("learned", tuple(values))


def score(coef: Sequence[float], row: Sequence[float]) -> float:
    """Σ coefficient × feature, added from the left (the compiled kernel's order)."""
    total = 0.0
    for c, x in zip(coef, row):
        total += c * x
    return total


class LearnedPolicy(HeuristicPolicy):
    name = "learned"
    #: The discard and claim coefficients (defaults: the heuristic's sums).
    d_coef: tuple[float, ...] = tuple(_W.DEFAULT_LEARNED[n] for n in DISCARD_FEATURES)
    c_coef: tuple[float, ...] = tuple(_W.DEFAULT_LEARNED[n] for n in CLAIM_FEATURES)

    @classmethod
    def from_weights(cls, table: _W.PolicyWeights, name: str | None = None) -> LearnedPolicy:
        if table.policy != cls.name:
            raise ValueError(f"a {table.policy} table for the {cls.name} policy")
        # the heuristic's parameters that shape the features (the skipped ones at defaults)
        policy = cls.from_values(_W.PolicyWeights("heuristic", table.values).typed(), name)
        assert isinstance(policy, LearnedPolicy)
        policy.d_coef = tuple(table[n] for n in DISCARD_FEATURES)
        policy.c_coef = tuple(table[n] for n in CLAIM_FEATURES)
        return policy

    # greedy's act: 胡 when offered, else a discard or a claim, as scored here

    def choose_discard(self, v: F.View, legal: Sequence[int], rng: random.Random) -> int:
        return _best(self.d_coef, self.discard_rows(v, legal), legal, rng)

    def choose_claim(self, v: F.View, legal: Sequence[int], rng: random.Random) -> int:
        if v.card is None:  # pragma: no cover - a claim always shows its card
            return PASS
        return _best(self.c_coef, self.claim_rows(v, legal), legal, rng)

    # ------------------------------------------------------------------ features

    def features(
        self, observation: Observation, legal: Sequence[int]
    ) -> tuple[int | None, list[list[float]]]:
        """(DISCARD or CLAIM, one feature row per legal option in order) at a decision with
        no 胡 among the options; (None, []) at any other."""
        first = legal[0]
        if DISCARD_BASE <= first < TI_BASE:
            return DISCARD, self.discard_rows(self.view(observation, False), legal)
        if first == PASS and observation.card is not None:
            return CLAIM, self.claim_rows(self.view(observation, True), legal)
        return None, []

    def discard_rows(self, v: F.View, legal: Sequence[int]) -> list[list[float]]:
        h, f, un = v.h, v.f, v.un
        assert v.scorer is not None
        value = v.scorer.value
        e = v.extra
        ready = self.discard_ready_raw(v) or {}
        s = v.obs.stock_left / STOCK
        loose = set(F.loose_kinds(h, f, v.t))
        danger = [-1.0] * NUM_KINDS
        red, chi = _table_reds(v)
        red += _hand_reds(h)
        singles = _singles(h)
        rows = []
        for a in legal:
            k = a - DISCARD_BASE
            val = value(k, h, f)
            d = 0.0
            if e.threat:
                d = danger[k]
                if d < 0.0:
                    d = danger[k] = self.danger_raw(v, k)
            u = float(un[k])
            rows.append(
                [
                    val,
                    u,
                    1.0 if k >= 10 else 0.0,
                    d,
                    ready.get(k, 0.0),
                    val * s,
                    u * s,
                    1.0 if h[k] == 2 else 0.0,
                    1.0 if k in loose else 0.0,
                    1.0 if un[k] == 0 else 0.0,
                    1.0 if v.banned >> k & 1 else 0.0,
                    self.feed_raw(v, k),
                    *self._reach_change(v, k),
                    *_mingtang(red - RED[k], not chi and singles + _single_change(h, k) <= 1),
                ]
            )
        return rows

    @staticmethod
    def _reach_change(v: F.View, k: int) -> tuple[float, float]:
        """(the 胡息 the seat may count on that discarding ``k`` loses, the 胡息 it puts
        out of reach of the threshold): the heuristic's reach before and after."""
        r0 = v.extra.reach
        h2 = v.h[:]
        h2[k] -= 1
        r = _reach(v.meld_hx, h2, F.free_counts(h2), v.un, v.t)
        need = v.rules.min_huxi
        return r0 - r, max(0.0, need - r) - max(0.0, need - r0)

    def feed_raw(self, v: F.View, k: int) -> float:
        """The opponents' summed chance to 碰 / 吃 face ``k``, whatever their threat."""
        total = 0.0
        for p, _threat, is_xia, banned in v.extra.opps:
            total += self.take_chance(v, k, p, is_xia, banned)
        return total

    def claim_rows(self, v: F.View, legal: Sequence[int]) -> list[list[float]]:
        c = v.card
        assert c is not None
        h, t = v.h, v.t
        s = v.obs.stock_left / STOCK
        vals = [-1.0] * NUM_KINDS
        loose = F.loose_kinds(h, v.f, t) if self.discard_term else ()
        red, chi = _table_reds(v)
        red += _hand_reds(h)
        singles = _singles(h)
        rows = []
        for a in legal:
            if a == PASS:
                stinky, ready = self.pass_parts(v)
                rows.append(
                    [1.0, _or0(stinky), _or0(ready), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, s, 0.0, 0.0, 0.0,
                     *_mingtang(red, not chi and singles <= 1)]
                )  # fmt: skip
                continue
            take = take_cards(a, c, t)
            if take is None:  # pragma: no cover - a claim offers PASS, 碰, 吃 (胡 is taken)
                rows.append([0.0] * len(CLAIM_FEATURES))  # as the compiled kernel leaves it
                continue
            used, groups, table_hx = take
            duidui = False
            if a == PENG:  # the pair leaves the hand; a 吃 puts one on the table
                duidui = not chi and singles + _single_change(h, c, 2) <= 1
            delta, owed, h2 = self.hand_parts(v, vals, loose, used)
            path, ready = self.take_parts(v, h2, table_hx)
            hx = float(table_hx)
            rows.append(
                [
                    0.0,
                    0.0,
                    0.0,
                    float(groups),
                    hx,
                    delta,
                    _or0(owed),
                    _or0(path),
                    _or0(ready),
                    0.0,
                    hx * s,
                    1.0 if a == PENG else 0.0,
                    delta * s,
                    *_mingtang(red + RED[c], duidui),
                ]
            )
        return rows


def _best(
    coef: Sequence[float], rows: Sequence[Sequence[float]], legal: Sequence[int], rng: random.Random
) -> int:
    """The option of highest score (within 1e-9 a tie, broken by ``rng``, as greedy breaks
    them)."""
    best: list[int] = []
    best_score = 0.0
    for a, row in zip(legal, rows):
        x = score(coef, row)
        if not best or x > best_score + EPS:
            best, best_score = [a], x
        elif x > best_score - EPS:
            best.append(a)
    return best[0] if len(best) == 1 else best[rng.randrange(len(best))]


def _table_reds(v: F.View) -> tuple[int, bool]:
    """(the red cards of the seat's table melds, whether one of them is a 吃)."""
    red, chi = 0, False
    for g in v.obs.melds(v.seat):
        chi = chi or g.kind == GroupKind.CHI
        for k in g.cards:
            red += RED[k]
    return red, chi


def _hand_reds(h: Sequence[int]) -> int:
    total = 0
    for k in range(NUM_KINDS):
        total += RED[k] * h[k]
    return total


def _singles(h: Sequence[int]) -> int:
    """The faces held once."""
    n = 0
    for k in range(NUM_KINDS):
        if h[k] == 1:
            n += 1
    return n


def _single_change(h: Sequence[int], k: int, n: int = 1) -> int:
    """How the faces held once change when ``n`` copies of ``k`` leave the hand ``h``."""
    return (1 if h[k] - n == 1 else 0) - (1 if h[k] == 1 else 0)


def _mingtang(red: int, duidui: bool) -> tuple[float, ...]:
    """The 名堂 features (:data:`engine.policies.weights.MINGTANG`) of a red count ``red``
    and 对对胡 within reach."""
    return (
        1.0 if red == 0 else 0.0,
        1.0 if red == 1 else 0.0,
        1.0 if red == 2 else 0.0,
        1.0 if 8 <= red <= 9 else 0.0,
        1.0 if 10 <= red <= 12 else 0.0,
        1.0 if red >= 13 else 0.0,
        1.0 if duidui else 0.0,
    )


def _or0(x: float | None) -> float:
    return 0.0 if x is None else x
