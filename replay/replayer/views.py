"""A JSON-able view of a replayed state, for ``paohuzi replay --format json`` and the dashboard.

:func:`state_view` shows the table from one seat (what that seat may see, RULES §3–§4: its
own hand, others' hand sizes, every meld except the faces of others' 偎, cards placed to
the right, discards, the stock count, the 亮张 while it is known, the card on offer once
it is revealed) or, with ``seat=None``, everything (the god view: every hand, the stock).
In a seat's view, who may claim a card, who has declared and what stay private to each seat
(:data:`PUBLIC_PHASES`), and the last action is shown as that seat saw it
(:func:`seen_action`: another's pass or pending claim not at all, another's 偎 without its
face).

Cards appear twice: as text in card notation (``"一二三"``) and as kinds (``[0, 1, 2]``,
0…9 = 一…十, 10…19 = 壹…拾; red are kinds 1, 6, 9, 11, 16, 19). Actions appear as text
(``"吃 [一二三]"``) and as codes (docs/LOG_FORMAT.md §5.1).

>>> from engine.deck import shuffle_deck
>>> from engine.rules import find_rules
>>> from engine.state import State
>>> v = state_view(State.rebuild(find_rules("hunan"), shuffle_deck(4), 0), seat=1)
>>> v["seats"][0]["hand"], v["seats"][1]["hand"]["count"], v["stock_left"]
({'hidden': True, 'count': 21}, 20, 19)
>>> [d["seat"] for d in v["decision"]["options"]], v["decision"]["options"][0]["options"]
([0], None)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from engine.actions import ActionKind, action_str, decode, kind_of
from engine.cards import format_cards, is_red
from engine.groups import Group, GroupKind, huxi
from engine.hu import HuResult
from engine.state import CardKind, Phase, State

if TYPE_CHECKING:
    from replay.replayer.hand import HandLog

#: Version of the view's layout (bump on an incompatible change). 2: a seat's view keeps
#: the private parts of a claim private (:data:`PUBLIC_PHASES`, :func:`seen_action`): ``last``
#: and ``decision.chosen`` may have a null ``seat`` and ``text``.
VIEW_VERSION = 2


def cards_view(kinds: list[int] | tuple[int, ...]) -> dict[str, Any]:
    """``{"text": "一二柒", "kinds": [0, 1, 16], "red": 1}``."""
    ks = [int(k) for k in kinds]
    return {"text": format_cards(ks), "kinds": ks, "red": sum(1 for k in ks if is_red(k))}


def group_view(g: Group, value: int, hidden: bool = False) -> dict[str, Any]:
    """A 门子: kind, label (``碰五``, ``吃[一二三]``), cards and 胡息."""
    if hidden:
        return {"kind": "wei", "label": "偎?", "hidden": True, "cards": None, "huxi": value}
    return {
        "kind": g.kind.name.lower(),
        "label": str(g),
        "hidden": False,
        "cards": cards_view(g.cards),
        "huxi": value,
    }


def action_view(code: int) -> dict[str, Any]:
    return {"code": int(code), "text": action_str(code)}


#: The phases whose deciders the whole table knows: whose turn it is (a discard, the drawer's
#: own forced 提/偎, the forced 提 at the deal and the forced 跑). In the others — a claim on
#: a card, a 胡 on the 亮张 — who may act, who has declared and what are private to each seat
#: (they would tell what a hand holds): a seat's view shows its own only.
PUBLIC_PHASES = frozenset({Phase.INIT_TI, Phase.DISCARD, Phase.DRAW_TAKE, Phase.CLAIM_PAO})
#: The actions of a claim: another seat sees one only once it is carried out.
_CLAIMS = frozenset({ActionKind.HU, ActionKind.PENG, ActionKind.CHI})
_UNSEEN: dict[str, Any] = {"code": None, "text": None, "hidden": True}


def carried_out(state: State, actor: int, code: int) -> bool:
    """Whether ``actor``'s claim ``code`` has been carried out at ``state`` (a state after it):
    its 胡 won the hand, or its 碰/吃 took the card — the claims resolved and ``actor`` alone is
    to discard. A claim still pending, or beaten by another, is not."""
    if kind_of(code) == ActionKind.HU:
        return state.outcome is not None and state.outcome.winner == actor
    return (
        state.outcome is None
        and not state.declared
        and state.phase == Phase.DISCARD
        and list(state.deciders()) == [actor]
    )


def seen_action(state: State, actor: int, code: int, viewer: int | None) -> dict[str, Any]:
    """What ``viewer`` (None: everyone) sees of ``actor``'s action ``code``, at ``state`` (a
    state after it): its own actions, discards, 提 and 跑 as they are; another seat's 偎 with
    its face hidden (a 臭偎 shows one card up: as it is); a pass never; a 碰, 吃 or 胡 once
    carried out (:func:`carried_out`). ``{"code", "text"}``, plus ``"hidden": True`` for
    what is not (wholly) seen."""
    if viewer is None or actor == viewer:
        return action_view(code)
    kind = kind_of(code)
    if kind == ActionKind.WEI:
        face = decode(code).card
        chou = any(g.kind == GroupKind.CHOUWEI and g.cards[0] == face for g in state.melds[actor])
        return action_view(code) if chou else {**_UNSEEN, "text": "偎 (face down)"}
    if kind == ActionKind.PASS or (kind in _CLAIMS and not carried_out(state, actor, code)):
        return dict(_UNSEEN)
    return action_view(code)


def seen_text(entry: dict[str, Any]) -> str:
    """A seen action as a line: ``seat 1 打 一``, ``seat 2 偎 (face down)``, or ``a choice
    not shown`` (nor who made it)."""
    if entry.get("text") is None:
        who = "" if entry.get("seat") is None else f"seat {entry['seat']}: "
        return f"{who}a choice not shown"
    return f"seat {entry['seat']} {entry['text']}"


class SeenMoves:
    """The moves of a hand as ``viewer`` sees them, fed step by step (``paohuzi play``'s bot
    moves, the Play page's): another seat's claim is held until the claims on the card are
    resolved, then shown if it was carried out; a pass is never shown; a 偎 without its face
    (:func:`seen_action`)."""

    def __init__(self, viewer: int | None) -> None:
        self.viewer = viewer
        self.pending: list[tuple[int, int, bool]] = []

    def add(
        self, state: State, seat: int, code: int, forced: bool
    ) -> list[tuple[int, dict[str, Any], bool]]:
        """After ``seat``'s ``code`` was applied (``state``: the live state after it): the
        moves now seen, each ``(seat, seen action, forced)``, in order."""
        out: list[tuple[int, dict[str, Any], bool]] = []
        if self.viewer is not None and seat != self.viewer and kind_of(code) in _CLAIMS:
            self.pending.append((seat, code, forced))
        else:
            seen = seen_action(state, seat, code, self.viewer)
            if seen.get("text") is not None:
                out.append((seat, seen, forced))
        if self.pending and (not state.declared or state.outcome is not None):
            for s, c, f in self.pending:
                if carried_out(state, s, c):
                    out.append((s, action_view(c), f))
            self.pending = []
        return out


@dataclass(frozen=True)
class _Public:
    """What :class:`PublicMoves` compares a state with: the stock (its order only to tell
    which drawn card is which), the lengths of the cards placed to the right, the card on
    offer."""

    stock: tuple[int, ...]
    right: tuple[int, ...]
    discards: tuple[int, ...]
    card: int | None
    card_kind: CardKind | None
    owner: int | None


def _public(state: State) -> _Public:
    return _Public(
        tuple(state.stock),
        tuple(len(r) for r in state.right),
        tuple(len(d) for d in state.discards),
        state.card,
        state.card_kind,
        state.owner,
    )


class PublicMoves:
    """What the engine does between two decisions that ``viewer`` (None: everyone) sees
    happen, fed step by step after :class:`SeenMoves` (``paohuzi play`` narrates both): each
    card drawn from the stock — face up once revealed, face down while only its drawer may
    see it (a 提/偎 of one's own draw, RULES §8.2) — and each card nobody takes, placed to
    the right of the seat that drew or discarded it (§8.4 E). An action of the engine may
    run several draws at once (no seat can claim the card: it goes to the right, the next
    seat draws): each is its own move. Another seat's pass is never one (who may claim a
    card is private, :data:`PUBLIC_PHASES`); "nobody takes" is what the table sees.

    A move is ``(seat, {"event": "draw", "card": text or None, "stock": left}, False)`` or
    ``(seat, {"event": "untaken", "card": text}, False)``; ``"text"`` is None (no action)."""

    def __init__(self, viewer: int | None) -> None:
        self.viewer = viewer
        self.before: _Public | None = None

    def watch(self, state: State) -> None:
        """Start from ``state`` (before the first step fed to :meth:`add`)."""
        self.before = _public(state)

    def add(self, state: State) -> list[tuple[int, dict[str, Any], bool]]:
        """After a step was applied (``state``: the live state after it): the moves seen
        since the state before it, in order."""
        before, self.before = self.before, _public(state)
        if before is None:
            return []
        for s, n in enumerate(before.discards):  # a discard in this step: the card on offer
            if len(state.discards[s]) > n:
                before = replace(
                    before, card=state.discards[s][n], card_kind=CardKind.DISCARDED, owner=s
                )
        drawn = list(reversed(before.stock[len(state.stock) :]))  # popped from the end
        right = {s: list(state.right[s][n:]) for s, n in enumerate(before.right)}
        if not drawn and not any(right.values()):
            return []
        live = bool(drawn) and state.outcome is None and state.card_kind == CardKind.DRAWN
        found = self._chain(state, before, drawn, right, live)
        if found is None:  # not the engine's order (never seen): say only the stock
            return []
        untaken, seats = found
        out: list[tuple[int, dict[str, Any], bool]] = []
        if untaken:
            assert before.owner is not None and before.card is not None
            out.append((before.owner, _untaken(before.card), False))
        for i, (seat, card) in enumerate(zip(seats, drawn, strict=True)):
            placed = not (live and i == len(drawn) - 1)
            shown = (
                placed
                or self.viewer is None
                or seat == self.viewer
                or state.phase != Phase.DRAW_TAKE
            )
            left = len(before.stock) - i - 1
            text = format_cards([card]) if shown else None
            out.append((seat, {"text": None, "event": "draw", "card": text, "stock": left}, False))
            if placed:
                out.append((seat, _untaken(card), False))
        return out

    @staticmethod
    def _chain(
        state: State,
        before: _Public,
        drawn: list[int],
        right: dict[int, list[int]],
        live: bool,
    ) -> tuple[bool, list[int]] | None:
        """Whether the card on offer before went untaken to its owner's right, and who drew
        each drawn card: the engine draws seat after seat (下家 after 下家), each untaken
        card going to the right of its drawer, the last one perhaps still on offer (its
        drawer the state's ``owner``). The one reading that puts exactly the cards the
        right gained where they are."""
        c0, o = before.card, before.owner
        eligible = c0 is not None and o is not None and before.card_kind != CardKind.LIANG
        active = list(state.active)
        for untaken in (True, False) if eligible else (False,):
            first = [state.xia[o]] if untaken and o is not None else []
            for start in first + [s for s in active if s not in first]:
                want: dict[int, list[int]] = {s: [] for s in right}
                if untaken:
                    assert o is not None and c0 is not None
                    want[o].append(c0)
                seats, seat = [], start
                for i, card in enumerate(drawn):
                    seats.append(seat)
                    if live and i == len(drawn) - 1:
                        if seat != state.owner:
                            break
                    else:
                        want[seat].append(card)
                    seat = state.xia[seat]
                else:
                    if want == right:
                        return untaken, seats
        return None


def _untaken(card: int) -> dict[str, Any]:
    return {"text": None, "event": "untaken", "card": format_cards([card])}


def _hidden_wei_huxi(state: State) -> int:
    return 6 if state.rules.luzhou else 3


def _seat_view(state: State, s: int, viewer: int | None) -> dict[str, Any]:
    rules = state.rules
    sits_out = s == state.sitter
    own = viewer is None or viewer == s
    melds = []
    total = 0
    for g in state.melds[s]:
        hidden = not own and g.kind == GroupKind.WEI
        value = _hidden_wei_huxi(state) if hidden else huxi(g, rules)
        total += value
        melds.append(group_view(g, value, hidden))
    if own:
        hand: dict[str, Any] = cards_view(state.hand_cards(s))
        hand["hidden"] = False
        hand["count"] = state.hand_size[s]
    else:
        hand = {"hidden": True, "count": state.hand_size[s]}
    return {
        "seat": s,
        "dealer": s == state.dealer,
        "sits_out": sits_out,
        "xia": None if sits_out else state.xia[s],
        "hand": hand,
        "melds": melds,
        "huxi": total,  # running 胡息 of the table melds (hidden 偎 at their face-down value)
        "quads": state.quads[s],
        "right": cards_view(state.right[s]),
        "discards": cards_view(state.discards[s]),
        "deciding": s in _deciders_seen(state, viewer),
    }


def _deciders_seen(state: State, viewer: int | None) -> list[int]:
    """The seats to act as ``viewer`` knows them: all in a public phase, else itself."""
    deciders = list(state.deciders())
    if viewer is None or state.phase in PUBLIC_PHASES:
        return deciders
    return [s for s in deciders if s == viewer]


def _card_on_offer(state: State, viewer: int | None) -> dict[str, Any] | None:
    if state.card is None or state.outcome is not None:
        return None
    hidden = viewer is not None and state.phase == Phase.DRAW_TAKE and state.owner != viewer
    kind = state.card_kind
    return {
        "card": None if hidden else cards_view([state.card]),
        "hidden": hidden,
        "source": kind.name.lower() if kind is not None else None,
        "owner": state.owner,
    }


def _decision_view(
    state: State, viewer: int | None, log: HandLog | None, step: int
) -> dict[str, Any] | None:
    if state.outcome is not None:
        return None
    deciders = _deciders_seen(state, viewer)
    private = viewer is not None and state.phase not in PUBLIC_PHASES
    options = []
    for s in deciders:
        visible = viewer is None or viewer == s
        legal = state.legal_actions(s)
        options.append(
            {
                "seat": s,
                "n_legal": len(legal),
                "options": [action_view(a) for a in legal] if visible else None,
            }
        )
    chosen = None
    if log is not None and step < log.n_steps:
        seat, action = log.events[step]
        if viewer is None or viewer == seat:
            chosen = {"seat": seat, **action_view(action)}
        else:  # in a private phase, not even who chose
            chosen = {"seat": None if private else seat, **_UNSEEN}
    declared = sorted(state.declared) if state.declared else []
    return {
        "phase": state.phase.name,
        "deciders": deciders,
        "declared": [s for s in declared if not private or s == viewer],
        "forced": bool(state.is_forced()),
        "options": options,
        "chosen": chosen,
    }


def outcome_view(state: State) -> dict[str, Any] | None:
    """The end of the hand: kind, winner, hu card, decomposition with 胡息, 等, 名堂, 番,
    score and the settlement (``None`` while the hand goes on)."""
    o = state.outcome
    if o is None:
        return None
    r: HuResult | None = o.result
    out: dict[str, Any] = {
        "kind": o.kind.name,
        "winner": o.winner,
        "source": o.source.name if o.source is not None else None,
        "card": cards_view([o.card]) if o.card is not None else None,
        "from_seat": o.from_seat,
        "deltas": list(o.deltas),
        "settlement": [
            {"seat": s, "delta": d} for s, d in enumerate(o.deltas) if s != state.sitter
        ],
        "stock_left": len(state.stock),
    }
    if r is not None:
        out.update(
            {
                "decomposition": [
                    group_view(g, v) for g, v in zip(r.groups, r.group_huxi, strict=False)
                ],
                "option": r.option,
                "huxi": r.huxi,
                "deng": r.deng,
                "mingtang": [{"name": n, "fan": f} for n, f in r.mingtang],
                "fan": r.fan,
                "score": r.score,
                "zimo": r.zimo,
                "tianhu": r.tianhu,
            }
        )
    return out


def state_view(
    state: State, seat: int | None = None, *, log: HandLog | None = None
) -> dict[str, Any]:
    """The table at ``state`` as plain data (JSON-able).

    ``seat``: the seat whose view it is (others' hands, 偎 faces, hidden draws and options
    hidden); ``None``: everything. ``log``: the hand's log, to add where the state is in it
    (``n_steps``, ``run``, ``hand_id``) and what was chosen at the current decision.
    """
    n = state.n_seats
    if seat is not None and not (0 <= seat < n):
        raise ValueError(f"seat {seat} out of range for {n} players")
    step = len(state.history)
    liang_visible = state.liang is not None and (seat is None or state.liang_known)
    last = None
    if state.history:
        s, a = state.history[-1]
        seen = seen_action(state, s, a, seat)
        who = s if seat is None or s == seat or not seen.get("hidden") or seen["text"] else None
        last = {"seat": who, "step": step - 1, **seen}
    view: dict[str, Any] = {
        "view_version": VIEW_VERSION,
        "viewer": seat,
        "run": log.run if log is not None else None,
        "hand_id": log.hand_id if log is not None else None,
        "step": step,
        "n_steps": log.n_steps if log is not None else None,
        "rules": state.rules.preset_name() or "custom",
        "players": n,
        "dealer": state.dealer,
        "sitter": state.sitter,
        "stock_left": len(state.stock),
        "liang": cards_view([state.liang]) if liang_visible else None,  # type: ignore[list-item]
        "liang_in_hand": bool(state.liang_known) if state.liang is not None else False,
        "bottom": (
            cards_view([state.bottom])
            if state.bottom is not None and (state.stock or seat is None)
            else None
        ),
        "card": _card_on_offer(state, seat),
        "seats": [_seat_view(state, s, seat) for s in range(n)],
        "decision": _decision_view(state, seat, log, step),
        "last": last,
        "outcome": outcome_view(state),
    }
    if seat is None:
        view["stock"] = cards_view(state.stock[::-1])  # top card first
    return view
