"""Every rule code and rule table of the compiled kernels, derived once from the reference.

Nothing here is written twice (STYLE §23): each code is the value of a reference enum or
constant, read at import (``PH_DISCARD = int(Phase.DISCARD)``), and each table is generated
from the reference's own functions and registries. numba freezes module-level ints and numpy
arrays into the compiled code; :data:`DIGEST`, a digest of everything below, is part of every
cache stamp (:func:`engine.fast.cache.drop_stale`), so a change of the reference's rules
recompiles the kernels that froze the old values. Plain Python and numpy, no kernels.

Codes
    ``PH_*`` :class:`engine.state.Phase`, ``CK_*`` :class:`~engine.state.CardKind`, ``OK_*``
    :class:`~engine.state.OutcomeKind`, ``SRC_*`` :class:`engine.hu.Source`, ``R_*``
    :class:`engine.hu.NoWin`, ``GK_*`` :class:`engine.groups.GroupKind`, ``AK_*``
    :class:`engine.actions.ActionKind`, the action codes of :mod:`engine.actions`, the claim
    ranks ``RANK_*`` and the lonely-card results ``LONELY_*`` of :mod:`engine.state`, the hu
    options ``OPT_*`` (the reference's option letters, :data:`OPTIONS`).

Cards
    ``RED`` / ``BIG`` [20]: 0/1 per card kind, :func:`engine.cards.is_red` /
    :func:`~engine.cards.is_big` (the one definition of red). ``SHAPES`` [40, 3]: the eat
    shapes (``engine.groups.EAT_SHAPES``). ``MELD_RED`` / ``MELD_BIG`` [GroupKind, 40]: the
    red / big cards of a table meld by kind and face (a 吃: shape id), from the meld's
    ``Group`` (the red count of the 名堂, RULES.md §11.3).

胡息 (``HX_*``, by table variant ``2·luzhou + one_five_ten``, :data:`HX_VARIANT_RULES`)
    ``HX_SH_N`` / ``HX_SH``: the eat shapes of each lowest card (a, b, c, 胡息, key);
    ``HX_SAME`` [v, GroupKind, face]: 胡息 of the same-face groups; ``HX_CHI`` [v, shape id];
    ``HX_SHAPE_KEY`` / ``HX_KEY2..4``: sort keys of groups (:func:`group_key`);
    ``HX_POOL_KIND`` [shape id] / ``HX_POOL`` [v, shape id]: the kind and 胡息 of an eat
    shape held in the hand (the groups of a hu reading, ``engine.hu.pool_group``).

名堂 (``MT_*``, one row per pattern of ``engine.mingtang.REGISTRY``, in registry order)
    A pattern is present when its field (``MT_FIELD``, an index into :data:`FIELDS`) lies
    in ``MT_LO ..= MT_HI`` and the row is on for the rules and the hand (``MT_ON`` [variant,
    3提/5坎 天胡]); it is worth ``MT_FAN + MT_SLOPE · (field − MT_LO)`` 番 (Hunan, added),
    plus ``MT_COMBO[row, other]`` beside another present row, or ``MT_MULT`` (Luzhou,
    multiplied); ``MT_NEEDS_OTHER`` counts only beside another; ``MT_BIT`` is its bit of the
    名堂 mask. Each row is found by probing the pattern's own predicate (:func:`_mingtang_row`).

等 (``DENG`` [variant, 自摸, 天胡, 胡息])
    :func:`engine.scoring.score_hu`'s 等 for every 胡息 up to :data:`HX_MAX`.

The variants of the 名堂 and 等 tables are given per rule set by :func:`mingtang_variant` /
:func:`deng_variant` (packed by ``engine.fast.hu.rule_params``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from itertools import product

import numpy as np

from engine.actions import (
    _RADIX,
    CHI_BASE,
    DISCARD_BASE,
    HU,
    PAO_BASE,
    PASS,
    PENG,
    TI_BASE,
    WEI_BASE,
    ActionKind,
)
from engine.cards import COPIES as COPIES  # re-exported: every constant of the kernels is here
from engine.cards import DEALT as DEALT  # the deal: DEALT cards dealt, STOCK_SIZE left
from engine.cards import DECK_SIZE, NUM_KINDS, is_big, is_red
from engine.cards import HAND_CARDS as HAND_CARDS
from engine.cards import STOCK_SIZE as STOCK_SIZE
from engine.groups import (
    EAT_SHAPES,
    QUAD_KINDS,
    SAME_FACE_KINDS,
    TABLE_KINDS,
    Group,
    GroupKind,
    eat_shapes_for,
    huxi,
    is_sentence,
    same_face_huxi,
)
from engine.hu import NoWin, Source, pool_group
from engine.mingtang import (
    LEVELS,
    REGISTRY,
    MingTang,
    MingTangContext,
    hunan_mingtang,
    luzhou_mingtang,
)
from engine.rules import _CHOICES, RuleSet
from engine.scoring import score_hu
from engine.state import (
    _ANY,
    _NONE,
    _RANK_OWNER_CHI,
    _RANK_PENG,
    _RANK_XIA_CHI,
    CardKind,
    OutcomeKind,
    Phase,
)

# ---------------------------------------------------------------------------------------------
# Codes
# ---------------------------------------------------------------------------------------------

PH_INIT_TI = int(Phase.INIT_TI)
PH_LIANG_HU = int(Phase.LIANG_HU)
PH_DISCARD = int(Phase.DISCARD)
PH_DRAW_TAKE = int(Phase.DRAW_TAKE)
PH_CLAIM_HU = int(Phase.CLAIM_HU)
PH_CLAIM_PAO = int(Phase.CLAIM_PAO)
PH_CLAIM_TAKE = int(Phase.CLAIM_TAKE)
PH_END = int(Phase.END)

CK_DRAWN = int(CardKind.DRAWN)
CK_DISCARDED = int(CardKind.DISCARDED)
CK_LIANG = int(CardKind.LIANG)

OK_HU = int(OutcomeKind.HU)
OK_HUANGZHUANG = int(OutcomeKind.HUANGZHUANG)
OK_TIANHU_AUTO = int(OutcomeKind.TIANHU_AUTO)
OK_TIANHU = int(OutcomeKind.TIANHU)

SRC_OWN_DRAW = int(Source.OWN_DRAW)
SRC_OTHER_DRAW = int(Source.OTHER_DRAW)
SRC_LIANG_DEALER = int(Source.LIANG_DEALER)
SRC_LIANG_OTHER = int(Source.LIANG_OTHER)
SRC_DISCARD = int(Source.DISCARD)

R_CARD_COUNT = int(NoWin.CARD_COUNT)
R_NO_SPLIT = int(NoWin.NO_SPLIT)
R_BELOW_MIN = int(NoWin.BELOW_MIN)
R_OWN_PAIR = int(NoWin.OWN_PAIR)
R_DISCARD = int(NoWin.DISCARD)
#: The kernels' own reason where the reference raises InvalidNotation (5 copies of a face).
R_INVALID = -1
assert R_INVALID not in {int(r) for r in NoWin} | {0}

GK_CHI = int(GroupKind.CHI)
GK_PENG = int(GroupKind.PENG)
GK_WEI = int(GroupKind.WEI)
GK_CHOUWEI = int(GroupKind.CHOUWEI)
GK_PAO = int(GroupKind.PAO)
GK_TI = int(GroupKind.TI)
GK_SENTENCE = int(GroupKind.SENTENCE)
GK_JIAO = int(GroupKind.JIAO)
GK_KAN = int(GroupKind.KAN)
GK_PENG_HU = int(GroupKind.PENG_HU)
GK_JIANG = int(GroupKind.JIANG)
N_GROUP_KINDS = len(GroupKind)
# The kernels test ``kind >= GK_PAO`` for a table meld of 4 cards (跑, 提).
assert {k for k in TABLE_KINDS if k >= GroupKind.PAO} == QUAD_KINDS

AK_PASS = int(ActionKind.PASS)
AK_HU = int(ActionKind.HU)
AK_PENG = int(ActionKind.PENG)
AK_DISCARD = int(ActionKind.DISCARD)
AK_TI = int(ActionKind.TI)
AK_WEI = int(ActionKind.WEI)
AK_PAO = int(ActionKind.PAO)
AK_CHI = int(ActionKind.CHI)

#: The action codes (engine.actions), re-exported so that every kernel constant is here.
ACTION_CODES = (PASS, HU, PENG, DISCARD_BASE, TI_BASE, WEI_BASE, PAO_BASE, CHI_BASE)
RADIX = _RADIX  # base of the 吃 code's digits

RANK_PENG = _RANK_PENG
RANK_OWNER_CHI = _RANK_OWNER_CHI
RANK_XIA_CHI = _RANK_XIA_CHI
LONELY_ANY = _ANY
LONELY_NONE = _NONE

#: The reference's hu options (``HuResult.option``) in the order of their kernel codes.
OPTIONS = ("F", "K", "P", "W", "0", "A")
OPTION_CODES = {o: i for i, o in enumerate(OPTIONS)}
OPT_F = OPTION_CODES["F"]
OPT_K = OPTION_CODES["K"]
OPT_P = OPTION_CODES["P"]
OPT_W = OPTION_CODES["W"]
OPT_DEALT = OPTION_CODES["0"]
OPT_A = OPTION_CODES["A"]
OPT_NONE = -1  # the reference's None
assert OPT_NONE not in OPTION_CODES.values()

# ---------------------------------------------------------------------------------------------
# Cards and eat shapes
# ---------------------------------------------------------------------------------------------

RED = np.array([int(is_red(k)) for k in range(NUM_KINDS)], dtype=np.int64)
BIG = np.array([int(is_big(k)) for k in range(NUM_KINDS)], dtype=np.int64)
SHAPES = np.array(EAT_SHAPES, dtype=np.int64)
N_SHAPES = len(EAT_SHAPES)


def _meld_groups() -> list[tuple[int, int, Group]]:
    """(kind, face or shape id, the table meld's Group) for every table meld."""
    out = [(int(GroupKind.CHI), i, Group(GroupKind.CHI, s)) for i, s in enumerate(EAT_SHAPES)]
    for kind in sorted(TABLE_KINDS - {GroupKind.CHI}):
        size = 4 if kind in QUAD_KINDS else 3
        out += [(int(kind), k, Group(kind, (k,) * size)) for k in range(NUM_KINDS)]
    return out


MELD_RED = np.zeros((N_GROUP_KINDS, 40), dtype=np.int64)
MELD_BIG = np.zeros((N_GROUP_KINDS, 40), dtype=np.int64)
for _kind, _id, _g in _meld_groups():
    MELD_RED[_kind, _id] = sum(int(is_red(c)) for c in _g.cards)
    MELD_BIG[_kind, _id] = sum(int(is_big(c)) for c in _g.cards)

# ---------------------------------------------------------------------------------------------
# 胡息 tables (engine.groups), by the hu kernel's table variant 2·luzhou + one_five_ten
# ---------------------------------------------------------------------------------------------

HX_VARIANT_RULES = (
    RuleSet(),
    RuleSet(one_five_ten=True),
    RuleSet(ruleset="luzhou"),
    RuleSet(ruleset="luzhou", one_five_ten=True),
)
HX_MAXSH = 8  # eat shapes per lowest card (at most 6)


def hx_variant(rules: RuleSet) -> int:
    """The 胡息 table variant of ``rules`` (as ``engine.hu._variant``)."""
    return 2 * int(rules.luzhou) + int(rules.one_five_ten)


#: The radix of :func:`group_key`'s four digits (a card + 1, or 0 for no card).
KEY_RADIX = NUM_KINDS + 1


def group_key(cards: Sequence[int]) -> int:
    """An int that orders groups as Python orders their card tuples (a prefix is smaller):
    four digits in base :data:`KEY_RADIX`, card + 1 each, 0 past the group's last card."""
    key = 0
    for i in range(4):
        key = key * KEY_RADIX + (cards[i] + 1 if i < len(cards) else 0)
    return key


def _hx_tables() -> dict[str, np.ndarray]:
    nv = len(HX_VARIANT_RULES)
    sh_n = np.zeros((nv, NUM_KINDS), dtype=np.int64)
    sh = np.zeros((nv, NUM_KINDS, HX_MAXSH, 5), dtype=np.int64)  # a, b, c, 胡息, key
    same = np.zeros((nv, N_GROUP_KINDS, NUM_KINDS), dtype=np.int64)
    chi = np.zeros((nv, N_SHAPES), dtype=np.int64)
    for v, rules in enumerate(HX_VARIANT_RULES):
        assert hx_variant(rules) == v
        for cards in eat_shapes_for(rules):
            kind = GroupKind.SENTENCE if is_sentence(cards, rules) else GroupKind.JIAO
            a, b, c = cards
            j = sh_n[v, a]
            sh[v, a, j] = (a, b, c, huxi(Group(kind, cards), rules), group_key(cards))
            sh_n[v, a] = j + 1
        for kind in SAME_FACE_KINDS:
            for k in range(NUM_KINDS):
                same[v, kind, k] = same_face_huxi(kind, k, rules)
        for i, cards in enumerate(EAT_SHAPES):
            chi[v, i] = huxi(Group(GroupKind.CHI, cards), rules)
    return {"sh_n": sh_n, "sh": sh, "same": same, "chi": chi}


_HX = _hx_tables()
HX_SH_N = _HX["sh_n"]
HX_SH = _HX["sh"]
HX_SAME = _HX["same"]
HX_CHI = _HX["chi"]
HX_SHAPE_KEY = np.array([group_key(s) for s in EAT_SHAPES], dtype=np.int64)
HX_KEY2 = np.array([group_key((k, k)) for k in range(NUM_KINDS)], dtype=np.int64)
HX_KEY3 = np.array([group_key((k, k, k)) for k in range(NUM_KINDS)], dtype=np.int64)
HX_KEY4 = np.array([group_key((k, k, k, k)) for k in range(NUM_KINDS)], dtype=np.int64)
#: An eat shape held in the hand (a split's group, not a table 吃): its GroupKind
#: (``engine.hu.pool_group``: 一句话 or 绞) by shape id, and its 胡息 by variant and shape id.
HX_POOL_KIND = np.array([int(pool_group(s).kind) for s in EAT_SHAPES], dtype=np.int64)
HX_POOL = np.array(
    [[huxi(pool_group(s), rules) for s in EAT_SHAPES] for rules in HX_VARIANT_RULES],
    dtype=np.int64,
)

#: A bound on the 胡息 of any reading: the hu kernel holds at most 24 groups per reading
#: (``engine.fast.hu._MAXG``), each worth at most the largest 胡息 of any group.
HX_MAX_GROUPS = 24
HX_MAX = HX_MAX_GROUPS * int(max(HX_SH[..., 3].max(), HX_SAME.max(), HX_CHI.max()))

# ---------------------------------------------------------------------------------------------
# 名堂 (engine.mingtang): one row per pattern, probed from its predicate
# ---------------------------------------------------------------------------------------------

#: What a 名堂 may depend on, as the hu kernel passes it: the card counts of the winner
#: (``MingTangContext.red`` / ``big`` / ``small``), whether his reading has only same-face
#: groups and the 将 (对对), whether its 将 is a single hand card's (耍猴), and the flags.
FIELDS = ("red", "big", "small", "duidui", "shuahou", "haidi", "dihu", "zimo", "tianhu")
_COUNTS = ("red", "big", "small")
F_RED = FIELDS.index("red")
F_BIG = FIELDS.index("big")
F_SMALL = FIELDS.index("small")
F_DUIDUI = FIELDS.index("duidui")
F_SHUAHOU = FIELDS.index("shuahou")
F_HAIDI = FIELDS.index("haidi")
F_DIHU = FIELDS.index("dihu")
F_ZIMO = FIELDS.index("zimo")
F_TIANHU = FIELDS.index("tianhu")

_JIANG = Group(GroupKind.JIANG, (0, 0))
_SENTENCE = Group(GroupKind.SENTENCE, (0, 1, 2))


def field_context(values: Mapping[str, int], auto_tianhu: bool = False) -> MingTangContext:
    """A :class:`~engine.mingtang.MingTangContext` with the given :data:`FIELDS` (a count not
    given is −1, no count at all; a flag not given is off), its groups and hand size chosen
    to make 对对 and 耍猴 what ``values`` says."""
    dd = bool(values.get("duidui", 0))
    sh = bool(values.get("shuahou", 0))
    groups = (_JIANG,) if dd else (_JIANG, _SENTENCE) if sh else (_SENTENCE,)
    return MingTangContext(
        red=values.get("red", -1),
        big=values.get("big", -1),
        small=values.get("small", -1),
        groups=groups,
        hand_size=1 if sh else 2,
        haidi=bool(values.get("haidi", 0)),
        dihu=bool(values.get("dihu", 0)),
        zimo=bool(values.get("zimo", 0)),
        tianhu=bool(values.get("tianhu", 0)),
        auto_tianhu=auto_tianhu,
    )


def _field_range(name: str) -> range:
    return range(DECK_SIZE + 1) if name in _COUNTS else range(2)


def _mingtang_row(m: type[MingTang]) -> tuple[int, int, int, int, int]:
    """(field, lo, hi, 番 at lo, 番 per unit above lo) of pattern ``m``, found by probing its
    predicate one field at a time; raises unless it is one field's interval with a linear 番."""
    if m.applies(field_context({})):
        raise ValueError(f"名堂 {m.pinyin}: present with no field set")
    hits = {}
    for name in FIELDS:
        xs = [x for x in _field_range(name) if m.applies(field_context({name: x}))]
        if xs:
            hits[name] = xs
    if len(hits) != 1:
        raise ValueError(f"名堂 {m.pinyin}: depends on {sorted(hits) or 'no field'}, not one")
    ((name, xs),) = hits.items()
    lo, hi = xs[0], xs[-1]
    if xs != list(range(lo, hi + 1)):
        raise ValueError(f"名堂 {m.pinyin}: {name} in {xs}, not an interval")
    fans = [m.fan_for(field_context({name: x})) for x in xs]
    slope = fans[1] - fans[0] if len(fans) > 1 else 0
    if fans != [fans[0] + slope * (x - lo) for x in xs]:
        raise ValueError(f"名堂 {m.pinyin}: 番 {fans} not linear in {name}")
    return FIELDS.index(name), lo, hi, fans[0], slope


MT_PATTERNS: tuple[type[MingTang], ...] = tuple(REGISTRY.values())
MT_ROWS = len(MT_PATTERNS)
_MT = np.array([_mingtang_row(m) for m in MT_PATTERNS], dtype=np.int64).reshape(MT_ROWS, 5)
MT_FIELD = _MT[:, 0].copy()
MT_LO = _MT[:, 1].copy()
MT_HI = _MT[:, 2].copy()
MT_FAN = _MT[:, 3].copy()
MT_SLOPE = _MT[:, 4].copy()
MT_MULT = np.array([m.fan for m in MT_PATTERNS], dtype=np.int64)
MT_NEEDS_OTHER = np.array([m.needs_other for m in MT_PATTERNS], dtype=np.int64)
MT_BIT = np.array([m.bit for m in MT_PATTERNS], dtype=np.int64)
MT_COMBO = np.array(
    [[m.combo.get(o.pinyin, 0) for o in MT_PATTERNS] for m in MT_PATTERNS], dtype=np.int64
)
#: 名堂 bit by pinyin id (engine.mingtang.MINGTANG_BITS; the replay schema's too).
MINGTANG_BITS = {m.pinyin: m.bit for m in MT_PATTERNS}
assert len(set(MINGTANG_BITS.values())) == MT_ROWS and max(MT_BIT) < 16  # fits hands.mingtang

#: The 花样 levels (``RuleSet.huayang``) as the kernels number them.
HUAYANG_LEVELS = dict(LEVELS)

#: The rule switches the 名堂 a hand may show depend on, and their combinations.
MT_VARIANTS = tuple(product(_CHOICES["ruleset"], _CHOICES["huayang"], _CHOICES["luzhou_di_mode"]))


def mingtang_variant(rules: RuleSet) -> int:
    """The row of ``MT_ON`` for ``rules``."""
    return MT_VARIANTS.index((rules.ruleset, rules.huayang, rules.luzhou_di_mode))


def _found(rules: RuleSet, ctx: MingTangContext) -> list[type[MingTang]]:
    # engine.scoring.score_hu's choice of registry filter
    if rules.luzhou:
        return luzhou_mingtang(ctx, rules.luzhou_di_mode)
    return hunan_mingtang(ctx, rules.huayang)


def _mt_on() -> np.ndarray:
    on = np.zeros((len(MT_VARIANTS), 2, MT_ROWS), dtype=np.int64)
    for v, (ruleset, huayang, mode) in enumerate(MT_VARIANTS):
        rules = RuleSet(ruleset=ruleset, huayang=huayang, luzhou_di_mode=mode)
        for auto in (0, 1):
            for i, m in enumerate(MT_PATTERNS):
                ctx = field_context({FIELDS[MT_FIELD[i]]: int(MT_LO[i])}, auto_tianhu=bool(auto))
                on[v, auto, i] = m in _found(rules, ctx)
    return on


MT_ON = _mt_on()

# ---------------------------------------------------------------------------------------------
# 等 (engine.scoring.score_hu)
# ---------------------------------------------------------------------------------------------

#: The rule switches the 等 depends on, and their combinations.
DENG_VARIANTS = tuple(product(_CHOICES["ruleset"], _CHOICES["tianhu_formula"]))


def deng_variant(rules: RuleSet) -> int:
    """The first index of ``DENG`` for ``rules``."""
    return DENG_VARIANTS.index((rules.ruleset, rules.tianhu_formula))


def _deng() -> np.ndarray:
    deng = np.zeros((len(DENG_VARIANTS), 2, 2, HX_MAX + 1), dtype=np.int64)
    for v, (ruleset, formula) in enumerate(DENG_VARIANTS):
        rules = RuleSet(ruleset=ruleset, tianhu_formula=formula)
        for zimo, tianhu in product((0, 1), (0, 1)):
            ctx = field_context({"zimo": zimo, "tianhu": tianhu})
            for hx in range(HX_MAX + 1):
                deng[v, zimo, tianhu, hx] = score_hu(rules, hx, ctx).deng
    return deng


DENG = _deng()

# ---------------------------------------------------------------------------------------------
# The digest
# ---------------------------------------------------------------------------------------------


def _digest() -> str:
    h = hashlib.sha256()
    for name, v in sorted(globals().items()):
        if not name[:1].isupper():
            continue
        if isinstance(v, np.ndarray):
            h.update(f"{name}:{v.dtype}:{v.shape}:".encode())
            h.update(v.tobytes())
        elif isinstance(v, (int, str, tuple, dict)) and not isinstance(v, bool | type):
            h.update(f"{name}={v!r};".encode())
    return h.hexdigest()[:16]


#: A digest of every code and table above: what the compiled kernels hold as constants.
DIGEST = _digest()
