"""Compiled ``paohuzi score --batch``: parse, evaluate and format a chunk of JSON lines in one
numba call (the driver, with the exact Python fallback, is :func:`replay.calculator.run_batch`
with ``engine="fast"``).

:func:`score_chunk` reads the raw bytes of many input lines. It accepts a line only in the
plain form it can read with certainty — one JSON object with the keys ``hand``, ``melds``,
``card``, ``source``, ``haidi``, ``dihu``, ``tianhu``, ``id``, no key twice, strings without
escapes, cards in the 20 canonical characters, melds as ``chi:A,B,C`` / ``peng:X`` / ``wei:X``
/ ``chouwei:X`` / ``pao:X`` / ``ti:X``, an integer or ASCII-string ``id`` — and that is valid
(at most 4 copies of a face, a source that fits the card). Such a line is evaluated with
:func:`engine.fast.hu.hu_eval_ws` under the default rules and its output line written, in the
exact format of the reference. Every other line (an error of any kind, ``rules``/``set``,
aliases, escapes, unusual spacing inside tokens …) is marked ``FALLBACK``; the caller parses
it with the reference Python and evaluates it with :func:`eval_requests` (or the reference
evaluator), so errors are always the reference's own.

The lookup tables (card code points, eat shapes, words, output fragments) are arguments, not
compiled-in constants: the cached code does not go stale when engine.cards or engine.melds
change; :mod:`engine.fast.cache` drops it when engine/fast/hu.py (inlined) changes.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.fast import cache as _cache

_cache.configure()

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from engine.cards import CARD_CHARS, NUM_KINDS  # noqa: E402
from engine.errors import InvalidNotation  # noqa: E402
from engine.fast import hu as _k  # noqa: E402
from engine.groups import EAT_SHAPE_ID, GroupKind  # noqa: E402
from engine.melds import parse_meld  # noqa: E402

__all__ = [
    "BLANK",
    "DONE",
    "FALLBACK",
    "MAX_MELDS",
    "Tables",
    "eval_requests",
    "score_chunk",
    "warm_up",
]

BLANK = 0  # a blank line: no output
DONE = 1  # evaluated and written to the output buffer
FALLBACK = 2  # the Python must parse (and evaluate) this line
MAX_MELDS = 16  # more table melds: the Python path (never a win; the kernel's arrays are small)
_OUT_PER_LINE = 192  # bytes of output per line (3 numbers of 19 digits), plus the line's length

# Words the parser matches (ASCII, exact).
_WORDS = (
    "hand",  # 0
    "melds",
    "card",
    "source",
    "haidi",
    "dihu",
    "tianhu",
    "id",  # 7
    "chi",  # 8
    "peng",
    "wei",
    "chouwei",
    "pao",
    "ti",  # 13
    "own",  # 14
    "other",
    "liang",
    "liang-dealer",
    "discard",  # 18
)
_W_KEYS = 0
_W_MELDS = 8
_W_SOURCES = 14
_MELD_WORD_KIND = (
    GroupKind.CHI,
    GroupKind.PENG,
    GroupKind.WEI,
    GroupKind.CHOUWEI,
    GroupKind.PAO,
    GroupKind.TI,
)
_SOURCE_WORDS = _WORDS[_W_SOURCES:]

# Output fragments.
_F_OPEN = 0
_F_NOWIN = 1
_F_REASON = 2
_F_NOWIN_END = 3
_F_WIN = 4
_F_DENG = 5
_F_FAN = 6
_F_SCORE = 7
_F_CLOSE = 8
_F_NULL = 9
_F_ID = 10
_F_COMMA = 11
_F_UNSCORED = 12
_F_REASONS = 13  # + NoWin value - 1


class Tables:
    """The arrays :func:`score_chunk` reads (build once per batch)."""

    def __init__(self, sources: Mapping[str, tuple[int, bool]], reasons: Sequence[str]) -> None:
        """``sources``: CLI source name → (engine source code, is a 天胡), as
        ``replay.calculator.SOURCES``; ``reasons``: the output name of NoWin 1, 2, …"""
        cp = np.full(1 << 16, -1, dtype=np.int64)
        for k, ch in enumerate(CARD_CHARS):
            cp[ord(ch)] = k
        self.cp_kind = cp
        # chi: the sorted triple → eat-shape id, exactly where parse_meld accepts the token.
        chi = np.full(NUM_KINDS**3, -1, dtype=np.int64)
        for a in range(NUM_KINDS):
            for b in range(a, NUM_KINDS):
                for c in range(b, NUM_KINDS):
                    tok = f"chi:{CARD_CHARS[a]},{CARD_CHARS[b]},{CARD_CHARS[c]}"
                    try:
                        g = parse_meld(tok)
                    except InvalidNotation:
                        continue
                    if g.kind == GroupKind.CHI and g.cards == (a, b, c) and g.cards in EAT_SHAPE_ID:
                        chi[(a * NUM_KINDS + b) * NUM_KINDS + c] = EAT_SHAPE_ID[g.cards]
        self.chi_shape = chi
        # one-face melds: the parse_meld result of "name:X" for each name and card
        mk = np.full(len(_MELD_WORD_KIND), -1, dtype=np.int64)
        msize = np.zeros(len(_MELD_WORD_KIND), dtype=np.int64)
        for i, name in enumerate(_WORDS[_W_MELDS:_W_SOURCES]):
            if _MELD_WORD_KIND[i] == GroupKind.CHI:
                mk[i] = int(GroupKind.CHI)
                msize[i] = 3
                continue
            ok = True
            for k, ch in enumerate(CARD_CHARS):
                g = parse_meld(f"{name}:{ch}")
                ok = ok and g.kind == _MELD_WORD_KIND[i] and g.cards == (k,) * len(g.cards)
                msize[i] = len(g.cards)
            mk[i] = int(_MELD_WORD_KIND[i]) if ok else -1
        self.meld_kind = mk
        self.meld_size = msize
        words = np.zeros((len(_WORDS), 16), dtype=np.uint8)
        wlen = np.zeros(len(_WORDS), dtype=np.int64)
        for i, w in enumerate(_WORDS):
            wb = w.encode()
            words[i, : len(wb)] = np.frombuffer(wb, dtype=np.uint8)
            wlen[i] = len(wb)
        self.words = words
        self.wlen = wlen
        src = np.full((len(_SOURCE_WORDS), 2), -1, dtype=np.int64)
        for i, name in enumerate(_SOURCE_WORDS):
            if name in sources:
                code, tian = sources[name]
                src[i] = (int(code), int(tian))
        self.sources = src
        frags = [
            "{",
            '"win":false,"huxi":',
            ',"reason":',
            ',"deng":null,"fan":null,"score":null}',
            '"win":true,"huxi":',
            ',"reason":null,"deng":',
            ',"fan":',
            ',"score":',
            "}",
            "null",
            '"id":',
            ",",
            ',"reason":null,"deng":null,"fan":null,"score":null}',
            *(f'"{r}"' for r in reasons),
        ]
        blob = b"".join(f.encode() for f in frags)
        off = np.zeros(len(frags) + 1, dtype=np.int64)
        off[1:] = np.cumsum([len(f.encode()) for f in frags])
        self.frag = np.frombuffer(blob, dtype=np.uint8).copy()
        self.frag_off = off
        self.n_reasons = len(reasons)


# ---------------------------------------------------------------------------------------------
# The parser (numba)
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _skip_ws(d: Any, p: int, e: int) -> int:
    while p < e:
        c = d[p]
        if c == 32 or c == 9 or c == 10 or c == 13:  # noqa: PLR1714 (numba)
            p += 1
        else:
            break
    return p


@njit(cache=True)
def _string_end(d: Any, p: int, e: int) -> int:
    """``d[p]`` is the opening quote: the index of the closing one, or -1 (an escape, a
    control character or no end: left to the Python)."""
    p += 1
    while p < e:
        c = d[p]
        if c == 34:
            return p
        if c == 92 or c < 32:
            return -1
        p += 1
    return -1


@njit(cache=True)
def _word(d: Any, a: int, n: int, words: Any, wlen: Any, lo: int, hi: int) -> int:
    for w in range(lo, hi):
        if wlen[w] != n:
            continue
        ok = True
        for j in range(n):
            if d[a + j] != words[w, j]:
                ok = False
                break
        if ok:
            return w
    return -1


@njit(cache=True)
def _card_at(d: Any, p: int, e: int, cp_kind: Any) -> int:
    """The card kind of the 3-byte character at ``p`` (< ``e``), or -1."""
    if p + 3 > e:
        return -1
    b0 = d[p]
    b1 = d[p + 1]
    b2 = d[p + 2]
    if b0 < 0xE0 or b0 > 0xEF or b1 < 0x80 or b1 > 0xBF or b2 < 0x80 or b2 > 0xBF:
        return -1
    return cp_kind[((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)]


@njit(cache=True)
def _literal(d: Any, p: int, e: int, lit: int) -> int:
    """The end of ``true`` (lit 1) / ``false`` (0) / ``null`` (2) at ``p``, or -1."""
    if lit == 1:
        if p + 4 <= e and d[p] == 116 and d[p + 1] == 114 and d[p + 2] == 117 and d[p + 3] == 101:
            return p + 4
    elif lit == 0:
        if (
            p + 5 <= e
            and d[p] == 102
            and d[p + 1] == 97
            and d[p + 2] == 108
            and d[p + 3] == 115
            and d[p + 4] == 101
        ):
            return p + 5
    elif p + 4 <= e and d[p] == 110 and d[p + 1] == 117 and d[p + 2] == 108 and d[p + 3] == 108:
        return p + 4
    return -1


@njit(cache=True)
def _put(o: Any, q: int, frag: Any, frag_off: Any, f: int) -> int:
    for j in range(frag_off[f], frag_off[f + 1]):
        o[q] = frag[j]
        q += 1
    return q


@njit(cache=True)
def _put_int(o: Any, q: int, x: int) -> int:
    if x < 0:
        o[q] = 45
        q += 1
        x = -x
    if x == 0:
        o[q] = 48
        return q + 1
    n = 0
    y = x
    while y > 0:
        n += 1
        y //= 10
    for j in range(n - 1, -1, -1):
        o[q + j] = 48 + x % 10
        x //= 10
    return q + n


@njit(cache=True)
def _parse_line(
    d: Any,
    p: int,
    e: int,
    cp_kind: Any,
    chi_shape: Any,
    meld_kind_t: Any,
    meld_size_t: Any,
    words: Any,
    wlen: Any,
    sources: Any,
    hc: Any,
    tot: Any,
    mk: Any,
    mc: Any,
    req: Any,
) -> bool:
    """Parse ``d[p:e]`` (stripped, non-empty); False: FALLBACK. Fills the hand counts ``hc``,
    all cards ``tot``, the melds ``mk``/``mc`` and ``req`` = [n_melds, card, source code
    (-1 absent), tianhu, haidi, dihu, id start, id end (-1 none), source tian]."""
    for k in range(20):
        hc[k] = 0
        tot[k] = 0
    req[0] = 0
    req[1] = -1
    req[2] = -1
    req[3] = 0
    req[4] = 0
    req[5] = 0
    req[6] = -1
    req[7] = -1
    req[8] = 0
    if d[p] != 123:  # '{'
        return False
    p = _skip_ws(d, p + 1, e)
    seen = 0
    if p < e and d[p] == 125:  # '{}': missing "hand"
        return False
    while True:
        if p >= e or d[p] != 34:
            return False
        q = _string_end(d, p, e)
        if q < 0:
            return False
        key = _word(d, p + 1, q - p - 1, words, wlen, _W_KEYS, _W_MELDS)
        if key < 0 or (seen >> key) & 1:
            return False
        seen |= 1 << key
        p = _skip_ws(d, q + 1, e)
        if p >= e or d[p] != 58:  # ':'
            return False
        p = _skip_ws(d, p + 1, e)
        if p >= e:
            return False
        c = d[p]
        if key == 0:  # hand
            if c != 34:
                return False
            q = _string_end(d, p, e)
            if q < 0:
                return False
            i = p + 1
            while i < q:
                k = _card_at(d, i, q, cp_kind)
                if k < 0:
                    return False
                hc[k] += 1
                tot[k] += 1
                i += 3
            p = q + 1
        elif key == 1:  # melds
            if c != 91:  # '['
                return False
            p = _skip_ws(d, p + 1, e)
            if p < e and d[p] == 93:
                p += 1
            else:
                while True:
                    if p >= e or d[p] != 34:
                        return False
                    q = _string_end(d, p, e)
                    if q < 0:
                        return False
                    colon = p + 1
                    while colon < q and d[colon] != 58:
                        colon += 1
                    if colon >= q:
                        return False
                    w = _word(d, p + 1, colon - p - 1, words, wlen, _W_MELDS, _W_SOURCES)
                    if w < 0:
                        return False
                    kind = meld_kind_t[w - _W_MELDS]
                    if kind < 0:
                        return False
                    nm = req[0]
                    if nm >= mk.shape[0]:
                        return False
                    b = colon + 1
                    if kind == 0:  # chi:A,B,C
                        if q - b != 11 or d[b + 3] != 44 or d[b + 7] != 44:
                            return False
                        x = _card_at(d, b, q, cp_kind)
                        y = _card_at(d, b + 4, q, cp_kind)
                        z = _card_at(d, b + 8, q, cp_kind)
                        if x < 0 or y < 0 or z < 0:
                            return False
                        if x > y:
                            x, y = y, x
                        if y > z:
                            y, z = z, y
                        if x > y:
                            x, y = y, x
                        sid = chi_shape[(x * 20 + y) * 20 + z]
                        if sid < 0:
                            return False
                        tot[x] += 1
                        tot[y] += 1
                        tot[z] += 1
                        mk[nm] = 0
                        mc[nm] = sid
                    else:
                        if q - b != 3:
                            return False
                        x = _card_at(d, b, q, cp_kind)
                        if x < 0:
                            return False
                        tot[x] += meld_size_t[w - _W_MELDS]
                        mk[nm] = kind
                        mc[nm] = x
                    req[0] = nm + 1
                    p = _skip_ws(d, q + 1, e)
                    if p >= e:
                        return False
                    if d[p] == 93:
                        p += 1
                        break
                    if d[p] != 44:
                        return False
                    p = _skip_ws(d, p + 1, e)
        elif key == 2:  # card
            if c == 110:
                p = _literal(d, p, e, 2)
                if p < 0:
                    return False
            else:
                if c != 34:
                    return False
                q = _string_end(d, p, e)
                if q != p + 4:
                    return False
                k = _card_at(d, p + 1, q, cp_kind)
                if k < 0:
                    return False
                req[1] = k
                p = q + 1
        elif key == 3:  # source
            if c == 110:
                p = _literal(d, p, e, 2)
                if p < 0:
                    return False
            else:
                if c != 34:
                    return False
                q = _string_end(d, p, e)
                if q < 0:
                    return False
                w = _word(d, p + 1, q - p - 1, words, wlen, _W_SOURCES, words.shape[0])
                if w < 0 or sources[w - _W_SOURCES, 0] < 0:
                    return False
                req[2] = sources[w - _W_SOURCES, 0]
                req[8] = sources[w - _W_SOURCES, 1]
                p = q + 1
        elif key <= 6:  # haidi, dihu, tianhu
            if c == 116:
                p = _literal(d, p, e, 1)
                v = 1
            else:
                p = _literal(d, p, e, 0)
                v = 0
            if p < 0:
                return False
            if key == 4:
                req[4] = v
            elif key == 5:
                req[5] = v
            else:
                req[3] = v
        else:  # id: an integer that prints as written, or an ASCII string without escapes
            if c == 34:
                q = _string_end(d, p, e)
                if q < 0:
                    return False
                for i in range(p + 1, q):
                    if d[i] >= 128:
                        return False
                req[6] = p
                req[7] = q + 1
                p = q + 1
            else:
                a = p
                if c == 45:
                    p += 1
                if p >= e or d[p] < 48 or d[p] > 57:
                    return False
                if d[p] == 48:
                    if p == a + 1:  # "-0" prints as 0
                        return False
                    p += 1
                else:
                    while p < e and 48 <= d[p] <= 57:
                        p += 1
                if p - a > 18 or (p < e and (d[p] == 46 or d[p] == 101 or d[p] == 69)):  # noqa: PLR1714
                    return False
                req[6] = a
                req[7] = p
        p = _skip_ws(d, p, e)
        if p >= e:
            return False
        if d[p] == 125:  # '}'
            p += 1
            break
        if d[p] != 44:
            return False
        p = _skip_ws(d, p + 1, e)
    if p != e or not seen & 1:
        return False
    return not (seen >> 7 & 1 and req[6] < 0)  # "id" given but not understood


@njit(cache=True)
def _finish_line(tot: Any, req: Any) -> tuple[bool, int, int, int, int, int, int]:
    """The checks of ``calculator._prepare`` after parsing: (ok, card, source, tianhu, haidi,
    dihu, scored)."""
    card = req[1]
    src = req[2]
    tian = req[8]
    th_f = req[3]
    haidi = req[4]
    dihu = req[5]
    if src < 0:
        if card >= 0:
            src = _k.SRC_OTHER_DRAW
            tian = 0
        else:
            src = _k.SRC_LIANG_DEALER
            tian = 0
    elif card < 0 and src != _k.SRC_LIANG_DEALER:
        return False, 0, 0, 0, 0, 0, 0
    if card >= 0:
        tot[card] += 1
    for k in range(20):
        if tot[k] > 4:
            return False, 0, 0, 0, 0, 0, 0
    th = 1 if (tian != 0 or th_f != 0) else 0
    scored = 1 if (card >= 0 or th != 0) else 0
    return True, card, src, th, haidi, dihu, scored


@njit(cache=True)
def score_chunk(
    data: Any,
    starts: Any,
    params: Any,
    cp_kind: Any,
    chi_shape: Any,
    meld_kind_t: Any,
    meld_size_t: Any,
    words: Any,
    wlen: Any,
    sources: Any,
    frag: Any,
    frag_off: Any,
    n_reasons: int,
    status: Any,
    out: Any,
    out_end: Any,
) -> int:
    """Lines ``data[starts[i]:starts[i+1]]``: ``status[i]`` = BLANK/DONE/FALLBACK; DONE lines'
    output (with its newline) ends at ``out_end[i]`` in ``out`` (``out_end[i]`` = the previous
    end for the others). Returns the bytes written."""
    n = starts.shape[0] - 1
    hc = np.zeros(20, dtype=np.int64)
    tot = np.zeros(20, dtype=np.int64)
    mk = np.zeros(MAX_MELDS, dtype=np.int64)
    mc = np.zeros(MAX_MELDS, dtype=np.int64)
    req = np.zeros(9, dtype=np.int64)
    res = np.zeros(_k.OUT_SIZE, dtype=np.int64)
    ws = np.zeros(_k.WS_SIZE, dtype=np.int64)
    q = 0
    for i in range(n):
        a = starts[i]
        e = starts[i + 1]
        while a < e and (data[a] == 32 or (9 <= data[a] <= 13)):
            a += 1
        while e > a and (data[e - 1] == 32 or (9 <= data[e - 1] <= 13)):
            e -= 1
        if a == e:
            status[i] = BLANK
            out_end[i] = q
            continue
        status[i] = FALLBACK
        out_end[i] = q
        if not _parse_line(
            data, a, e, cp_kind, chi_shape, meld_kind_t, meld_size_t, words, wlen, sources,
            hc, tot, mk, mc, req,
        ):  # fmt: skip
            continue
        ok, card, src, th, haidi, dihu, scored = _finish_line(tot, req)
        if not ok:
            continue
        _k.hu_eval_ws(params, mk, mc, req[0], hc, card, src, th, haidi, dihu, res, ws)
        if res[_k.O_REASON] < 0 or res[_k.O_REASON] > n_reasons:
            continue
        status[i] = DONE
        q = _put(out, q, frag, frag_off, _F_OPEN)
        if req[6] >= 0:
            q = _put(out, q, frag, frag_off, _F_ID)
            for j in range(req[6], req[7]):
                out[q] = data[j]
                q += 1
            q = _put(out, q, frag, frag_off, _F_COMMA)
        hx = res[_k.O_HUXI]
        if res[_k.O_WIN] == 0:
            q = _put(out, q, frag, frag_off, _F_NOWIN)
            q = _put(out, q, frag, frag_off, _F_NULL) if hx < 0 else _put_int(out, q, hx)
            q = _put(out, q, frag, frag_off, _F_REASON)
            r = res[_k.O_REASON]
            if r == 0:
                q = _put(out, q, frag, frag_off, _F_NULL)
            else:
                q = _put(out, q, frag, frag_off, _F_REASONS + r - 1)
            q = _put(out, q, frag, frag_off, _F_NOWIN_END)
        else:
            q = _put(out, q, frag, frag_off, _F_WIN)
            q = _put(out, q, frag, frag_off, _F_NULL) if hx < 0 else _put_int(out, q, hx)
            if scored:
                q = _put(out, q, frag, frag_off, _F_DENG)
                q = _put_int(out, q, res[_k.O_DENG])
                q = _put(out, q, frag, frag_off, _F_FAN)
                q = _put_int(out, q, res[_k.O_FAN])
                q = _put(out, q, frag, frag_off, _F_SCORE)
                q = _put_int(out, q, res[_k.O_SCORE])
                q = _put(out, q, frag, frag_off, _F_CLOSE)
            else:
                q = _put(out, q, frag, frag_off, _F_UNSCORED)
        out[q] = 10
        q += 1
        out_end[i] = q
    return q


@njit(cache=True)
def _eval_requests(
    params: Any,
    pidx: Any,
    mk: Any,
    mc: Any,
    nm: Any,
    hc: Any,
    card: Any,
    src: Any,
    flags: Any,
    res: Any,
) -> None:
    ws = np.zeros(_k.WS_SIZE, dtype=np.int64)
    for i in range(pidx.shape[0]):
        _k.hu_eval_ws(
            params[pidx[i]], mk[i], mc[i], nm[i], hc[i], card[i], src[i],
            flags[i, 0], flags[i, 1], flags[i, 2], res[i], ws,
        )  # fmt: skip


def eval_requests(
    params: np.ndarray,
    pidx: Sequence[int],
    melds: Sequence[Sequence[tuple[int, int]]],
    hands: Sequence[Sequence[int]],
    cards: Sequence[int],
    sources: Sequence[int],
    flags: Sequence[tuple[int, int, int]],
) -> np.ndarray:
    """Evaluate parsed requests in one call: ``params`` (rows of ``hu.rule_params``),
    ``pidx`` the row of each request, ``melds`` (kind, card-or-shape id) pairs (at most
    MAX_MELDS), ``hands`` card kinds, ``cards`` (-1 none), ``sources`` codes, ``flags``
    (tianhu, haidi, dihu). Returns the ``hu.O_*`` rows."""
    n = len(pidx)
    mk = np.zeros((n, MAX_MELDS), dtype=np.int64)
    mc = np.zeros((n, MAX_MELDS), dtype=np.int64)
    nm = np.zeros(n, dtype=np.int64)
    hc = np.zeros((n, 20), dtype=np.int64)
    for i in range(n):
        ms = melds[i]
        nm[i] = len(ms)
        for j, (kind, code) in enumerate(ms):
            mk[i, j] = kind
            mc[i, j] = code
        row = hc[i]
        for k in hands[i]:
            row[k] += 1
    res = np.zeros((n, _k.OUT_SIZE), dtype=np.int64)
    _eval_requests(
        params,
        np.asarray(pidx, dtype=np.int64),
        mk,
        mc,
        nm,
        hc,
        np.asarray(cards, dtype=np.int64),
        np.asarray(sources, dtype=np.int64),
        np.asarray(flags, dtype=np.int64).reshape(n, 3),
        res,
    )
    return res


def out_capacity(n_lines: int, n_bytes: int) -> int:
    """Bytes of output buffer enough for ``n_lines`` lines of ``n_bytes`` input."""
    return n_lines * _OUT_PER_LINE + n_bytes


_ENTRY_POINTS = (score_chunk, _eval_requests)
_cache.drop_stale("batch_score", _ENTRY_POINTS, (Path(_k.__file__),))


def warm_up(tables: Tables, params: np.ndarray, notice: Any = None) -> float:
    """Compile (or load from the cache) both kernels. When they are not cached yet, say so
    first, once, on ``notice`` — by default stderr when it is a terminal (a script's stderr
    keeps its one-line ``Error:`` contract); ``PAOHUZI_COMPILE_NOTICE=1`` always, ``=0``
    never. Returns the seconds it took."""
    t = time.perf_counter()
    if not _cache.is_cached(_ENTRY_POINTS):
        want = os.environ.get("PAOHUZI_COMPILE_NOTICE", "")
        stream = sys.stderr if notice is None else notice
        tty = notice is not None or bool(getattr(stream, "isatty", lambda: False)())
        if want == "1" or (want != "0" and tty):
            print(
                "compiling the fast scorer (once, about 40 s; later runs load it from the cache)…",
                file=stream,
                flush=True,
            )
    data = np.frombuffer(b'{"hand":""}\n', dtype=np.uint8)
    starts = np.array([0, data.shape[0]], dtype=np.int64)
    status = np.zeros(1, dtype=np.int64)
    out_end = np.zeros(1, dtype=np.int64)
    out = np.zeros(out_capacity(1, data.shape[0]), dtype=np.uint8)
    score_chunk(
        data, starts, params, tables.cp_kind, tables.chi_shape, tables.meld_kind,
        tables.meld_size, tables.words, tables.wlen, tables.sources, tables.frag,
        tables.frag_off, tables.n_reasons, status, out, out_end,
    )  # fmt: skip
    eval_requests(params[None, :], [0], [()], [()], [-1], [_k.SRC_LIANG_DEALER], [(0, 0, 0)])
    return time.perf_counter() - t
