"""The recorder: plays hands through ``engine.play.play_hand`` and appends every action to
per-shard column buffers (``array.array`` of small ints; no Python object per event kept),
then hands the shard over as two Arrow tables in the layout of :mod:`replay.schema`.

What an event row says beyond the engine's ``Step`` (seat, action, forced, n_legal) comes
from the live state *before* the action, read once per step:

* ``card``: the face the action names (打/提/偎/跑), else the card on offer (the drawn,
  discarded or shown card a 胡/碰/吃/过 is about); null if there is none (a 4-player
  dealer's 21-card 天胡 decision);
* ``from_seat``: the seat that owns the card on offer (drawer, discarder, dealer for the
  亮张); null for discards, dealt 提 and when no card is on offer;
* ``options``: the ActionKinds among the seat's legal options (``schema.options_mask``).

>>> from engine.rules import find_rules
>>> rec = ShardRecorder(find_rules("hunan"))
>>> rec.play_hand(shuffle_deck(3), 0, load_policies("random", 3), ("random",) * 3, seed=3,
...               hand_id=0, session=0, session_hand=0, rotation=0, deal_id=0)
>>> hands, events = rec.tables()
>>> hands.num_rows, events.num_rows == hands["n_events"][0].as_py()
(1, True)
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from engine.actions import CHI_BASE, DISCARD_BASE, PAO_BASE, ActionKind
from engine.deck import shuffle_deck
from engine.play import play_hand
from engine.policies import load_policies
from engine.policy import Policy
from engine.rules import RuleSet
from engine.state import Game, OutcomeKind
from replay import schema
from replay.schema import NULL8, options_mask

__all__ = ["ShardRecorder", "shuffle_deck", "load_policies"]

# Per action code below the 吃 range: its ActionKind, and its face (NULL8 if none).
_KIND = [0] * CHI_BASE
_FACE = [NULL8] * CHI_BASE
_KIND[1], _KIND[2] = ActionKind.HU, ActionKind.PENG
for _c in range(DISCARD_BASE, PAO_BASE + 20):
    _KIND[_c] = ActionKind.DISCARD + (_c - DISCARD_BASE) // 20
    _FACE[_c] = (_c - DISCARD_BASE) % 20
_OPT: dict[int, int] = {int(k): 1 << k for k in ActionKind}
_NO_HUXI = -32768  # a win with no 胡息 split (never expected; kept null if it happens)
_PASS, _HU, _DISCARD = int(ActionKind.PASS), int(ActionKind.HU), int(ActionKind.DISCARD)


class ShardRecorder:
    """Column buffers for one shard: ``play_hand`` appends, :meth:`tables` converts."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.game = Game(rules)
        self.n_seats = rules.players
        # hands
        self.h_id = array("I")
        self.h_session = array("I")
        self.h_session_hand = array("H")
        self.h_rotation = array("B")
        self.h_deal = array("I")
        self.h_dealer = array("B")
        self.h_streak = array("B")
        self.h_deck = bytearray()
        self.h_outcome = array("B")
        self.h_winner = array("B")
        self.h_source = array("B")
        self.h_card = array("B")
        self.h_from = array("B")
        self.h_huxi = array("h")
        self.h_deng = array("h")
        self.h_fan = array("h")
        self.h_score = array("i")
        self.h_mingtang = array("H")
        self.h_zimo = array("B")
        self.h_delta = [array("i") for _ in range(schema.MAX_SEATS)]
        self.h_policy: list[list[str | None]] = [[] for _ in range(schema.MAX_SEATS)]
        self.h_stock = array("B")
        self.h_events = array("H")
        # events
        self.e_hand = array("I")
        self.e_seq = array("H")
        self.e_seat = array("B")
        self.e_action = array("i")
        self.e_kind = array("B")
        self.e_card = array("B")
        self.e_from = array("B")
        self.e_forced = array("B")
        self.e_n_legal = array("B")
        self.e_options = array("B")

    def __len__(self) -> int:
        return len(self.h_id)

    def play_hand(
        self,
        deck: Sequence[int],
        dealer: int,
        policies: Sequence[Policy],
        policy_names: Sequence[str],
        seed: int,
        *,
        hand_id: int,
        session: int,
        session_hand: int,
        rotation: int,
        deal_id: int,
        huang_streak: int = 0,
    ) -> int | None:
        """Play one hand, record it, and return its winner (None for 荒庄)."""
        e_hand, e_seq, e_seat = self.e_hand.append, self.e_seq.append, self.e_seat.append
        e_action, e_kind, e_card = self.e_action.append, self.e_kind.append, self.e_card.append
        e_from, e_forced = self.e_from.append, self.e_forced.append
        e_n_legal, e_options = self.e_n_legal.append, self.e_options.append
        kind_t, face_t = _KIND, _FACE
        state = None
        seq = 0
        pre_card = pre_owner = pre_opts = 0
        for step in play_hand(self.game, deck, dealer, policies, seed):
            action = step.action
            state = step.state
            if action < CHI_BASE:
                kind = kind_t[action]
                face = face_t[action]
            else:
                kind = 7
                face = NULL8
            if seq == 0:
                # The state before the first action is the deal: a dealt 提 (forced), the
                # optional 亮张 天胡 ([PASS, HU] on the shown card) or the dealer's discard.
                if kind <= _HU:
                    liang = state.liang
                    pre_card = NULL8 if liang is None else liang
                    pre_owner = NULL8 if liang is None else dealer
                    pre_opts = 3
                else:
                    pre_card = pre_owner = NULL8
                    pre_opts = _OPT[kind]
            e_hand(hand_id)
            e_seq(seq)
            e_seat(step.seat)
            e_action(action)
            e_kind(kind)
            e_card(pre_card if face == NULL8 else face)
            e_from(NULL8 if kind == _DISCARD else pre_owner)
            e_forced(step.forced)
            e_n_legal(step.n_legal)
            e_options(pre_opts)
            seq += 1
            if state.outcome is None:
                nxt = state.current_player()
                pre_opts = options_mask(state.pending[nxt])  # type: ignore[index]
                c = state.card
                pre_card = NULL8 if c is None else c
                o = state.owner
                pre_owner = NULL8 if o is None else o
        if state is None:  # 3提/5坎 天胡 at the deal: no decision was taken
            state = self.game.new_initial_state(deck, dealer)
        out = state.outcome
        assert out is not None
        self.h_id.append(hand_id)
        self.h_session.append(session)
        self.h_session_hand.append(session_hand)
        self.h_rotation.append(rotation)
        self.h_deal.append(deal_id)
        self.h_dealer.append(dealer)
        self.h_streak.append(huang_streak)
        self.h_deck += bytes(deck)
        self.h_outcome.append(out.kind)
        self.h_winner.append(NULL8 if out.winner is None else out.winner)
        self.h_source.append(NULL8 if out.source is None else out.source)
        self.h_card.append(NULL8 if out.card is None else out.card)
        self.h_from.append(NULL8 if out.from_seat is None else out.from_seat)
        res = out.result
        if res is not None and out.kind != OutcomeKind.HUANGZHUANG:
            self.h_huxi.append(_NO_HUXI if res.huxi is None else res.huxi)
            self.h_deng.append(res.deng)
            self.h_fan.append(res.fan)
            self.h_score.append(res.score)
            self.h_mingtang.append(
                schema.mingtang_mask(self.rules.ruleset, (n for n, _ in res.mingtang))
            )
            self.h_zimo.append(res.zimo)
        else:
            self.h_huxi.append(0)
            self.h_deng.append(0)
            self.h_fan.append(0)
            self.h_score.append(0)
            self.h_mingtang.append(0)
            self.h_zimo.append(NULL8)
        for s in range(schema.MAX_SEATS):
            self.h_delta[s].append(out.deltas[s] if s < self.n_seats else 0)
            self.h_policy[s].append(policy_names[s] if s < self.n_seats else None)
        self.h_stock.append(len(state.stock))
        self.h_events.append(seq)
        return out.winner

    def tables(self) -> tuple[pa.Table, pa.Table]:
        """The recorded hands as ``(hands, events)`` tables in :mod:`replay.schema` layout."""
        f = np.frombuffer
        hands: dict[str, np.ndarray] = {
            "hand_id": f(self.h_id, dtype=np.uint32),
            "session": f(self.h_session, dtype=np.uint32),
            "session_hand": f(self.h_session_hand, dtype=np.uint16),
            "rotation": f(self.h_rotation, dtype=np.uint8),
            "deal_id": f(self.h_deal, dtype=np.uint32),
            "dealer": f(self.h_dealer, dtype=np.uint8),
            "huang_streak": f(self.h_streak, dtype=np.uint8),
            "deck": f(bytes(self.h_deck), dtype=np.uint8),
            "outcome": f(self.h_outcome, dtype=np.uint8),
            "winner": f(self.h_winner, dtype=np.uint8),
            "source": f(self.h_source, dtype=np.uint8),
            "hu_card": f(self.h_card, dtype=np.uint8),
            "from_seat": f(self.h_from, dtype=np.uint8),
            "huxi": f(self.h_huxi, dtype=np.int16),
            "deng": f(self.h_deng, dtype=np.int16),
            "fan": f(self.h_fan, dtype=np.int16),
            "score": f(self.h_score, dtype=np.int32),
            "mingtang": f(self.h_mingtang, dtype=np.uint16),
            "zimo": f(self.h_zimo, dtype=np.uint8),
            **{f"delta_{s}": f(self.h_delta[s], dtype=np.int32) for s in range(4)},
            "stock_left": f(self.h_stock, dtype=np.uint8),
            "n_events": f(self.h_events, dtype=np.uint16),
        }
        events: dict[str, np.ndarray] = {
            "hand_id": f(self.e_hand, dtype=np.uint32),
            "seq": f(self.e_seq, dtype=np.uint16),
            "seat": f(self.e_seat, dtype=np.uint8),
            "action": f(self.e_action, dtype=np.int32),
            "kind": f(self.e_kind, dtype=np.uint8),
            "card": f(self.e_card, dtype=np.uint8),
            "from_seat": f(self.e_from, dtype=np.uint8),
            "forced": f(self.e_forced, dtype=np.uint8),
            "n_legal": f(self.e_n_legal, dtype=np.uint8),
            "options": f(self.e_options, dtype=np.uint8),
        }
        return build_tables(hands, events, self.h_policy, self.n_seats)


def build_tables(
    hands: Mapping[str, np.ndarray],
    events: Mapping[str, np.ndarray],
    policies: Sequence[Sequence[str | None]],
    n_seats: int,
) -> tuple[pa.Table, pa.Table]:
    """The ``(hands, events)`` tables of :mod:`replay.schema` from column arrays, the
    one conversion both engines use (the reference recorder above and the compiled engine).

    Nullable uint8 columns hold :data:`NULL8` for null; ``winner`` = NULL8 marks a 荒庄, whose
    胡息/等/番/score are then null whatever the arrays hold; ``zimo`` is 0/1 or NULL8;
    ``deck`` is the n × 80 card bytes; ``policies[s]`` the policy name of seat ``s`` per hand.
    """
    n = len(hands["hand_id"])
    winner = np.asarray(hands["winner"], dtype=np.uint8)
    no_win = winner == NULL8
    no_seat3 = np.full(n, n_seats <= 3)
    zimo = np.asarray(hands["zimo"], dtype=np.uint8)
    huxi = np.asarray(hands["huxi"], dtype=np.int16)
    deck = np.ascontiguousarray(hands["deck"], dtype=np.uint8).reshape(-1)

    def u8(name: str, nullable: bool = False, cols: Mapping[str, np.ndarray] = hands) -> pa.Array:
        a = np.asarray(cols[name], dtype=np.uint8)
        return pa.array(a, mask=(a == NULL8) if nullable else None, type=pa.uint8())

    def typed(
        name: str,
        dtype: Any,
        mask: np.ndarray | None = None,
        cols: Mapping[str, np.ndarray] = hands,
    ) -> pa.Array:
        return pa.array(np.asarray(cols[name], dtype=dtype), mask=mask)

    hands_t = pa.Table.from_arrays(
        [
            typed("hand_id", np.uint32),
            typed("session", np.uint32),
            typed("session_hand", np.uint16),
            u8("rotation"),
            typed("deal_id", np.uint32),
            u8("dealer"),
            u8("huang_streak"),
            pa.FixedSizeBinaryArray.from_buffers(pa.binary(80), n, [None, pa.py_buffer(deck)]),
            u8("outcome"),
            pa.array(winner, mask=no_win),
            u8("source", True),
            u8("hu_card", True),
            u8("from_seat", True),
            pa.array(huxi, mask=no_win | (huxi == _NO_HUXI)),
            typed("deng", np.int16, no_win),
            typed("fan", np.int16, no_win),
            typed("score", np.int32, no_win),
            typed("mingtang", np.uint16),
            pa.array(zimo == 1, mask=zimo == NULL8),
            *(typed(f"delta_{s}", np.int32) for s in range(3)),
            typed("delta_3", np.int32, no_seat3),
            *(pa.array(policies[s], type=pa.string()) for s in range(4)),
            u8("stock_left"),
            typed("n_events", np.uint16),
        ],
        schema=schema.HANDS_SCHEMA,
    )
    events_t = pa.Table.from_arrays(
        [
            typed("hand_id", np.uint32, cols=events),
            typed("seq", np.uint16, cols=events),
            u8("seat", cols=events),
            typed("action", np.int32, cols=events),
            u8("kind", cols=events),
            u8("card", True, events),
            u8("from_seat", True, events),
            pa.array(np.asarray(events["forced"], dtype=np.uint8) == 1),
            u8("n_legal", cols=events),
            u8("options", cols=events),
        ],
        schema=schema.EVENTS_SCHEMA,
    )
    return hands_t, events_t
