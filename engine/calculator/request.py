"""The calculator's requests: parse and validate a hand, its melds and the hu card with its
source (RULES.md §10.3), then evaluate it with :func:`engine.hu.evaluate_hu`.

>>> req = parse_request("壹贰叁四五六七八九陆柒捌贰柒", ["chi:一,二,三", "peng:伍"], card="拾")
>>> (req.source, req.card_count(), evaluate(req).huxi)
('other', 21, 18)
"""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine import hu as _hu
from engine.cards import CARD_CHARS, COPIES, NUM_KINDS, card_char, parse_card, parse_cards
from engine.errors import QUOTE_LIMIT, InvalidNotation, quote
from engine.groups import QUAD_KINDS, Group
from engine.hu import HuContext, HuResult, Source
from engine.melds import parse_meld
from engine.rules import RuleSet, find_rules

__all__ = ["SOURCES", "ScoreRequest", "evaluate", "load_rules", "parse_request", "seat_limit"]

#: ``--source`` names → (engine source, is a 天胡). The 亮张 hu is always 天胡 (§9, C5).
SOURCES: dict[str, tuple[Source, bool]] = {
    "own": (Source.OWN_DRAW, False),
    "other": (Source.OTHER_DRAW, False),
    "liang": (Source.LIANG_OTHER, True),
    "liang-dealer": (Source.LIANG_DEALER, True),
    "discard": (Source.DISCARD, False),
}

_RULES_CACHE: dict[tuple[str, tuple[str, ...]], tuple[str, RuleSet]] = {}
# token → (group, packed copies, cards, 1 if a 跑/提)
_MELD_CACHE: dict[str, tuple[Group, int, int, int]] = {}
_CACHE_LIMIT = 4096
_FAST_KIND = {ch: parse_card(ch) for ch in CARD_CHARS}


def load_rules(preset: str = "hunan", overrides: Sequence[str] = ()) -> tuple[str, RuleSet]:
    """The rule set for a preset name plus ``key=value`` overrides, and its display name.

    Cached: a batch parses each distinct (preset, overrides) once.
    """
    key = (preset, tuple(overrides))
    hit = _RULES_CACHE.get(key)
    if hit is not None:
        return hit
    rules = find_rules(preset)
    name = rules.preset_name() or preset
    if overrides:
        rules = rules.with_overrides(overrides)
        name = f"{name} + {', '.join(overrides)}"
    if len(_RULES_CACHE) >= _CACHE_LIMIT:
        _RULES_CACHE.clear()
    _RULES_CACHE[key] = (name, rules)
    return name, rules


# Copy counting on one int: 8 bits per kind. Adding 3 to every field sets a bit of 0xF8 in a
# field iff it holds ≥ 5 copies; no field can carry while there are fewer than 250 cards.
_PACK = [1 << (8 * k) for k in range(NUM_KINDS)]
_ADD3 = sum((7 - COPIES) << (8 * k) for k in range(NUM_KINDS))
_HIGH = sum(0xF8 << (8 * k) for k in range(NUM_KINDS))
_CTX_CACHE: dict[tuple[Source, bool, bool, bool], HuContext] = {}


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = QUOTE_LIMIT
_REPR.maxlevel = 3


def shown(value: object) -> str:
    """An input value for an error message: a string as :func:`engine.errors.quote` cuts it,
    anything else as a short ``repr`` (a list of 10,000 items, or nested 500 deep, is not
    echoed whole).

    >>> shown([1] * 10_000)
    '[1, 1, 1, 1, 1, 1, ...]'
    """
    return quote(value) if isinstance(value, str) else _REPR.repr(value)


def seat_limit(quads: int) -> int:
    """The most cards a seat holds at a hu, the hu card included: N + 1 = T + 1 with
    T = 20 + max(0, q − 1), q its 跑/提 (RULES.md §7; the dealer's 21 dealt cards are this with
    q ≤ 1). More is no hand of this game, refused rather than scored.

    >>> [seat_limit(q) for q in range(4)]
    [21, 21, 22, 23]
    """
    return 21 + max(0, quads - 1)


def _meld_entry(token: str) -> tuple[Group, int, int, int]:
    hit = _MELD_CACHE.get(token) if isinstance(token, str) else None
    if hit is None:
        if not isinstance(token, str):
            raise InvalidNotation(
                f"malformed meld {shown(token)}: expected a string like 'peng:三'"
            )
        g = parse_meld(token)
        hit = (g, sum(_PACK[k] for k in g.cards), len(g.cards), int(g.kind in QUAD_KINDS))
        if len(_MELD_CACHE) >= _CACHE_LIMIT:
            _MELD_CACHE.clear()
        _MELD_CACHE[token] = hit
    return hit


def _prepare(
    hand: Any,
    melds: Any,
    card: Any,
    source: Any,
    tianhu: bool = False,
    haidi: bool = False,
    dihu: bool = False,
) -> tuple[list[int], list[Group], int | None, str | None, HuContext]:
    """Parse and validate the cards of one request: (hand, melds, card, source name, context).

    The hot path of ``--batch``: dictionary look-ups first, the full parsers only on a miss
    (they produce the error messages).
    """
    if type(hand) is not str:
        raise InvalidNotation(f"bad hand {shown(hand)}: expected a string of cards")
    try:
        kinds = list(map(_FAST_KIND.__getitem__, hand))
    except KeyError:
        try:
            kinds = parse_cards(hand)
        except InvalidNotation as e:
            raise InvalidNotation(f"bad hand: {e}") from None
    if isinstance(melds, str):
        raise InvalidNotation(f"bad melds {shown(melds)}: expected a list of meld tokens")
    try:
        entries = [_MELD_CACHE[t] for t in melds]
    except (KeyError, TypeError):
        entries = [_meld_entry(t) for t in melds]
    groups = [e[0] for e in entries]
    packed = sum(map(_PACK.__getitem__, kinds)) + sum(e[1] for e in entries)
    kind: int | None = None
    if card is not None:
        kind = _FAST_KIND.get(card) if type(card) is str else None
        if kind is None:
            if not isinstance(card, str):
                raise InvalidNotation(f"bad hu card {shown(card)}: expected one card")
            try:
                kind = parse_card(card)
            except InvalidNotation as e:
                raise InvalidNotation(f"bad hu card: {e}") from None
        packed += _PACK[kind]
        if source is None:
            source = "other"
    if source is None:
        src, tian = Source.LIANG_DEALER, False
    else:
        if type(source) is not str:
            known = ", ".join(SOURCES)
            raise InvalidNotation(f"bad source {shown(source)}: expected one of {known}")
        entry = SOURCES.get(source)
        if entry is None:
            key = source.strip().lower().replace("_", "-")
            entry = SOURCES.get(key)
            if entry is None:
                known = ", ".join(SOURCES)
                raise InvalidNotation(f"unknown source {quote(source)} (known: {known})")
            source = key
        if kind is None and source != "liang-dealer":
            raise InvalidNotation(f"source {quote(source)} needs a hu card (--card)")
        src, tian = entry
    if (packed + _ADD3) & _HIGH or len(kinds) + 4 * len(groups) >= 250:
        _check_copies(kinds, groups, kind, hand)
    n = len(kinds) + (kind is not None)
    q = 0
    for entry_ in entries:
        n += entry_[2]
        q += entry_[3]
    if n > 21 + max(0, q - 1):  # seat_limit(q), inlined: the hot path
        _check_seat(kinds, n, q, kind)
    ckey = (src, tian or tianhu, haidi, dihu)
    ctx = _CTX_CACHE.get(ckey)
    if ctx is None:
        ctx = _CTX_CACHE[ckey] = HuContext(src, tianhu=ckey[1], haidi=haidi, dihu=dihu)
    return kinds, groups, kind, source, ctx


@dataclass(frozen=True, slots=True)
class ScoreRequest:
    """A parsed, validated calculator request.

    ``card`` is None when ``hand`` already holds the winning card (a dealt hand, every triple a
    坎; evaluated as §10.3 step 0). ``source`` is the CLI name (``own``, ``other``, ``liang``,
    ``liang-dealer``, ``discard``) or None for such a closed hand.
    """

    hand: tuple[int, ...]
    melds: tuple[Group, ...]
    card: int | None
    source: str | None
    ctx: HuContext
    rules: RuleSet
    rules_name: str

    @property
    def scored(self) -> bool:
        """Whether 等, 名堂, 番 and score apply: a hu card was given, or the hand is a 天胡."""
        return self.card is not None or self.ctx.tianhu

    def card_count(self) -> int:
        return len(self.hand) + sum(len(g.cards) for g in self.melds) + (self.card is not None)

    def quads(self) -> int:
        """q: the 跑/提 on the table (plus, for a closed hand, the dealt 4-of-a-kinds)."""
        q = sum(g.kind in QUAD_KINDS for g in self.melds)
        if self.card is None:
            q += sum(self.hand.count(k) == COPIES for k in set(self.hand))
        return q


def parse_request(
    hand: str,
    melds: Sequence[str] = (),
    card: str | None = None,
    source: str | None = None,
    *,
    rules: str = "hunan",
    overrides: Sequence[str] = (),
    haidi: bool = False,
    dihu: bool = False,
    tianhu: bool = False,
) -> ScoreRequest:
    """Parse and validate one request; raises :class:`~engine.errors.PaohuziError` naming the
    offending input.

    ``source`` defaults to ``other`` when a card is given. Without a card the only source
    allowed is ``liang-dealer`` (the dealer's 21 cards with the 亮张 included, a 天胡).
    """
    rules_name, ruleset = load_rules(rules, overrides)
    kinds, groups, kind, source, ctx = _prepare(hand, melds, card, source, tianhu, haidi, dihu)
    return ScoreRequest(tuple(kinds), tuple(groups), kind, source, ctx, ruleset, rules_name)


def _check_copies(hand: list[int], melds: list[Group], card: int | None, text: str) -> None:
    counts = [0] * NUM_KINDS
    for k in hand:
        counts[k] += 1
    for g in melds:
        for k in g.cards:
            counts[k] += 1
    if card is not None:
        counts[card] += 1
    if max(counts) <= COPIES:
        return
    k = max(range(NUM_KINDS), key=counts.__getitem__)
    raise InvalidNotation(
        f"{counts[k]} copies of {card_char(k)} across hand {quote(text)}, melds and card "
        f"(the deck has {COPIES})"
    )


def _check_seat(hand: list[int], n: int, q: int, card: int | None) -> None:
    """Refuse more cards than a seat holds (RULES.md §7). Without a hu card the hand is the
    closed hand, whose 4-of-a-kinds are 提 (§10.3 step 0)."""
    if card is None:
        q += sum(hand.count(k) == COPIES for k in set(hand))
    limit = seat_limit(q)
    if n <= limit:
        return
    what = "with the hu card" if card is not None else "in the closed hand"
    raise InvalidNotation(
        f"{n} cards {what} ({len(hand)} in hand, {n - len(hand) - (card is not None)} on the"
        f" table): a seat holds at most {limit} with {q} 跑/提 (RULES §7)"
    )


def evaluate(request: ScoreRequest) -> HuResult:
    """The engine's best reading of the request (§10.3)."""
    return _hu.evaluate_hu(
        request.rules, list(request.melds), list(request.hand), request.card, request.ctx
    )
