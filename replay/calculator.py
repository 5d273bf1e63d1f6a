"""Hand calculator 算胡息 behind ``paohuzi score``: parse a request, evaluate it, render it.

A request is a concealed hand, the table melds and, optionally, the hu card with its source
(RULES.md §10.3). Without a hu card the hand is the whole closed hand including the winning
card, read as a dealt hand in which every triple is a 坎. The evaluation itself is
:func:`engine.hu.evaluate_hu`; this module only parses, validates, renders and batches.

>>> calc = calculate("壹贰叁柒捌玖六七八九九", ["pao:伍", "peng:三", "chi:二,七,十"])
>>> (calc.result.win, calc.result.huxi)
(True, 19)
>>> calc = calculate("壹贰叁四五六七八九陆柒捌贰柒", ["chi:一,二,三", "peng:伍"], card="拾")
>>> (calc.result.huxi, calc.result.deng, calc.result.score, calc.settlement)
(18, 2, 2, (4, -2, -2))
>>> calculate("壹X")
Traceback (most recent call last):
...
engine.errors.InvalidNotation: bad hand: unknown card 'X' at position 1 in '壹X'
"""

from __future__ import annotations

import io
import itertools
import json
import random
import sys
import time
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from engine import hu as _hu
from engine.cards import (
    CARD_CHARS,
    COPIES,
    NUM_KINDS,
    card_ascii,
    card_char,
    format_cards,
    parse_card,
    parse_cards,
)
from engine.errors import InvalidNotation, PaohuziError
from engine.groups import (
    EAT_SHAPE_ID,
    EAT_SHAPES,
    QUAD_KINDS,
    SAME_FACE_KINDS,
    TABLE_KINDS,
    Group,
    GroupKind,
    is_one_five_ten,
)
from engine.hu import NOWIN_TEXT, HuContext, HuResult, NoWin, Source
from engine.melds import format_meld, parse_meld
from engine.rules import RuleSet, find_rules

__all__ = [
    "MAX_LINE_BYTES",
    "SOURCES",
    "BatchStats",
    "Calculation",
    "ENGINES",
    "ScoreRequest",
    "bench_batch",
    "bench_engines",
    "calculate",
    "evaluate",
    "fast_available",
    "generate_batch_lines",
    "LineTooLong",
    "load_rules",
    "parse_request",
    "read_lines",
    "run_batch",
]

#: ``--source`` names → (engine source, is a 天胡). The 亮张 hu is always 天胡 (§9, C5).
SOURCES: dict[str, tuple[Source, bool]] = {
    "own": (Source.OWN_DRAW, False),
    "other": (Source.OTHER_DRAW, False),
    "liang": (Source.LIANG_OTHER, True),
    "liang-dealer": (Source.LIANG_DEALER, True),
    "discard": (Source.DISCARD, False),
}
SOURCE_TEXT = {
    "own": "own draw, 自摸",
    "other": "another player's draw",
    "liang": "the 亮张, non-dealer, 天胡",
    "liang-dealer": "the 亮张, dealer, 天胡",
    "discard": "a discard",
}
OPTION_TEXT = {
    "F": "the card joins the hand",
    "K": "跑胡: 坎 + card",
    "P": "跑胡: 碰 + card",
    "W": "跑胡: 偎 + card",
    "0": "dealt hand",
}
_ASCII_LABELS = {
    GroupKind.CHI: "chi",
    GroupKind.PENG: "peng",
    GroupKind.WEI: "wei",
    GroupKind.CHOUWEI: "chouwei",
    GroupKind.PAO: "pao",
    GroupKind.TI: "ti",
    GroupKind.SENTENCE: "",
    GroupKind.JIAO: "",
    GroupKind.KAN: "kan",
    GroupKind.PENG_HU: "penghu",
    GroupKind.JIANG: "jiang",
}


# --------------------------------------------------------------------------- parsing


_RULES_CACHE: dict[tuple[str, tuple[str, ...]], tuple[str, RuleSet]] = {}
_MELD_CACHE: dict[str, tuple[Group, int]] = {}
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


def _meld_entry(token: str) -> tuple[Group, int]:
    hit = _MELD_CACHE.get(token) if isinstance(token, str) else None
    if hit is None:
        if not isinstance(token, str):
            raise InvalidNotation(f"malformed meld {token!r}: expected a string like 'peng:三'")
        g = parse_meld(token)
        hit = (g, sum(_PACK[k] for k in g.cards))
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
        raise InvalidNotation(f"bad hand {hand!r}: expected a string of cards")
    try:
        kinds = list(map(_FAST_KIND.__getitem__, hand))
    except KeyError:
        try:
            kinds = parse_cards(hand)
        except InvalidNotation as e:
            raise InvalidNotation(f"bad hand: {e}") from None
    if isinstance(melds, str):
        raise InvalidNotation(f"bad melds {melds!r}: expected a list of meld tokens")
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
                raise InvalidNotation(f"bad hu card {card!r}: expected one card")
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
            raise InvalidNotation(f"bad source {source!r}: expected one of {', '.join(SOURCES)}")
        entry = SOURCES.get(source)
        if entry is None:
            key = source.strip().lower().replace("_", "-")
            entry = SOURCES.get(key)
            if entry is None:
                known = ", ".join(SOURCES)
                raise InvalidNotation(f"unknown source {source!r} (known: {known})")
            source = key
        if kind is None and source != "liang-dealer":
            raise InvalidNotation(f"source {source!r} needs a hu card (--card)")
        src, tian = entry
    if (packed + _ADD3) & _HIGH or len(kinds) + 4 * len(groups) >= 250:
        _check_copies(kinds, groups, kind, hand)
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
        f"{counts[k]} copies of {card_char(k)} across hand {text!r}, melds and card "
        f"(the deck has {COPIES})"
    )


# --------------------------------------------------------------------------- evaluation


def evaluate(request: ScoreRequest) -> HuResult:
    """The engine's best reading of the request (§10.3)."""
    return _hu.evaluate_hu(
        request.rules, list(request.melds), list(request.hand), request.card, request.ctx
    )


def calculate(
    hand: str,
    melds: Sequence[str] = (),
    card: str | None = None,
    source: str | None = None,
    **options: Any,
) -> Calculation:
    """Parse, validate and evaluate one request (options as for :func:`parse_request`)."""
    request = parse_request(hand, melds, card, source, **options)
    return Calculation(request, evaluate(request))


def reason_text(request: ScoreRequest, result: HuResult) -> str | None:
    """Why the hand does not win, in words, with the threshold and counts that decided it."""
    reason = result.reason
    if reason is None:
        return None
    rules = request.rules
    if reason == NoWin.BELOW_MIN:
        unit = "胡" if rules.luzhou else "胡息"
        return f"below the {unit} threshold: best {result.huxi} < {rules.min_huxi}"
    if reason == NoWin.CARD_COUNT:
        n, q = request.card_count(), request.quads()
        need = 21 + max(0, q - 1)
        if n == need:
            return NOWIN_TEXT[reason]
        return f"{NOWIN_TEXT[reason]}: {n} cards with {q} 跑/提, a win needs {need}"
    if reason == NoWin.NO_SPLIT:
        if request.quads():
            text = "cannot be split into 7 门子 with exactly one 将 (needed with a 跑/提)"
        else:
            text = "cannot be split into 7 门子 (no 将 without a 跑/提)"
        kans = [k for k in sorted(set(request.hand)) if request.hand.count(k) == 3]
        if kans:
            text += "; " + ", ".join("坎" + card_char(k) for k in kans) + " cannot be split"
        return text
    if reason == NoWin.DISCARD:
        return f"{NOWIN_TEXT[reason]} (rules {request.rules_name}: hu_on_discards off)"
    return NOWIN_TEXT[reason]


def settlement(score: int, players: int) -> tuple[int, ...]:
    """Zero-sum payments (§11.4): the winner +2S, each other active player −S, a sitter 0."""
    return (2 * score, -score, -score) + (0,) * (players - 3)


def _fmt_cards(kinds: Iterable[int], ascii: bool) -> str:
    return format_cards(kinds, ascii=ascii)


def _meld_token(g: Group, ascii: bool) -> str:
    if not ascii:
        return format_meld(g)
    name = _ASCII_LABELS[g.kind]
    if g.kind == GroupKind.CHI:
        return f"{name}:{','.join(card_ascii(k) for k in g.cards)}"
    return f"{name}:{card_ascii(g.cards[0])}"


def _group_label(g: Group, ascii: bool) -> str:
    if not ascii:
        return str(g)
    label = _ASCII_LABELS[g.kind]
    cards = card_ascii(g.cards[0]) if g.kind in SAME_FACE_KINDS else _fmt_cards(g.cards, True)
    return f"{label} {cards}" if label else cards


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


@dataclass(frozen=True, slots=True)
class Calculation:
    """A request and its result, with the text and JSON renderings of ``paohuzi score``."""

    request: ScoreRequest
    result: HuResult

    @property
    def settlement(self) -> tuple[int, ...] | None:
        if not (self.result.win and self.request.scored):
            return None
        return settlement(self.result.score, self.request.rules.players)

    def ordered_groups(self) -> list[tuple[Group, int]]:
        """The groups with their 胡息, table groups first (stable within each part)."""
        pairs = list(zip(self.result.groups, self.result.group_huxi))
        return [p for p in pairs if p[0].kind in TABLE_KINDS] + [
            p for p in pairs if p[0].kind not in TABLE_KINDS
        ]

    def to_dict(self, ascii: bool = False) -> dict[str, Any]:
        """The JSON object of ``paohuzi score --json``."""
        req, res = self.request, self.result
        scored = req.scored and res.win
        return {
            "hand": _fmt_cards(req.hand, ascii),
            "melds": [_meld_token(g, ascii) for g in req.melds],
            "card": None if req.card is None else _fmt_cards([req.card], ascii),
            "source": req.source,
            "rules": req.rules_name,
            "min_huxi": req.rules.min_huxi,
            "win": res.win,
            "reason": None if res.reason is None else res.reason.name.lower(),
            "reason_text": reason_text(req, res),
            "option": res.option,
            "groups": [
                {
                    "kind": g.kind.name.lower(),
                    "cards": _fmt_cards(g.cards, ascii),
                    "huxi": h,
                    "table": g.kind in TABLE_KINDS,
                }
                for g, h in self.ordered_groups()
            ],
            "huxi": res.huxi,
            "deng": res.deng if scored else None,
            "mingtang": [{"name": n, "fan": f} for n, f in res.mingtang] if scored else None,
            "fan": res.fan if scored else None,
            "score": res.score if scored else None,
            "zimo": res.zimo if scored else None,
            "tianhu": req.ctx.tianhu,
            "settlement": None if not scored else list(self.settlement or ()),
        }

    def to_json(self, ascii: bool = False) -> str:
        return json.dumps(self.to_dict(ascii), ensure_ascii=False)

    def to_text(self, ascii: bool = False) -> str:
        """The human-readable report of ``paohuzi score``."""
        req, res = self.request, self.result
        rules = req.rules
        unit = "胡" if rules.luzhou else "胡息"
        lines = [
            f"rules   {req.rules_name} (win at {unit} ≥ {rules.min_huxi}, 花样 {rules.huayang})"
        ]
        hand = _fmt_cards(req.hand, ascii) or "—"
        flags = [f for f in ("haidi", "dihu") if getattr(req.ctx, f)]
        if req.ctx.tianhu and req.source not in ("liang", "liang-dealer"):
            flags.append("天胡")
        if req.card is None:
            what = ["closed hand, hu card included"]
            if req.source:
                what.append(SOURCE_TEXT[req.source])
            lines.append(f"hand    {hand}  ({', '.join(what + flags)})")
        else:
            card = _fmt_cards([req.card], ascii)
            what = [SOURCE_TEXT[req.source or "other"]]
            lines.append(f"hand    {hand}")
            lines.append(f"card    {card}  ({', '.join(what + flags)})")
        if req.melds:
            sep = ", " if ascii else " "
            lines.append("melds   " + sep.join(_group_label(g, ascii) for g in req.melds))
        groups = self.ordered_groups()
        if groups:
            labels = [_group_label(g, ascii) for g, _ in groups]
            w = max(_width(s) for s in labels)
            lines.append("")
            for label, (g, h) in zip(labels, groups):
                mark = "  table" if g.kind in TABLE_KINDS else ""
                lines.append(f"  {label}{' ' * (w - _width(label))}  {h:>3}{mark}")
            lines.append(f"  {unit}{' ' * (w - _width(unit))}  {res.huxi:>3}")
        elif res.huxi is not None:
            lines.append(f"{unit} {res.huxi}")
        lines.append("")
        if res.win:
            how = f" ({OPTION_TEXT.get(res.option, res.option)})" if res.option else ""
            lines.append(f"win: {unit} {res.huxi} ≥ {rules.min_huxi}{how}")
        else:
            lines.append(f"no win: {reason_text(req, res)}")
        if res.win and req.scored:
            lines.extend(self._score_lines(ascii))
        return "\n".join(lines)

    def _score_lines(self, ascii: bool) -> list[str]:
        req, res = self.request, self.result
        notes = []
        if req.ctx.tianhu:
            notes.append("天胡, 自摸 included")
        elif res.zimo:
            notes.append("自摸 +1 等")
        deng = f"等 {res.deng}" + (f" ({', '.join(notes)})" if notes else "")
        if res.mingtang:
            mt = " + ".join(f"{n} {f}" for n, f in res.mingtang)
        else:
            mt = "none (平胡)"
        fan = "multiplier" if req.rules.luzhou else "番"
        minus = "-" if ascii else "−"
        pay = "/".join(
            f"+{v}" if v > 0 else f"{minus}{-v}" if v < 0 else "0" for v in self.settlement or ()
        )
        return [
            deng,
            f"名堂 {mt}",
            f"{fan} {res.fan}",
            f"score {res.score} (S = 等 × {fan})",
            f"settlement {pay}"
            + (
                " (winner/others; the sitter pays 0)"
                if req.rules.players == 4
                else " (winner/others)"
            ),
        ]


# --------------------------------------------------------------------------- batch

_BATCH_KEYS = frozenset(
    {"hand", "melds", "card", "source", "rules", "set", "haidi", "dihu", "tianhu", "id"}
)
_COMMON_KEYS = frozenset({"hand", "melds", "card", "source"})
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner
# A blank line is one of ASCII whitespace only (what bytes.strip() removes), whether the line
# comes as bytes or as str: str.strip() would also drop controls such as "\x1f".
_BLANK = " \t\n\r\x0b\x0c"


def _strip(line: bytes | str) -> bytes | str:
    return line.strip(_BLANK) if isinstance(line, str) else line.strip()


_FLUSH_EVERY = 2048
_LINE_CACHE_LIMIT = 1 << 16
_CACHED_LINE_BYTES = 1024  # longer lines are not remembered: the cache stays under ~64 MiB

#: The longest ``--batch`` input line read by default (``--max-line-bytes``); a line is ~200.
MAX_LINE_BYTES = 1 << 16


class LineTooLong(InvalidNotation):
    """A ``--batch`` input line longer than the limit: the batch stops there."""


def read_lines(stream: BinaryIO, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of ``stream`` one at a time, each read with a bound (never more than
    ``max_line_bytes + 1`` bytes held), so ``/dev/zero`` or a file without newlines cannot
    exhaust memory. A longer line raises :class:`LineTooLong` naming its number.

    >>> list(read_lines(io.BytesIO(b'a\\nbb\\n'), 4))
    [b'a\\n', b'bb\\n']
    >>> list(read_lines(io.BytesIO(b'a\\nbbbbbb\\n'), 4))
    Traceback (most recent call last):
    ...
    replay.calculator.LineTooLong: line 2 is longer than 4 bytes, the limit (raise it with --max-line-bytes)
    """
    n = 0
    while True:
        line = stream.readline(max_line_bytes + 1)
        if not line:
            return
        n += 1
        if len(line) > max_line_bytes and not (
            len(line) == max_line_bytes + 1 and line.endswith(b"\n")
        ):
            raise LineTooLong(
                f"line {n} is longer than {max_line_bytes:,} bytes, the limit"
                " (raise it with --max-line-bytes)"
            )
        yield line


@dataclass(frozen=True, slots=True)
class BatchStats:
    """What a batch run did: input lines read (blank ones included), results, error objects."""

    lines: int
    results: int
    errors: int


def _want(obj: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    v = obj.get(key, default)
    if v is not default and type(v) is not kind:
        raise InvalidNotation(f'"{key}" must be a {kind.__name__}, got {v!r}')
    return v


def _batch_parse(
    obj: Any, default_rules: RuleSet, rules: str, overrides: tuple[str, ...]
) -> tuple[str, RuleSet, list[int], list[Group], int | None, HuContext]:
    """One parsed input object as (id head, rules, hand, melds, card, context); raises
    PaohuziError on bad input."""
    if type(obj) is not dict:
        raise InvalidNotation("expected a JSON object")
    common = obj.keys() <= _COMMON_KEYS
    if not common and not obj.keys() <= _BATCH_KEYS:
        bad = sorted(set(obj) - _BATCH_KEYS)[0]
        raise InvalidNotation(f"unknown key {bad!r} (known: {', '.join(sorted(_BATCH_KEYS))})")
    hand = obj.get("hand")
    if hand is None:
        raise InvalidNotation('missing "hand"')
    melds = obj.get("melds", ())
    if type(melds) is not list and melds != ():
        raise InvalidNotation(f'"melds" must be a list, got {melds!r}')
    head = ""
    if not common:
        preset = _want(obj, "rules", str, rules)
        extra = _want(obj, "set", list, ())
        if not all(type(a) is str for a in extra):
            raise InvalidNotation(f'"set" must be a list of "key=value" strings, got {extra!r}')
        ruleset = load_rules(preset, overrides + tuple(extra))[1]
        kinds, groups, kind, _, ctx = _prepare(
            hand,
            melds,
            obj.get("card"),
            obj.get("source"),
            _want(obj, "tianhu", bool, False),
            _want(obj, "haidi", bool, False),
            _want(obj, "dihu", bool, False),
        )
        if "id" in obj:
            head = f'"id":{_ENCODER.encode(obj["id"])},'
    else:
        ruleset = default_rules
        kinds, groups, kind, _, ctx = _prepare(hand, melds, obj.get("card"), obj.get("source"))
    return head, ruleset, kinds, groups, kind, ctx


def _batch_answer(
    head: str,
    win: bool,
    huxi: int | None,
    reason: NoWin | None,
    deng: int,
    fan: int,
    score: int,
    scored: bool,
) -> str:
    """The output line of one evaluated request (``scored``: a hu card, or a 天胡)."""
    hx = "null" if huxi is None else huxi
    if not win:
        why = "null" if reason is None else f'"{reason.name.lower()}"'
        return (
            f'{{{head}"win":false,"huxi":{hx},"reason":{why},"deng":null,"fan":null,"score":null}}'
        )
    if scored:
        return (
            f'{{{head}"win":true,"huxi":{hx},"reason":null,'
            f'"deng":{deng},"fan":{fan},"score":{score}}}'
        )
    return f'{{{head}"win":true,"huxi":{hx},"reason":null,"deng":null,"fan":null,"score":null}}'


def _batch_result(obj: Any, default_rules: RuleSet, rules: str, overrides: tuple[str, ...]) -> str:
    """The output line of one parsed input object (raises PaohuziError on bad input)."""
    head, ruleset, kinds, groups, kind, ctx = _batch_parse(obj, default_rules, rules, overrides)
    res = _hu.evaluate_hu(ruleset, groups, kinds, kind, ctx)
    return _batch_answer(
        head,
        res.win,
        res.huxi,
        res.reason,
        res.deng,
        res.fan,
        res.score,
        kind is not None or ctx.tianhu,
    )


def _json_error(line: bytes | str) -> str:
    """The message for a line the fast scanner rejected (json.loads words it best)."""
    try:
        json.loads(line)
    except UnicodeDecodeError:
        return "bad JSON: not UTF-8"
    except json.JSONDecodeError as e:
        return f"bad JSON: {e.msg} at column {e.colno}"
    except ValueError as e:
        return f"bad JSON: {e}"
    return "bad JSON"


def run_batch(
    lines: Iterable[bytes | str],
    out: BinaryIO,
    *,
    rules: str = "hunan",
    overrides: Sequence[str] = (),
    engine: str = "reference",
) -> BatchStats:
    """Score JSON lines, writing one JSON line per non-blank input line, in order.

    Each input is an object like ``{"hand": "…", "melds": ["pao:伍"], "card": "拾",
    "source": "other", "rules": "hunan"}`` (only ``hand`` is required; also ``set``, ``haidi``,
    ``dihu``, ``tianhu``, and ``id``, which is echoed). Each output has ``win``, ``huxi`` (null
    when the hand cannot be split), ``reason``, ``deng``, ``fan`` and ``score`` (null unless a
    scored win); a bad line gives ``{"line": n, "error": "…"}`` and the batch goes on
    (STYLE §12). ``rules`` and ``overrides`` are the defaults for lines without their own.

    ``engine``: ``reference`` evaluates each line with :func:`engine.hu.evaluate_hu`;
    ``fast`` scores chunks of lines with the compiled kernel (:mod:`engine.fast.batch_score`,
    imports numpy and numba) — the same bytes out, line for line; ``auto`` is ``fast`` when
    numba is installed, else ``reference``.

    >>> buf = io.BytesIO()
    >>> run_batch(['{"hand": "壹贰叁柒捌玖六七八九九", "melds": ["pao:伍", "peng:三", '
    ...            '"chi:二,七,十"]}', '', '{"hand": "壹X"}'], buf)
    BatchStats(lines=3, results=1, errors=1)
    >>> print(buf.getvalue().decode(), end="")
    {"win":true,"huxi":19,"reason":null,"deng":null,"fan":null,"score":null}
    {"line":3,"error":"bad hand: unknown card 'X' at position 1 in '壹X'"}
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    if engine != "reference" and fast_available():
        return _run_batch_fast(lines, out, rules, tuple(overrides), engine)
    if engine == "fast":
        raise PaohuziError("the fast engine needs numba and numpy (pip install numba)")
    defaults = tuple(overrides)
    default_rules = load_rules(rules, defaults)[1]  # fail early, before any output
    scan = _SCAN
    seen: dict[bytes | str, str] = {}  # identical lines give identical answers
    buf: list[str] = []
    n = results = errors = 0
    try:
        for raw in lines:
            n += 1
            line = _strip(raw)
            if not line:
                continue
            hit = seen.get(line)
            if hit is not None:
                buf.append(hit)
                results += 1
            else:
                try:
                    text = line.decode() if type(line) is bytes else line
                    obj, end = scan(text, 0)
                    if end != len(text):
                        raise ValueError
                except (ValueError, StopIteration):
                    buf.append(_batch_error(n, _json_error(line)))
                    errors += 1
                else:
                    try:
                        answer = _batch_result(obj, default_rules, rules, defaults)
                    except PaohuziError as e:
                        buf.append(_batch_error(n, str(e)))
                        errors += 1
                    except Exception as e:  # an engine bug must not hide the rest of the batch
                        buf.append(_batch_error(n, f"internal error: {type(e).__name__}: {e}"))
                        errors += 1
                    else:
                        buf.append(answer)
                        results += 1
                        if len(line) <= _CACHED_LINE_BYTES:
                            if len(seen) >= _LINE_CACHE_LIMIT:
                                seen.clear()
                            seen[line] = answer
            if len(buf) >= _FLUSH_EVERY:
                buf.append("")
                out.write("\n".join(buf).encode())
                buf.clear()
    except LineTooLong:
        if buf:  # what was scored before the long line is written
            buf.append("")
            out.write("\n".join(buf).encode())
        out.flush()
        raise
    if buf:
        buf.append("")
        out.write("\n".join(buf).encode())
    out.flush()
    return BatchStats(n, results, errors)


def _batch_error(lineno: int, message: str) -> str:
    return _ENCODER.encode({"line": lineno, "error": message})


#: ``run_batch(engine=…)`` / ``paohuzi score --batch --engine``.
ENGINES = ("auto", "fast", "reference")
_FAST_CHUNK = 8192  # lines per compiled call


def fast_available() -> bool:
    """Whether numba (and numpy) can be imported, without importing them."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("numba", "numpy"))


class _FastScorer:
    """State of one fast batch: the tables, the rule parameters, the compiled kernels."""

    def __init__(self, rules: str, overrides: tuple[str, ...]) -> None:
        import numpy as np

        from engine.fast import batch_score as bs
        from engine.fast import hu as fk

        self.np, self.bs, self.fk = np, bs, fk
        self.rules, self.defaults = rules, overrides
        self.default_rules = load_rules(rules, overrides)[1]  # fail early, before any output
        reasons = [r.name.lower() for r in sorted(NoWin)]
        assert [int(r) for r in sorted(NoWin)] == list(range(1, len(reasons) + 1))
        self.tables = bs.Tables({k: (int(s), t) for k, (s, t) in SOURCES.items()}, reasons)
        self.p0 = fk.rule_params(self.default_rules)
        self.rows: dict[Any, int] = {}
        self.params: list[Any] = []
        self.meld_codes: dict[Group, tuple[int, int] | None] = {}
        from engine.fast.cache import compile_lock

        with compile_lock(bs._ENTRY_POINTS):  # one compiles, others wait and load
            bs.warm_up(self.tables, self.p0)

    def _row(self, rules: RuleSet) -> int:
        key: Any = rules
        try:
            hash(key)
        except TypeError:
            key = id(rules)
        i = self.rows.get(key)
        if i is None:
            i = self.rows[key] = len(self.params)
            self.params.append(self.fk.rule_params(rules))
        return i

    def _codes(self, groups: list[Group]) -> list[tuple[int, int]] | None:
        if len(groups) > self.bs.MAX_MELDS:
            return None
        out: list[tuple[int, int]] = []
        for g in groups:
            if g in self.meld_codes:
                c = self.meld_codes[g]
            else:
                if g.kind == GroupKind.CHI:
                    sid = EAT_SHAPE_ID.get(g.cards)  # type: ignore[arg-type]
                    c = None if sid is None else (int(g.kind), sid)
                elif g.kind in TABLE_KINDS:
                    c = (int(g.kind), g.cards[0])
                else:
                    c = None
                self.meld_codes[g] = c
            if c is None:
                return None
            out.append(c)
        return out

    def chunk(self, pending: list[Any], base: int) -> tuple[bytes, int, int]:
        """Score lines ``base + 1 …``: (output bytes, results, errors)."""
        np, bs, t = self.np, self.bs, self.tables
        raws = []
        for r in pending:
            if type(r) is not bytes:
                try:
                    r = r.encode()
                except (UnicodeEncodeError, AttributeError):
                    r = b"\0"  # not understood: the Python reads the original
            raws.append(r)
        n = len(raws)
        data = b"".join(raws)
        arr = np.frombuffer(data, dtype=np.uint8)
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, raws), dtype=np.int64, count=n), out=starts[1:])
        status = np.empty(n, dtype=np.int64)
        out_end = np.empty(n, dtype=np.int64)
        obuf = np.empty(bs.out_capacity(n, len(data)), dtype=np.uint8)
        total = bs.score_chunk(
            arr, starts, self.p0, t.cp_kind, t.chi_shape, t.meld_kind, t.meld_size, t.words,
            t.wlen, t.sources, t.frag, t.frag_off, t.n_reasons, status, obuf, out_end,
        )  # fmt: skip
        view = memoryview(obuf)
        fallback = np.flatnonzero(status == bs.FALLBACK).tolist()
        done = int(np.count_nonzero(status == bs.DONE))
        if not fallback:
            return bytes(view[:total]), done, 0
        texts, errors = self._python_lines(pending, fallback, base)
        pieces: list[Any] = []
        prev = 0
        ends = out_end.tolist()
        for i in fallback:
            text = texts.get(i)
            if text is not None:
                pieces.append(view[prev : ends[i]])
                pieces.append(text.encode())
                prev = ends[i]
        pieces.append(view[prev:total])
        results = done + len(texts) - errors
        return b"".join(pieces), results, errors

    def _python_lines(
        self, pending: list[Any], idx: list[int], base: int
    ) -> tuple[dict[int, str], int]:
        """The lines the compiled parser left: parsed as the reference parses them, evaluated
        by the kernel in one call (the reference evaluator beyond the kernel's limits)."""
        texts: dict[int, str] = {}
        errors = 0
        queue: list[
            tuple[int, int, str, RuleSet, list[int], list[Group], int | None, HuContext]
        ] = []
        codes_q: list[list[tuple[int, int]]] = []
        for i in idx:
            n = base + i + 1
            line = _strip(pending[i])
            if not line:
                continue
            try:
                text = line.decode() if type(line) is bytes else line
                obj, end = _SCAN(text, 0)
                if end != len(text):
                    raise ValueError
            except (ValueError, StopIteration):
                texts[i] = _batch_error(n, _json_error(line)) + "\n"
                errors += 1
                continue
            try:
                head, ruleset, kinds, groups, kind, ctx = _batch_parse(
                    obj, self.default_rules, self.rules, self.defaults
                )
            except PaohuziError as e:
                texts[i] = _batch_error(n, str(e)) + "\n"
                errors += 1
                continue
            except Exception as e:  # as the reference: the rest of the batch goes on
                texts[i] = _batch_error(n, f"internal error: {type(e).__name__}: {e}") + "\n"
                errors += 1
                continue
            codes = self._codes(groups)
            if codes is None:
                errors += self._reference(texts, i, n, head, ruleset, kinds, groups, kind, ctx)
                continue
            queue.append((i, n, head, ruleset, kinds, groups, kind, ctx))
            codes_q.append(codes)
        if queue:
            res = self.bs.eval_requests(
                self._params_for(queue),
                [self._row(q[3]) for q in queue],
                codes_q,
                [q[4] for q in queue],
                [-1 if q[6] is None else q[6] for q in queue],
                [int(q[7].source) for q in queue],
                [(int(q[7].tianhu), int(q[7].haidi), int(q[7].dihu)) for q in queue],
            ).tolist()
            fk = self.fk
            for (i, n, head, ruleset, kinds, groups, kind, ctx), r in zip(queue, res):
                reason = r[fk.O_REASON]
                if reason < 0 or reason > len(NoWin):  # not the kernel's: the reference says
                    errors += self._reference(texts, i, n, head, ruleset, kinds, groups, kind, ctx)
                    continue
                hx = r[fk.O_HUXI]
                texts[i] = (
                    _batch_answer(
                        head,
                        bool(r[fk.O_WIN]),
                        None if hx < 0 else hx,
                        NoWin(reason) if reason else None,
                        r[fk.O_DENG],
                        r[fk.O_FAN],
                        r[fk.O_SCORE],
                        kind is not None or ctx.tianhu,
                    )
                    + "\n"
                )
        return texts, errors

    def _params_for(self, queue: list[Any]) -> Any:
        for q in queue:
            self._row(q[3])
        return self.np.stack(self.params)

    @staticmethod
    def _reference(
        texts: dict[int, str],
        i: int,
        n: int,
        head: str,
        ruleset: RuleSet,
        kinds: list[int],
        groups: list[Group],
        kind: int | None,
        ctx: HuContext,
    ) -> int:
        try:
            res = _hu.evaluate_hu(ruleset, groups, kinds, kind, ctx)
        except PaohuziError as e:
            texts[i] = _batch_error(n, str(e)) + "\n"
            return 1
        except Exception as e:
            texts[i] = _batch_error(n, f"internal error: {type(e).__name__}: {e}") + "\n"
            return 1
        scored = kind is not None or ctx.tianhu
        texts[i] = (
            _batch_answer(head, res.win, res.huxi, res.reason, res.deng, res.fan, res.score, scored)
            + "\n"
        )
        return 0


def _run_batch_fast(
    lines: Iterable[bytes | str],
    out: BinaryIO,
    rules: str,
    overrides: tuple[str, ...],
    engine: str = "fast",
) -> BatchStats:
    """:func:`run_batch` with ``engine="fast"``: chunks of lines through the compiled scorer.

    The scorer is built (compiled, or loaded from numba's cache) at the first line, so an
    empty input or a first line that is too long costs nothing. With ``engine="auto"`` a
    scorer that cannot be built (numba broken) means the reference, with a note on stderr.
    """
    load_rules(rules, overrides)  # fail early, before any output
    it = iter(lines)
    try:
        first = next(it)
    except StopIteration:
        out.flush()
        return BatchStats(0, 0, 0)
    except LineTooLong:
        out.flush()
        raise
    try:
        scorer = _FastScorer(rules, overrides)
    except Exception as e:
        if engine != "auto":
            raise
        print(
            f"note: the fast scorer is unavailable ({type(e).__name__}: {e}); using the reference",
            file=sys.stderr,
        )
        return run_batch(
            itertools.chain([first], it), out, rules=rules, overrides=overrides, engine="reference"
        )
    pending: list[Any] = [first]
    n = 1
    results = errors = 0

    def emit() -> None:
        nonlocal results, errors
        if pending:
            data, r, e = scorer.chunk(pending, n - len(pending))
            results += r
            errors += e
            pending.clear()
            if data:
                out.write(data)

    try:
        for raw in it:
            n += 1
            pending.append(raw)
            if len(pending) >= _FAST_CHUNK:
                emit()
    except LineTooLong:
        emit()  # what was scored before the long line is written
        out.flush()
        raise
    emit()
    out.flush()
    return BatchStats(n, results, errors)


# --------------------------------------------------------------------------- benchmark


_SENTENCE_SHAPES = tuple(s for s in EAT_SHAPES if not is_one_five_ten(s))


def _random_request(rng: random.Random) -> dict[str, Any] | None:
    """One plausible hu chance: 7 门子 built from the deck, then sometimes spoilt by one card."""
    avail = [COPIES] * NUM_KINDS
    melds: list[str] = []
    hand: list[int] = []
    q = rng.choice((0, 0, 0, 1, 1, 2))
    for _ in range(q):
        face = rng.choice([f for f in range(NUM_KINDS) if avail[f] == COPIES])
        melds.append(f"{rng.choice(('pao', 'ti'))}:{CARD_CHARS[face]}")
        avail[face] = 0
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.6:
            fits = [s for s in _SENTENCE_SHAPES if all(avail[k] >= s.count(k) for k in s)]
            shape = rng.choice(fits)
            for k in shape:
                avail[k] -= 1
            melds.append("chi:" + ",".join(CARD_CHARS[k] for k in shape))
        else:
            face = rng.choice([f for f in range(NUM_KINDS) if avail[f] == COPIES])
            melds.append(f"{rng.choice(('peng', 'peng', 'wei'))}:{CARD_CHARS[face]}")
            avail[face] = 0  # the 4th copy is elsewhere: an own 碰/偎 face is never in hand
    left = 7 - len(melds)
    if q:
        face = rng.choice([f for f in range(NUM_KINDS) if avail[f] >= 2])
        hand += [face, face]
        avail[face] = 0
        left -= 1
    for _ in range(left):
        if rng.random() < 0.12:
            faces = [f for f in range(NUM_KINDS) if avail[f] >= 3 and f not in hand]
            if faces:
                face = rng.choice(faces)
                hand += [face] * 3
                avail[face] = 0
                continue
        fits = [s for s in _SENTENCE_SHAPES if all(avail[k] >= s.count(k) for k in s)]
        if not fits:
            return None
        shape = rng.choice(fits)
        for k in shape:
            avail[k] -= 1
        hand += shape
    if rng.random() < 0.35:  # spoil: swap one card for another face still in the deck
        i = rng.randrange(len(hand))
        avail[hand[i]] += 1
        hand[i] = rng.choice([f for f in range(NUM_KINDS) if avail[f] > 0 and f != hand[i]])
        avail[hand[i]] -= 1
    rng.shuffle(hand)
    req: dict[str, Any] = {"melds": melds}
    if rng.random() < 0.8:
        card = hand.pop()
        req["card"] = CARD_CHARS[card]
        req["source"] = rng.choices(("other", "own", "liang"), (70, 25, 5))[0]
    req = {"hand": "".join(CARD_CHARS[k] for k in hand), **req}
    if any(hand.count(k) >= COPIES for k in hand):
        return None  # a dealt 4-of-a-kind is a 提 on the table, never a hand
    return req


def generate_batch_lines(n: int, seed: int = 0) -> list[str]:
    """``n`` realistic ``--batch`` input lines, deterministic in ``seed``.

    About 1 in 3 is spoilt by one card; the rest are 7-门子 hands whose 胡息 decides the win.
    """
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        req = _random_request(rng)
        if req is not None:
            out.append(json.dumps(req, ensure_ascii=False))
    return out


class _Sink(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        return len(b)


def bench_batch(n: int = 100_000, seed: int = 0, engine: str = "reference") -> float:
    """Batch throughput in hands per second on ``n`` generated lines (generation not timed;
    for ``engine="fast"`` neither is the compile or cache load, done on a first tiny batch)."""
    return bench_engines(n, seed, (engine,))[engine]


def bench_engines(
    n: int = 100_000, seed: int = 0, engines: Sequence[str] = ("reference", "fast"), repeat: int = 1
) -> dict[str, float]:
    """Lines per second of :func:`run_batch` for each engine on the same ``n`` generated lines
    (the best of ``repeat`` interleaved runs; the outputs are checked equal)."""
    data = [s.encode() for s in generate_batch_lines(n, seed)]
    sink = _Sink()
    if "fast" in engines:
        run_batch(data[:8], sink, engine="fast")  # type: ignore[arg-type]
    best = dict.fromkeys(engines, 0.0)
    outs: dict[str, bytes] = {}
    for _ in range(repeat):
        for engine in engines:
            buf = io.BytesIO()
            t0 = time.perf_counter()
            run_batch(data, buf, engine=engine)  # type: ignore[arg-type]
            best[engine] = max(best[engine], n / (time.perf_counter() - t0))
            outs[engine] = buf.getvalue()
    if len(set(outs.values())) > 1:
        raise AssertionError(f"the engines disagree on the bench input ({', '.join(outs)})")
    return best


def _main(argv: Sequence[str]) -> int:
    """``python -m replay.calculator bench [N [SEED]]`` or ``generate N [SEED]``."""
    if len(argv) >= 1 and argv[0] in ("bench", "generate"):
        n = int(argv[1]) if len(argv) > 1 else 100_000
        seed = int(argv[2]) if len(argv) > 2 else 0
        if argv[0] == "bench":
            rates = bench_engines(n, seed, ("reference", "fast") if fast_available() else ())
            ref = rates.get("reference") or bench_batch(n, seed)
            print(f"paohuzi score --batch: {ref:,.0f} hands/s reference ({n} lines, seed {seed})")
            if "fast" in rates:
                fast = rates["fast"]
                print(
                    f"paohuzi score --batch: {fast:,.0f} hands/s fast, {fast / ref:.1f}× the reference"
                )
        else:
            sys.stdout.write("\n".join(generate_batch_lines(n, seed)) + "\n")
        return 0
    print("usage: python -m replay.calculator bench|generate [N [SEED]]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
