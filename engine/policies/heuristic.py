"""``heuristic``: ``greedy`` plus the seed's play advice (seed §4 《跑鬍子(字牌)》都有哪些技巧).

On top of :class:`~engine.policies.greedy.GreedyPolicy`:

* **出小不出大** (discard small before big): big faces carry twice the 胡息, so a big card
  costs more to discard than in ``greedy``.
* **熟张 before 生张** (discard faces already visible): a discard costs more for every copy of
  its face that is still unseen.
* **胡牌階段不退生張** (do not feed an opponent close to winning): each opponent's threat grows
  with his visible table 胡息 and shrinks with his hand size; a discard costs the threat times
  the chance that he can use the face (碰 needs two unseen copies in his hand; only the
  discarder's 下家 can 吃; where discards may be won, 胡). A face he discarded himself is
  safe from his 吃/碰 (§6.2).
* **Do not make oneself stinky on faces one still needs** (§6.1): passing on a card one could
  take bars 吃/碰 of that face for good, so PASS is charged the partial shapes in hand that
  wait on it.
* **Keep 1-2-3 / 2-7-10 potential and a path to 15 胡息**: (the shared card values already
  weight partial 1-2-3 / 2-7-10 shapes by their 胡息) a take is marked down when the 胡息 the
  seat could still count on afterwards (table, 坎, 胡息 shapes in hand, part of each live
  pair's 偎, one per group still to form) falls short of the threshold.
* **听牌** (the 胡牌階段 of the advice made concrete): once the hand is small and at most a
  pair and a partial shape lie outside complete groups, a discard is credited with the live
  copies of the cards that would then win with enough 胡息
  (:func:`~engine.policies.features.discard_waits`), and so are a take (after its best
  discard) and a pass (the waits the hand keeps, :func:`~engine.policies.features.hand_waits`).

Measured effects (seat-rotated, 1500 deals each, heuristic against itself with one term
changed): the 听牌 terms are worth most (≈ +0.5 points a hand, about +0.2 of it from takes
and passes), the stinky term ≈ +0.05; the danger term does not pay against these opponents in
Hunan (where a discard cannot be won) and is kept small.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import NUM_KINDS
from engine.observation import Observation
from engine.policies import features as F
from engine.policies.greedy import GreedyPolicy
from engine.policies.weights import DEFAULT_HEURISTIC as _D


class HeuristicPolicy(GreedyPolicy):
    name = "heuristic"
    # rows of engine.policies.weights.PARAMS (docs/POLICIES.md): defaults, ranges, meanings
    big_extra = _D["big_extra"]  # added to a big card's discard cost (出小不出大)
    seen_w = _D["seen_w"]  # per unseen copy of the discarded face (熟张 first)
    danger_w = _D["danger_w"]  # cost of a discard an opponent can take, per unit of his threat
    hu_risk = _D["hu_risk"]  # where discards may be won: chance of his 胡 per unit of threat
    threat_floor = _D["threat_floor"]  # a threat below this is none
    threat_hand = _D["threat_hand"]  # a threat falls to 0 as his hand grows to this size
    p_in_max = _D["p_in_max"]  # cap of the chance that an unseen card is in his hand
    stinky_w = _D["stinky_w"]  # share of the partial shapes waiting on a face lost by passing
    path_w = _D["path_w"]  # per missing 胡息 of a take that leaves no path to the threshold
    path_slack = int(_D["path_slack"])  # the path is checked while reach < min_huxi + this
    ready_max_hand = int(_D["ready_max_hand"])  # look for waits at most this many cards in hand
    ready_w = _D["ready_w"]  # per live winning copy
    ready_hx = _D["ready_hx"]  # a winning copy counts 1 + this per 胡息 above min_huxi
    ready_takes = bool(_D["ready_takes"])  # also value the waits a take leaves (a pass keeps)

    def view(self, observation: Observation, claim: bool) -> F.View:
        v = super().view(observation, claim)
        v.extra = _Extra(v, self)
        return v

    # ---- discards

    def discard_loss(self, v: F.View, k: int, value: float) -> float:
        e = v.extra
        loss = value + self.seen_w * v.un[k]
        if k >= 10:
            loss += self.big_extra
        if e.threat:
            d = e.danger[k]
            if d < 0.0:
                d = e.danger[k] = self._danger(v, k)
            loss += d
        return loss

    def _danger(self, v: F.View, k: int) -> float:
        return self.danger_w * self.danger_raw(v, k)

    def danger_raw(self, v: F.View, k: int) -> float:
        """The chance that an opponent can take face ``k`` (碰 with a pair in hand; 吃 by the
        下家; 胡 where discards may be won), weighted by his threat (summed over opponents;
        the danger term is ``danger_w`` × this)."""
        e = v.extra
        total = 0.0
        for p, threat, is_xia, banned in e.opps:
            if not threat:
                continue
            prob = self.take_chance(v, k, p, is_xia, banned)
            if e.discard_hu:
                prob += self.hu_risk * threat
            total += threat * prob
        return total

    @staticmethod
    def take_chance(v: F.View, k: int, p: float, is_xia: bool, banned: int) -> float:
        """The chance that an opponent (each unseen card in his hand with chance ``p``) can
        碰 face ``k``, or 吃 it as the discarder's 下家 (``is_xia``); 0 for a face he
        discarded (``banned``: he may never 吃/碰 it, §6.2)."""
        if banned & 1 << k:
            return 0.0
        un = v.un
        n = un[k]
        prob = _holds(n, 2, p)
        if is_xia:
            chi = 0.0
            for nk, a, na, b, nb, _hx in v.t.comp[k]:
                chi += (
                    _holds(un[a], na, p)
                    * (_holds(un[b], nb, p) if b < NUM_KINDS else 1.0)
                    * (_holds(n, nk - 1, p) if nk > 1 else 1.0)
                )
            prob += min(1.0, chi)
        return prob

    def discard_bonus(self, v: F.View) -> dict[int, float] | None:
        # near the end: the live winning cards each discard would leave (听牌)
        raw = self.discard_ready_raw(v)
        if raw is None:
            return None
        return {k: self.ready_w * x for k, x in raw.items()}

    def discard_ready_raw(self, v: F.View) -> dict[int, float] | None:
        """Per discard that leaves waits: their live winning copies, each counting
        1 + ``ready_hx`` per 胡息 above the threshold (the bonus is ``ready_w`` × this)."""
        dw = self._discard_waits(v)
        if not dw:
            return None
        return {k: self._ready_raw(v, ws) for k, ws in dw.items()}

    def _discard_waits(self, v: F.View) -> dict[int, list[tuple[int, int]]]:
        """:func:`~engine.policies.features.discard_waits` when the hand may be one discard
        from ready, else {}."""
        if v.hand_size > self.ready_max_hand or not self._may_be_ready(v.h, v.f, v.t, v.quads, 1):
            return {}
        return F.discard_waits(v.h, v.quads, v.meld_hx, v.un, v.t, v.rules.min_huxi)

    @staticmethod
    def _may_be_ready(h: list[int], f: list[int], t: F.Tables, quads: int, extra: int) -> bool:
        """A quick necessary test for 听牌 (after ``extra`` discards): a ready hand has at most
        2 cards (4 with a 跑/提: a 将 too) outside complete groups."""
        limit = (4 if quads else 2) + extra
        return F.loose_count(h, f, t, limit) <= limit

    def _ready_raw(self, v: F.View, waits: Sequence[tuple[int, int]]) -> float:
        need = v.rules.min_huxi
        un = v.un
        # left to right over the waits in ascending card order, as engine.fast.heuristic._ready_raw
        ready_hx = self.ready_hx
        return F.left_sum(un[c] * (1.0 + ready_hx * (hx - need)) for c, hx in waits)

    # ---- takes

    def pass_value(self, v: F.View) -> float:
        stinky, ready = self.pass_parts(v)
        value = 0.0
        if stinky is not None:
            value -= self.stinky_w * stinky
        if ready is not None:
            value += self.ready_w * ready
        return value

    def pass_parts(self, v: F.View) -> tuple[float | None, float | None]:
        """The raw terms of a PASS: the shapes waiting on the face it makes stinky (None when
        the face may not be taken anyway) and the waits a ready hand keeps (None when the
        hand is not checked for them)."""
        c = v.card
        assert c is not None
        stinky = ready = None
        if not v.banned >> c & 1:
            # passing on a legal 吃/碰 makes the face stinky: no more 吃/碰 of it (§6.1)
            stinky = _waiting_on(v, c, self.wt.part)
        h = v.h
        if (
            self.ready_takes
            and v.hand_size <= self.ready_max_hand
            and self._may_be_ready(h, v.f, v.t, v.quads, 0)
        ):
            # a ready hand keeps its waits by passing
            ws = F.hand_waits(h, v.quads, v.meld_hx, v.un, v.t, v.rules.min_huxi)
            ready = self._ready_raw(v, ws)
        return stinky, ready

    def take_bonus(self, v: F.View, h2: list[int], table_hx: int) -> float:
        path, ready = self.take_parts(v, h2, table_hx)
        # ready_w ≥ 0 (its range), so ready_w × the best raw waits is the best weighted ones
        bonus = 0.0
        if path is not None:
            bonus -= self.path_w * path
        if ready is not None:
            bonus += self.ready_w * ready
        return bonus

    def take_parts(
        self, v: F.View, h2: list[int], table_hx: int
    ) -> tuple[float | None, float | None]:
        """The raw terms of a take leaving hand ``h2``: the 胡息 it puts out of reach (None
        when not checked) and the live winning copies it leaves, after its best discard if
        one is owed (None when there are none or they are not looked for)."""
        e = v.extra
        need = v.rules.min_huxi
        path = ready = None
        f2 = F.free_counts(h2)
        size = v.hand_size - (F.int_sum(v.h) - F.int_sum(h2))
        # (early on every hand still has groups enough to reach the threshold)
        if size <= self.ready_max_hand and e.reach < need + self.path_slack:
            reach = _reach(v.meld_hx + table_hx, h2, f2, v.un, v.t)
            path = max(0.0, need - reach) - max(0.0, need - e.reach)
        if self.ready_takes and size <= self.ready_max_hand + 1:
            # the waits the take leaves (after its best discard, if one is owed)
            t, q = v.t, v.quads
            hx = v.meld_hx + table_hx
            if v.discard_follows(size):
                if self._may_be_ready(h2, f2, t, q, 1):
                    dw = F.discard_waits(h2, q, hx, v.un, t, need)
                    if dw:
                        ready = max(self._ready_raw(v, ws) for ws in dw.values())
            elif self._may_be_ready(h2, f2, t, q, 0):
                ready = self._ready_raw(v, F.hand_waits(h2, q, hx, v.un, t, need))
        return path, ready


def _reach(
    table_hx: int, h: Sequence[int], f: Sequence[int], un: Sequence[int], t: F.Tables
) -> float:
    """The 胡息 a seat may still count on: its table, the hand's estimate, and one 胡息 for
    every three loose hand cards (a group yet to be formed)."""
    return table_hx + F.hand_huxi_potential(h, f, un, t) + (F.int_sum(f) - f[NUM_KINDS]) / 3.0


class _Extra:
    """Per-decision facts the heuristic adds to a :class:`~engine.policies.features.View`
    (the costlier ones on first use)."""

    __slots__ = ("v", "_reach", "opps", "threat", "danger", "discard_hu")

    def __init__(self, v: F.View, p: HeuristicPolicy) -> None:
        self.v = v
        self._reach: float | None = None
        self.discard_hu = v.rules.hu_on_discards
        self.danger = [-1.0] * NUM_KINDS
        need = v.rules.min_huxi
        opps = []
        hidden = max(1, F.int_sum(v.un))  # cards this seat cannot see: other hands and the stock
        xia = v.obs.xia
        any_threat = 0.0
        for o, vis, hand, discarded in v.opps:
            # close to winning: much visible 胡息 and few cards left to arrange
            threat = min(1.0, vis / need) * max(0.0, 1.0 - hand / p.threat_hand)
            threat *= threat
            if threat < p.threat_floor:
                threat = 0.0
            any_threat += threat
            p_in = min(p.p_in_max, hand / hidden)  # chance that a given unseen card is in his hand
            opps.append((p_in, threat, o == xia, discarded))
        self.opps = opps
        self.threat = any_threat

    @property
    def reach(self) -> float:
        r = self._reach
        if r is None:
            v = self.v
            r = self._reach = _reach(v.meld_hx, v.h, v.f, v.un, v.t)
        return r


def _waiting_on(v: F.View, c: int, part: float) -> float:
    """The value of the partial shapes in the hand that face ``c`` would complete."""
    f = v.f
    total = 0.0
    for a, b, hx in v.t.completes[c]:
        if f[a] and f[b]:
            total += part + hx
    return total


def _holds(unseen: int, need: int, p: float) -> float:
    """Chance that a hand holds at least ``need`` (0, 1 or 2) of ``unseen`` copies, each in it
    with chance ``p`` independently."""
    if unseen < need:
        return 0.0
    if need == 0:
        return 1.0
    q = 1.0 - p
    if need == 1:
        return 1.0 - q**unseen
    return 1.0 - q**unseen - unseen * p * q ** (unseen - 1)
