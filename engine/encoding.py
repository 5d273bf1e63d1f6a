"""One encoding of 跑胡子 for learners (issue 63): a fixed discrete action space and an
observation tensor of what one seat can see. docs/ENV.md has the tables.

**Actions.** Every option a seat can be offered has one index in ``[0, ACTION_SIZE)``:

=============  =====  ===================================================================
indices        count  meaning
=============  =====  ===================================================================
0              1      过 PASS
1              1      胡 HU
2              1      碰 PENG (the offered card)
3 … 22         20     打 DISCARD of face k (index 3 + k)
23 … 93        71     吃 + 比: a pattern of eat groups *relative to the offered card* c
94 … 113       20     提 TI of face k (forced)
114 … 133      20     偎 WEI of face k (forced)
134 … 153      20     跑 PAO of face k (forced)
=============  =====  ===================================================================

A 吃 lays down 1 to 3 eat-shaped groups that each hold the offered card c (the eaten group
and its 比 covers, RULES §5.6). Each group is one of seven *roles* of c: a run with c lowest
(``R0``), in the middle (``R1``) or highest (``R2``), 二七十 of c's case (``E``), 一五十 of
c's case (``F``, with the ``one_five_ten`` switch), the 绞 c + two of the other case (``J1``)
and the 绞 two of c + one of the other case (``J2``). Given c a role is one group, so a 吃 is
a multiset of roles: :data:`CHI_PATTERNS` lists the 71 multisets some face can reach (no more
than three copies of c, no other face more than twice, since 坎 cards never eat).

>>> ACTION_SIZE
154
>>> from engine.actions import encode_chi
>>> i = action_index(encode_chi([(0, 1, 2), (0, 0, 10)]), card=0)
>>> CHI_PATTERNS[i - CHI_OFFSET]
('R0', 'J2')
>>> index_action(i, card=0) == encode_chi([(0, 1, 2), (0, 0, 10)])
True
>>> index_action(DISCARD_OFFSET + 19, card=None)
29

**Observation.** :func:`observation_vector` is a float32 vector of :data:`OBS_SIZE` numbers,
the fields of :data:`OBS_FIELDS` in order; :func:`observation_dict` splits one into its
fields by name. Seats are relative: slot ``j`` is the seat ``(seat + j) mod players``, slot 0
the viewer; a 3-player table leaves slot 3 empty (``present`` 0).

>>> OBS_SIZE
897
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations_with_replacement
from typing import Any

import numpy as np

from engine import actions as A
from engine.cards import NUM_KINDS
from engine.groups import EAT_SHAPE_ID, EAT_SHAPES, GroupKind
from engine.observation import HIDDEN_WEI

# ---------------------------------------------------------------------------------- actions

#: The roles of an eat group relative to the offered card (see the module's docstring).
ROLES = ("R0", "R1", "R2", "E", "F", "J1", "J2")


def role_shape(role: str, c: int) -> tuple[int, int, int] | None:
    """The eat group of ``role`` for the offered face ``c`` (sorted), None if it has none.

    >>> role_shape("R1", 4), role_shape("E", 16), role_shape("J1", 3), role_shape("R2", 1)
    ((3, 4, 5), (11, 16, 19), (3, 13, 13), None)
    """
    n, case = c % 10, c - c % 10
    other = c + 10 if c < 10 else c - 10
    shape: tuple[int, ...]
    if role[0] == "R":
        lo = n - int(role[1])
        if not 0 <= lo <= 7:
            return None
        shape = (case + lo, case + lo + 1, case + lo + 2)
    elif role == "E":
        if n not in (1, 6, 9):
            return None
        shape = (case + 1, case + 6, case + 9)
    elif role == "F":
        if n not in (0, 4, 9):
            return None
        shape = (case, case + 4, case + 9)
    elif role == "J1":
        shape = tuple(sorted((c, other, other)))
    else:
        shape = tuple(sorted((c, c, other)))
    return shape  # type: ignore[return-value]


def _shape_role(shape: tuple[int, ...], c: int) -> str:
    for role in ROLES:
        if role_shape(role, c) == tuple(shape):
            return role
    raise ValueError(f"eat group {shape} does not hold face {c}")


def _reachable(pattern: tuple[str, ...]) -> bool:
    """Whether some face can eat with this multiset of roles: every role has a group, c is
    used at most three times (the offered card and two in hand), any other face at most
    twice (a third would make a 坎, which never eats)."""
    for c in range(NUM_KINDS):
        shapes = [role_shape(r, c) for r in pattern]
        if any(s is None for s in shapes):
            continue
        used = [0] * NUM_KINDS
        for s in shapes:
            for k in s:  # type: ignore[union-attr]
                used[k] += 1
        if used[c] <= 3 and all(n <= 2 for k, n in enumerate(used) if k != c):
            return True
    return False


#: The 吃 patterns, by size then role order; the pattern ``p`` is action ``CHI_OFFSET + p``.
CHI_PATTERNS: tuple[tuple[str, ...], ...] = tuple(
    p for size in (1, 2, 3) for p in combinations_with_replacement(ROLES, size) if _reachable(p)
)
_PATTERN_INDEX = {p: i for i, p in enumerate(CHI_PATTERNS)}

PASS_INDEX = 0
HU_INDEX = 1
PENG_INDEX = 2
DISCARD_OFFSET = 3
CHI_OFFSET = DISCARD_OFFSET + NUM_KINDS
TI_OFFSET = CHI_OFFSET + len(CHI_PATTERNS)
WEI_OFFSET = TI_OFFSET + NUM_KINDS
PAO_OFFSET = WEI_OFFSET + NUM_KINDS
#: The number of actions, A.
ACTION_SIZE = PAO_OFFSET + NUM_KINDS

_BY_FACE = (
    (A.DISCARD_BASE, DISCARD_OFFSET),
    (A.TI_BASE, TI_OFFSET),
    (A.WEI_BASE, WEI_OFFSET),
    (A.PAO_BASE, PAO_OFFSET),
)


@lru_cache(maxsize=65536)
def action_index(code: int, card: int | None) -> int:
    """The index of engine action ``code``; ``card`` is the offered card (read for a 吃 only).

    >>> action_index(A.PASS, None), action_index(A.DISCARD_BASE + 4, None)
    (0, 7)
    """
    if code == A.PASS:
        return PASS_INDEX
    if code == A.HU:
        return HU_INDEX
    if code == A.PENG:
        return PENG_INDEX
    if code >= A.CHI_BASE:
        if card is None:
            raise ValueError(f"a 吃 ({A.action_str(code)}) needs the offered card")
        roles = tuple(sorted((_shape_role(g, card) for g in A.chi_groups(code)), key=ROLES.index))
        return CHI_OFFSET + _PATTERN_INDEX[roles]
    for base, offset in _BY_FACE:
        if base <= code < base + NUM_KINDS:
            return offset + code - base
    raise ValueError(f"action code out of range: {code!r}")


@lru_cache(maxsize=65536)
def index_action(index: int, card: int | None) -> int:
    """The engine action code of ``index``; ``card`` is the offered card (read for a 吃 only).
    :class:`ValueError` for an index out of range or a 吃 pattern that face cannot make."""
    if not 0 <= index < ACTION_SIZE:
        raise ValueError(f"action index out of range: {index!r} (0..{ACTION_SIZE - 1})")
    if index == PASS_INDEX:
        return A.PASS
    if index == HU_INDEX:
        return A.HU
    if index == PENG_INDEX:
        return A.PENG
    if CHI_OFFSET <= index < TI_OFFSET:
        if card is None:
            raise ValueError(f"a 吃 index ({index}) needs the offered card")
        shapes = [role_shape(r, card) for r in CHI_PATTERNS[index - CHI_OFFSET]]
        if any(s is None for s in shapes):
            raise ValueError(f"face {card} has no 吃 {CHI_PATTERNS[index - CHI_OFFSET]}")
        return A.encode_chi(shapes)  # type: ignore[arg-type]
    for base, offset in _BY_FACE:
        if offset <= index < offset + NUM_KINDS:
            return base + index - offset
    raise AssertionError(index)  # pragma: no cover - the ranges cover [0, ACTION_SIZE)


def legal_indices(state: Any, seat: int) -> list[int]:
    """The indices of ``seat``'s legal options at ``state`` (an :class:`engine.state.State`),
    in the order of its action codes."""
    card = state.card
    return [action_index(code, card) for code in state.legal_actions(seat)]


def legal_mask(state: Any, seat: int) -> np.ndarray:
    """A boolean vector of :data:`ACTION_SIZE`: True at each legal option of ``seat``."""
    mask = np.zeros(ACTION_SIZE, dtype=bool)
    mask[legal_indices(state, seat)] = True
    return mask


def action_label(index: int, card: int | None = None) -> str:
    """An index in notation: ``打 拾``, ``吃 [一二三][一一壹]`` (with the card), ``吃 R0+J2``.

    >>> action_label(DISCARD_OFFSET + 19), action_label(CHI_OFFSET + 7)
    ('打 拾', '吃 R0+R0')
    """
    if CHI_OFFSET <= index < TI_OFFSET and card is None:
        return "吃 " + "+".join(CHI_PATTERNS[index - CHI_OFFSET])
    return A.action_str(index_action(index, card))


# ------------------------------------------------------------------------------ observation

MAX_SEATS = 4
_PHASES = 8  # engine.state.Phase: INIT_TI … END (not imported: the state imports this module)
_PUBLIC_PHASES = frozenset({0, 2, 3, 5})  # INIT_TI, DISCARD, DRAW_TAKE, CLAIM_PAO
_END = 7

#: The fields of the observation vector, in order: (name, length, upper bound, meaning).
#: Every value is a count or a flag (0 … bound); nothing is scaled.
_GLOBAL: list[tuple[str, int, int, str]] = [
    ("hand", NUM_KINDS, 4, "own hand: copies of each face"),
    ("stinky", NUM_KINDS, 1, "own 臭牌 faces (may no longer be taken, §6.1)"),
    ("renpeng", NUM_KINDS, 1, "own 忍碰 faces (a 碰 declined, §6.1)"),
    ("to_act", 1, 1, "this seat must declare now"),
    ("phase", _PHASES, 1, "engine Phase one-hot, when public or this seat decides; else 0"),
    ("card", NUM_KINDS, 1, "the card on offer, one-hot, when this seat can see it"),
    ("card_source", 3, 1, "where it came from: drawn, discarded, 亮张"),
    ("card_owner", MAX_SEATS, 1, "the seat slot that drew / discarded / shows it"),
    ("stock_left", 1, 19, "cards left in the stock"),
    ("liang", NUM_KINDS, 1, "the 亮张 while it is known to be in the dealer's hand"),
    ("bottom_shown", NUM_KINDS, 2, "4 players: the shown bottom cards still in the stock"),
    ("dealer", MAX_SEATS, 1, "the dealer's seat slot, one-hot"),
    ("rules", 12, 99, "players=4, luzhou, min_huxi, hu_on_discards, huayang basic/half/full,"
     " tianhu double, one_five_ten, chouhu, peng_compulsory, luzhou_di_mode b"),
]  # fmt: skip
_SEAT: list[tuple[str, int, int, str]] = [
    ("present", 1, 1, "the slot is a seat of this table"),
    ("active", 1, 1, "the seat plays (not the 4-player sitter)"),
    ("hand_size", 1, 21, "cards in its hand"),
    ("chi", len(EAT_SHAPES), 4, "its 吃 groups on the table, by eat shape (engine.groups)"),
    ("peng", NUM_KINDS, 1, "its 碰 faces"),
    ("wei", NUM_KINDS, 1, "its 偎 faces (own seat only; others' are face-down)"),
    ("wei_hidden", 1, 6, "its face-down 偎 (others' seats only)"),
    ("chouwei", NUM_KINDS, 1, "its 臭偎 faces"),
    ("pao", NUM_KINDS, 1, "its 跑 faces"),
    ("ti", NUM_KINDS, 1, "its 提 faces"),
    ("right", NUM_KINDS, 4, "its dead cards placed to the right: copies per face"),
    ("discards", NUM_KINDS, 4, "its discards: copies per face"),
    ("huxi", 1, 200, "胡息 of its table melds as this seat can count them"),
    ("quads", 1, 6, "its 跑 + 提"),
]
OBS_FIELDS: tuple[tuple[str, int, int, str], ...] = (
    *_GLOBAL,
    *((f"seat{j}.{n}", size, hi, d) for j in range(MAX_SEATS) for n, size, hi, d in _SEAT),
)
_SLICES: dict[str, slice] = {}
_pos = 0
for _name, _size, _hi, _d in OBS_FIELDS:
    _SLICES[_name] = slice(_pos, _pos + _size)
    _pos += _size
#: The length of the observation vector.
OBS_SIZE = _pos
#: The upper bound of each number of the vector (the lower bound is 0).
OBS_HIGH = np.concatenate([np.full(size, hi, dtype=np.float32) for _, size, hi, _ in OBS_FIELDS])
_SEAT_SIZE = sum(size for _, size, _, _ in _SEAT)
_SEAT0 = _SLICES["seat0.present"].start
_SEAT_OFF = {n: _SLICES[f"seat0.{n}"].start - _SEAT0 for n, _, _, _ in _SEAT}
_G = {n: _SLICES[n].start for n, _, _, _ in _GLOBAL}
_SOURCE = {0: 0, 1: 1, 2: 2}  # engine.state.CardKind DRAWN, DISCARDED, LIANG
_MELD_FIELD = {
    GroupKind.PENG: "peng",
    GroupKind.WEI: "wei",
    GroupKind.CHOUWEI: "chouwei",
    GroupKind.PAO: "pao",
    GroupKind.TI: "ti",
}


def _rules_flags(rules: Any) -> list[float]:
    return [
        float(rules.players == 4),
        float(rules.luzhou),
        float(rules.min_huxi),
        float(rules.hu_on_discards),
        float(rules.huayang == "basic"),
        float(rules.huayang == "half"),
        float(rules.huayang == "full"),
        float(rules.tianhu_formula == "double"),
        float(rules.one_five_ten),
        float(rules.chouhu),
        float(rules.peng_compulsory),
        float(rules.luzhou_di_mode == "b"),
    ]


def observation_vector(state: Any, seat: int) -> np.ndarray:
    """What ``seat`` sees of ``state`` (an :class:`engine.state.State`) as a float32 vector of
    :data:`OBS_SIZE` (the fields of :data:`OBS_FIELDS`). Built from
    :meth:`~engine.state.State.observation` alone, so it hides what that view hides."""
    obs = state.observation(seat)
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    n = state.n_seats
    out[_G["hand"] : _G["hand"] + NUM_KINDS] = obs.hand
    for k in range(NUM_KINDS):
        if obs.stinky >> k & 1:
            out[_G["stinky"] + k] = 1
        if obs.renpeng >> k & 1:
            out[_G["renpeng"] + k] = 1
    deciding = seat in state.deciders()
    out[_G["to_act"]] = deciding
    phase = obs.phase
    if phase in _PUBLIC_PHASES or phase == _END or deciding:
        out[_G["phase"] + phase] = 1
    card = obs.card
    if card is not None:
        out[_G["card"] + card] = 1
        out[_G["card_source"] + _SOURCE[obs.card_kind]] = 1  # type: ignore[index]
        if obs.owner is not None:
            out[_G["card_owner"] + (obs.owner - seat) % n] = 1
    out[_G["stock_left"]] = obs.stock_left
    if obs.liang is not None:
        out[_G["liang"] + obs.liang] = 1
    for k in obs.bottom_shown:
        out[_G["bottom_shown"] + k] += 1
    out[_G["dealer"] + (obs.dealer - seat) % n] = 1
    out[_G["rules"] : _G["rules"] + 12] = _rules_flags(state.rules)
    active = set(obs.active)
    sizes = obs.hand_sizes
    for j in range(n):
        s = (seat + j) % n
        base = _SEAT0 + j * _SEAT_SIZE
        out[base + _SEAT_OFF["present"]] = 1
        if s not in active:
            continue
        out[base + _SEAT_OFF["active"]] = 1
        out[base + _SEAT_OFF["hand_size"]] = sizes[s]
        for g in obs.melds(s):
            if g is HIDDEN_WEI:
                out[base + _SEAT_OFF["wei_hidden"]] += 1
            elif g.kind == GroupKind.CHI:
                out[base + _SEAT_OFF["chi"] + EAT_SHAPE_ID[g.cards]] += 1  # type: ignore[index]
            else:
                out[base + _SEAT_OFF[_MELD_FIELD[g.kind]] + g.cards[0]] = 1
        for k in obs.right(s):
            out[base + _SEAT_OFF["right"] + k] += 1
        for k in obs.discards(s):
            out[base + _SEAT_OFF["discards"] + k] += 1
        out[base + _SEAT_OFF["huxi"]] = obs.visible_meld_huxi(s)
        out[base + _SEAT_OFF["quads"]] = obs.quads(s)
    return out


def observation_dict(vector: np.ndarray) -> dict[str, Any]:
    """The fields of an observation vector by name: an int for a field of one number, else a
    list of ints (every value is a whole count or flag).

    >>> from engine.deck import shuffle_deck
    >>> from engine.state import Game
    >>> s = Game().new_initial_state(shuffle_deck(3), dealer=0)
    >>> d = observation_dict(observation_vector(s, 0))
    >>> sum(d["hand"]), d["seat0.hand_size"], d["stock_left"], d["seat3.present"]
    (21, 21, 19, 0)
    """
    if vector.shape != (OBS_SIZE,):
        raise ValueError(f"an observation vector has {OBS_SIZE} numbers, not {vector.shape}")
    out: dict[str, Any] = {}
    for name, size, _, _ in OBS_FIELDS:
        part = vector[_SLICES[name]]
        out[name] = int(part[0]) if size == 1 else [int(x) for x in part]
    return out


def field_slice(name: str) -> slice:
    """Where field ``name`` lies in the vector (``observation_vector(...)[field_slice("hand")]``)."""
    return _SLICES[name]
