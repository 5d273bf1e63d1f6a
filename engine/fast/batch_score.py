"""Compiled ``paohuzi score --batch``: parse, evaluate and format a chunk of JSON lines in one
numba call (the driver, with the exact Python fallback, is :mod:`engine.calculator.fast`).

:func:`score_chunk` reads the raw bytes of many input lines. It accepts a line only in a form
it reads exactly as the reference does — one JSON object with the keys ``hand``, ``melds``,
``card``, ``source``, ``haidi``, ``dihu``, ``tianhu``, ``id``, no key twice, in any spelling a
JSON writer produces: raw UTF-8 or ``\\uXXXX`` escapes (surrogate pairs included) and the
other JSON escapes, any JSON whitespace between tokens; cards as the 20 canonical characters
or the ASCII codes ``s1``…``b10`` (with the reference's ASCII separators in a hand or a meld);
melds as ``chi:A,B,C`` / ``peng:X`` / ``wei:X`` / ``chouwei:X`` / ``pao:X`` / ``ti:X``; an
integer or string ``id`` — and that is valid (at most 4 copies of a face, a source that fits
the card). Such a line is evaluated with :func:`engine.fast.hu.hu_eval_ws` under the default
rules and its output line written, in the exact format of the reference (a string ``id`` as
``json.dumps(…, ensure_ascii=False)`` writes it). Every other line (an error of any kind,
``rules``/``set``, aliases, variant characters, lone surrogates, unusual spacing inside tokens
…) is marked ``FALLBACK``; the caller parses it with the reference Python and evaluates it with
:func:`eval_requests` (or the reference evaluator), so errors are always the reference's own.

The lookup tables (card code points, ASCII codes, separators, eat shapes, words, source codes,
output fragments) are arguments, not compiled-in constants, and are derived from the reference
parsers (engine.cards, engine.melds) and the caller's source table: the cached code does not go
stale when those change; :mod:`engine.fast.cache` drops it when engine/fast/hu.py (inlined)
changes.
"""

from __future__ import annotations

import contextlib
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

from engine.cards import CARD_CHARS, NUM_KINDS, parse_card, parse_cards  # noqa: E402
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
_MAX_CARDS = 80  # more cards in one string: some face has 5 copies, the reference's error
_MAX_WORD = 16  # code points of the longest word matched, with room

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
_W_CHI = _W_MELDS + _MELD_WORD_KIND.index(GroupKind.CHI)
_SOURCE_WORDS = _WORDS[_W_SOURCES:]
# The sources a request without one gets (calculator.request._prepare): "other" with a hu
# card; without, the code of "liang-dealer" but not its 天胡.
_S_OTHER = _SOURCE_WORDS.index("other")
_S_LIANG_DEALER = _SOURCE_WORDS.index("liang-dealer")
_GK_PAO = int(GroupKind.PAO)
_GK_TI = int(GroupKind.TI)

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

# req[]: what _parse_line found in a line.
_R_MELDS = 0  # number of melds
_R_CARD = 1  # hu card kind, -1 none
_R_SOURCE = 2  # source word (index in _SOURCE_WORDS), -1 none
_R_TIANHU = 3
_R_HAIDI = 4
_R_DIHU = 5
_R_ID_START = 6  # the id's bytes, -1 none
_R_ID_END = 7
_R_ID_STRING = 8  # 1: the id is a string (written re-encoded)
_R_SIZE = 9


def _card_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(code point → kind, ASCII separator flags, (ASCII letter, number 1..10) → kind), each
    entry exactly as engine.cards reads it (parse_cards for hands and meld bodies, parse_card
    for a hu card): only what both agree on is accepted, the rest falls back."""
    cp = np.full(1 << 16, -1, dtype=np.int64)
    for ch in CARD_CHARS:
        k = parse_card(ch)
        if parse_cards(ch) == [k]:
            cp[ord(ch)] = k
    sep = np.zeros(128, dtype=np.int64)
    code = np.full((128, 11), -1, dtype=np.int64)
    for c in range(128):
        ch = chr(c)
        with contextlib.suppress(InvalidNotation):
            sep[c] = parse_cards(ch) == []
        if not ch.isalpha():
            continue
        for num in range(1, 11):
            try:
                k = parse_card(f"{ch}{num}")
            except InvalidNotation:
                continue
            if parse_cards(f"{ch}{num}") == [k]:
                code[c, num] = k
    return cp, sep, code


class Tables:
    """The arrays :func:`score_chunk` reads (build once per batch)."""

    def __init__(self, sources: Mapping[str, tuple[int, bool]], reasons: Sequence[str]) -> None:
        """``sources``: CLI source name → (engine source code, is a 天胡), as
        ``engine.calculator.SOURCES``; ``reasons``: the output name of NoWin 1, 2, …"""
        self.cp_kind, self.sep, self.code_kind = _card_tables()
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
        # one-face melds: the parse_meld result of "name:X" and "name:XXX(X)" for each name
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
                n = len(g.cards)
                ok = ok and g.kind == _MELD_WORD_KIND[i] and g.cards == (k,) * n
                ok = ok and parse_meld(f"{name}:{ch * n}") == g
                msize[i] = n
            mk[i] = int(_MELD_WORD_KIND[i]) if ok else -1
        self.meld_kind = mk
        self.meld_size = msize
        words = np.zeros((len(_WORDS), _MAX_WORD), dtype=np.uint8)
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

    def args(self) -> tuple[Any, ...]:
        """The tables in :func:`score_chunk`'s argument order (after ``params``)."""
        return (
            self.cp_kind, self.sep, self.code_kind, self.chi_shape, self.meld_kind,
            self.meld_size, self.words, self.wlen, self.sources, self.frag, self.frag_off,
            self.n_reasons,
        )  # fmt: skip


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
    """``d[p]`` is the opening quote: the index of the closing one, or -1 (a control character
    or no end: left to the Python). An escape's validity is :func:`_next_cp`'s to check."""
    p += 1
    while p < e:
        c = d[p]
        if c == 34:
            return p
        if c == 92:
            p += 2
            continue
        if c < 32:
            return -1
        p += 1
    return -1


@njit(cache=True)
def _hex4(d: Any, i: int, q: int) -> int:
    """The value of 4 hex digits at ``d[i:i+4]`` (all before ``q``), or -1."""
    if i + 4 > q:
        return -1
    v = 0
    for j in range(i, i + 4):
        c = d[j]
        if 48 <= c <= 57:
            v = v * 16 + c - 48
        elif 97 <= c <= 102:
            v = v * 16 + c - 87
        elif 65 <= c <= 70:
            v = v * 16 + c - 55
        else:
            return -1
    return v


@njit(cache=True)
def _next_cp(d: Any, i: int, q: int) -> tuple[int, int]:
    """The code point at ``d[i]`` inside a JSON string that ends at ``q``, and the index after
    it, as json.loads decodes it (strict UTF-8; escapes; a surrogate pair is one code point).
    (-1, i) for what the reference reads otherwise or rejects: bad UTF-8, a bad escape, a
    lone surrogate (kept by json.loads, never a card or a word)."""
    b0 = d[i]
    if b0 == 92:  # '\'
        if i + 1 >= q:
            return -1, i
        c = d[i + 1]
        if c == 117:  # 'u'
            v = _hex4(d, i + 2, q)
            if v < 0:
                return -1, i
            if 0xD800 <= v <= 0xDBFF:
                if i + 12 <= q and d[i + 6] == 92 and d[i + 7] == 117:
                    w = _hex4(d, i + 8, q)
                    if 0xDC00 <= w <= 0xDFFF:
                        return 0x10000 + ((v - 0xD800) << 10) + (w - 0xDC00), i + 12
                return -1, i
            if 0xDC00 <= v <= 0xDFFF:
                return -1, i
            return v, i + 6
        if c == 34 or c == 92 or c == 47:  # noqa: PLR1714 (numba)
            return c, i + 2
        if c == 98:
            return 8, i + 2
        if c == 102:
            return 12, i + 2
        if c == 110:
            return 10, i + 2
        if c == 114:
            return 13, i + 2
        if c == 116:
            return 9, i + 2
        return -1, i
    if b0 < 0x80:
        if b0 < 32:
            return -1, i
        return b0, i + 1
    if b0 < 0xC2 or b0 > 0xF4:
        return -1, i
    if b0 < 0xE0:
        if i + 2 > q or d[i + 1] & 0xC0 != 0x80:
            return -1, i
        return ((b0 & 0x1F) << 6) | (d[i + 1] & 0x3F), i + 2
    if b0 < 0xF0:
        if i + 3 > q:
            return -1, i
        b1 = d[i + 1]
        lo = 0xA0 if b0 == 0xE0 else 0x80
        hi = 0x9F if b0 == 0xED else 0xBF  # no surrogates
        if b1 < lo or b1 > hi or d[i + 2] & 0xC0 != 0x80:
            return -1, i
        return ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (d[i + 2] & 0x3F), i + 3
    if i + 4 > q:
        return -1, i
    b1 = d[i + 1]
    lo = 0x90 if b0 == 0xF0 else 0x80
    hi = 0x8F if b0 == 0xF4 else 0xBF
    if b1 < lo or b1 > hi or d[i + 2] & 0xC0 != 0x80 or d[i + 3] & 0xC0 != 0x80:
        return -1, i
    cp = ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((d[i + 2] & 0x3F) << 6)
    return cp | (d[i + 3] & 0x3F), i + 4


@njit(cache=True)
def _valid_string(d: Any, p: int, q: int) -> bool:
    """Whether the string ``d[p+1:q]`` decodes (:func:`_next_cp`) to the end."""
    i = p + 1
    while i < q:
        c, i = _next_cp(d, i, q)
        if c < 0:
            return False
    return True


@njit(cache=True)
def _word(d: Any, a: int, n: int, words: Any, wlen: Any, lo: int, hi: int) -> int:
    """The word ``lo <= w < hi`` that the bytes ``d[a:a+n]`` spell exactly, or -1."""
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
    """The card kind of the plain 3-byte UTF-8 character at ``p`` (< ``e``), or -1 (the
    common spelling, read inline; anything else goes to :func:`_cards`)."""
    if p + 3 > e:
        return -1
    b0 = d[p]
    b1 = d[p + 1]
    b2 = d[p + 2]
    if b0 < 0xE0 or b0 > 0xEF or b1 < 0x80 or b1 > 0xBF or b2 < 0x80 or b2 > 0xBF:
        return -1
    return cp_kind[((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)]


@njit(cache=True)
def _decoded_word(
    d: Any, i: int, q: int, stop: int, words: Any, wlen: Any, lo: int, hi: int, cb: Any
) -> tuple[int, int]:
    """The word ``lo <= w < hi`` the string ``d[i:q]`` decodes to up to the code point
    ``stop`` (-1: to the end), and the index after that stop (after ``q`` when -1); -1
    for no word, or no stop."""
    n = 0
    found = stop < 0
    while i < q:
        c = d[i]
        if 32 <= c < 128 and c != 92:  # plain ASCII, inline
            i += 1
        else:
            c, j = _next_cp(d, i, q)
            if c < 0:
                return -1, i
            i = j
        if c == stop:
            found = True
            break
        if n >= cb.shape[0] or c >= 128:
            return -1, i
        cb[n] = c
        n += 1
    if not found:
        return -1, i
    for w in range(lo, hi):
        if wlen[w] != n:
            continue
        ok = True
        for j in range(n):
            if cb[j] != words[w, j]:
                ok = False
                break
        if ok:
            return w, i
    return -1, i


@njit(cache=True, inline="always")
def _cards(
    d: Any, i: int, q: int, cp_kind: Any, sep: Any, code_kind: Any, seps: bool, kb: Any
) -> int:
    """The cards of the string ``d[i:q]`` into ``kb`` as engine.cards.parse_cards reads them
    (``seps``: separators allowed): their number (possibly more than ``kb`` holds), or -1."""
    n = 0
    while i < q:
        b0 = d[i]
        if 32 <= b0 < 128 and b0 != 92 and sep[b0]:  # an ASCII separator, inline
            if not seps:
                return -1
            i += 1
            continue
        if 0xE0 <= b0 <= 0xEF and i + 3 <= q:  # the plain UTF-8 of a card, inline
            c = ((b0 & 0x0F) << 12) | ((d[i + 1] & 0x3F) << 6) | (d[i + 2] & 0x3F)
            k = cp_kind[c]
            if k >= 0 and d[i + 1] & 0xC0 == 0x80 and d[i + 2] & 0xC0 == 0x80:
                if n < kb.shape[0]:
                    kb[n] = k
                n += 1
                i += 3
                continue
        c, j = _next_cp(d, i, q)
        if c < 0:
            return -1
        k = cp_kind[c] if c < 0x10000 else -1
        if k < 0:
            if c >= 128:
                return -1
            if sep[c]:
                if not seps:
                    return -1
                i = j
                continue
            if j >= q:  # an ASCII code: a letter, then 10 or 1..9
                return -1
            c1, j = _next_cp(d, j, q)
            if c1 < 49 or c1 > 57:
                return -1
            num = c1 - 48
            if c1 == 49 and j < q:
                c2, j2 = _next_cp(d, j, q)
                if c2 == 48:
                    num = 10
                    j = j2
            k = code_kind[c, num]
            if k < 0:
                return -1
        if n < kb.shape[0]:
            kb[n] = k
        n += 1
        i = j
    return n


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
def _put_string(o: Any, q: int, d: Any, p: int, e: int) -> int:
    """The JSON string ``d[p:e]`` (quotes included, valid) as json.dumps(…, ensure_ascii=False)
    writes its value: UTF-8, with ``\\"``, ``\\\\``, ``\\n``, ``\\r``, ``\\t``, ``\\b``,
    ``\\f`` and ``\\u00xx`` for the other control characters. Never longer than the input."""
    o[q] = 34
    q += 1
    i = p + 1
    while i < e - 1:
        c, i = _next_cp(d, i, e - 1)
        if c == 34 or c == 92:  # noqa: PLR1714 (numba)
            o[q] = 92
            o[q + 1] = c
            q += 2
        elif c < 32:
            o[q] = 92
            if c == 10:
                o[q + 1] = 110
            elif c == 13:
                o[q + 1] = 114
            elif c == 9:
                o[q + 1] = 116
            elif c == 8:
                o[q + 1] = 98
            elif c == 12:
                o[q + 1] = 102
            else:
                o[q + 1] = 117
                o[q + 2] = 48
                o[q + 3] = 48
                o[q + 4] = 48 + (c >> 4)
                h = c & 15
                o[q + 5] = 48 + h if h < 10 else 87 + h
                q += 4
            q += 2
        elif c < 0x80:
            o[q] = c
            q += 1
        elif c < 0x800:
            o[q] = 0xC0 | (c >> 6)
            o[q + 1] = 0x80 | (c & 0x3F)
            q += 2
        elif c < 0x10000:
            o[q] = 0xE0 | (c >> 12)
            o[q + 1] = 0x80 | ((c >> 6) & 0x3F)
            o[q + 2] = 0x80 | (c & 0x3F)
            q += 3
        else:
            o[q] = 0xF0 | (c >> 18)
            o[q + 1] = 0x80 | ((c >> 12) & 0x3F)
            o[q + 2] = 0x80 | ((c >> 6) & 0x3F)
            o[q + 3] = 0x80 | (c & 0x3F)
            q += 4
    o[q] = 34
    return q + 1


@njit(cache=True)
def _parse_line(
    d: Any,
    p: int,
    e: int,
    cp_kind: Any,
    sep: Any,
    code_kind: Any,
    chi_shape: Any,
    meld_kind_t: Any,
    meld_size_t: Any,
    words: Any,
    wlen: Any,
    hc: Any,
    tot: Any,
    mk: Any,
    mc: Any,
    req: Any,
    kb: Any,
    cb: Any,
) -> bool:
    """Parse ``d[p:e]`` (stripped, non-empty); False: FALLBACK. Fills the hand counts ``hc``,
    all cards ``tot``, the melds ``mk``/``mc`` and ``req`` (the ``_R_*`` fields); ``kb`` and
    ``cb`` are scratch (cards, code points)."""
    for k in range(20):
        hc[k] = 0
        tot[k] = 0
    req[_R_MELDS] = 0
    req[_R_CARD] = -1
    req[_R_SOURCE] = -1
    req[_R_TIANHU] = 0
    req[_R_HAIDI] = 0
    req[_R_DIHU] = 0
    req[_R_ID_START] = -1
    req[_R_ID_END] = -1
    req[_R_ID_STRING] = 0
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
        if key < 0:
            key, _ = _decoded_word(d, p + 1, q, -1, words, wlen, _W_KEYS, _W_MELDS, cb)
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
            n = 0
            i = p + 1
            while i < q and n < kb.shape[0]:  # the plain spelling, inline
                k = _card_at(d, i, q, cp_kind)
                if k < 0:
                    break
                kb[n] = k
                n += 1
                i += 3
            if i < q:
                n = _cards(d, p + 1, q, cp_kind, sep, code_kind, True, kb)
            if n < 0 or n > kb.shape[0]:
                return False
            for j in range(n):
                hc[kb[j]] += 1
                tot[kb[j]] += 1
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
                    b = p + 1  # the plain spelling first: the name, then ':'
                    while b < q and d[b] != 58:
                        b += 1
                    w = -1
                    if b < q:
                        w = _word(d, p + 1, b - p - 1, words, wlen, _W_MELDS, _W_SOURCES)
                    b += 1
                    if w < 0:
                        w, b = _decoded_word(d, p + 1, q, 58, words, wlen, _W_MELDS, _W_SOURCES, cb)
                    if w < 0:
                        return False
                    kind = meld_kind_t[w - _W_MELDS]
                    if kind < 0:
                        return False
                    nm = req[_R_MELDS]
                    if nm >= mk.shape[0]:
                        return False
                    n = -1
                    if q - b == 11 and d[b + 3] == 44 and d[b + 7] == 44:  # A,B,C inline
                        kb[0] = _card_at(d, b, q, cp_kind)
                        kb[1] = _card_at(d, b + 4, q, cp_kind)
                        kb[2] = _card_at(d, b + 8, q, cp_kind)
                        if kb[0] >= 0 and kb[1] >= 0 and kb[2] >= 0:
                            n = 3
                    elif q - b == 3:
                        kb[0] = _card_at(d, b, q, cp_kind)
                        if kb[0] >= 0:
                            n = 1
                    if n < 0:
                        n = _cards(d, b, q, cp_kind, sep, code_kind, True, kb)
                    if w == _W_CHI:
                        if n != 3:
                            return False
                        x = kb[0]
                        y = kb[1]
                        z = kb[2]
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
                        mc[nm] = sid
                    else:
                        size = meld_size_t[w - _W_MELDS]
                        if n != 1 and n != size:  # noqa: PLR1714 (numba)
                            return False
                        x = kb[0]
                        for j in range(1, n):
                            if kb[j] != x:
                                return False
                        tot[x] += size
                        mc[nm] = x
                    mk[nm] = kind
                    req[_R_MELDS] = nm + 1
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
                if q < 0:
                    return False
                k = _card_at(d, p + 1, q, cp_kind) if q == p + 4 else -1
                if k < 0:
                    if _cards(d, p + 1, q, cp_kind, sep, code_kind, False, kb) != 1:
                        return False
                    k = kb[0]
                req[_R_CARD] = k
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
                if w < 0:
                    w, _ = _decoded_word(
                        d, p + 1, q, -1, words, wlen, _W_SOURCES, words.shape[0], cb
                    )
                if w < 0:
                    return False
                req[_R_SOURCE] = w - _W_SOURCES
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
                req[_R_HAIDI] = v
            elif key == 5:
                req[_R_DIHU] = v
            else:
                req[_R_TIANHU] = v
        else:  # id: an integer that prints as written, or a string (re-encoded on output)
            if c == 34:
                q = _string_end(d, p, e)
                if q < 0 or not _valid_string(d, p, q):
                    return False
                req[_R_ID_START] = p
                req[_R_ID_END] = q + 1
                req[_R_ID_STRING] = 1
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
                req[_R_ID_START] = a
                req[_R_ID_END] = p
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
    return not (seen >> 7 & 1 and req[_R_ID_START] < 0)  # "id" given but not understood


@njit(cache=True)
def _finish_line(tot: Any, req: Any, sources: Any) -> tuple[bool, int, int, int, int, int, int]:
    """The checks of ``calculator.request._prepare`` after parsing: (ok, card, source code,
    tianhu, haidi, dihu, scored)."""
    card = req[_R_CARD]
    w = req[_R_SOURCE]
    if w < 0:
        w = _S_OTHER if card >= 0 else _S_LIANG_DEALER
        tian = 0  # a default source is never a 天胡 by itself
    elif card < 0 and w != _S_LIANG_DEALER:
        return False, 0, 0, 0, 0, 0, 0
    else:
        tian = sources[w, 1]
    src = sources[w, 0]
    if src < 0:
        return False, 0, 0, 0, 0, 0, 0
    if card >= 0:
        tot[card] += 1
    for k in range(20):
        if tot[k] > 4:
            return False, 0, 0, 0, 0, 0, 0
    th = 1 if (tian != 0 or req[_R_TIANHU] != 0) else 0
    scored = 1 if (card >= 0 or th != 0) else 0
    return True, card, src, th, req[_R_HAIDI], req[_R_DIHU], scored


@njit(cache=True)
def _over_a_seat(tot: Any, hc: Any, mk: Any, nm: int, card: int) -> bool:
    """More cards than a seat holds, which ``calculator.request`` refuses (RULES.md §7): hand +
    table + hu card > 21 + max(0, q − 1), q the 跑/提 on the table and, without a hu card, the
    hand's 4-of-a-kinds."""
    q = 0
    for j in range(nm):
        if mk[j] == _GK_PAO or mk[j] == _GK_TI:
            q += 1
    n = 0
    for k in range(20):
        n += tot[k]
        if card < 0 and hc[k] == 4:
            q += 1
    return n > 21 + max(0, q - 1)


@njit(cache=True)
def score_chunk(
    data: Any,
    starts: Any,
    params: Any,
    cp_kind: Any,
    sep: Any,
    code_kind: Any,
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
    req = np.zeros(_R_SIZE, dtype=np.int64)
    kb = np.zeros(_MAX_CARDS, dtype=np.int64)
    cb = np.zeros(_MAX_WORD, dtype=np.int64)
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
            data, a, e, cp_kind, sep, code_kind, chi_shape, meld_kind_t, meld_size_t, words,
            wlen, hc, tot, mk, mc, req, kb, cb,
        ):  # fmt: skip
            continue
        ok, card, src, th, haidi, dihu, scored = _finish_line(tot, req, sources)
        if not ok or _over_a_seat(tot, hc, mk, req[_R_MELDS], card):
            continue
        _k.hu_eval_ws(params, mk, mc, req[_R_MELDS], hc, card, src, th, haidi, dihu, res, ws)
        if res[_k.O_REASON] < 0 or res[_k.O_REASON] > n_reasons:
            continue
        status[i] = DONE
        q = _put(out, q, frag, frag_off, _F_OPEN)
        if req[_R_ID_START] >= 0:
            q = _put(out, q, frag, frag_off, _F_ID)
            if req[_R_ID_STRING]:
                q = _put_string(out, q, data, req[_R_ID_START], req[_R_ID_END])
            else:
                for j in range(req[_R_ID_START], req[_R_ID_END]):
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
    tb = tables
    score_chunk(
        data, starts, params, tb.cp_kind, tb.sep, tb.code_kind, tb.chi_shape, tb.meld_kind,
        tb.meld_size, tb.words, tb.wlen, tb.sources, tb.frag, tb.frag_off, tb.n_reasons, status,
        out, out_end,
    )  # fmt: skip
    src = int(tables.sources[_S_LIANG_DEALER, 0])
    eval_requests(params[None, :], [0], [()], [()], [-1], [src], [(0, 0, 0)])
    return time.perf_counter() - t
