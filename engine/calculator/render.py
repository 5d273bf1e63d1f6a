"""The calculator's answer as ``paohuzi score`` prints it: the text report, the ``--json``
object, the reason a hand does not win, the settlement (RULES.md §10.3, §11).

>>> calc = calculate("壹贰叁四五六七八九陆柒捌贰柒", ["chi:一,二,三", "peng:伍"], card="拾")
>>> print(calc.to_text(ascii=True).splitlines()[-1])
settlement +4/-2/-2 (winner/others)
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.calculator.request import ScoreRequest, evaluate, parse_request
from engine.cards import card_ascii, card_char, format_cards
from engine.groups import SAME_FACE_KINDS, TABLE_KINDS, Group, GroupKind
from engine.hu import NOWIN_TEXT, HuResult, NoWin
from engine.melds import format_meld

__all__ = ["Calculation", "calculate", "reason_text", "settlement"]

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
