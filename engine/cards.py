"""Cards 字牌 and every conversion between their representations (STYLE §10).

Representations:

* **kind** ``0..19``: 一…十 are 0…9 (small 小字), 壹…拾 are 10…19 (big 大字).
* **counts**: a tuple of 20 ints, the number of copies of each kind.
* **text**: 一…十 / 壹…拾 (traditional and variant forms 貳 叄 參 陸 accepted), or ASCII
  ``s1``…``s10`` / ``b1``…``b10``.

>>> parse_cards("一二三 壹贰叁")
[0, 1, 2, 10, 11, 12]
>>> format_cards([0, 1, 19])
'一二拾'
>>> parse_cards("s1 b10 貳")
[0, 19, 11]
>>> is_red(parse_card("柒"))
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from engine.errors import InvalidNotation, quote

NUM_KINDS = 20
COPIES = 4
DECK_SIZE = NUM_KINDS * COPIES
#: The deal (RULES §3, choice C2): 20 cards to each of the three active seats, one more (the
#: 亮张) to the dealer; the rest is the stock, the most draws a hand can have.
HAND_CARDS = 20
DEALT = 3 * HAND_CARDS + 1
STOCK_SIZE = DECK_SIZE - DEALT

SMALL_CHARS = "一二三四五六七八九十"
BIG_CHARS = "壹贰叁肆伍陆柒捌玖拾"
CARD_CHARS = SMALL_CHARS + BIG_CHARS

_VARIANTS = {"貳": "贰", "叄": "叁", "參": "叁", "陸": "陆", "弍": "贰"}

_CHAR_TO_KIND: dict[str, int] = {ch: i for i, ch in enumerate(CARD_CHARS)}
for _v, _c in _VARIANTS.items():
    _CHAR_TO_KIND[_v] = _CHAR_TO_KIND[_c]

_ASCII_RE = re.compile(r"[sSbB](10|[1-9])")
_SEPARATORS = set(" \t,，、;/|")

Counts = tuple[int, ...]


def number(kind: int) -> int:
    """牌點: the number 1..10 of a kind, ignoring case."""
    return kind % 10 + 1


def is_big(kind: int) -> bool:
    """大字: kinds 10..19."""
    return kind >= 10


def is_red(kind: int) -> bool:
    """紅: the faces numbered 2, 7 and 10 in both cases."""
    return kind % 10 in (1, 6, 9)


RED_KINDS = frozenset(k for k in range(NUM_KINDS) if is_red(k))


def card_char(kind: int) -> str:
    """The Chinese character of a kind."""
    if not 0 <= kind < NUM_KINDS:
        raise InvalidNotation(f"card kind out of range: {kind!r}")
    return CARD_CHARS[kind]


def card_ascii(kind: int) -> str:
    """The ASCII code of a kind: ``s1``…``s10`` or ``b1``…``b10``."""
    if not 0 <= kind < NUM_KINDS:
        raise InvalidNotation(f"card kind out of range: {kind!r}")
    return ("b" if kind >= 10 else "s") + str(number(kind))


def parse_card(token: str) -> int:
    """One card from one token, in either notation."""
    t = token.strip()
    if len(t) == 1 and t in _CHAR_TO_KIND:
        return _CHAR_TO_KIND[t]
    m = _ASCII_RE.fullmatch(t)
    if m:
        return (10 if t[0] in "bB" else 0) + int(m.group(1)) - 1
    raise InvalidNotation(f"unknown card {quote(token)}")


def parse_cards(text: str) -> list[int]:
    """A sequence of cards: Chinese characters (spaces optional) and/or ASCII codes.

    The error names the offending token and its position.
    """
    out: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _SEPARATORS:
            i += 1
            continue
        if ch in _CHAR_TO_KIND:
            out.append(_CHAR_TO_KIND[ch])
            i += 1
            continue
        m = _ASCII_RE.match(text, i)
        if m:
            out.append((10 if ch in "bB" else 0) + int(m.group(1)) - 1)
            i = m.end()
            continue
        j = i
        while j < n and text[j] not in _SEPARATORS and text[j] not in _CHAR_TO_KIND:
            j += 1
        bad = text[i:j] or ch
        raise InvalidNotation(f"unknown card {quote(bad)} at position {i} in {quote(text)}")
    return out


def format_cards(kinds: Iterable[int], ascii: bool = False, sep: str = "") -> str:
    """Cards in notation; Chinese by default."""
    conv = card_ascii if ascii else card_char
    return (sep if sep or not ascii else " ").join(conv(k) for k in kinds)


def to_counts(kinds: Iterable[int]) -> Counts:
    """The count vector of a sequence of kinds."""
    c = [0] * NUM_KINDS
    for k in kinds:
        c[k] += 1
    return tuple(c)


def from_counts(counts: Sequence[int]) -> list[int]:
    """The sorted kinds of a count vector."""
    return [k for k in range(NUM_KINDS) for _ in range(counts[k])]


def check_copies(kinds: Iterable[int], what: str) -> None:
    """Raise if any face appears more than 4 times (the deck has 4 of each)."""
    c = to_counts(kinds)
    for k, n in enumerate(c):
        if n > COPIES:
            raise InvalidNotation(f"{n} copies of {card_char(k)} in {what} (the deck has {COPIES})")


def full_deck() -> list[int]:
    """The 80 cards in kind order (4 of each), before any shuffle."""
    return [k for k in range(NUM_KINDS) for _ in range(COPIES)]
