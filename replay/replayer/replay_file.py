"""Replay files: one hand as a human-readable, hand-writable file (docs/REPLAY_FILE.md).

Two spellings of the same content:

* **text** (``.phz``): ``key: value`` lines in sections ``[hand]``, ``[events]`` and
  ``[outcome]``, cards and actions in card notation, ``#`` comments;
* **JSON** (``.json``): one object with the same fields.

:func:`export_hand` writes a recorded hand; :func:`read_replay` parses either spelling
into a :class:`ReplayFile` (a :class:`~replay.replayer.hand.HandLog` plus what the file claims
about the outcome and the hand's record); :func:`import_files` verifies hands and adds them
to the store as a run of imported hands, written the way the simulator writes shards
(atomic files, then the manifest, under the run lock), and refreshes the catalog.

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

import collections
import dataclasses
import functools
import hashlib
import json
import os
import re
import reprlib
import stat
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
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
from engine.errors import CorruptLog, InvalidNotation, InvalidRules, PaohuziError
from engine.hu import Source
from engine.rules import PRESETS, RuleSet, find_rules
from engine.state import OutcomeKind, State
from replay import schema, store
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
from replay.replayer.verify import (
    FastState,
    check_log,
    check_tables,
    deck_problem,
    expected_event,
    expected_hand,
    fast_unsupported,
)
from replay.store.fsinfo import file_kind, read_at_most
from replay.store.manifest import IngestLock, Manifest, clear_first_write, now
from replay.store.provenance_schema import PROVENANCE, PROVENANCE_MAX_BYTES, PROVENANCE_SCHEMA

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


# ---------------------------------------------------------------------------------------------
# Importing into the store
# ---------------------------------------------------------------------------------------------


def default_run_name(rules: RuleSet) -> str:
    """``imported-<preset>``, or ``imported-<base preset>-<fingerprint>`` for rules that are
    no preset (a preset changed by ``set:`` lines)."""
    preset = rules.preset_name()
    if preset is not None:
        return f"imported-{preset}"
    return f"imported-{'luzhou' if rules.luzhou else 'hunan'}-{rules.fingerprint()[:8]}"


def _default_run(root: Path, rules: RuleSet) -> str:
    """The run a hand with ``rules`` is imported into by default: :func:`default_run_name`,
    unless a run of that name holds other hands (another rule set, or a simulated run):
    then ``<that name>-<fingerprint>``, so such a run never blocks the default."""
    first = default_run_name(rules)
    for name in (first, f"{first}-{rules.fingerprint()[:8]}"):
        path = store.run_dir(root, name)
        if not (path / store.MANIFEST_NAME).exists():
            return name
        try:
            m = store.read_manifest(path)
        except PaohuziError:
            continue
        if Manifest(m).imported and m.get("rules_fingerprint") == rules.fingerprint():
            return name
    return first  # both taken: import_files names the conflict


def hand_key(rules: RuleSet, deck: Sequence[int], dealer: int, events: Sequence[Any]) -> str:
    """What makes two hands the same hand: rules, deck, dealer and events (a digest)."""
    h = hashlib.sha256(rules.fingerprint().encode())
    h.update(bytes(deck))
    h.update(f"|{dealer}|".encode())
    h.update(",".join(f"{int(s)}:{int(a)}" for s, a in events).encode())
    return h.hexdigest()


#: The hand keys of shards read before, by the SHA-256s of their two files and the rules'
#: fingerprint: a listed shard file never changes, so each imported hand of the store is
#: hashed once per process (at most this many shards remembered, the least recently used
#: dropped).
_SHARD_KEYS: collections.OrderedDict[tuple[str, str, str], list[tuple[str, int]]] = (
    collections.OrderedDict()
)
_SHARD_KEYS_MAX = 4096
_SHARD_KEYS_LOCK = threading.Lock()


def _shard_keys(r: Any, shard: dict[str, Any], rules: RuleSet) -> list[tuple[str, int]]:
    """``(hand_key, hand_id)`` of every hand of one shard of run ``r`` (read checked)."""
    files = shard["files"]
    ck = (str(files["hands"]["sha256"]), str(files["events"]["sha256"]), rules.fingerprint())
    with _SHARD_KEYS_LOCK:
        hit = _SHARD_KEYS.get(ck)
        if hit is not None:
            _SHARD_KEYS.move_to_end(ck)
            return hit
    hands = r.read_shard(shard, "hands").select(["hand_id", "deck", "dealer", "n_events"])
    events = r.read_shard(shard, "events").select(["hand_id", "seat", "action"]).to_pydict()
    out: list[tuple[str, int]] = []
    i = 0
    for hid, deck, dealer, n in zip(*hands.to_pydict().values(), strict=True):
        if n and (events["hand_id"][i] != hid or events["hand_id"][i + n - 1] != hid):
            raise CorruptLog(f"run {r.name}: events of hand {hid} misplaced")
        history = zip(events["seat"][i : i + n], events["action"][i : i + n], strict=True)
        out.append((hand_key(rules, deck, dealer, list(history)), hid))
        i += n
    with _SHARD_KEYS_LOCK:
        _SHARD_KEYS[ck] = out
        while len(_SHARD_KEYS) > _SHARD_KEYS_MAX:
            _SHARD_KEYS.popitem(last=False)
    return out


def _imported_keys(root: Path, rules: RuleSet) -> dict[str, tuple[str, int]]:
    """The :func:`hand_key` of every hand of the store's imported runs with ``rules``:
    ``key -> (run, hand_id)``. Runs that cannot be read are skipped."""
    st = store.open_store(root)
    out: dict[str, tuple[str, int]] = {}
    fp = rules.fingerprint()
    for name in st.run_names():
        try:
            r = st.run(name)
            if not Manifest(r.manifest).imported:
                continue
            if r.manifest.get("rules_fingerprint") != fp:
                continue
            for shard in r.shards:
                for key, hid in _shard_keys(r, shard, rules):
                    out.setdefault(key, (name, hid))
        except (PaohuziError, KeyError, TypeError):
            continue
    return out


# ---------------------------------------------------------------------------------------------
# Verifying hands and deriving their rows
# ---------------------------------------------------------------------------------------------


def verified_rows(rf: ReplayFile) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The ``hands`` row and ``events`` columns of the file's hand (hand id 0), derived
    while its events are re-applied through the checked path of the compiled engine (the
    reference engine for rules the compiled tables do not cover), and checked against the
    outcome the file states. Raises :class:`ReplayFileError` (``reason`` ``illegal`` with
    the event at fault, or ``outcome_differs``)."""
    log = rf.log
    name = log.meta.get("source", "replay file")
    engine = "fast" if fast_unsupported(log.rules) is None else "reference"
    problems = check_log(log, compare=False, engine=engine)
    if problems:
        p = problems[0]
        where = f"event {p.seq}" if p.seq is not None else "the hand"
        raise ReplayFileError(f"{name}: {where}: {p.reason}", "illegal", p.seq)
    state: Any
    if engine == "fast":
        state = FastState(log.rules, log.deck, log.dealer)
        derive = state.expected_event
    else:
        state = game_for(log.rules).new_initial_state(log.deck, log.dealer)
        derive = functools.partial(expected_event, state)
    ev: dict[str, list[Any]] = {f.name: [] for f in schema.EVENTS_SCHEMA}
    for k, (seat, action) in enumerate(log.events):
        kind, card, from_seat, forced, n_legal, options = derive(seat, action)
        for c, v in (("hand_id", 0), ("seq", k), ("seat", seat), ("action", action),
                     ("kind", kind), ("card", card), ("from_seat", from_seat),
                     ("forced", bool(forced)), ("n_legal", n_legal), ("options", options)):  # fmt: skip
            ev[c].append(v)
        state.apply_checked(seat, action)
    exp = (
        state.expected_hand(log.n_steps) if engine == "fast" else expected_hand(state, log.n_steps)
    )
    diffs = [
        f"{k} {v!r} (replay gives {exp[k]!r})"
        for k, v in rf.outcome.items()
        if k in exp and exp[k] != v
    ]
    if diffs:
        raise ReplayFileError(
            f"{name}: the stated outcome differs: " + ", ".join(diffs), "outcome_differs"
        )
    row: dict[str, Any] = {
        "hand_id": 0,
        "session": rf.record.get("session"),
        "session_hand": rf.record.get("session_hand", 0),
        "rotation": rf.record.get("rotation", 0),
        "deal_id": rf.record.get("deal_id"),
        "dealer": log.dealer,
        "huang_streak": rf.record.get("huang_streak", 0),
        "deck": bytes(log.deck),
    }
    row.update(exp)
    n = log.rules.players
    for s_ in range(schema.MAX_SEATS):
        if s_ < n:
            p_ = rf.policies[s_] if rf.policies else None
            row[f"policy_{s_}"] = p_ or "import"
        else:
            row[f"policy_{s_}"] = None
    return row, ev


def _with_id(
    derived: tuple[dict[str, Any], dict[str, list[Any]]], hand_id: int
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """A hand's row and event columns under its hand id (``session`` and ``deal_id``
    default to it, as in a run of single hands)."""
    row, ev = derived
    row = dict(row, hand_id=hand_id)
    for c in ("session", "deal_id"):
        if row[c] is None:
            row[c] = hand_id
    return row, dict(ev, hand_id=[hand_id] * len(ev["hand_id"]))


def _imported_params() -> dict[str, Any]:
    """The ``params`` of a new run of imported hands: none of them played here."""
    return {
        "seed": None,
        "deals": 0,
        "hands_total": 0,
        "session_length": None,
        "duplicate": False,
        "rotations": 1,
        "policies": [],
        "policies_text": "import",
        "seat_policies": [],
        "shard_hands": None,
    }


# ---------------------------------------------------------------------------------------------
# Batches: JSON lines
# ---------------------------------------------------------------------------------------------

#: The limits of a JSON-lines batch (``paohuzi import --jsonl``, ``POST /runs/{run}/hands``;
#: docs/SERVICE.md): its bytes, its lines (replay files), the bytes of one line.
BATCH_BYTES = 64 << 20
BATCH_LINES = 10_000
LINE_BYTES = MAX_BYTES


@dataclasses.dataclass
class Parsed:
    """One item of an ingest, in input order: a replay file, or why it is none
    (``error``); ``line``: its line in a JSON-lines batch."""

    name: str
    file: ReplayFile | None = None
    error: ReplayFileError | None = None
    line: int | None = None


def parse_item(data: bytes | str, name: str, line: int | None = None) -> Parsed:
    """One replay file (either spelling) from bytes or text; a refusal, not an exception,
    when it is not one."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        return Parsed(name, error=ReplayFileError(f"{name}: not UTF-8 text"), line=line)
    try:
        return Parsed(name, read_replay(text, name), line=line)
    except ReplayFileError as e:
        return Parsed(name, error=e, line=line)


def parse_jsonl(
    data: bytes,
    name: str = "",
    max_lines: int = BATCH_LINES,
    line_bytes: int = LINE_BYTES,
    hint: str = "",
) -> list[Parsed]:
    """The replay files of a JSON-lines batch: each non-blank line one file in the JSON
    spelling, named ``NAME line N`` (``line N`` without a name). A line longer than
    ``line_bytes`` is refused (``too_long``; ``hint`` says how to raise the limit), as is a
    line that is no JSON object or no replay file (``malformed``, with the line or field at
    fault); the others are parsed. More than ``max_lines`` files refuse the whole batch:
    :class:`ReplayFileError`, before any is parsed. A byte-order mark before the first line
    is skipped, as :func:`read_replay` skips one before a file."""
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    count = sum(1 for raw in lines if raw.strip())
    if count > max_lines:
        raise ReplayFileError(
            f"{name + ': ' if name else ''}{count:,} replay files, more than the limit of"
            f" {max_lines:,} per batch{hint and f' ({hint})'}",
            "too_long",
        )
    out: list[Parsed] = []
    for no, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        label = f"{name} line {no}" if name else f"line {no}"
        if len(raw) > line_bytes:
            why = (f"{label}: {len(raw):,} bytes, longer than the limit of {line_bytes:,} for a"
                   f" replay file{hint and f' ({hint})'}")  # fmt: skip
            out.append(Parsed(label, error=ReplayFileError(why, "too_long"), line=no))
            continue
        if not raw.lstrip().startswith(b"{"):
            why = f"{label}: not a JSON object (one replay file in the JSON spelling per line)"
            out.append(Parsed(label, error=ReplayFileError(why), line=no))
            continue
        out.append(parse_item(raw.removesuffix(b"\r"), label, no))
    return out


# ---------------------------------------------------------------------------------------------
# Importing into the store
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Verdict:
    """What became of one item of an ingest: accepted as ``hand_id``, or refused for
    ``reason`` (:data:`~replay.replayer.replay_schema.REASONS`) with the one-line
    ``error`` and, for an illegal event, its index ``event``."""

    index: int
    name: str
    line: int | None = None
    hand_id: int | None = None
    reason: str | None = None
    error: str | None = None
    event: int | None = None

    @property
    def accepted(self) -> bool:
        return self.reason is None

    def to_dict(self) -> dict[str, Any]:
        """The verdict as ``paohuzi import --jsonl --json`` and the API answer it."""
        return {
            "index": self.index,
            "line": self.line,
            "status": "accepted" if self.accepted else "refused",
            "hand_id": self.hand_id,
            "reason": self.reason,
            "event": self.event,
            "error": self.error,
        }

    def refuse(self, e: ReplayFileError) -> None:
        self.reason, self.error, self.event = e.reason, " ".join(str(e).split()), e.event


@dataclasses.dataclass
class ImportResult:
    """The run written to (None when no hand got so far), one :class:`Verdict` per item in
    input order, the new shard (None when no hand was accepted)."""

    run: str | None
    verdicts: list[Verdict]
    shard: int | None = None
    path: Path | None = None
    #: why ``DATA/paohuzi.duckdb`` could not be refreshed (the hands are committed; the next
    #: reader rebuilds it), or None
    catalog_problem: str | None = None

    @property
    def hand_ids(self) -> list[int]:
        return [v.hand_id for v in self.verdicts if v.hand_id is not None]

    @property
    def accepted(self) -> int:
        return sum(v.accepted for v in self.verdicts)

    @property
    def refused(self) -> int:
        return len(self.verdicts) - self.accepted

    def to_dict(self) -> dict[str, Any]:
        """The answer of ``POST /runs/{run}/hands`` (and ``paohuzi import --jsonl --json``)."""
        return {
            "run": self.run,
            "accepted": self.accepted,
            "refused": self.refused,
            "shard": self.shard,
            "hands": [v.to_dict() for v in self.verdicts],
            "catalog_problem": self.catalog_problem,
        }


#: A test hook (``INDEX:SECONDS``): sleep that long after writing shard INDEX's files and
#: before the manifest lists it, so that a test can kill the writer there.
PAUSE_ENV = "PAOHUZI_TEST_INGEST_PAUSE"

#: What a duplicate's refusal adds for ``paohuzi import`` (the API has no such option).
DUPLICATE_HINT = "; give --allow-duplicate to import it again"


class _Batch:
    """The items of one ingest on their way to a shard: verdicts, derived rows."""

    def __init__(self, items: Sequence[Parsed | ReplayFile]) -> None:
        self.items = [
            it if isinstance(it, Parsed) else Parsed(str(it.log.meta.get("source")), it)
            for it in items
        ]
        self.verdicts = [Verdict(i, p.name, p.line) for i, p in enumerate(self.items)]
        self.derived: dict[int, tuple[dict[str, Any], dict[str, list[Any]]]] = {}

    def verify(self) -> None:
        """Parse errors become refusals; every replay file is verified (outside any lock:
        the CPU work of an ingest)."""
        for i, p in enumerate(self.items):
            if p.error is not None:
                self.verdicts[i].refuse(p.error)
                continue
            assert p.file is not None
            try:
                self.derived[i] = verified_rows(p.file)
            except ReplayFileError as e:
                self.verdicts[i].refuse(e)
            except Exception as e:  # an engine failure refuses the hand, never the batch
                why = f"{p.name}: the engine failed on this hand ({type(e).__name__})"
                self.verdicts[i].refuse(ReplayFileError(why, "unverifiable"))

    def ok(self) -> list[int]:
        return [i for i in sorted(self.derived) if self.verdicts[i].accepted]

    def rules(self, i: int) -> RuleSet:
        f = self.items[i].file
        assert f is not None
        return f.log.rules

    def first_refusal(self) -> ReplayFileError | None:
        """The refusal ``paohuzi import FILE…`` reports: mixed rules first, duplicates last,
        else the first in input order."""
        bad = [v for v in self.verdicts if not v.accepted]
        if not bad:
            return None
        v = min(bad, key=lambda v: (v.reason == "duplicate", v.reason != "other_rules", v.index))
        return ReplayFileError(str(v.error), str(v.reason), v.event)

    def screen(
        self, root: Path, name: str, path: Path, allow_duplicate: bool, hint: str
    ) -> tuple[dict[str, Any] | None, RuleSet | None]:
        """Check the run (a simulated run: :class:`ReplayFileError` for the whole batch)
        and refuse the hands with other rules than it holds (or, for a new run, than the
        first hand's) and those already stored; the run's manifest (None: a new run) and its
        rules."""
        manifest = None
        if (path / store.MANIFEST_NAME).exists():
            manifest = store.read_manifest(path)
            if not Manifest(manifest).imported:
                raise ReplayFileError(f"run {name!r} is a simulated run; import into another run")
        ok = self.ok()
        if not ok:
            return manifest, None
        first = self.items[ok[0]].name
        fp = manifest.get("rules_fingerprint") if manifest else self.rules(ok[0]).fingerprint()
        for i in ok:
            if self.rules(i).fingerprint() == fp:
                continue
            if manifest:
                held = manifest.get("rules_preset") or manifest.get("rules_fingerprint")
                why = f"run {name!r} holds hands with other rules ({held}); import into another run"
            else:
                why = f"other rules than {first}; import them into different runs"
            self.verdicts[i].refuse(ReplayFileError(f"{self.items[i].name}: {why}", "other_rules"))
        ok = self.ok()
        if not ok:
            return manifest, None
        rules = self.rules(ok[0])
        if not allow_duplicate:
            seen = _imported_keys(root, rules)
            for i in self.ok():
                f = self.items[i].file
                assert f is not None
                log = f.log
                key = hand_key(log.rules, log.deck, log.dealer, log.events)
                where = seen.get(key)
                if where is not None:
                    what = f"run {where[0]} hand {where[1]}" if where[1] >= 0 else where[0]
                    why = (f"{self.items[i].name}: the same hand (rules, deck, dealer and events)"
                           f" is already imported as {what}{hint}")  # fmt: skip
                    self.verdicts[i].refuse(ReplayFileError(why, "duplicate"))
                else:
                    seen[key] = (self.items[i].name, -1)
        return manifest, rules if self.ok() else None

    def tables(self, name: str, rules: RuleSet, first: int) -> tuple[pa.Table, pa.Table]:
        """The shard's two tables of the hands still accepted, ids from ``first`` on,
        re-applied by the compiled verifier (:func:`~replay.replayer.verify.check_tables`,
        what ``paohuzi verify`` checks) before anything is written: a hand it flags is
        refused (``unverifiable``) and the tables are made again without it."""
        while True:
            ok = self.ok()
            hrows: list[dict[str, Any]] = []
            ecols: dict[str, list[Any]] = {f.name: [] for f in schema.EVENTS_SCHEMA}
            for j, i in enumerate(ok):
                row, ev = _with_id(self.derived[i], first + j)
                hrows.append(row)
                for c in ecols:
                    ecols[c] += ev[c]
            hands_t = pa.Table.from_pylist(hrows, schema=schema.HANDS_SCHEMA)
            events_t = pa.Table.from_pydict(ecols, schema=schema.EVENTS_SCHEMA)
            flagged = check_tables(name, rules, hands_t, events_t) if ok else {}
            if not flagged:
                for j, i in enumerate(ok):
                    self.verdicts[i].hand_id = first + j
                return hands_t, events_t
            for j, problems in flagged.items():
                i = ok[j]
                why = f"{self.items[i].name}: the verifier refuses the derived rows: {problems[0]}"
                self.verdicts[i].refuse(ReplayFileError(why, "unverifiable"))


def _provenance_file(path: Path, index: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Write shard ``index``'s provenance file atomically; its ``files`` entry."""
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows, schema=PROVENANCE_SCHEMA), sink, compression="zstd")
    data = sink.getvalue().to_pybytes()
    rel = store.shard_file(PROVENANCE, index)
    (path / rel).parent.mkdir(parents=True, exist_ok=True)
    store.atomic_write(path / rel, data)
    return {
        "path": rel,
        "rows": len(rows),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def _source(doc: Any) -> tuple[str | None, int | None]:
    """A replay file's ``source`` (``{"run", "hand_id"}``) as (run, hand id)."""
    if not isinstance(doc, dict):
        return None, None
    run, hand = doc.get("run"), doc.get("hand_id")
    return (
        None if run is None else str(run),
        hand if isinstance(hand, int) and not isinstance(hand, bool) else None,
    )


def provenance(run: Any) -> list[dict[str, Any]]:
    """Where each hand of the run of imported hands ``run`` (a :class:`~replay.store.runs.Run`)
    came from, in hand order: ``{hand_id, file, title, from, at}`` (``from``: the replay
    file's ``source``, ``{"run", "hand_id"}``, or None). Read from each shard's provenance
    file (its SHA-256 checked against the manifest: :class:`~engine.errors.CorruptLog`
    otherwise), and from the manifest's ``imported`` list for shards written before there
    were such files."""
    import pyarrow.parquet as pq

    from replay.store.files import read_regular

    out = [dict(e) for e in run.manifest.get("imported") or [] if isinstance(e, dict)]
    for shard in run.shards:
        entry = shard["files"].get(PROVENANCE)
        if entry is None:
            continue
        data = read_regular(run.path / entry["path"], PROVENANCE_MAX_BYTES)
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise CorruptLog(f"run {run.name}: {entry['path']} does not match its checksum")
        rows = pq.read_table(pa.BufferReader(data)).to_pylist()
        for r in rows:
            src = (
                None if r["from_run"] is None else {"run": r["from_run"], "hand_id": r["from_hand"]}
            )
            out.append({"hand_id": r["hand_id"], "file": r["file"], "title": r["title"],
                        "from": src, "at": r["at"]})  # fmt: skip
    return sorted(out, key=lambda e: e.get("hand_id") or 0)


def _derived_files(
    path: Path,
    index: int,
    hands: pa.Table,
    events: pa.Table,
    manifest: dict[str, Any],
    rules: RuleSet,
) -> dict[str, Any]:
    """A new shard's summary and facts (docs/LOG_FORMAT.md §10, §12), as ``simulate`` writes
    them with each shard; their ``files`` entries. The summary's rotations are the run's
    policy classes (``params.seat_policies``, which this extends with the shard's new ones);
    past :data:`~replay.store.summary_schema.MAX_SEATS` classes the run is marked
    ``seat_policies_overflow`` and its shards get no more summaries (its figures then come
    from its hands)."""
    from replay.derived.facts import shard_facts
    from replay.derived.facts_files import write_facts
    from replay.derived.summaries import write_summary
    from replay.derived.summarize import seat_assignments
    from replay.store import summary_schema

    facts = shard_facts(hands, events, rules)
    files = write_facts(path, index, facts)
    params = manifest["params"]
    if summary_schema.add_policy_classes(params, seat_assignments(hands, rules.players)):
        shape = {"rules": manifest["rules"], "params": params}
        files.update(write_summary(path, index, hands, events, shape, facts))
    return files


def _pause(index: int) -> None:
    spec = os.environ.get(PAUSE_ENV, "")
    at, _, seconds = spec.partition(":")
    if at.strip().isdigit() and int(at) == index:
        time.sleep(min(float(seconds or 0), 600.0))


def add_hands(
    root: str | Path,
    items: Sequence[Parsed | ReplayFile],
    run: str | None = None,
    command: list[str] | None = None,
    *,
    allow_duplicate: bool = False,
    all_or_nothing: bool = False,
    lock_wait: float = 0.0,
    origin: str | None = None,
    duplicate_hint: str = DUPLICATE_HINT,
) -> ImportResult:
    """Verify each item's hand and add those that pass, as one new shard, to the run of
    imported hands ``run`` (default :func:`default_run_name` of the first good hand's
    rules); then refresh the catalog. The one import path: ``paohuzi import`` (files, all or
    nothing), ``paohuzi import --jsonl`` and ``POST /runs/{run}/hands`` (per item).

    Each item is accepted or refused, in input order (:class:`Verdict`): not a replay file,
    rules that are no rule set, an event the rules do not allow, a stated outcome the
    replay does not give, rules other than the run's, a hand already in an imported run of
    the store or earlier in the batch (unless ``allow_duplicate``). ``all_or_nothing``: the
    first refusal raises :class:`ReplayFileError` and nothing is written. A simulated run
    raises, whatever the items.

    The hands are verified before any lock is taken; under the store's ingest lock and then
    the run's (:class:`~replay.store.manifest.IngestLock`, :class:`~replay.store.RunLock`:
    waiting at most ``lock_wait`` seconds in all for other writers, else
    :class:`~replay.store.manifest.RunBusy`) the run and the duplicates, in every run of
    imported hands, are checked again, so a hand is stored once in the store however many
    ingests into however many runs race; hand ids follow the run's last, the compiled
    verifier re-applies the rows, and both shard files are written atomically before the
    manifest lists them: a writer killed at any point leaves the run as it was (a file not
    listed is rewritten by the next import; one killed before a new run's first manifest
    leaves a folder with no manifest, whose files the next writer into the run clears:
    :func:`~replay.store.manifest.clear_first_write`). Nothing is written, not even the run
    folder, when no hand is accepted before the lock. Where each hand came from is the shard's
    provenance file (:func:`provenance`; the manifest holds only per-shard facts, so an
    ingest's cost does not grow with the run); ``origin`` prefixes the item names it
    records."""
    if not items:
        raise ReplayFileError("nothing to import")
    batch = _Batch(items)
    batch.verify()

    def refused() -> None:
        if all_or_nothing:
            e = batch.first_refusal()
            if e is not None:
                raise e

    refused()
    ok = batch.ok()
    if not ok:
        return ImportResult(run, batch.verdicts)
    root = Path(store.ensure_writable(Path(root)))
    name = store.check_run_name(run or _default_run(root, batch.rules(ok[0])))
    path = store.run_dir(root, name)
    batch.screen(root, name, path, allow_duplicate, duplicate_hint)
    refused()
    if not batch.ok():
        return ImportResult(name, batch.verdicts)
    # The store's ingest lock, then the run's (one order: no deadlock), both within lock_wait:
    # the duplicate check reads every run of imported hands, so it and the commit are one
    # step against every other ingest, into this run or any other.
    deadline = time.monotonic() + lock_wait
    with (
        IngestLock(root, wait=lock_wait),
        store.RunLock(path, wait=max(0.0, deadline - time.monotonic())),
    ):
        manifest, rules = batch.screen(root, name, path, allow_duplicate, duplicate_hint)
        refused()
        if rules is None or not batch.ok():
            return ImportResult(name, batch.verdicts)
        if manifest is None:
            clear_first_write(path)  # what an ingest killed before its first manifest left
            manifest = Manifest.new(
                name,
                rules,
                status="complete",
                command=command or [],
                identity={"imported": True},
                params=_imported_params(),
                seeds=None,
                history="imported",
            ).doc
        store.cleanup_temp(path)
        shards = manifest["shards"]
        index = max((s["index"] for s in shards), default=-1) + 1
        first = sum(s["hands"] for s in shards)
        hands_t, events_t = batch.tables(name, rules, first)
        refused()
        if hands_t.num_rows == 0:
            return ImportResult(name, batch.verdicts)
        at = datetime.now(UTC).isoformat(timespec="seconds")
        origins = []
        for i in batch.ok():
            item = batch.items[i]
            rf = item.file
            assert rf is not None
            from_run, from_hand = _source(rf.source)
            origins.append(
                {
                    "hand_id": batch.verdicts[i].hand_id,
                    "file": f"{origin}: {item.name}" if origin else item.name,
                    "title": rf.title,
                    "from_run": from_run,
                    "from_hand": from_hand,
                    "at": at,
                }
            )
        files_entry = {
            "hands": store.write_shard_file(path, hands_t, "hands", index),
            "events": store.write_shard_file(path, events_t, "events", index),
            PROVENANCE: _provenance_file(path, index, origins),
        }
        files_entry.update(_derived_files(path, index, hands_t, events_t, manifest, rules))
        _pause(index)
        shards.append(
            {
                "index": index,
                "first_session": None,
                "sessions": 0,
                "first_hand": first,
                "hands": hands_t.num_rows,
                "events": events_t.num_rows,
                "files": files_entry,
            }
        )
        n = sum(s["hands"] for s in shards)
        manifest["params"]["deals"] = manifest["params"]["hands_total"] = n
        manifest["progress"] = {
            "shards": len(shards),
            "hands": n,
            "events": sum(s["events"] for s in shards),
            "bytes": sum(f["bytes"] for s in shards for f in s["files"].values()),
        }
        manifest["updated"] = now()
        store.write_manifest(path, manifest)
    res = ImportResult(name, batch.verdicts, index, path)
    try:
        store.refresh_catalog(root)
    except store.StoreError as e:  # the hands are committed whatever becomes of the catalog
        res.catalog_problem = " ".join(str(e).split())
    return res


def import_files(
    root: str | Path,
    files: Sequence[ReplayFile],
    run: str | None = None,
    command: list[str] | None = None,
    allow_duplicate: bool = False,
) -> ImportResult:
    """Verify each replay file's hand and add them all, as one new shard, to the run of
    imported hands ``run`` (default :func:`default_run_name`); then refresh the catalog. All
    or nothing: a file that does not verify raises :class:`ReplayFileError` before any
    write. A hand already imported (same rules, deck, dealer and events, in any imported
    run) is refused unless ``allow_duplicate``. :func:`add_hands`, all or nothing."""
    return add_hands(
        root, files, run, command, allow_duplicate=allow_duplicate, all_or_nothing=True
    )
