"""Compiled hu evaluation and scoring: numba kernels byte-identical to :mod:`engine.hu`.

The kernels reproduce :func:`engine.hu.evaluate_hu_counts` and
:func:`engine.hu.evaluate_auto_tianhu` field by field (every option F/K/P/W, the step-0 dealt
hand, the 3提/5坎 天胡 'A', the C9 choice, the NoWin reasons, 等, 名堂, 番, the Luzhou
multiplier and the score). The split itself (the groups) is not returned.

Interface (stable; the compiled state machine calls it from numba code)
-----------------------------------------------------------------------

``params = rule_params(rules, size=PARAMS_SIZE)``
    plain Python; an int64 array with every switch of a :class:`~engine.rules.RuleSet` at
    the indices ``P_*`` below. Indices 0..31 belong to this module (``HU_PARAMS_END = 32``);
    indices 32.. are free for the state machine (pass ``size`` > 32 to get room for them).

    =====================  ==============================================================
    ``P_LUZHOU = 0``       1: ruleset luzhou
    ``P_ONE_FIVE_TEN = 1`` 1: 1-5-10 is a 一句话
    ``P_VARIANT = 2``      table index 2·luzhou + one_five_ten (as ``engine.hu._variant``)
    ``P_MIN_HUXI = 3``     the 胡息 threshold
    ``P_HU_ON_DISCARDS=4`` 1: a discard may be hu'd
    ``P_HUAYANG = 5``      0 basic, 1 half, 2 full
    ``P_TIANHU_DOUBLE=6``  1: tianhu_formula 'double', 0: 'plain'
    ``P_LUZHOU_DI_B = 7``  1: luzhou_di_mode 'b', 0: 'a'
    ``P_PLAYERS = 8``      3 or 4 (not used here; packed for the state machine)
    ``P_CHOUHU = 9``       1: the 臭胡 block (not used here)
    ``P_PENG_COMPULSORY=10`` 1: compulsory 碰 (not used here)
    ``P_HUANGZHUANG_ROTATE=11`` (not used here)
    =====================  ==============================================================

``hu_eval(params, meld_kind, meld_card, n_melds, hand_counts, card, source, tianhu, haidi,
dihu, out) -> int``
    :func:`engine.hu.evaluate_hu_counts`. Returns ``out[O_WIN]``.

    * ``meld_kind[i]``: the :class:`~engine.groups.GroupKind` value of table meld i (only the
      table kinds CHI=0, PENG=1, WEI=2, CHOUWEI=3, PAO=4, TI=5); ``meld_card[i]``: its face
      (0..19) for the same-face kinds, its eat-shape id (``engine.groups.EAT_SHAPE_ID``,
      0..39) for CHI. Only the first ``n_melds`` entries are read; any integer dtype.
    * ``hand_counts``: [20], the concealed hand before the hu card (not modified). Any
      integer dtype for the arrays; each dtype combination is one more compiled (cached)
      specialization, so the tests and the bench use int64 throughout.
    * ``card``: the hu card kind 0..19, or -1 (Python ``None``: a dealt-hand evaluation).
    * ``source``: :class:`engine.hu.Source` value (``SRC_*``); ``tianhu``/``haidi``/``dihu``:
      0/1, the :class:`~engine.hu.HuContext` flags.
    * ``out``: int64 array of at least ``OUT_SIZE`` entries, filled as:

    ==================  =================================================================
    ``O_WIN = 0``       1 win, 0 not
    ``O_REASON = 1``    :class:`engine.hu.NoWin` value, 0 for a win, ``R_INVALID = -1`` where
                        the Python raises InvalidNotation (5 copies of a face)
    ``O_OPTION = 2``    ``OPT_*``: -1 none, 0 'F', 1 'K', 2 'P', 3 'W', 4 '0', 5 'A'
    ``O_HUXI = 3``      胡息 of the chosen reading; -1 where the Python has None
    ``O_DENG = 4``      等 (0 unless a win)
    ``O_FAN = 5``       番 (Luzhou: the multiplier; 0 unless a win)
    ``O_SCORE = 6``     等 × 番 (0 unless a win)
    ``O_MINGTANG = 7``  bitmask of the 名堂 items reported, bits ``MT_*`` = replay
                        ``MINGTANG_BITS`` (honghu 0 … lz_dihu 13)
    ``O_ZIMO = 8``      0/1 (0 unless a win)
    ``O_TIANHU = 9``    0/1 (0 unless a win)
    ==================  =================================================================

``hu_eval_ws(params, meld_kind, meld_card, n_melds, hand_counts, card, source, tianhu, haidi,
dihu, out, ws) -> int``
    the same with the caller's scratch array ``ws`` (int64, at least ``WS_SIZE``; contents
    irrelevant, overwritten): saves the one allocation per call of ``hu_eval``.

``hu_eval_at(params, meld_kind, k0, meld_card, c0, n_melds, hand_counts, h0, card, source,
tianhu, haidi, dihu, out, o, ws, w) -> int``
    the same on parts of larger arrays: melds ``meld_kind[k0:]`` / ``meld_card[c0:]``, hand
    ``hand_counts[h0 : h0 + 20]``, result ``out[o:]``, scratch ``ws[w:]`` (the compiled state
    machine reads its state in place; no views, whose reference counting costs more than many
    a search).

``hu_auto_tianhu(params, counts, out) -> int``
    :func:`engine.hu.evaluate_auto_tianhu` of one player's dealt cards given as int64[20]
    counts. Returns 1 and fills ``out`` as above (option ``OPT_A``) when the 3提/5坎 天胡
    applies; returns 0 with ``out[O_WIN] = 0``, ``out[O_REASON] = 0``, ``out[O_OPTION] = -1``
    (Python ``None``) otherwise; ``R_INVALID`` in ``out[O_REASON]`` for 5 copies of a face.
    ``hu_auto_tianhu_at(params, counts, h0, out, o)``: of ``counts[h0 : h0 + 20]`` into
    ``out[o:]``.

``out[10:16]`` are reserved (0). Speed: ``python -m engine.fast.hu_bench`` (kernel against
the Python on the inputs of recorded reference play).

Plain-Python helpers: :func:`meld_arrays` (table groups → the two arrays),
:func:`evaluate` (the kernel with Python arguments) and :func:`reference_vector` (a Python
:class:`~engine.hu.HuResult` as the same ``out`` vector; used by the differential tests).

Tables (胡息 by group, eat shapes) are module-level arrays built from :mod:`engine.groups`
at import; numba freezes them into the compiled (and cached) code. Their digest is checked
at import against ``_TABLES_DIGEST``, so a change in engine/groups.py fails loudly instead
of running stale cached code.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from engine.groups import (
    EAT_SHAPE_ID,
    EAT_SHAPES,
    Group,
    GroupKind,
    eat_shapes_for,
    huxi,
    is_sentence,
    same_face_huxi,
)
from engine.rules import RuleSet

# ---------------------------------------------------------------------------------------------
# Params
# ---------------------------------------------------------------------------------------------

P_LUZHOU = 0
P_ONE_FIVE_TEN = 1
P_VARIANT = 2
P_MIN_HUXI = 3
P_HU_ON_DISCARDS = 4
P_HUAYANG = 5
P_TIANHU_DOUBLE = 6
P_LUZHOU_DI_B = 7
P_PLAYERS = 8
P_CHOUHU = 9
P_PENG_COMPULSORY = 10
P_HUANGZHUANG_ROTATE = 11
HU_PARAMS_END = 32  # indices >= 32 belong to the state machine
PARAMS_SIZE = 32

_HUAYANG = {"basic": 0, "half": 1, "full": 2}


def rule_params(rules: RuleSet, size: int = PARAMS_SIZE) -> np.ndarray:
    """Every switch of ``rules`` as an int64 array (indices ``P_*``; 32.. left zero)."""
    if size < HU_PARAMS_END:
        raise ValueError(f"params size {size} < {HU_PARAMS_END}")
    p = np.zeros(size, dtype=np.int64)
    p[P_LUZHOU] = int(rules.luzhou)
    p[P_ONE_FIVE_TEN] = int(rules.one_five_ten)
    p[P_VARIANT] = 2 * int(rules.luzhou) + int(rules.one_five_ten)
    p[P_MIN_HUXI] = rules.min_huxi
    p[P_HU_ON_DISCARDS] = int(rules.hu_on_discards)
    p[P_HUAYANG] = _HUAYANG[rules.huayang]
    p[P_TIANHU_DOUBLE] = int(rules.tianhu_formula == "double")
    p[P_LUZHOU_DI_B] = int(rules.luzhou_di_mode == "b")
    p[P_PLAYERS] = rules.players
    p[P_CHOUHU] = int(rules.chouhu)
    p[P_PENG_COMPULSORY] = int(rules.peng_compulsory)
    p[P_HUANGZHUANG_ROTATE] = rules.huangzhuang_rotate
    return p


# ---------------------------------------------------------------------------------------------
# Codes
# ---------------------------------------------------------------------------------------------

SRC_OWN_DRAW = 0
SRC_OTHER_DRAW = 1
SRC_LIANG_DEALER = 2
SRC_LIANG_OTHER = 3
SRC_DISCARD = 4

R_INVALID = -1
R_CARD_COUNT = 1
R_NO_SPLIT = 2
R_BELOW_MIN = 3
R_OWN_PAIR = 4
R_DISCARD = 5

OPT_NONE = -1
OPT_F = 0
OPT_K = 1
OPT_P = 2
OPT_W = 3
OPT_DEALT = 4
OPT_A = 5
OPTION_CODES = {"F": OPT_F, "K": OPT_K, "P": OPT_P, "W": OPT_W, "0": OPT_DEALT, "A": OPT_A}

O_WIN = 0
O_REASON = 1
O_OPTION = 2
O_HUXI = 3
O_DENG = 4
O_FAN = 5
O_SCORE = 6
O_MINGTANG = 7
O_ZIMO = 8
O_TIANHU = 9
OUT_SIZE = 16

MT_HONGHU = 0
MT_DIANHU = 1
MT_HONGWU = 2
MT_WUHU = 3
MT_DUIDUIHU = 4
MT_HAIDI = 5
MT_DAZIHU = 6
MT_XIAOZIHU = 7
MT_DIHU = 8
MT_SHUAHOU = 9
MT_LZ_HONGHU = 10
MT_LZ_WU = 11
MT_LZ_TIANHU = 12
MT_LZ_DIHU = 13
MINGTANG_BITS = {
    "honghu": MT_HONGHU,
    "dianhu": MT_DIANHU,
    "hongwu": MT_HONGWU,
    "wuhu": MT_WUHU,
    "duiduihu": MT_DUIDUIHU,
    "haidi": MT_HAIDI,
    "dazihu": MT_DAZIHU,
    "xiaozihu": MT_XIAOZIHU,
    "dihu": MT_DIHU,
    "shuahou": MT_SHUAHOU,
    "lz_honghu": MT_LZ_HONGHU,
    "lz_wu": MT_LZ_WU,
    "lz_tianhu": MT_LZ_TIANHU,
    "lz_dihu": MT_LZ_DIHU,
}

# ---------------------------------------------------------------------------------------------
# Tables (from engine.groups; frozen into the compiled code)
# ---------------------------------------------------------------------------------------------

_NUM = 20
_NSHAPES = len(EAT_SHAPES)
_VARIANT_RULES = (
    RuleSet(),
    RuleSet(one_five_ten=True),
    RuleSet(ruleset="luzhou"),
    RuleSet(ruleset="luzhou", one_five_ten=True),
)
_MAXSH = 8  # eat shapes per lowest card (at most 6)


def _key_of(cards: Sequence[int]) -> int:
    """An int that orders groups as Python orders their card tuples (a prefix is smaller)."""
    key = 0
    for i in range(4):
        key = key * 21 + (cards[i] + 1 if i < len(cards) else 0)
    return key


def _build_tables() -> dict[str, np.ndarray]:
    sh_n = np.zeros((4, _NUM), dtype=np.int64)
    sh = np.zeros((4, _NUM, _MAXSH, 5), dtype=np.int64)  # a, b, c, 胡息, key
    same = np.zeros((4, 11, _NUM), dtype=np.int64)
    chi = np.zeros((4, _NSHAPES), dtype=np.int64)
    for v, rules in enumerate(_VARIANT_RULES):
        for cards in eat_shapes_for(rules):
            kind = GroupKind.SENTENCE if is_sentence(cards, rules) else GroupKind.JIAO
            a, b, c = cards
            j = sh_n[v, a]
            sh[v, a, j] = (a, b, c, huxi(Group(kind, cards), rules), _key_of(cards))
            sh_n[v, a] = j + 1
        for kind in (
            GroupKind.PENG,
            GroupKind.WEI,
            GroupKind.CHOUWEI,
            GroupKind.PAO,
            GroupKind.TI,
            GroupKind.KAN,
            GroupKind.PENG_HU,
        ):
            for k in range(_NUM):
                same[v, kind, k] = same_face_huxi(kind, k, rules)
        for i, cards in enumerate(EAT_SHAPES):
            chi[v, i] = huxi(Group(GroupKind.CHI, cards), rules)
    shape_cards = np.array(EAT_SHAPES, dtype=np.int64)
    shape_key = np.array([_key_of(s) for s in EAT_SHAPES], dtype=np.int64)
    red = np.array([1 if k % 10 in (1, 6, 9) else 0 for k in range(_NUM)], dtype=np.int64)
    key3 = np.array([_key_of((k, k, k)) for k in range(_NUM)], dtype=np.int64)
    key4 = np.array([_key_of((k, k, k, k)) for k in range(_NUM)], dtype=np.int64)
    key2 = np.array([_key_of((k, k)) for k in range(_NUM)], dtype=np.int64)
    return {
        "sh_n": sh_n,
        "sh": sh,
        "same": same,
        "chi": chi,
        "shape_cards": shape_cards,
        "shape_key": shape_key,
        "red": red,
        "key2": key2,
        "key3": key3,
        "key4": key4,
    }


_T = _build_tables()


def tables_digest() -> str:
    """A digest of the tables, which the compiled code holds as constants."""
    h = hashlib.sha256()
    for name in sorted(_T):
        h.update(name.encode())
        h.update(_T[name].tobytes())
    return h.hexdigest()[:16]


# numba's cache keys on this file only: if the tables built from engine.groups ever change,
# stale compiled code must not run. Update the digest (which edits this file, so the cache is
# rebuilt) after checking the change.
_TABLES_DIGEST = "b4ac2e3f8964d225"
if tables_digest() != _TABLES_DIGEST:
    raise RuntimeError(
        f"engine.fast.hu: the 胡息/shape tables changed (digest {tables_digest()}, expected "
        f"{_TABLES_DIGEST}); update _TABLES_DIGEST in engine/fast/hu.py to rebuild the cache"
    )
_SH_N = _T["sh_n"]
_SH = _T["sh"]
_SAME = _T["same"]
_CHI = _T["chi"]
_SHAPE_CARDS = _T["shape_cards"]
_SHAPE_KEY = _T["shape_key"]
_RED = _T["red"]
_KEY2 = _T["key2"]
_KEY3 = _T["key3"]
_KEY4 = _T["key4"]

_K_CHI = 0
_K_PENG = 1
_K_WEI = 2
_K_CHOUWEI = 3
_K_PAO = 4
_K_TI = 5
_K_KAN = 8
_K_PENG_HU = 9

_MAXD = 16  # DFS depth (groups in a split; 8 at most for 22 cards)
_MAXG = 24  # groups in a full reading (table melds + hand)
_MAXC = 8  # candidates (F + up to 3 run options, each with its 对对 alternative)

# One scratch array per call, indexed at offsets (a view or an array argument per part would
# cost numba reference-count calls on every call; no other allocation on the hot path). The
# kernels take the scratch as (ws, w): its parts start at w + _W_*.
_W_HC = 0
_W_POOL = _W_HC + _NUM
_W_COPT = _W_POOL + _NUM
_W_CHX = _W_COPT + _MAXC
_W_CDD = _W_CHX + _MAXC
_W_CSH = _W_CDD + _MAXC
_W_CNK = _W_CSH + _MAXC
_W_INFO = _W_CNK + _MAXC
_W_SKEYS = _W_INFO + 2
_W_DKEYS = _W_SKEYS + _MAXD
_W_SPLIT = _W_DKEYS + _MAXD
_W_CKEYS = _W_SPLIT + 6 * _MAXD
WS_SIZE = _W_CKEYS + _MAXC * _MAXG  # the scratch of hu_eval_ws

# ---------------------------------------------------------------------------------------------
# Split search
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _sort_small(a: Any, o: int, n: int) -> None:
    """Sort ``a[o : o + n]`` in place (insertion sort; n is small)."""
    for i in range(o + 1, o + n):
        x = a[i]
        j = i - 1
        while j >= o and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@njit(cache=True)
def _lex_less(a: Any, ia: int, na: int, ib: int, nb: int) -> bool:
    """a[ia : ia + na] < a[ib : ib + nb] as Python compares lists (element-wise, then the
    shorter first)."""
    n = na if na < nb else nb
    for i in range(n):
        if a[ia + i] != a[ib + i]:
            return a[ia + i] < a[ib + i]
    return na < nb


@njit(cache=True)
def _best_split(ws: Any, w: int, jiang: bool, peng: int, v: int, need_lex: bool, keys: int) -> int:
    """``engine.hu.best_split``: the most 胡息 of an exact partition of the pool
    (``ws[w + _W_POOL:]``, 20 counts) into 一句话/绞 (+ exactly one 将 iff ``jiang``; + the C8
    triple of face ``peng``, −1: none), or −1 if there is none.

    With ``need_lex``, ``ws[keys : keys + info[1]]`` receives the sorted group keys of the
    smallest canonical partition among the best (C9), as the Python's recursion finds it
    (``info`` = ``ws[w + _W_INFO:]``, 2). ``info[0]`` is 1 when the chosen partition has a
    一句话/绞. The pool is restored on return; ``ws[w + _W_SPLIT:]`` is scratch (6 × _MAXD).
    """
    cnt = w + _W_POOL
    inf = w + _W_INFO
    total = 0
    for i in range(_NUM):
        total += ws[cnt + i]
    ws[inf] = 0
    ws[inf + 1] = 0
    if total == 0:
        return -1 if jiang else 0
    # the DFS stack, one entry per depth: lowest card, next choice, removed group (-1 none,
    # 0 将, 1 triple, 2+j shape), its key and 胡息; then the sort buffer
    lo = w + _W_SPLIT
    ch = lo + _MAXD
    ga = ch + _MAXD
    gkey = ga + _MAXD
    ghx = gkey + _MAXD
    tmp = ghx + _MAXD
    k0 = 0
    while ws[cnt + k0] == 0:
        k0 += 1
    d = 0
    ws[lo] = k0
    ws[ch] = 0
    ws[ga] = -1
    best = -1
    hx = 0
    jl = jiang
    while d >= 0:
        k = ws[lo + d]
        c = ws[ch + d]
        ws[ch + d] = c + 1
        t = ws[ga + d]
        if t >= 0:  # undo the previous choice at this depth
            if t == 0:
                ws[cnt + k] += 2
                jl = True
            elif t == 1:
                ws[cnt + k] += 3
            else:
                j = t - 2
                ws[cnt + _SH[v, k, j, 0]] += 1
                ws[cnt + _SH[v, k, j, 1]] += 1
                ws[cnt + _SH[v, k, j, 2]] += 1
            hx -= ws[ghx + d]
            ws[ga + d] = -1
        nsh = _SH_N[v, k]
        if c >= 2 + nsh:
            d -= 1
            continue
        if c == 0:
            if not jl or ws[cnt + k] < 2:
                continue
            ws[cnt + k] -= 2
            jl = False
            ws[ga + d] = 0
            ws[ghx + d] = 0
            ws[gkey + d] = _KEY2[k]
        elif c == 1:
            if peng != k or ws[cnt + k] < 3:
                continue
            ws[cnt + k] -= 3
            ws[ga + d] = 1
            ws[ghx + d] = _SAME[v, _K_PENG_HU, k]
            ws[gkey + d] = _KEY3[k]
        else:
            j = c - 2
            a = cnt + _SH[v, k, j, 0]
            b = cnt + _SH[v, k, j, 1]
            e = cnt + _SH[v, k, j, 2]
            if ws[b] == 0 or ws[e] == 0:
                continue
            ws[a] -= 1
            ws[b] -= 1
            ws[e] -= 1
            if ws[a] < 0 or ws[b] < 0 or ws[e] < 0:
                ws[a] += 1
                ws[b] += 1
                ws[e] += 1
                continue
            ws[ga + d] = c
            ws[ghx + d] = _SH[v, k, j, 3]
            ws[gkey + d] = _SH[v, k, j, 4]
        hx += ws[ghx + d]
        nk = k
        while nk < _NUM and ws[cnt + nk] == 0:
            nk += 1
        if nk < _NUM:
            d += 1
            ws[lo + d] = nk
            # groups of one lowest card in option order: no repeats
            ws[ch + d] = c if nk == k else 0
            ws[ga + d] = -1
            continue
        # a complete partition
        if jl:
            continue
        if hx > best or (need_lex and hx == best):
            ng = d + 1
            if need_lex:
                for i in range(ng):
                    ws[tmp + i] = ws[gkey + i]
                _sort_small(ws, tmp, ng)
                if hx > best or _lex_less(ws, tmp, ng, keys, ws[inf + 1]):
                    for i in range(ng):
                        ws[keys + i] = ws[tmp + i]
                    ws[inf + 1] = ng
                else:
                    continue
            best = hx
            shape = 0
            for i in range(ng):
                if ws[ga + i] >= 2:
                    shape = 1
            ws[inf] = shape
    return best


@njit(cache=True)
def _duidui_split(ws: Any, w: int, jiang: bool, peng: int, v: int, keys: int) -> int:
    """``engine.hu._duidui_split``: 胡息 of the partition of the pool with no 一句话/绞, or
    −1; its keys into ``ws[keys:]`` (scratch as :func:`_best_split`)."""
    cnt = w + _W_POOL
    hx = 0
    ng = 0
    has_j = False
    for k in range(_NUM):
        n = ws[cnt + k]
        if n == 0:
            continue
        if n == 3 and k == peng:
            hx += _SAME[v, _K_PENG_HU, k]
            ws[keys + ng] = _KEY3[k]
        elif n == 2 and jiang and not has_j:
            has_j = True
            ws[keys + ng] = _KEY2[k]
        else:
            return -1
        ng += 1
    if jiang and not has_j:
        return -1
    ws[w + _W_INFO] = 0
    ws[w + _W_INFO + 1] = ng  # keys are ascending already (faces ascending, one group per face)
    return hx


@njit(cache=True)
def _best_packing(cnt: Any, v: int) -> int:
    """``engine.hu.best_packing``'s 胡息: disjoint 一句话/绞 of ``cnt``, leftovers ignored."""
    total = 0
    for i in range(_NUM):
        total += cnt[i]
    if total == 0:
        return 0
    lo = np.empty(_NUM + 2, dtype=np.int64)
    ch = np.empty(_NUM + 2, dtype=np.int64)
    ga = np.empty(_NUM + 2, dtype=np.int64)  # -1 none, 0 leftover, 1+j shape
    ghx = np.empty(_NUM + 2, dtype=np.int64)
    k0 = 0
    while cnt[k0] == 0:
        k0 += 1
    d = 0
    lo[0] = k0
    ch[0] = 0
    ga[0] = -1
    best = 0
    hx = 0
    while d >= 0:
        k = lo[d]
        c = ch[d]
        ch[d] = c + 1
        t = ga[d]
        if t >= 0:
            if t == 0:
                cnt[k] += 1
            else:
                j = t - 1
                cnt[_SH[v, k, j, 0]] += 1
                cnt[_SH[v, k, j, 1]] += 1
                cnt[_SH[v, k, j, 2]] += 1
            hx -= ghx[d]
            ga[d] = -1
        if c >= 1 + _SH_N[v, k]:
            d -= 1
            continue
        if c == 0:
            cnt[k] -= 1
            ga[d] = 0
            ghx[d] = 0
        else:
            j = c - 1
            a = _SH[v, k, j, 0]
            b = _SH[v, k, j, 1]
            e = _SH[v, k, j, 2]
            cnt[a] -= 1
            cnt[b] -= 1
            cnt[e] -= 1
            if cnt[a] < 0 or cnt[b] < 0 or cnt[e] < 0:
                cnt[a] += 1
                cnt[b] += 1
                cnt[e] += 1
                continue
            ga[d] = c
            ghx[d] = _SH[v, k, j, 3]
        hx += ghx[d]
        nk = k
        while nk < _NUM and cnt[nk] == 0:
            nk += 1
        if nk < _NUM:
            d += 1
            lo[d] = nk
            ch[d] = c if nk == k else 0  # groups of one lowest card in option order: no repeats
            ga[d] = -1
            continue
        if hx > best:
            best = hx
    return best


# ---------------------------------------------------------------------------------------------
# 等, 名堂, 番, score
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _score(
    params: Any,
    hx: int,
    red: int,
    big: int,
    small: int,
    duidui: bool,
    shuahou: bool,
    haidi: bool,
    dihu: bool,
    zimo: bool,
    tianhu: bool,
    auto: bool,
) -> tuple[int, int, int, int]:
    """``engine.scoring.score_hu``: (等, 番, score, 名堂 mask)."""
    zimo = zimo or tianhu
    if params[P_LUZHOU]:
        deng = hx - 9
        if deng < 1:
            deng = 1
        if zimo:
            deng += 1
        mode_b = params[P_LUZHOU_DI_B] != 0
        mult = 1
        mask = 0
        if mode_b and red >= 10:
            mult *= 2
            mask |= 1 << MT_LZ_HONGHU
        if mode_b and red == 0:
            mult *= 4
            mask |= 1 << MT_LZ_WU
        if tianhu:
            mult *= 2
            mask |= 1 << MT_LZ_TIANHU
        if dihu:
            mult *= 2
            mask |= 1 << MT_LZ_DIHU
        return deng, mult, deng * mult, mask
    if tianhu:
        base = 2 * hx - 12 if params[P_TIANHU_DOUBLE] else hx - 12
        deng = base // 3
        if deng < 1:
            deng = 1
        deng += 1
    else:
        deng = (hx - 12) // 3
        if deng < 1:
            deng = 1
        if zimo:
            deng += 1
    level = params[P_HUAYANG]
    fan = 0
    mask = 0
    counting = False  # a found pattern that is not needs_other
    wuhu = red == 0
    if 10 <= red <= 12:
        fan += 2
        mask |= 1 << MT_HONGHU
        counting = True
    if red == 1:
        fan += 3
        mask |= 1 << MT_DIANHU
        counting = True
    if red >= 13:
        fan += 4
        mask |= 1 << MT_HONGWU
        counting = True
    if wuhu:
        fan += 5
        mask |= 1 << MT_WUHU
        counting = True
    if level >= 1:
        if duidui and not auto:
            fan += 5 if wuhu else 4
            mask |= 1 << MT_DUIDUIHU
            counting = True
        if haidi and not auto:
            fan += 2
            mask |= 1 << MT_HAIDI
    if level >= 2:
        if big >= 18:
            fan += 6 + big - 18
            mask |= 1 << MT_DAZIHU
            counting = True
        if small >= 16:
            fan += 8 + small - 16
            mask |= 1 << MT_XIAOZIHU
            counting = True
        if dihu and not auto:
            fan += 4
            mask |= 1 << MT_DIHU
            counting = True
        if shuahou and not auto:
            fan += 6
            mask |= 1 << MT_SHUAHOU
            counting = True
    if not counting:
        fan = 1
        mask = 0
    return deng, fan, deng * fan, mask


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _clear(out: Any, o: int) -> None:
    for i in range(OUT_SIZE):
        out[o + i] = 0
    out[o + O_OPTION] = OPT_NONE
    out[o + O_HUXI] = -1


@njit(cache=True)
def _nowin(out: Any, o: int, reason: int) -> int:
    _clear(out, o)
    out[o + O_REASON] = reason
    return 0


@njit(cache=True)
def _meld_hx_key(v: int, kind: int, mc: int) -> tuple[int, int, int, int, int]:
    """(胡息, key, cards, red cards, big cards) of a table meld."""
    if kind == _K_CHI:
        a = _SHAPE_CARDS[mc, 0]
        b = _SHAPE_CARDS[mc, 1]
        c = _SHAPE_CARDS[mc, 2]
        red = _RED[a] + _RED[b] + _RED[c]
        big = (1 if a >= 10 else 0) + (1 if b >= 10 else 0) + (1 if c >= 10 else 0)
        return _CHI[v, mc], _SHAPE_KEY[mc], 3, red, big
    n = 4 if kind >= _K_PAO else 3
    big = n if mc >= 10 else 0
    return _SAME[v, kind, mc], (_KEY4[mc] if n == 4 else _KEY3[mc]), n, _RED[mc] * n, big


@njit(cache=True)
def _finish(
    params: Any,
    ws: Any,
    w: int,
    nc: int,
    need_lex: bool,
    red: int,
    big: int,
    small: int,
    haidi: bool,
    dihu: bool,
    zimo: bool,
    tianhu: bool,
    out: Any,
    o: int,
) -> int:
    """``engine.hu._finish``: C9 over the ``nc`` candidates of the scratch (option, 胡息,
    对对, 耍猴 possible, keys: candidate i's at ``w + _W_CKEYS + i * _MAXG``)."""
    _clear(out, o)
    opt = w + _W_COPT
    chx = w + _W_CHX
    cdd = w + _W_CDD
    csh = w + _W_CSH
    cnk = w + _W_CNK
    ckeys = w + _W_CKEYS
    min_hx = params[P_MIN_HUXI]
    bi = -1
    b_score = 0
    b_deng = 0
    b_fan = 0
    b_mask = 0
    for i in range(nc):
        hx = ws[chx + i]
        if hx < min_hx:
            continue
        deng, fan, score, mask = _score(
            params,
            hx,
            red,
            big,
            small,
            ws[cdd + i] != 0,
            ws[csh + i] != 0,
            haidi,
            dihu,
            zimo,
            tianhu,
            False,
        )
        better = bi < 0
        if not better:
            if score != b_score:
                better = score > b_score
            elif hx != ws[chx + bi]:
                better = hx > ws[chx + bi]
            elif need_lex:
                better = _lex_less(
                    ws, ckeys + i * _MAXG, ws[cnk + i], ckeys + bi * _MAXG, ws[cnk + bi]
                )
        if better:
            bi = i
            b_deng = deng
            b_fan = fan
            b_score = score
            b_mask = mask
    if bi < 0:
        bi = 0
        for i in range(1, nc):
            if ws[chx + i] != ws[chx + bi]:
                if ws[chx + i] > ws[chx + bi]:
                    bi = i
            elif need_lex and _lex_less(
                ws, ckeys + i * _MAXG, ws[cnk + i], ckeys + bi * _MAXG, ws[cnk + bi]
            ):
                bi = i
        out[o + O_REASON] = R_BELOW_MIN
        out[o + O_OPTION] = ws[opt + bi]
        out[o + O_HUXI] = ws[chx + bi]
        return 0
    out[o + O_WIN] = 1
    out[o + O_OPTION] = ws[opt + bi]
    out[o + O_HUXI] = ws[chx + bi]
    out[o + O_DENG] = b_deng
    out[o + O_FAN] = b_fan
    out[o + O_SCORE] = b_score
    out[o + O_MINGTANG] = b_mask
    out[o + O_ZIMO] = 1 if zimo else 0
    out[o + O_TIANHU] = 1 if tianhu else 0
    return 1


@njit(cache=True)
def _candidate(ws: Any, w: int, i: int, opt: int, hx: int, dd: int, sh: int) -> None:
    """Candidate ``i`` of the scratch: option, 胡息, 对对 (1: no 一句话/绞), 耍猴 possible."""
    ws[w + _W_COPT + i] = opt
    ws[w + _W_CHX + i] = hx
    ws[w + _W_CDD + i] = dd
    ws[w + _W_CSH + i] = sh


@njit(cache=True)
def hu_eval(
    params: Any,
    meld_kind: Any,
    meld_card: Any,
    n_melds: int,
    hand_counts: Any,
    card: int,
    source: int,
    tianhu: int,
    haidi: int,
    dihu: int,
    out: Any,
) -> int:
    """:func:`engine.hu.evaluate_hu_counts` (see the module docstring for the arguments)."""
    ws = np.empty(WS_SIZE, dtype=np.int64)
    return hu_eval_ws(
        params, meld_kind, meld_card, n_melds, hand_counts, card, source, tianhu, haidi, dihu,
        out, ws,
    )  # fmt: skip


@njit(cache=True)
def hu_eval_ws(
    params: Any,
    meld_kind: Any,
    meld_card: Any,
    n_melds: int,
    hand_counts: Any,
    card: int,
    source: int,
    tianhu: int,
    haidi: int,
    dihu: int,
    out: Any,
    ws: Any,
) -> int:
    """:func:`hu_eval` with the caller's scratch ``ws`` (int64[WS_SIZE], any content)."""
    return hu_eval_at(
        params, meld_kind, 0, meld_card, 0, n_melds, hand_counts, 0, card, source, tianhu, haidi,
        dihu, out, 0, ws, 0,
    )  # fmt: skip


@njit(cache=True)
def hu_eval_at(
    params: Any,
    meld_kind: Any,
    k0: int,
    meld_card: Any,
    c0: int,
    n_melds: int,
    hand_counts: Any,
    h0: int,
    card: int,
    source: int,
    tianhu: int,
    haidi: int,
    dihu: int,
    out: Any,
    o: int,
    ws: Any,
    w: int,
) -> int:
    """:func:`hu_eval_ws` on parts of larger arrays, without views: the melds are
    ``meld_kind[k0 : k0 + n_melds]`` / ``meld_card[c0 :]``, the hand
    ``hand_counts[h0 : h0 + 20]``, the result ``out[o : o + OUT_SIZE]``, the scratch
    ``ws[w : w + WS_SIZE]`` (the compiled state machine passes its state and one int64 array
    holding params, out and scratch)."""
    if source == SRC_DISCARD and params[P_HU_ON_DISCARDS] == 0:
        return _nowin(out, o, R_DISCARD)
    v = params[P_VARIANT]
    hc = hand_counts  # read only, at h0
    hand_size = 0
    mx = 0
    for k in range(_NUM):
        x = hc[h0 + k]
        hand_size += x
        if x > mx:
            mx = x
    th = tianhu != 0 or source == SRC_LIANG_DEALER or source == SRC_LIANG_OTHER  # noqa: SIM109 (numba)
    zimo = th or source == SRC_OWN_DRAW
    if card < 0 or source == SRC_LIANG_DEALER:
        return _eval_dealt(
            params, v, meld_kind, k0, meld_card, c0, n_melds, hc, h0, card, hand_size, haidi, dihu,
            zimo, th, out, o, ws, w,
        )  # fmt: skip
    if hc[h0 + card] >= 4 or mx > 4:
        return _nowin(out, o, R_INVALID)
    q0 = 0
    n = hand_size + 1
    run_i = -1
    run_w = False  # the run meld is a 偎/臭偎 (option W), else a 碰 (P)
    melds_hx = 0
    red = _RED[card]
    big = 1 if card >= 10 else 0
    has_chi = False
    for i in range(n_melds):
        kind = meld_kind[k0 + i]
        mc = meld_card[c0 + i]
        mhx, _key, m_n, m_red, m_big = _meld_hx_key(v, kind, mc)
        n += m_n
        melds_hx += mhx
        red += m_red
        big += m_big
        if kind >= _K_PAO:
            q0 += 1
        elif kind == _K_CHI:
            has_chi = True
        elif mc == card:
            run_i = i
            run_w = kind != _K_PENG
    nc = hc[h0 + card]
    if source == SRC_OWN_DRAW and (nc >= 2 or (run_i >= 0 and run_w)):
        return _nowin(out, o, R_OWN_PAIR)
    opt_f = n == (21 if q0 <= 1 else 20 + q0)
    opt_run = n == 21 + q0
    if not opt_f and not opt_run:
        return _nowin(out, o, R_CARD_COUNT)
    foreign = source == SRC_OTHER_DRAW or source == SRC_LIANG_OTHER or source == SRC_DISCARD  # noqa: SIM109
    pool = w + _W_POOL
    kan_hx = 0
    for k in range(_NUM):
        x = hc[h0 + k]
        red += _RED[k] * x
        if k >= 10:
            big += x
        if x == 3:
            ws[pool + k] = 0
            kan_hx += _SAME[v, _K_KAN, k]
        else:
            ws[pool + k] = x
    small = n - big
    run_k = opt_run and nc == 3 and foreign
    run_p = (
        opt_run
        and run_i >= 0
        and not run_w
        and (source == SRC_OWN_DRAW or source == SRC_OTHER_DRAW)  # noqa: SIM109
    )
    run_ww = opt_run and run_i >= 0 and run_w and source != SRC_OWN_DRAW
    n_runs = (1 if run_k else 0) + (1 if run_p else 0) + (1 if run_ww else 0)
    if opt_run and n_runs == 0 and not opt_f:
        return _nowin(out, o, R_CARD_COUNT)
    need_lex = (1 if opt_f else 0) + n_runs > 1

    info = w + _W_INFO
    skeys = w + _W_SKEYS
    dkeys = w + _W_DKEYS
    for i in range(_MAXC):
        ws[w + _W_CNK + i] = 0
    ncand = 0
    shua = hand_size == 1
    fixed_base = melds_hx + kan_hx
    if opt_f:
        ws[pool + card] += 1
        jiang = q0 >= 1
        peng = card if foreign and nc == 2 else -1
        r = _best_split(ws, w, jiang, peng, v, need_lex, skeys)
        if r >= 0:
            has_shape = ws[info]
            sh = 1 if (shua and jiang) else 0
            _candidate(ws, w, ncand, OPT_F, fixed_base + r, 0 if (has_chi or has_shape) else 1, sh)
            if need_lex:
                _fill_keys(
                    ws, w, ncand, meld_kind, k0, meld_card, c0, n_melds, hc, h0, -1, -1, -1, skeys,
                    ws[info + 1],
                )  # fmt: skip
            ncand += 1
            if has_shape:
                r2 = _duidui_split(ws, w, jiang, peng, v, skeys)
                if r2 >= 0:
                    _candidate(ws, w, ncand, OPT_F, fixed_base + r2, 0 if has_chi else 1, sh)
                    if need_lex:
                        _fill_keys(
                            ws, w, ncand, meld_kind, k0, meld_card, c0, n_melds, hc, h0, -1, -1, -1,
                            skeys, ws[info + 1],
                        )  # fmt: skip
                    ncand += 1
        ws[pool + card] -= 1
    if n_runs > 0:
        r = _best_split(ws, w, True, -1, v, need_lex, skeys)
        if r >= 0:
            has_shape = ws[info]
            n_split = ws[info + 1]
            r2 = -1
            n_dd = 0
            if has_shape:
                r2 = _duidui_split(ws, w, True, -1, v, dkeys)
                n_dd = ws[info + 1]
            sh = 1 if shua else 0
            for q in range(3):
                if q == 0:
                    if not run_k:
                        continue
                    opt = OPT_K
                    fx = fixed_base - _SAME[v, _K_KAN, card] + _SAME[v, _K_PAO, card]
                    ri = -1
                    kq = card
                elif q == 1:
                    if not run_p:
                        continue
                    opt = OPT_P
                    mhx, _key, _n, _r, _b = _meld_hx_key(
                        v, meld_kind[k0 + run_i], meld_card[c0 + run_i]
                    )
                    fx = fixed_base - mhx + _SAME[v, _K_PAO, card]
                    ri = run_i
                    kq = -1
                else:
                    if not run_ww:
                        continue
                    opt = OPT_W
                    mhx, _key, _n, _r, _b = _meld_hx_key(
                        v, meld_kind[k0 + run_i], meld_card[c0 + run_i]
                    )
                    fx = fixed_base - mhx + _SAME[v, _K_PAO, card]
                    ri = run_i
                    kq = -1
                _candidate(ws, w, ncand, opt, fx + r, 0 if (has_chi or has_shape) else 1, sh)
                if need_lex:
                    _fill_keys(
                        ws, w, ncand, meld_kind, k0, meld_card, c0, n_melds, hc, h0, ri, card, kq,
                        skeys, n_split,
                    )  # fmt: skip
                ncand += 1
                if r2 >= 0:
                    _candidate(ws, w, ncand, opt, fx + r2, 0 if has_chi else 1, sh)
                    if need_lex:
                        _fill_keys(
                            ws, w, ncand, meld_kind, k0, meld_card, c0, n_melds, hc, h0, ri, card,
                            kq, dkeys, n_dd,
                        )  # fmt: skip
                    ncand += 1
    if ncand == 0:
        return _nowin(out, o, R_NO_SPLIT)
    return _finish(
        params, ws, w, ncand, need_lex, red, big, small, haidi != 0, dihu != 0, zimo, th, out, o
    )


@njit(cache=True)
def _fill_keys(
    ws: Any,
    w: int,
    ci: int,
    meld_kind: Any,
    k0: int,
    meld_card: Any,
    c0: int,
    n_melds: int,
    hc: Any,
    h0: int,
    run_i: int,
    card: int,
    pao_kan: int,
    skeys: int,
    ns: int,
) -> None:
    """The sorted keys of candidate ``ci``'s reading: melds (meld ``run_i`` as 跑 ``card``),
    the 坎 of the hand (face ``pao_kan`` as a 跑), then the split ``ws[skeys : skeys + ns]``."""
    dst = w + _W_CKEYS + ci * _MAXG
    m = dst
    for i in range(n_melds):
        if i == run_i:
            ws[m] = _KEY4[card]
        else:
            kind = meld_kind[k0 + i]
            mc = meld_card[c0 + i]
            if kind == _K_CHI:
                ws[m] = _SHAPE_KEY[mc]
            elif kind >= _K_PAO:
                ws[m] = _KEY4[mc]
            else:
                ws[m] = _KEY3[mc]
        m += 1
    for k in range(_NUM):
        if hc[h0 + k] == 3:
            ws[m] = _KEY4[k] if k == pao_kan else _KEY3[k]
            m += 1
    for i in range(ns):
        ws[m] = ws[skeys + i]
        m += 1
    _sort_small(ws, dst, m - dst)
    ws[w + _W_CNK + ci] = m - dst


@njit(cache=True)
def _eval_dealt(
    params: Any,
    v: int,
    meld_kind: Any,
    k0: int,
    meld_card: Any,
    c0: int,
    n_melds: int,
    hand_counts: Any,
    h0: int,
    card: int,
    hand_size: int,
    haidi: int,
    dihu: int,
    zimo: bool,
    th: bool,
    out: Any,
    o: int,
    ws: Any,
    w: int,
) -> int:
    """``engine.hu._evaluate_dealt``: §10.3 step 0 (``hand_counts`` is not modified)."""
    hc = w + _W_HC
    for k in range(_NUM):
        ws[hc + k] = hand_counts[h0 + k]
    q = 0
    n = 0
    in_ti = False
    melds_hx = 0
    red = 0
    big = 0
    has_chi = False
    for i in range(n_melds):
        kind = meld_kind[k0 + i]
        mc = meld_card[c0 + i]
        mhx, _key, m_n, m_red, m_big = _meld_hx_key(v, kind, mc)
        n += m_n
        melds_hx += mhx
        red += m_red
        big += m_big
        if kind >= _K_PAO:
            q += 1
            if kind == _K_TI and mc == card:
                in_ti = True
        elif kind == _K_CHI:
            has_chi = True
    if card >= 0 and not in_ti:
        ws[hc + card] += 1
    pool = w + _W_POOL
    fixed_hx = melds_hx
    for k in range(_NUM):
        x = ws[hc + k]
        if x > 4:
            return _nowin(out, o, R_INVALID)
        n += x
        red += _RED[k] * x
        if k >= 10:
            big += x
        if x == 4:
            q += 1
            fixed_hx += _SAME[v, _K_TI, k]
            ws[pool + k] = 0
        elif x == 3:
            fixed_hx += _SAME[v, _K_KAN, k]
            ws[pool + k] = 0
        else:
            ws[pool + k] = x
    if n != 21 + (q - 1 if q > 1 else 0):
        return _nowin(out, o, R_CARD_COUNT)
    jiang = q >= 1
    info = w + _W_INFO
    r = _best_split(ws, w, jiang, -1, v, False, w + _W_SKEYS)
    if r < 0:
        return _nowin(out, o, R_NO_SPLIT)
    shua = 1 if (hand_size == 1 and jiang) else 0
    has_shape = ws[info]
    _candidate(ws, w, 0, OPT_DEALT, fixed_hx + r, 0 if (has_chi or has_shape) else 1, shua)
    ncand = 1
    if has_shape:
        r2 = _duidui_split(ws, w, jiang, -1, v, w + _W_SKEYS)
        if r2 >= 0:
            _candidate(ws, w, 1, OPT_DEALT, fixed_hx + r2, 0 if has_chi else 1, shua)
            ncand = 2
    return _finish(
        params, ws, w, ncand, False, red, big, n - big, haidi != 0, dihu != 0, zimo, th, out, o
    )


@njit(cache=True)
def hu_auto_tianhu(params: Any, counts: Any, out: Any) -> int:
    """:func:`engine.hu.evaluate_auto_tianhu` of the dealt cards ``counts`` (int64[20])."""
    return hu_auto_tianhu_at(params, counts, 0, out, 0)


@njit(cache=True)
def hu_auto_tianhu_at(params: Any, counts: Any, h0: int, out: Any, o: int) -> int:
    """:func:`hu_auto_tianhu` of ``counts[h0 : h0 + 20]`` into ``out[o : o + OUT_SIZE]``."""
    _clear(out, o)
    v = params[P_VARIANT]
    n_ti = 0
    n_kan = 0
    red = 0
    big = 0
    n = 0
    for k in range(_NUM):
        x = counts[h0 + k]
        if x > 4:
            out[o + O_REASON] = R_INVALID
            return 0
        n += x
        red += _RED[k] * x
        if k >= 10:
            big += x
        if x == 4:
            n_ti += 1
        elif x == 3:
            n_kan += 1
    if n_ti < 3 and n_ti + n_kan < 5:
        return 0
    c = np.empty(_NUM, dtype=np.int64)
    total = 0
    for k in range(_NUM):
        x = counts[h0 + k]
        if x == 4:
            total += _SAME[v, _K_TI, k]
            c[k] = 0
        elif x == 3:
            total += _SAME[v, _K_KAN, k]
            c[k] = 0
        else:
            c[k] = x
    total += _best_packing(c, v)
    deng, fan, score, mask = _score(
        params, total, red, big, n - big, False, False, False, False, True, True, True
    )
    out[o + O_WIN] = 1
    out[o + O_OPTION] = OPT_A
    out[o + O_HUXI] = total
    out[o + O_DENG] = deng
    out[o + O_FAN] = fan
    out[o + O_SCORE] = score
    out[o + O_MINGTANG] = mask
    out[o + O_ZIMO] = 1
    out[o + O_TIANHU] = 1
    return 1


# ---------------------------------------------------------------------------------------------
# Plain-Python helpers
# ---------------------------------------------------------------------------------------------


def meld_arrays(melds: Sequence[Group]) -> tuple[np.ndarray, np.ndarray, int]:
    """Table groups as (meld_kind, meld_card, n_melds) for :func:`hu_eval`."""
    n = len(melds)
    kind = np.zeros(max(n, 1), dtype=np.int64)
    mc = np.zeros(max(n, 1), dtype=np.int64)
    for i, g in enumerate(melds):
        kind[i] = int(g.kind)
        mc[i] = EAT_SHAPE_ID[g.cards] if g.kind == GroupKind.CHI else g.cards[0]  # type: ignore[index]
    return kind, mc, n


def evaluate(
    params: np.ndarray,
    melds: Sequence[Group],
    hand_counts: Sequence[int],
    card: int | None,
    source: int,
    tianhu: bool = False,
    haidi: bool = False,
    dihu: bool = False,
) -> np.ndarray:
    """:func:`hu_eval` with Python arguments; returns the ``out`` vector."""
    kind, mc, n = meld_arrays(melds)
    out = np.zeros(OUT_SIZE, dtype=np.int64)
    hc = np.array(list(hand_counts), dtype=np.int64)
    hu_eval(
        params,
        kind,
        mc,
        n,
        hc,
        -1 if card is None else card,
        int(source),
        int(tianhu),
        int(haidi),
        int(dihu),
        out,
    )
    return out


def mingtang_mask(rules: RuleSet, items: Sequence[tuple[str, int]]) -> int:
    """The ``MT_*`` bitmask of a Python result's 名堂 items (Chinese names)."""
    from engine.mingtang import HUNAN_MINGTANG, LUZHOU_MINGTANG

    table = LUZHOU_MINGTANG if rules.luzhou else HUNAN_MINGTANG
    by_name = {m.name: MINGTANG_BITS[m.pinyin] for m in table}
    mask = 0
    for name, _ in items:
        mask |= 1 << by_name[name]
    return mask


def reference_vector(rules: RuleSet, res: Any) -> np.ndarray:
    """A Python :class:`~engine.hu.HuResult` (or None from evaluate_auto_tianhu) as ``out``."""
    out = np.zeros(OUT_SIZE, dtype=np.int64)
    out[O_OPTION] = OPT_NONE
    out[O_HUXI] = -1
    if res is None:
        return out
    out[O_WIN] = int(res.win)
    out[O_REASON] = 0 if res.reason is None else int(res.reason)
    out[O_OPTION] = OPT_NONE if res.option is None else OPTION_CODES[res.option]
    out[O_HUXI] = -1 if res.huxi is None else res.huxi
    out[O_DENG] = res.deng
    out[O_FAN] = res.fan
    out[O_SCORE] = res.score
    out[O_MINGTANG] = mingtang_mask(rules, res.mingtang)
    out[O_ZIMO] = int(res.zimo)
    out[O_TIANHU] = int(res.tianhu)
    return out
