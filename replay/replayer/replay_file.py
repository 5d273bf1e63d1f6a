"""Replay files: one hand as a human-readable, hand-writable file (docs/REPLAY_FILE.md).

Two spellings of the same content:

* **text** (``.phz``): ``key: value`` lines in sections ``[hand]``, ``[events]`` and
  ``[outcome]``, cards and actions in card notation, ``#`` comments;
* **JSON** (``.json``): one object with the same fields.

:func:`export_hand` writes a recorded hand; :func:`read_replay` parses either spelling
into a :class:`ReplayFile` (a :class:`~replay.replayer.hand.HandLog` plus what the file claims
about the outcome and the hand's record); :func:`check_replay` replays it. Importing hands
into the store is :mod:`replay.replayer.importing` (checked) and
:mod:`replay.record.importing` (committed).

>>> from engine.deck import shuffle_deck
>>> from engine.rules import find_rules
>>> from replay.replayer.hand import HandLog
>>> log = HandLog.from_history(find_rules("hunan"), shuffle_deck(3), 0, [])
>>> text = to_text(log)
>>> print(text.splitlines()[0])
# 跑胡子 replay file (paohuzi-replay 1): see docs/REPLAY_FILE.md
>>> read_replay(text).log.deck == log.deck
True
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import reprlib
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.cells import cell_len

from engine.actions import (
    DISCARD_BASE,
    HU,
    PAO_BASE,
    PASS,
    PENG,
    TI_BASE,
    WEI_BASE,
    action_str,
    encode_chi,
    kind_of,
    parse_action,
)
from engine.cards import COPIES, NUM_KINDS, card_char, format_cards, parse_card, parse_cards
from engine.errors import InvalidNotation, InvalidRules
from engine.hu import Source
from engine.rules import PRESETS, RuleSet, find_rules
from engine.state import OutcomeKind, State
from replay import schema
from replay.replayer.hand import HandLog, Replayer, game_for, load_hand
from replay.replayer.replay_schema import (
    FORMAT,
    OUTCOME_RANGE,
    RECORD_FIELDS,
    VERSION,
    ReplayFileError,
    check_doc,
    check_event,
    check_range,
    digits,
    parse_json,
)
from replay.replayer.verify import check_log, deck_problem, expected_hand
from replay.store.fsinfo import file_kind, read_at_most

HEADER = f"# 跑胡子 replay file ({FORMAT} {VERSION}): see docs/REPLAY_FILE.md"

#: The largest replay file read by default (``--max-bytes``): an exported hand is a few KB.
MAX_BYTES = 1 << 20

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlevel = 2
_REPR.maxlist = _REPR.maxdict = 4


def _show(v: Any) -> str:
    """A short ``repr`` of a value read from a file (long or nested values elided)."""
    return _REPR.repr(v)


@dataclasses.dataclass
class ReplayFile:
    """A parsed replay file: the hand, what the file says about its outcome (columns of
    ``hands``, possibly partial) and its record (session, policies …)."""

    log: HandLog
    outcome: dict[str, Any]
    record: dict[str, Any]
    policies: list[str | None]
    title: str | None = None
    source: dict[str, Any] = dataclasses.field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Actions and cards in notation
# ---------------------------------------------------------------------------------------------

_LABEL_BASE = {"打": DISCARD_BASE, "提": TI_BASE, "偎": WEI_BASE, "跑": PAO_BASE}
_SIMPLE = {"过": PASS, "胡": HU, "碰": PENG}
_CHI_RE = re.compile(r"^吃\s*((?:\[[^\]]*\]\s*){1,3})$")


def parse_action_text(text: str) -> int:
    """An action code from text: the notation :func:`engine.actions.action_str` writes
    (``过``, ``胡``, ``碰``, ``打 四``, ``提 五``, ``偎 五``, ``跑 五``, ``吃 [一二三][三四五]``),
    the forms of :func:`engine.actions.parse_action` (``pass``, ``discard:s4``,
    ``chi:一二三+三四五``), or a bare action code.

    >>> [parse_action_text(t) for t in ("过", "打 拾", "吃 [一二三][三四五]", "discard:b10", "29")]
    [0, 29, 144, 29, 29]
    """
    t = " ".join(text.split())
    if not t:
        raise InvalidNotation("empty action")
    if t in _SIMPLE:
        return _SIMPLE[t]
    if t.isdigit():
        code = int(t)
        kind_of(code)  # raises on a code out of range
        return code
    head, _, rest = t.partition(" ")
    if head in _LABEL_BASE and rest:
        return _LABEL_BASE[head] + parse_card(rest)
    m = _CHI_RE.match(t)
    if m:
        groups = re.findall(r"\[([^\]]*)\]", m.group(1))
        try:
            return encode_chi([tuple(sorted(parse_cards(g))) for g in groups])
        except (KeyError, ValueError) as e:
            raise InvalidNotation(f"not an eat shape in {text!r}: {e}") from None
    if t.startswith("吃") and "[" not in t:
        try:
            return encode_chi([tuple(sorted(parse_cards(g))) for g in t[1:].split("+")])
        except (KeyError, ValueError, InvalidNotation):
            pass
    return parse_action(t)


def _bool(v: Any) -> bool | None:
    if v is None or isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("yes", "true", "1", "on"):
        return True
    if s in ("no", "false", "0", "off"):
        return False
    raise InvalidNotation(f"expected yes or no, got {_show(v)}")


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


def _rules_spec(rules: RuleSet) -> tuple[str, list[str]]:
    """A preset name and the ``key=value`` overrides that turn it into ``rules``."""
    name = rules.preset_name()
    if name is not None:
        return name, []
    base = PRESETS["luzhou"] if rules.luzhou else PRESETS["hunan"]
    base_name = "luzhou" if rules.luzhou else "hunan"
    sets = []
    for f in dataclasses.fields(rules):
        v = getattr(rules, f.name)
        if v != getattr(base, f.name):
            sets.append(f"{f.name}={'on' if v is True else 'off' if v is False else v}")
    return base_name, sets


def _hand_outcome(log: HandLog, state: State) -> dict[str, Any]:
    """The outcome columns: the recorded row if the log has one, else recomputed."""
    exp = expected_hand(state, log.n_steps) if state.outcome is not None else {}
    if log.hand:
        return {k: log.hand.get(k, exp.get(k)) for k in exp}
    return exp


def _outcome_lines(o: dict[str, Any], players: int) -> list[tuple[str, str]]:
    if not o:
        return []

    def seat(v: Any) -> str:
        return "-" if v is None else str(v)

    def card(v: Any) -> str:
        return "-" if v is None else card_char(v)

    out = [("result", OutcomeKind(o["outcome"]).name)]
    out.append(("winner", seat(o["winner"])))
    out.append(("source", "-" if o["source"] is None else Source(o["source"]).name))
    out.append(("hu_card", card(o["hu_card"])))
    out.append(("from_seat", seat(o["from_seat"])))
    for k in ("huxi", "deng", "fan", "score"):
        out.append((k, "-" if o[k] is None else str(o[k])))
    out.append(("mingtang", " ".join(schema.mingtang_names(o["mingtang"])) or "-"))
    out.append(("zimo", "-" if o["zimo"] is None else ("yes" if o["zimo"] else "no")))
    out.append(("deltas", " ".join(f"{o[f'delta_{s}']:+d}" for s in range(players))))
    out.append(("stock_left", str(o["stock_left"])))
    return out


def _event_notes(rp: Replayer, k: int) -> str:
    d = rp.decision(k)
    if d.forced:
        return "forced"
    if len(d.legal) == 1:
        return "only option"
    return "of " + " | ".join(d.legal_str)


def to_text(log: HandLog, title: str | None = None, policies: Sequence[str | None] = ()) -> str:
    """The hand as a text replay file."""
    rp = Replayer(log)
    final = rp.state_at(None)
    preset, sets = _rules_spec(log.rules)
    lines = [HEADER, "", "[hand]"]
    lines.append(f"title: {title or _default_title(log)}")
    if log.run is not None:
        lines.append(f"source: run {log.run} hand {log.hand_id}")
    lines.append(f"rules: {preset}")
    lines += [f"set: {s}" for s in sets]
    lines.append(f"dealer: {log.dealer}")
    for i in range(0, 80, 20):
        chunk = format_cards(log.deck[i : i + 20])
        lines.append(f"deck: {chunk}" if i == 0 else f"      {chunk}")
    lines.append("# positions 0-19 to the dealer, 20-39 his 下家, 40-59 his 上家, 60 the 亮张,"
                 " 61-79 the stock (61 on top)")  # fmt: skip
    if log.hand:
        rec = " ".join(f"{k}={log.hand[k]}" for k in RECORD_FIELDS if k in log.hand)
        if rec:
            lines.append(f"record: {rec}")
    pol = list(policies) or [log.hand.get(f"policy_{s}") for s in range(log.rules.players)]
    if any(p is not None for p in pol):
        lines.append("policies: " + ", ".join(p or "-" for p in pol))
    lines += ["", "[events]", "# seq  seat: action   # options (the chosen one is the action)"]
    for k, (seat, action) in enumerate(log.events):
        a = action_str(action)
        pad = " " * max(1, 22 - cell_len(a))
        lines.append(f"{k:<4} seat {seat}: {a}{pad}# {_event_notes(rp, k)}")
    o = _hand_outcome(log, final)
    if o:
        lines += ["", "[outcome]"]
        lines += [f"{k}: {v}" for k, v in _outcome_lines(o, log.rules.players)]
    return "\n".join(lines) + "\n"


def _default_title(log: HandLog) -> str:
    if log.run is not None:
        return f"run {log.run} hand {log.hand_id}"
    return str(log.meta.get("title", "a hand of 跑胡子"))


def to_json(log: HandLog, title: str | None = None, policies: Sequence[str | None] = ()) -> str:
    """The hand as a JSON replay file."""
    rp = Replayer(log)
    final = rp.state_at(None)
    preset, sets = _rules_spec(log.rules)
    events = []
    for k, (seat, action) in enumerate(log.events):
        d = rp.decision(k)
        events.append(
            {
                "seq": k,
                "seat": seat,
                "action": action_str(action),
                "code": action,
                "forced": d.forced,
                "options": d.legal_str,
            }
        )
    o = _hand_outcome(log, final)
    pol = list(policies) or [log.hand.get(f"policy_{s}") for s in range(log.rules.players)]
    obj: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "title": title or _default_title(log),
        "source": {"run": log.run, "hand_id": log.hand_id} if log.run is not None else None,
        "rules": {"preset": preset, "set": sets, "full": log.rules.to_dict()},
        "dealer": log.dealer,
        "deck": format_cards(log.deck),
        "record": {k: log.hand[k] for k in RECORD_FIELDS if k in log.hand} or None,
        "policies": pol if any(p is not None for p in pol) else None,
        "events": events,
        "outcome": dict(_outcome_lines(o, log.rules.players)) if o else None,
    }
    return _dump_json(obj)


def _dump_json(obj: dict[str, Any]) -> str:
    """One field per line, one event per line: readable and diff-friendly."""
    parts = []
    for k, v in obj.items():
        if k == "events" and v:
            inner = ",\n".join("  " + json.dumps(e, ensure_ascii=False) for e in v)
            parts.append(f' "events": [\n{inner}\n ]')
        else:
            parts.append(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def export_hand(
    store_or_path: Any, run: str, hand_id: int, fmt: str = "text"
) -> tuple[str, HandLog]:
    """A recorded hand as replay-file text (``fmt`` ``text`` or ``json``) and its log."""
    log = load_hand(store_or_path, run, hand_id)
    problems = check_log(log, compare=False)
    if problems:
        raise ReplayFileError(f"cannot export a hand that does not replay: {problems[0]}")
    return (to_json(log) if fmt == "json" else to_text(log)), log


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------

_KEY_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_ ]*?)\s*:\s*(.*)$")
_EVENT_RE = re.compile(r"^(?:(\d+)[.)]?\s+)?seat\s+(\d+)\s*:\s*(.+)$", re.IGNORECASE)

#: The keys of ``[hand]`` that hold one value each.
_HAND_KEYS = ("title", "source", "rules", "dealer", "deck", "liang", "stock", "record",
              "policies", "format", "version")  # fmt: skip


def _strip_comment(line: str) -> str:
    i = line.find("#")
    return (line if i < 0 else line[:i]).rstrip()


def text_event(text: str) -> dict[str, Any] | None:
    """An event written ``SEQ seat S: ACTION`` as the JSON spelling's object (its numbers
    integers), or None if it is not so written."""
    m = _EVENT_RE.match(text.strip())
    if not m:
        return None
    ev: dict[str, Any] = {"seat": digits(m.group(2)), "action": m.group(3)}
    return ev if m.group(1) is None else {"seq": digits(m.group(1)), **ev}


def _parse_text(text: str) -> tuple[dict[str, Any], dict[str, int]]:
    """The text spelling as the document the JSON spelling gives — the one place where its
    text becomes numbers (seats, seq, dealer, version, record; the outcome's values are text
    in both spellings) — and the line of each field (``dealer``, ``events.3``, …)."""
    obj: dict[str, Any] = {}
    lines: dict[str, int] = {}
    events: list[dict[str, Any]] = []
    sets: list[str] = []
    hands: dict[str, str] = {}
    outcome: dict[str, str] = {}
    section = None
    last_key = None
    for no, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw)
        if not line.strip():
            continue
        s = line.strip()
        if s.startswith("[") and s.endswith("]"):
            section = s[1:-1].strip().lower()
            if section not in ("hand", "events", "outcome"):
                raise ReplayFileError(f"line {no}: unknown section [{section}]")
            last_key = None
            continue
        if section is None:
            raise ReplayFileError(f"line {no}: expected a section such as [hand], got {s!r}")
        if section == "events":
            ev = text_event(s)
            if ev is None:
                raise ReplayFileError(f"line {no}: expected 'SEQ seat S: ACTION', got {s!r}")
            lines[f"events.{len(events)}"] = no
            events.append(ev)
            continue
        if raw[:1] in (" ", "\t") and last_key == "deck":
            obj["deck"] += " " + s  # continuation of the deck
            continue
        m = _KEY_RE.match(s)
        if not m:
            raise ReplayFileError(f"line {no}: expected 'key: value', got {s!r}")
        key, value = m.group(1).strip().lower(), m.group(2).strip()
        last_key = key
        if section == "outcome":
            if key in outcome:
                raise ReplayFileError(f"line {no}: {key!r} given twice")
            outcome[key] = value
            lines[f"outcome.{key}"] = no
        elif key == "set":
            lines.setdefault("rules", no)
            sets.append(value)
        elif key.startswith("hand ") or key.startswith("seat "):
            seat = key.split()[1]
            if not seat.isdigit():
                raise ReplayFileError(f"line {no}: bad seat in {key!r}")
            lines[f"deal.hands.{seat}"] = no
            hands[seat] = value
        elif key in _HAND_KEYS:
            if key in obj:
                raise ReplayFileError(f"line {no}: {key!r} given twice")
            obj[key] = value
            lines[key] = no
        else:
            raise ReplayFileError(f"line {no}: unknown key {key!r}")
    obj["events"] = events
    if outcome:
        obj["outcome"] = outcome
    obj["rules"] = {"preset": obj.pop("rules", None) or "hunan", "set": sets}
    if hands:
        obj["deal"] = {"hands": hands, "liang": obj.pop("liang", None),
                       "stock": obj.pop("stock", None)}  # fmt: skip
        for key in ("liang", "stock"):
            if key in lines:
                lines[f"deal.{key}"] = lines.pop(key)
    for key in ("liang", "stock"):
        if key in obj:
            raise ReplayFileError(f"line {lines[key]}: {key!r} goes with 'hand S:' lines, not"
                                  " with the deck")  # fmt: skip
    for key in ("dealer", "version"):
        if key in obj:
            obj[key] = digits(obj[key])
    if "record" in obj:
        rec: dict[str, Any] = {}
        for item in obj["record"].split():
            k, _, v = item.partition("=")
            if k in rec:
                raise ReplayFileError(f"line {lines['record']}: record field {k!r} given twice")
            rec[k] = digits(v)
        obj["record"] = rec
    if "policies" in obj:
        obj["policies"] = [p.strip() for p in obj["policies"].split(",")]
    return obj, lines


def _at(lines: dict[str, int], key: str) -> str:
    """``line N: `` for a field of the text spelling (its line known), else nothing."""
    no = lines.get(key)
    return f"line {no}: " if no else ""


def _rules_from(spec: str | dict[str, Any]) -> RuleSet:
    if isinstance(spec, str):
        return find_rules(spec)
    if spec.get("full") is not None:
        return RuleSet.from_dict(spec["full"])
    rules = find_rules(spec.get("preset") or "hunan")
    sets = spec.get("set") or []
    if isinstance(sets, dict):
        sets = [f"{k}={'on' if v is True else 'off' if v is False else v}" for k, v in sets.items()]
    return rules.with_overrides(sets)


def _deck_from_deal(
    deal: dict[str, Any], rules: RuleSet, dealer: int, lines: dict[str, int]
) -> tuple[int, ...]:
    """The 80-card deck from the seats' hands, the 亮张 and the stock (``rest``: the cards
    not placed yet, in kind order)."""
    n = rules.players
    if n == 4:
        active = (dealer, (dealer + 1) % 4, (dealer + 3) % 4)
    else:
        active = (dealer, (dealer + 1) % 3, (dealer + 2) % 3)
    hands: dict[str, str] = deal["hands"]
    liang, stock_v = deal.get("liang"), deal.get("stock")
    extra = sorted(set(hands) - {str(s) for s in active})
    if extra:
        seat = extra[0] if re.fullmatch(r"[0-9]{1,9}", extra[0]) else _show(extra[0])
        raise ReplayFileError(f"hand given for seat {seat}, which is not dealt (active seats"
                              f" {', '.join(map(str, active))})")  # fmt: skip
    cards: dict[int, list[int]] = {}
    for s in active:
        if str(s) not in hands:
            raise ReplayFileError(f"the hand of seat {s} is missing")
        cards[s] = _cards(hands[str(s)], f"deal.hands.{s}", lines)
    d = cards[dealer]
    if n == 3:
        if liang not in (None, "", "-"):
            if len(d) != 20:
                raise ReplayFileError(f"the dealer (seat {dealer}) is dealt 20 cards plus the 亮张,"
                                      f" not {len(d)}")  # fmt: skip
            try:
                d = d + [parse_card(liang)]
            except InvalidNotation as e:
                label = "liang" if "deal.liang" in lines else "field deal.liang"
                raise ReplayFileError(f"{_at(lines, 'deal.liang')}{label}: {e}") from None
        elif len(d) != 21:
            raise ReplayFileError(f"give the 亮张 (liang: X) or 21 cards for the dealer"
                                  f" (seat {dealer})")  # fmt: skip
    elif len(d) != 21:
        raise ReplayFileError(f"the dealer (seat {dealer}) is dealt 21 cards, not {len(d)}")
    for s in active[1:]:
        if len(cards[s]) != 20:
            raise ReplayFileError(f"seat {s} is dealt 20 cards, not {len(cards[s])}")
    deck = d[:20] + cards[active[1]] + cards[active[2]] + [d[20]]
    stock_text = (stock_v or "rest").strip()
    rest_kw = stock_text.endswith("rest")
    stock = _cards(stock_text[:-4] if rest_kw else stock_text, "deal.stock", lines)
    used = [0] * NUM_KINDS
    for k in deck + stock:
        used[k] += 1
    over = [f"{card_char(k)} ×{c}" for k, c in enumerate(used) if c > COPIES]
    if over:
        raise ReplayFileError("more than 4 copies in the deal: " + ", ".join(over))
    if rest_kw:
        stock += [k for k in range(NUM_KINDS) for _ in range(COPIES - used[k])]
    if len(deck) + len(stock) != 80:
        missing = [f"{card_char(k)} ×{COPIES - c}" for k, c in enumerate(used) if c < COPIES]
        raise ReplayFileError(
            f"the deal has {len(deck) + len(stock)} cards, not 80 (missing "
            + ", ".join(missing)
            + "; end the stock with 'rest' to add them in order)"
        )
    return tuple(deck + stock)


def _cards(text: str, key: str, lines: dict[str, int]) -> list[int]:
    """The cards of field ``key`` in notation."""
    try:
        return parse_cards(text)
    except InvalidNotation as e:
        if key in lines:  # the text spelling's key
            label = key.removeprefix("deal.").replace("hands.", "hand ")
            raise ReplayFileError(f"{_at(lines, key)}{label}: {e}") from None
        raise ReplayFileError(f"field {key}: {e}") from None


def _none(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v.strip().lower() in ("", "-", "null", "none"))


def _parse_outcome(o: dict[str, Any], players: int, lines: dict[str, int]) -> dict[str, Any]:
    """The outcome columns a file states (values checked by the schema: text, an integer in
    the field's range, or null)."""
    out: dict[str, Any] = {}
    for key, v in o.items():
        head = _at(lines, f"outcome.{key}")
        what = f"outcome.{key}"

        def number(x: int | str, key: str = key, head: str = head) -> int | None:
            n = x if isinstance(x, int) else digits(x)
            if not isinstance(n, int):
                return None
            return check_range(n, f"outcome.{key}", *OUTCOME_RANGE[key], head=head)

        if key in ("result", "source"):
            if _none(v):
                if key == "source":
                    out["source"] = None
                continue
            enum = OutcomeKind if key == "result" else Source
            code = number(v)
            if code is None:
                try:
                    code = int(enum[str(v).strip().upper()])
                except KeyError:
                    names = ", ".join(e.name for e in enum)
                    raise ReplayFileError(f"{head}field {what}: unknown {key} {_show(v)}"
                                          f" (known: {names})") from None  # fmt: skip
            out["outcome" if key == "result" else key] = code
        elif key == "hu_card":
            if _none(v):
                out[key] = None
            elif isinstance(v, int):
                out[key] = v
            else:
                try:
                    out[key] = parse_card(v.strip())
                except InvalidNotation as e:
                    raise ReplayFileError(f"{head}field {what}: {e}") from None
        elif key == "zimo":
            try:
                out[key] = None if _none(v) else _bool(v)
            except InvalidNotation as e:
                raise ReplayFileError(f"{head}field {what}: {e}") from None
        elif key == "mingtang":
            if isinstance(v, int):
                out[key] = v
                continue
            mask = 0
            for name in [] if _none(v) else v.replace(",", " ").split():
                if name not in schema.MINGTANG_BITS:
                    raise ReplayFileError(f"{head}field {what}: unknown 名堂 {_show(name)} (use the"
                                          " pinyin ids of docs/LOG_FORMAT.md §5.5)")  # fmt: skip
                mask |= 1 << schema.MINGTANG_BITS[name]
            out[key] = mask
        elif key == "deltas":
            vals = v if isinstance(v, list) else v.replace(",", " ").split()
            if len(vals) != players:
                raise ReplayFileError(f"{head}field {what}: {len(vals)} values for {players}"
                                      " seats")  # fmt: skip
            for s, x in enumerate(vals):
                d = number(x)
                if d is None:
                    raise ReplayFileError(
                        f"{head}field {what}[{s}]: expected an integer, got {_show(x)}"
                    )
                out[f"delta_{s}"] = d
        else:  # winner, from_seat, huxi, deng, fan, score, stock_left
            n = None if _none(v) else number(v)
            if n is None and not _none(v):
                lo, hi = OUTCOME_RANGE[key]
                raise ReplayFileError(f"{head}field {what}: expected an integer in {lo} … {hi}"
                                      f" or -, got {_show(v)}")  # fmt: skip
            out[key] = n
    return out


def read_replay(text: str, name: str = "replay file") -> ReplayFile:
    """Parse a replay file (text or JSON spelling), checked by the schema of
    :mod:`~replay.replayer.replay_schema`. Raises :class:`ReplayFileError` with the line or
    field at fault. The hand is not replayed here (see :func:`check_replay`)."""
    try:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ReplayFileError("not UTF-8 text (a lone surrogate)") from None
        text = text.removeprefix("\ufeff")  # a byte-order mark, as Notepad writes
        lines: dict[str, int] = {}
        if text.lstrip().startswith("{"):
            obj = parse_json(text)
        else:
            obj, lines = _parse_text(text)
        return _from_doc(check_doc(obj, lines), name, lines)
    except (InvalidNotation, InvalidRules) as e:
        why = "unknown_rules" if isinstance(e, InvalidRules) else "malformed"
        raise ReplayFileError(f"{name}: {e}", why) from None
    except ReplayFileError as e:
        msg = str(e)
        raise ReplayFileError(
            msg if msg.startswith(name) else f"{name}: {msg}", e.reason, e.event
        ) from None


def _event(ev: dict[str, Any], i: int) -> tuple[int, int]:
    """``(seat, code)`` of event ``i`` (an object the schema checked)."""
    seq = ev.get("seq")
    if seq is not None and seq != i:
        raise ReplayFileError(f"seq {seq} out of order (expected {i})")
    action: str = ev["action"]
    try:
        code = parse_action_text(action)
    except (InvalidNotation, KeyError, ValueError) as e:
        raise ReplayFileError(f"bad event: {e}") from None
    if ev.get("code") is not None and ev["code"] != code:
        raise ReplayFileError(f"code {ev['code']} does not match {action!r} ({code})")
    return int(ev["seat"]), code


def _from_doc(doc: dict[str, Any], name: str, lines: dict[str, int]) -> ReplayFile:
    """The replay file of a document the schema checked: what no field's type can say (the
    seats of the table, the deck, the order of the events) checked here."""
    title = doc.get("title")
    try:
        rules = _rules_from(doc.get("rules", "hunan"))
    except InvalidRules as e:
        raise ReplayFileError(f"{_at(lines, 'rules')}{e}", "unknown_rules") from None
    dealer: int = doc.get("dealer", 0)
    if dealer >= rules.players:
        raise ReplayFileError(f"{_at(lines, 'dealer')}dealer {dealer} is not a seat of a"
                              f" {rules.players}-player table")  # fmt: skip
    deck_v = doc.get("deck")
    if deck_v is not None and doc.get("deal") is not None:
        raise ReplayFileError("give either the deck or the hands, not both")
    if deck_v is not None:
        deck = tuple(deck_v) if isinstance(deck_v, list) else tuple(_cards(deck_v, "deck", lines))
        why = deck_problem(deck)
        if why:
            raise ReplayFileError(f"{_at(lines, 'deck')}{why}")
    elif doc.get("deal") is not None:
        deck = _deck_from_deal(doc["deal"], rules, dealer, lines)
    else:
        raise ReplayFileError("no deck (deck: 80 cards, or hand N: lines with the stock)")
    events: list[tuple[int, int]] = []
    for i, ev in enumerate(doc.get("events") or ()):
        no = lines.get(f"events.{i}")
        where = f"line {no}" if no else f"event {i}"
        if isinstance(ev, str):  # the text spelling's line, inside JSON
            parsed = text_event(ev)
            if parsed is None:
                raise ReplayFileError(f"field events[{i}]: expected 'seat S: ACTION', got"
                                      f" {_show(ev)}")  # fmt: skip
            check_event(parsed, i)
            ev = parsed
        try:
            seat, code = _event(ev, i)
        except ReplayFileError as e:
            raise ReplayFileError(f"{where}: {e}") from None
        if seat >= rules.players:
            raise ReplayFileError(f"{where}: seat {seat} is not a seat of this table")
        events.append((seat, code))
    record: dict[str, Any] = dict(doc.get("record") or {})
    policies: list[str | None] = [
        None if p in (None, "-", "") else p for p in doc.get("policies") or ()
    ]
    if policies and len(policies) != rules.players:
        raise ReplayFileError(f"{_at(lines, 'policies')}{len(policies)} policies for"
                              f" {rules.players} seats")  # fmt: skip
    outcome = _parse_outcome(doc.get("outcome") or {}, rules.players, lines)
    src = doc.get("source")
    if isinstance(src, str):
        m = re.match(r"run (\S+) hand (\d{1,9})$", src)
        src = {"run": m.group(1), "hand_id": int(m.group(2))} if m else {"text": src}
    meta = {"title": title, "source": name}
    log = HandLog.from_history(rules, deck, dealer, events, meta=meta)
    return ReplayFile(log, outcome, record, policies, title, src or {})


def read_bounded(path: str | Path, max_bytes: int, what: str = "file") -> bytes:
    """At most ``max_bytes`` of the file at ``path``: a regular file of at most that size
    (its size checked before it is read), or a stream — a pipe, ``/dev/stdin``, a terminal, a
    character device — read in chunks, never more than ``max_bytes + 1`` bytes (so
    ``/dev/zero`` cannot exhaust memory). A directory, a block device or a socket is refused
    unread. Raises :class:`ReplayFileError` naming the file (and the limit)."""
    p = Path(path)
    too_big = ReplayFileError(
        f"{p}: larger than {max_bytes:,} bytes, the limit for a {what} (raise it with --max-bytes)"
    )
    try:
        _readable_kind(p, os.stat(p).st_mode, what)
        fd = os.open(p, os.O_RDONLY | os.O_NOCTTY)
    except FileNotFoundError:
        raise ReplayFileError(f"no such file: {p}") from None
    except OSError as e:
        raise ReplayFileError(f"cannot read {p}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        _readable_kind(p, st.st_mode, what)  # the file opened, not one put there since
        if stat.S_ISREG(st.st_mode) and st.st_size > max_bytes:
            raise too_big
        data = read_at_most(fd, max_bytes)
    except OSError as e:
        raise ReplayFileError(f"cannot read {p}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise too_big
    return data


def _readable_kind(p: Path, mode: int, what: str) -> None:
    """Refuse what is no file to read (a directory, a block device, a socket): only a
    regular file or a stream (a pipe, a terminal, a character device) is read."""
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        raise ReplayFileError(f"{p} is {file_kind(mode)}, not a {what}")


def read_replay_file(path: str | Path, max_bytes: int = MAX_BYTES) -> ReplayFile:
    """Read and parse a replay file from disk (at most ``max_bytes``, default 1 MiB; a pipe
    or ``/dev/stdin`` too)."""
    p = Path(path)
    data = read_bounded(p, max_bytes, "replay file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReplayFileError(f"{p}: not UTF-8 text") from None
    return read_replay(text, str(p))


def check_replay(rf: ReplayFile) -> State:
    """Replay the file's hand (checked) and compare what it states about the outcome; the
    final state. Raises :class:`ReplayFileError` naming the event at fault."""
    name = rf.log.meta.get("source", "replay file")
    problems = check_log(rf.log, compare=False)
    if problems:
        p = problems[0]
        where = f"event {p.seq}" if p.seq is not None else "the hand"
        raise ReplayFileError(f"{name}: {where}: {p.reason}")
    state = game_for(rf.log.rules).new_initial_state(rf.log.deck, rf.log.dealer)
    for seat, action in rf.log.events:
        state.apply_checked(seat, action)
    exp = expected_hand(state, rf.log.n_steps)
    diffs = [
        f"{k} {v!r} (replay gives {exp[k]!r})"
        for k, v in rf.outcome.items()
        if k in exp and exp[k] != v
    ]
    if diffs:
        raise ReplayFileError(f"{name}: the stated outcome differs: " + ", ".join(diffs))
    return state
