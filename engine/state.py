"""Game and State: one hand of 跑胡子 as a state machine (RULES.md §2–§14).

A hand is fully described by ``(rules, deck, dealer, decisions)``: the engine owns no RNG.
At every decision point :meth:`State.deciders` names the seats that must declare and
:meth:`State.legal_actions` gives each its options as sorted small ints (``engine.actions``).
Simultaneous declarations (claims on a card, §8.4 C15) are collected seat by seat, hidden from
each other, and resolved by priority once every decider has declared. Compulsory 提/偎/跑 are
legal sets of one, marked forced (:meth:`State.is_forced`), and recorded like any action.

>>> from engine.deck import shuffle_deck
>>> from engine.rules import find_rules
>>> game = Game(find_rules("hunan"))
>>> state = game.new_initial_state(shuffle_deck(1), dealer=0)
>>> while not state.is_terminal():
...     seat = state.deciders()[0]
...     state.apply(seat, state.legal_actions(seat)[-1])
>>> sum(state.outcome.deltas)
0
>>> state.clone() == state
True
>>> eval(repr(state)) == state
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from engine import actions as A
from engine.actions import action_str, chi_groups
from engine.cards import (
    COPIES,
    DEALT,
    DECK_SIZE,
    HAND_CARDS,
    NUM_KINDS,
    card_char,
    format_cards,
    is_red,
)
from engine.errors import IllegalAction
from engine.groups import (
    EAT_SHAPE_ID,
    Group,
    GroupKind,
    eat_shapes_for,
    meld_huxi,
)
from engine.hu import HuContext, HuResult, Source, evaluate_auto_tianhu, evaluate_hu_counts
from engine.observation import Observation
from engine.outcome import OutcomeKind  # defined apart: the log's codes, light to import
from engine.render import render_outcome, render_state
from engine.rules import RuleSet
from engine.scoring import settle


class Phase(IntEnum):
    """What the pending decision is about."""

    INIT_TI = 0  # automatic 提 of dealt quads (§9 step 3), one forced decision each
    LIANG_HU = 1  # optional hu on the 亮张 / the dealer's 21-card 天胡 (§9 step 4, §13, §14)
    DISCARD = 2  # a player discards (§8.3)
    DRAW_TAKE = 3  # the drawer's forced 提/偎 of his own draw (§8.2)
    CLAIM_HU = 4  # hu on a revealed or (Luzhou) discarded card (§8.4 H)
    CLAIM_PAO = 5  # forced 跑 (§8.4 R)
    CLAIM_TAKE = 6  # simultaneous 碰 / 吃 / pass (§8.4 C)
    END = 7


class CardKind(IntEnum):
    DRAWN = 0
    DISCARDED = 1
    LIANG = 2


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: OutcomeKind
    winner: int | None
    source: Source | None
    result: HuResult | None
    deltas: tuple[int, ...]
    card: int | None = None  # the hu card (None for 3提/5坎 and a dealer's 21-card hu)
    from_seat: int | None = None  # who drew / discarded / showed the hu card

    def __str__(self) -> str:
        """In card notation (:func:`engine.render.render_outcome`): ``胡 seat 2 on 五 (自摸):
        吃[一二三] … · 胡息 17 · 等 1 · 名堂 none · 番 1 · score 1 · deltas -1 -1 +2``."""
        return render_outcome(self)


# Claim ranks for §6.1 / C29: 碰 > owner's 吃 > 下家's 吃.
_RANK_PENG, _RANK_OWNER_CHI, _RANK_XIA_CHI = 3, 2, 1


_ANY, _NONE = -1, -2  # results of State._lonely_card
_REPEAT = tuple(tuple([k] * n for n in range(5)) for k in range(NUM_KINDS))


class Game:
    """The rules of a table (immutable) and the tables derived from them."""

    def __init__(self, rules: RuleSet | None = None) -> None:
        self.rules = rules if rules is not None else RuleSet()
        shapes = eat_shapes_for(self.rules)
        # For each card kind: the eat shapes that contain it, as (shape, rest-after-one-copy).
        self.shapes_with: tuple[tuple[tuple[tuple[int, int, int], tuple[int, int]], ...], ...] = (
            tuple(tuple((s, _remove_one(s, c)) for s in shapes if c in s) for c in range(NUM_KINDS))
        )

        # For each kind: the other kinds it shares an eat shape with (the hu pre-filter).
        self.partners: tuple[int, ...] = tuple(
            sum(1 << j for j in {x for s, _ in self.shapes_with[k] for x in s} - {k})
            for k in range(NUM_KINDS)
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and other.rules == self.rules

    def __hash__(self) -> int:
        return hash(self.rules)

    def __repr__(self) -> str:
        return f"Game({self.rules!r})"

    def new_initial_state(self, deck: Sequence[int], dealer: int = 0) -> State:
        """Deal ``deck`` (80 kinds, position 0 first) with ``dealer`` and run the automatic
        start of the hand up to the first decision (§3, §9, §13)."""
        return State(self, deck, dealer)


def _remove_one(shape: tuple[int, int, int], c: int) -> tuple[int, int]:
    rest = list(shape)
    rest.remove(c)
    return (rest[0], rest[1])


class State:
    """A hand in progress. Mutable; :meth:`clone` copies it, ``==`` compares everything."""

    def __init__(self, game: Game, deck: Sequence[int], dealer: int, *, _empty: bool = False):
        if _empty:
            return
        rules = game.rules
        self.game = game
        self.rules = rules
        deck = tuple(int(k) for k in deck)
        if len(deck) != DECK_SIZE or sorted(deck) != [
            k for k in range(NUM_KINDS) for _ in range(COPIES)
        ]:
            raise IllegalAction(
                f"deck is not a permutation of the 80 cards: {format_cards(deck)!r}"
            )
        n = rules.players
        if not 0 <= dealer < n:
            raise IllegalAction(f"dealer {dealer} out of range for {n} players")
        self.deck = deck
        self.dealer = dealer
        self.n_seats = n
        if n == 4:
            self.sitter: int | None = (dealer + 2) % 4
            self.active: tuple[int, ...] = (dealer, (dealer + 1) % 4, (dealer + 3) % 4)
        else:
            self.sitter = None
            self.active = (dealer, (dealer + 1) % 3, (dealer + 2) % 3)
        # 下家 / 上家 over the active ring (the sitter is skipped, §13).
        self.xia = [0] * n
        self.shang = [0] * n
        for i, s in enumerate(self.active):
            self.xia[s] = self.active[(i + 1) % 3]
            self.shang[s] = self.active[(i + 2) % 3]
        self.hands = [[0] * NUM_KINDS for _ in range(n)]
        self.hand_size = [0] * n
        self.melds: list[list[Group]] = [[] for _ in range(n)]
        self.table_cards = [0] * n
        self.quads = [0] * n  # number of 跑 + 提
        self.right: list[list[int]] = [[] for _ in range(n)]  # dead cards placed to the right
        self.discards: list[list[int]] = [[] for _ in range(n)]  # every card discarded, in order
        self.discarded = [0] * n  # bitmask of faces discarded from hand (§6.2)
        self.stinky = [0] * n  # bitmask of 臭牌 faces (§6.1)
        self.renpeng = [0] * n  # bitmask of 忍碰 faces (§6.1)
        self.chouhu: list[dict[int, int]] = [{} for _ in range(n)]  # face → meldHuxi (§6.4)
        self.history: list[tuple[int, int]] = []
        self.n_draws = 0
        self.dealer_discards = 0
        self.card: int | None = None
        self.card_kind: CardKind | None = None
        self.owner: int | None = None
        self.phase = Phase.END
        self.pending: dict[int, list[int]] = {}
        self.declared: dict[int, int] = {}
        self.forced = False
        self.outcome: Outcome | None = None
        self.queue: list[tuple[int, int]] = []  # remaining initial 提s (seat, face)
        self._hu: dict[int, HuResult] = {}
        self._lonely: list[tuple[tuple[int, ...], int]] = [((), _ANY)] * n
        self._deal()

    # ------------------------------------------------------------------ deal and start

    def _deal(self) -> None:
        d, x, s = self.active
        deck = self.deck
        for i, seat in enumerate((d, x, s)):
            lo = i * HAND_CARDS
            for k in deck[lo : lo + HAND_CARDS]:
                self.hands[seat][k] += 1
            self.hand_size[seat] = HAND_CARDS
        self.hands[d][deck[DEALT - 1]] += 1
        self.hand_size[d] = HAND_CARDS + 1
        stock = list(deck[DEALT:])
        self.bottom_swaps = 0
        if self.n_seats == 4:
            # §13: the bottom card is shown (Luzhou, §14: the last two); a red shown card goes
            # to the top, repeatedly (at most once per stock card).
            shown = 2 if self.rules.luzhou else 1
            while self.bottom_swaps < len(stock):
                red = [
                    i for i in range(len(stock) - 1, len(stock) - 1 - shown, -1) if is_red(stock[i])
                ]
                if not red:
                    break
                stock.insert(0, stock.pop(red[0]))
                self.bottom_swaps += 1
            self.liang: int | None = None
            self.bottom: int | None = stock[-1]
            self.n_shown = shown
        else:
            self.liang = deck[DEALT - 1]
            self.bottom = None
            self.n_shown = 0
        self.liang_known = self.liang is not None
        self.stock = stock[::-1]  # pop() takes the top card
        # §9 step 2: automatic 3提/5坎 天胡, dealer, 下家, 上家.
        for seat in self.active:
            cards = [k for k in range(NUM_KINDS) for _ in range(self.hands[seat][k])]
            res = evaluate_auto_tianhu(self.rules, cards)
            if res is not None:
                self._finish(OutcomeKind.TIANHU_AUTO, seat, None, res, None, None)
                return
        # §9 step 3: automatic 提 of every dealt quad, recorded as forced decisions.
        self.queue = [
            (seat, k) for seat in self.active for k in range(NUM_KINDS) if self.hands[seat][k] == 4
        ]
        self._next_init_ti()

    def _next_init_ti(self) -> None:
        if self.queue:
            seat, k = self.queue.pop(0)
            self._ask(Phase.INIT_TI, {seat: [A.TI_BASE + k]}, forced=True)
            return
        self._liang_hu()

    def _liang_hu(self) -> None:
        """§9 step 4 (3 players) / §13 C21 (4 players): the optional 天胡."""
        pending: dict[int, list[int]] = {}
        self._hu = {}
        d = self.dealer
        if self.quads[d] < 2:
            res = evaluate_hu_counts(
                self.rules,
                self.melds[d],
                self.hands[d],
                None,
                HuContext(Source.LIANG_DEALER, tianhu=True),
            )
            if res.win:
                pending[d] = [A.PASS, A.HU]
                self._hu[d] = res
        if self.liang is not None:
            self.card, self.card_kind, self.owner = self.liang, CardKind.LIANG, d
            for seat in self.active[1:]:
                if self.quads[seat] >= 2:
                    continue
                res = evaluate_hu_counts(
                    self.rules,
                    self.melds[seat],
                    self.hands[seat],
                    self.liang,
                    HuContext(Source.LIANG_OTHER, tianhu=True),
                )
                if res.win:
                    pending[seat] = [A.PASS, A.HU]
                    self._hu[seat] = res
        if pending:
            self._ask(Phase.LIANG_HU, pending)
        else:
            self._dealer_turn()

    def _dealer_turn(self) -> None:
        self.card = self.card_kind = self.owner = None
        self._post_take(self.dealer)

    # ------------------------------------------------------------------ public API

    def deciders(self) -> tuple[int, ...]:
        """Seats that still have to declare at this decision point, in seat-priority order."""
        return tuple(s for s in self.pending if s not in self.declared)

    def current_player(self) -> int | None:
        """The first seat that must decide (None when the hand is over)."""
        for s in self.pending:
            if s not in self.declared:
                return s
        return None

    def legal_actions(self, seat: int | None = None) -> list[int]:
        """Sorted legal action codes for ``seat`` (default: the current player)."""
        if seat is None:
            seat = self.current_player()
        if seat is None or seat in self.declared:
            return []
        return list(self.pending.get(seat, ()))

    def is_forced(self) -> bool:
        """Whether the pending decision is a compulsory 提/偎/跑/碰 (a legal set of one)."""
        return self.forced

    def is_terminal(self) -> bool:
        return self.outcome is not None

    def apply(self, seat: int, action: int) -> None:
        """Apply a declaration (trusted: the simulator's fast path, asserts only)."""
        assert action in self.pending.get(seat, ()) and seat not in self.declared, (seat, action)
        self.history.append((seat, action))
        self.declared[seat] = action
        if len(self.declared) == len(self.pending):
            self._resolve()

    def apply_checked(self, seat: int, action: int) -> None:
        """Apply a declaration after checking it; raise :class:`IllegalAction` otherwise."""
        if self.outcome is not None:
            raise IllegalAction(f"seat {seat} plays {_astr(action)} after the end of the hand")
        if seat not in self.pending or seat in self.declared:
            raise IllegalAction(
                f"seat {seat} may not act now ({_astr(action)}); deciders {list(self.deciders())}"
                f" at step {len(self.history)} in {self._where(seat)}"
            )
        if action not in self.pending[seat]:
            legal = ", ".join(action_str(a) for a in self.pending[seat])
            raise IllegalAction(
                f"illegal action {_astr(action)} for seat {seat} at step {len(self.history)};"
                f" legal: {legal}; in {self._where(seat)}"
            )
        self.apply(seat, action)

    def _where(self, seat: int) -> str:
        """The state around a decision, in notation, for error messages."""
        card = ""
        if self.card is not None and self.card_kind is not None:
            card = (
                f", card {card_char(self.card)} {self.card_kind.name.lower()} by seat {self.owner}"
            )
        return (
            f"<{self.phase.name.lower()}{card}, stock {len(self.stock)},"
            f" seat {seat} hand {format_cards(self._hand_list(seat)) or '-'}>"
        )

    def n_cards(self, seat: int) -> int:
        """N: hand plus table cards (§7)."""
        return self.hand_size[seat] + self.table_cards[seat]

    def target(self, seat: int) -> int:
        """T = 20 + max(0, q − 1) (§7)."""
        return 20 + max(0, self.quads[seat] - 1)

    def hand_cards(self, seat: int) -> list[int]:
        return self._hand_list(seat)

    def meld_huxi(self, seat: int) -> int:
        return meld_huxi(self.melds[seat], self.rules)

    def stock_left(self) -> int:
        return len(self.stock)

    # ------------------------------------------------------------------ internals

    def _hand_list(self, seat: int) -> list[int]:
        out: list[int] = []
        for k, n in enumerate(self.hands[seat]):
            if n:
                out += _REPEAT[k][n]
        return out

    def _ask(self, phase: Phase, pending: dict[int, list[int]], forced: bool = False) -> None:
        self.phase = phase
        self.pending = pending
        self.declared = {}
        self.forced = forced

    def _finish(
        self,
        kind: OutcomeKind,
        winner: int | None,
        source: Source | None,
        result: HuResult | None,
        card: int | None,
        from_seat: int | None,
    ) -> None:
        if winner is None or result is None:
            deltas = tuple([0] * self.n_seats)
        else:
            deltas = settle(result.score, winner, self.active, self.n_seats)
        self.outcome = Outcome(kind, winner, source, result, deltas, card, from_seat)
        self.phase = Phase.END
        self.pending = {}
        self.declared = {}
        self.forced = False

    def _resolve(self) -> None:
        phase = self.phase
        declared = self.declared
        if phase == Phase.INIT_TI:
            ((seat, action),) = declared.items()
            self._take_ti_from_hand(seat, action - A.TI_BASE)
            self._next_init_ti()
        elif phase == Phase.LIANG_HU:
            self._resolve_hu(self._liang_order(), self.liang)
            if self.outcome is None:
                self._dealer_turn()
        elif phase == Phase.DISCARD:
            ((seat, action),) = declared.items()
            self._discard(seat, action - A.DISCARD_BASE)
        elif phase == Phase.DRAW_TAKE:
            ((seat, action),) = declared.items()
            k = self.card
            assert k is not None
            if action >= A.WEI_BASE:
                self._take_wei(seat, k)
            else:
                self._take_ti_on_draw(seat, k)
            self.card = self.card_kind = self.owner = None
            self._post_take(seat)
        elif phase == Phase.CLAIM_HU:
            owner = self.owner
            assert owner is not None and self.card is not None
            order: tuple[int, ...] = (self.xia[owner], self.shang[owner])
            if self.card_kind == CardKind.DRAWN:
                order = (owner, *order)
            self._resolve_hu(order, self.card)
            if self.outcome is None:
                self._claim_pao()
        elif phase == Phase.CLAIM_PAO:
            ((seat, action),) = declared.items()
            self._take_pao(seat, action - A.PAO_BASE)
            self.card = self.card_kind = self.owner = None
            self._post_take(seat)
        elif phase == Phase.CLAIM_TAKE:
            self._resolve_take()

    def _liang_order(self) -> tuple[int, ...]:
        return self.active

    def _resolve_hu(self, order: Iterable[int], card: int | None) -> None:
        """Winner = first HU declarer in ``order``; every other eligible seat gets 臭胡 (§6.4)."""
        winner = None
        for seat in order:
            if self.declared.get(seat) == A.HU:
                winner = seat
                break
        if winner is not None:
            res = self._hu[winner]
            if self.phase == Phase.LIANG_HU:
                kind = OutcomeKind.TIANHU
                src = Source.LIANG_DEALER if winner == self.dealer else Source.LIANG_OTHER
            else:
                kind = OutcomeKind.HU
                if self.card_kind == CardKind.DISCARDED:
                    src = Source.DISCARD
                else:
                    src = Source.OWN_DRAW if winner == self.owner else Source.OTHER_DRAW
            self._finish(kind, winner, src, res, card, self.owner)
            return
        if self.rules.chouhu and card is not None:  # the 4p dealer's 21-card hu has no card
            for seat in self.declared:
                self.chouhu[seat][card] = self.meld_huxi(seat)

    # ---- draw

    def _draw(self, seat: int) -> None:
        """DRAW(P), §8.2."""
        if not self.stock:
            self._finish(OutcomeKind.HUANGZHUANG, None, None, None, None, None)
            return
        c = self.stock.pop()
        self.n_draws += 1
        self.card, self.card_kind, self.owner = c, CardKind.DRAWN, seat
        h = self.hands[seat]
        if h[c] == 3 or (h[c] == 2) or self._has_wei(seat, c):
            code = A.WEI_BASE + c if h[c] == 2 else A.TI_BASE + c
            self._ask(Phase.DRAW_TAKE, {seat: [code]}, forced=True)
            return
        self._claim_hu()

    def _has_wei(self, seat: int, k: int) -> bool:
        for g in self.melds[seat]:
            if g.cards[0] == k and (g.kind == GroupKind.WEI or g.kind == GroupKind.CHOUWEI):
                return True
        return False

    def _meld_index(self, seat: int, k: int, kinds: Iterable[GroupKind]) -> int:
        kinds = tuple(kinds)
        for i, g in enumerate(self.melds[seat]):
            if g.cards[0] == k and g.kind in kinds:
                return i
        return -1

    # ---- claims

    def _claim_hu(self) -> None:
        """§8.4 H: offer HU to every eligible player."""
        c, owner, kind = self.card, self.owner, self.card_kind
        assert c is not None and owner is not None
        rules = self.rules
        if kind == CardKind.DRAWN:
            order: tuple[int, ...] = (owner, self.xia[owner], self.shang[owner])
            if len(self.stock) < self.n_shown:
                order = ()  # §13: nobody may hu a shown bottom card
        elif rules.hu_on_discards:
            order = (self.xia[owner], self.shang[owner])
        else:
            order = ()
        pending: dict[int, list[int]] = {}
        self._hu = {}
        haidi = kind == CardKind.DRAWN and not self.stock and self.bottom is None
        for seat in order:
            if self.hand_size[seat] == 0:
                continue  # dead hand (§6.5)
            if rules.chouhu:
                blocked_at = self.chouhu[seat].get(c)
                if blocked_at is not None and blocked_at == self.meld_huxi(seat):
                    continue
            if self.n_cards(seat) != self.target(seat):
                continue  # N + 1 = T + 1 is needed for 7 门子 (§7)
            only = self._lonely_card(seat)
            if only != _ANY and (only != c or self.quads[seat] == 0):
                continue
            if kind == CardKind.DRAWN:
                src = Source.OWN_DRAW if seat == owner else Source.OTHER_DRAW
                dihu = self.n_draws == 1 and seat != self.dealer and not rules.luzhou
            else:
                src = Source.DISCARD
                dihu = (
                    rules.luzhou
                    and owner == self.dealer
                    and self.dealer_discards == 1
                    and seat == self.xia[owner]
                )
            res = evaluate_hu_counts(
                rules,
                self.melds[seat],
                self.hands[seat],
                c,
                HuContext(src, haidi=haidi, dihu=dihu),
            )
            if res.win:
                pending[seat] = [A.PASS, A.HU]
                self._hu[seat] = res
        if pending:
            self._ask(Phase.CLAIM_HU, pending)
        else:
            self._claim_pao()

    def _lonely_card(self, seat: int) -> int:
        """A cheap, sound pre-filter for the hu search: a single non-坎 card with no partner in
        the hand (no second copy, no card it shares a 一句话/绞 with) can only be completed as
        the 将 by the hu card of its own face. Returns _ANY (no such card), that card's kind
        (the only possible hu card, and only with a 跑/提 for the 将), or _NONE (two or more:
        no hu card can win)."""
        h = self.hands[seat]
        key = tuple(h)
        cached = self._lonely[seat]
        if cached[0] == key:
            return cached[1]
        mask = 0
        for k in range(NUM_KINDS):
            if 0 < h[k] < 3:
                mask |= 1 << k
        partners = self.game.partners
        found = _ANY
        for k in range(NUM_KINDS):
            if h[k] == 1 and not partners[k] & mask:
                if found != _ANY:
                    found = _NONE
                    break
                found = k
        self._lonely[seat] = (key, found)
        return found

    def _claim_pao(self) -> None:
        """§8.4 R: a forced 跑 (5.3)."""
        c, owner = self.card, self.owner
        assert c is not None and owner is not None
        drawn = self.card_kind == CardKind.DRAWN
        for seat in self.active:
            if seat != owner and (self.hands[seat][c] == 3 or self._has_wei(seat, c)):
                self._ask(Phase.CLAIM_PAO, {seat: [A.PAO_BASE + c]}, forced=True)
                return
            if drawn and self._meld_index(seat, c, (GroupKind.PENG,)) >= 0:
                self._ask(Phase.CLAIM_PAO, {seat: [A.PAO_BASE + c]}, forced=True)
                return
        self._claim_take()

    def _must_discard_after(self, seat: int, hand_after: int) -> bool:
        """Would a 碰/吃 leave ``seat`` owing a discard with no hand card (C14)?"""
        return self.n_cards(seat) + 1 > self.target(seat) and hand_after == 0

    def _claim_take(self) -> None:
        """§8.4 C: offer 碰 and 吃 simultaneously."""
        c, owner = self.card, self.owner
        assert c is not None and owner is not None
        bit = 1 << c
        pending: dict[int, list[int]] = {}
        self._best_rank: dict[int, int] = {}
        self._peng_seat: int | None = None
        for seat in self.active:
            if seat == owner:
                continue
            h = self.hands[seat]
            if h[c] == 2:
                if (self.stinky[seat] | self.discarded[seat]) & bit:
                    break
                if self._must_discard_after(seat, self.hand_size[seat] - 2):
                    break
                self._peng_seat = seat
                if self.rules.peng_compulsory:
                    self._ask(Phase.CLAIM_TAKE, {seat: [A.PENG]}, forced=True)
                    return
                pending[seat] = [A.PENG]
                self._best_rank[seat] = _RANK_PENG
                break
        eaters: tuple[tuple[int, int], ...]
        if self.card_kind == CardKind.DRAWN:
            eaters = ((owner, _RANK_OWNER_CHI), (self.xia[owner], _RANK_XIA_CHI))
        else:
            eaters = ((self.xia[owner], _RANK_XIA_CHI),)
        for seat, rank in eaters:
            if (self.stinky[seat] | self.discarded[seat]) & bit:
                continue
            opts = self._chi_options(seat, c)
            if opts:
                pending.setdefault(seat, []).extend(opts)
                self._best_rank.setdefault(seat, rank)
        if not pending:
            self._nobody_takes()
            return
        for seat in pending:
            pending[seat] = [A.PASS, *sorted(pending[seat])]
        self._ask(Phase.CLAIM_TAKE, pending)

    def _chi_options(self, seat: int, c: int) -> list[int]:
        """Every legal 吃 (eat group + 比 cover, collapsed to the multiset of groups, §5.6)."""
        h = self.hands[seat]
        if h[c] >= 3:
            return []
        free = [n if n < 3 else 0 for n in h]  # 坎 cards are never used (§6.3)
        options: set[int] = set()
        shapes_with = self.game.shapes_with
        for shape, (a, b) in shapes_with[c]:
            if free[a] < 1 + (a == b) or free[b] < 1:
                continue
            free[a] -= 1
            free[b] -= 1
            k = free[c]
            if k == 0:
                options.add(_chi_code((shape,)))
            else:
                for cover in _bi_covers(free, c, k, shapes_with[c]):
                    options.add(_chi_code((shape, *cover)))
            free[a] += 1
            free[b] += 1
        if not options:
            return []
        # C14: illegal if a discard would be owed with no hand card left (a 吃 of at most 3
        # groups uses at most 8 hand cards, so only a small hand can be emptied).
        hand = self.hand_size[seat]
        if hand > 8:
            return list(options)
        return [
            code
            for code in options
            if not self._must_discard_after(seat, hand - 3 * len(chi_groups(code)) + 1)
        ]

    def _nobody_takes(self) -> None:
        """§8.4 E."""
        c, owner = self.card, self.owner
        assert c is not None and owner is not None
        self.right[owner].append(c)
        self.card = self.card_kind = self.owner = None
        self._draw(self.xia[owner])

    def _resolve_take(self) -> None:
        c, owner = self.card, self.owner
        assert c is not None and owner is not None
        declared = self.declared
        winner, code, rank = None, A.PASS, 0
        if self._peng_seat is not None and declared.get(self._peng_seat) == A.PENG:
            winner, code, rank = self._peng_seat, A.PENG, _RANK_PENG
        else:
            order = (
                (owner, self.xia[owner]) if self.card_kind == CardKind.DRAWN else (self.xia[owner],)
            )
            for seat in order:
                a = declared.get(seat, A.PASS)
                if a >= A.CHI_BASE:
                    winner, code = seat, a
                    rank = (
                        _RANK_OWNER_CHI
                        if seat == owner and self.card_kind == CardKind.DRAWN
                        else _RANK_XIA_CHI
                    )
                    break
        bit = 1 << c
        if not self.forced:
            for seat, a in declared.items():
                if a == A.PASS and self._best_rank.get(seat, 0) > rank:
                    self.stinky[seat] |= bit
                if seat == self._peng_seat and a != A.PENG:
                    self.renpeng[seat] |= bit
        if winner is None:
            self._nobody_takes()
            return
        if code == A.PENG:
            self._take_peng(winner, c)
        else:
            self._take_chi(winner, c, code)
        self.card = self.card_kind = self.owner = None
        self._post_take(winner)

    # ---- takes

    def _add_meld(self, seat: int, g: Group) -> None:
        self.melds[seat].append(g)
        self.table_cards[seat] += len(g.cards)
        if g.kind == GroupKind.PAO or g.kind == GroupKind.TI:
            self.quads[seat] += 1

    def _replace_meld(self, seat: int, i: int, g: Group) -> None:
        old = self.melds[seat][i]
        self.melds[seat][i] = g
        self.table_cards[seat] += len(g.cards) - len(old.cards)
        self.quads[seat] += 1

    def _from_hand(self, seat: int, k: int, n: int) -> None:
        self.hands[seat][k] -= n
        self.hand_size[seat] -= n
        if seat == self.dealer and k == self.liang:
            self.liang_known = False

    def _take_ti_from_hand(self, seat: int, k: int) -> None:
        self._from_hand(seat, k, 4)
        self._add_meld(seat, Group(GroupKind.TI, (k,) * 4))

    def _take_ti_on_draw(self, seat: int, k: int) -> None:
        if self.hands[seat][k] == 3:
            self._from_hand(seat, k, 3)
            self._add_meld(seat, Group(GroupKind.TI, (k,) * 4))
        else:
            i = self._meld_index(seat, k, (GroupKind.WEI, GroupKind.CHOUWEI))
            self._replace_meld(seat, i, Group(GroupKind.TI, (k,) * 4))

    def _take_wei(self, seat: int, k: int) -> None:
        self._from_hand(seat, k, 2)
        kind = GroupKind.CHOUWEI if self.renpeng[seat] >> k & 1 else GroupKind.WEI
        self._add_meld(seat, Group(kind, (k,) * 3))

    def _take_pao(self, seat: int, k: int) -> None:
        if self.hands[seat][k] == 3:
            self._from_hand(seat, k, 3)
            self._add_meld(seat, Group(GroupKind.PAO, (k,) * 4))
        else:
            i = self._meld_index(seat, k, (GroupKind.WEI, GroupKind.CHOUWEI, GroupKind.PENG))
            self._replace_meld(seat, i, Group(GroupKind.PAO, (k,) * 4))

    def _take_peng(self, seat: int, k: int) -> None:
        self._from_hand(seat, k, 2)
        self._add_meld(seat, Group(GroupKind.PENG, (k,) * 3))

    def _take_chi(self, seat: int, c: int, code: int) -> None:
        groups = chi_groups(code)
        used = [k for g in groups for k in g]
        used.remove(c)
        for k in used:
            self._from_hand(seat, k, 1)
        for g in groups:
            self._add_meld(seat, Group(GroupKind.CHI, g))

    def _post_take(self, seat: int) -> None:
        """§7: discard if N > T and a hand card is left, else the 下家 draws."""
        if self.n_cards(seat) > self.target(seat) and self.hand_size[seat] > 0:
            self._ask(Phase.DISCARD, {seat: self._discard_options(seat)})
        else:
            self._draw(self.xia[seat])

    def _discard_options(self, seat: int) -> list[int]:
        h = self.hands[seat]
        loose = [k for k in range(NUM_KINDS) if 0 < h[k] < 3]
        if not loose:  # C13: every hand card is in a 坎
            loose = [k for k in range(NUM_KINDS) if h[k]]
        return [A.DISCARD_BASE + k for k in loose]

    def _discard(self, seat: int, k: int) -> None:
        self._from_hand(seat, k, 1)
        self.discarded[seat] |= 1 << k
        self.discards[seat].append(k)
        if seat == self.dealer:
            self.dealer_discards += 1
        self.card, self.card_kind, self.owner = k, CardKind.DISCARDED, seat
        self._claim_hu()

    # ------------------------------------------------------------------ copies and views

    def _key(self) -> tuple:
        return (
            self.rules,
            self.deck,
            self.dealer,
            tuple(self.history),
            tuple(map(tuple, self.hands)),
            tuple(map(tuple, self.melds)),
            tuple(map(tuple, self.right)),
            tuple(map(tuple, self.discards)),
            tuple(self.discarded),
            tuple(self.stinky),
            tuple(self.renpeng),
            tuple(tuple(sorted(d.items())) for d in self.chouhu),
            tuple(self.stock),
            self.n_draws,
            self.card,
            self.card_kind,
            self.owner,
            self.phase,
            tuple(sorted(self.pending.items(), key=lambda kv: kv[0])),
            tuple(sorted(self.declared.items())),
            self.forced,
            self.liang_known,
            self.outcome,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def clone(self) -> State:
        s = State.__new__(State)
        s.__dict__.update(self.__dict__)
        s.hands = [h[:] for h in self.hands]
        s.hand_size = self.hand_size[:]
        s.melds = [m[:] for m in self.melds]
        s.table_cards = self.table_cards[:]
        s.quads = self.quads[:]
        s.right = [r[:] for r in self.right]
        s.discards = [d[:] for d in self.discards]
        s.discarded = self.discarded[:]
        s.stinky = self.stinky[:]
        s.renpeng = self.renpeng[:]
        s.chouhu = [dict(d) for d in self.chouhu]
        s.history = self.history[:]
        s.stock = self.stock[:]
        s.pending = {k: v[:] for k, v in self.pending.items()}
        s.declared = dict(self.declared)
        s.queue = self.queue[:]
        s._hu = dict(self._hu)
        s._lonely = self._lonely[:]
        if hasattr(self, "_best_rank"):
            s._best_rank = dict(self._best_rank)
        return s

    @classmethod
    def rebuild(
        cls,
        rules: RuleSet,
        deck: Sequence[int],
        dealer: int,
        history: Iterable[tuple[int, int]] = (),
        checked: bool = True,
    ) -> State:
        """The state after applying ``history`` to a fresh deal (checked by default)."""
        state = Game(rules).new_initial_state(deck, dealer)
        for seat, action in history:
            if checked:
                state.apply_checked(seat, action)
            else:
                state.apply(seat, action)
        return state

    def __repr__(self) -> str:
        return (
            f"State.rebuild({self.rules!r}, deck={self.deck!r}, dealer={self.dealer},"
            f" history={tuple(self.history)!r})"
        )

    def __str__(self) -> str:
        return render_state(self)

    def observation(self, seat: int) -> Observation:
        return Observation(self, seat)


def _astr(action: int) -> str:
    try:
        return f"{action} ({action_str(action)})"
    except ValueError:
        return repr(action)


def _chi_code(groups: Sequence[tuple[int, int, int]]) -> int:
    return A.encode_chi(groups)


def _bi_covers(
    free: list[int],
    c: int,
    k: int,
    shapes: Sequence[tuple[tuple[int, int, int], tuple[int, int]]],
) -> list[tuple[tuple[int, int, int], ...]]:
    """Sets of eat-shaped groups from ``free`` that contain c and use all k copies (§5.6)."""
    out: list[tuple[tuple[int, int, int], ...]] = []
    for shape, _ in shapes:
        need = [0] * NUM_KINDS
        for x in shape:
            need[x] += 1
        if any(need[x] > free[x] for x in shape):
            continue
        used_c = need[c]
        if used_c > k:
            continue
        if used_c == k:
            out.append((shape,))
            continue
        # k = 2 and this group uses one copy: a second group must take the other.
        for x in shape:
            free[x] -= 1
        for shape2, _ in shapes:
            if EAT_SHAPE_ID[shape2] < EAT_SHAPE_ID[shape]:
                continue  # each unordered pair once
            need2 = [0] * NUM_KINDS
            for x in shape2:
                need2[x] += 1
            if need2[c] == 1 and all(need2[x] <= free[x] for x in shape2):
                out.append((shape, shape2))
        for x in shape:
            free[x] += 1
    return out
