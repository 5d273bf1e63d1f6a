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

import dataclasses
import hashlib
import json
import re
import reprlib
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
from engine.errors import InvalidNotation, InvalidRules, PaohuziError
from engine.hu import Source
from engine.rules import PRESETS, RuleSet, find_rules
from engine.state import OutcomeKind, State
from replay import store
from replay.record import schema
from replay.replayer.hand import HandLog, Replayer, game_for, load_hand
from replay.replayer.verify import check_log, deck_problem, expected_event, expected_hand
from replay.store.manifest import Manifest, now

FORMAT = "paohuzi-replay"
VERSION = 1
HEADER = f"# 跑胡子 replay file ({FORMAT} {VERSION}): see docs/REPLAY_FILE.md"

#: The ``hands`` columns a replay file may carry in its record (kept on import).
RECORD_FIELDS = ("session", "session_hand", "rotation", "deal_id", "huang_streak")

#: The largest replay file read by default (``--max-bytes``): an exported hand is a few KB.
MAX_BYTES = 1 << 20

_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlevel = 2
_REPR.maxlist = _REPR.maxdict = 4


def _show(v: Any) -> str:
    """A short ``repr`` of a value read from a file (long or nested values elided)."""
    return _REPR.repr(v)


class ReplayFileError(PaohuziError):
    """A replay file that cannot be read, or whose hand breaks the rules."""


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
    raise InvalidNotation(f"expected yes or no, not {v!r}")


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


def _strip_comment(line: str) -> str:
    i = line.find("#")
    return (line if i < 0 else line[:i]).rstrip()


def _parse_text(text: str) -> dict[str, Any]:
    """The text spelling as the same dict the JSON spelling gives."""
    obj: dict[str, Any] = {"events": [], "_sets": [], "_hands": {}}
    section = None
    last_key = None
    outcome: dict[str, Any] = {}
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
            m = _EVENT_RE.match(s)
            if not m:
                raise ReplayFileError(f"line {no}: expected 'SEQ seat S: ACTION', got {s!r}")
            obj["events"].append({"seq": m.group(1), "seat": m.group(2), "action": m.group(3),
                                  "line": no})  # fmt: skip
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
            outcome[key] = value
            continue
        if key == "set":
            obj["_sets"].append(value)
        elif key.startswith("hand ") or key.startswith("seat "):
            seat = key.split()[1]
            if not seat.isdigit():
                raise ReplayFileError(f"line {no}: bad seat in {key!r}")
            obj["_hands"][seat] = value
        elif key in ("title", "source", "rules", "dealer", "deck", "liang", "stock",
                     "record", "policies", "format", "version"):  # fmt: skip
            if key in obj:
                raise ReplayFileError(f"line {no}: {key!r} given twice")
            obj[key] = value
        else:
            raise ReplayFileError(f"line {no}: unknown key {key!r}")
    if outcome:
        obj["outcome"] = outcome
    rules = obj.pop("rules", None)
    obj["rules"] = {"preset": rules or "hunan", "set": obj.pop("_sets")}
    hands = obj.pop("_hands")
    if hands:
        obj["deal"] = {"hands": hands, "liang": obj.pop("liang", None),
                       "stock": obj.pop("stock", None)}  # fmt: skip
    if "record" in obj:
        rec = {}
        for item in obj["record"].split():
            k, _, v = item.partition("=")
            rec[k] = v
        obj["record"] = rec
    if "policies" in obj:
        obj["policies"] = [p.strip() for p in obj["policies"].split(",")]
    return obj


_INT_RE = re.compile(r"^\s*[+-]?[0-9]{1,18}\s*$")


def _int(v: Any, what: str, lo: int | None = None, hi: int | None = None) -> int:
    """``v`` (an integer, or a string of digits) as an int in ``lo … hi``."""
    if isinstance(v, int) and not isinstance(v, bool):
        x = v
    elif isinstance(v, str) and _INT_RE.match(v):
        x = int(v)
    else:
        raise ReplayFileError(f"{what}: expected an integer, not {_show(v)}")
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        span = f"{lo} … {hi}" if hi is not None else f"at least {lo}"
        raise ReplayFileError(f"{what}: {x} is out of range ({span})")
    return x


def _str(v: Any, what: str, none_ok: bool = True) -> str | None:
    if v is None and none_ok:
        return None
    if not isinstance(v, str):
        kind = "a string or null" if none_ok else "a string"
        raise ReplayFileError(f"{what}: expected {kind}, not {_show(v)}")
    return v


def _obj(v: Any, what: str) -> dict[str, Any]:
    """A JSON object (``None`` for an absent one: ``{}``)."""
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise ReplayFileError(f"{what}: expected an object, not {_show(v)}")
    return v


def _list(v: Any, what: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise ReplayFileError(f"{what}: expected a list, not {_show(v)}")
    return v


def _rules_from(spec: Any) -> RuleSet:
    if isinstance(spec, str):
        return find_rules(spec)
    if not isinstance(spec, dict):
        raise ReplayFileError(f"rules: expected a preset name or an object, not {_show(spec)}")
    if spec.get("full") is not None:
        return RuleSet.from_dict(_obj(spec["full"], "rules.full"))
    rules = find_rules(_str(spec.get("preset"), "rules.preset") or "hunan")
    sets = spec.get("set") or []
    if isinstance(sets, dict):
        for k, v in sets.items():
            if not isinstance(v, str | int):
                raise ReplayFileError(f"rules.set.{k}: expected a value, not {_show(v)}")
        sets = [f"{k}={'on' if v is True else 'off' if v is False else v}" for k, v in sets.items()]
    for s in _list(sets, "rules.set"):
        _str(s, "rules.set", none_ok=False)
    return rules.with_overrides(sets)


def _deck_from_deal(deal: dict[str, Any], rules: RuleSet, dealer: int) -> tuple[int, ...]:
    """The 80-card deck from the seats' hands, the 亮张 and the stock (``rest``: the cards
    not placed yet, in kind order)."""
    n = rules.players
    if n == 4:
        active = (dealer, (dealer + 1) % 4, (dealer + 3) % 4)
    else:
        active = (dealer, (dealer + 1) % 3, (dealer + 2) % 3)
    hands = {str(k): v for k, v in _obj(deal.get("hands"), "deal.hands").items()}
    for seat_name, cards_text in hands.items():
        _str(cards_text, f"deal.hands.{seat_name}", none_ok=False)
    liang = _str(deal.get("liang"), "deal.liang")
    stock_v = _str(deal.get("stock"), "deal.stock")
    extra = set(hands) - {str(s) for s in active}
    if extra:
        raise ReplayFileError(f"hand given for seat {sorted(extra)[0]}, which is not dealt"
                              f" (active seats {', '.join(map(str, active))})")  # fmt: skip
    cards: dict[int, list[int]] = {}
    for s in active:
        if str(s) not in hands:
            raise ReplayFileError(f"the hand of seat {s} is missing")
        cards[s] = parse_cards(str(hands[str(s)]))
    d = cards[dealer]
    if n == 3:
        if liang not in (None, "", "-"):
            if len(d) != 20:
                raise ReplayFileError(f"the dealer (seat {dealer}) is dealt 20 cards plus the 亮张,"
                                      f" not {len(d)}")  # fmt: skip
            d = d + [parse_card(str(liang))]
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
    stock = parse_cards(stock_text[:-4] if rest_kw else stock_text)
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


def _parse_outcome(o: dict[str, Any], players: int) -> dict[str, Any]:
    """The outcome columns a file states (values in the text spelling)."""
    out: dict[str, Any] = {}

    def none(v: Any) -> bool:
        return v is None or str(v).strip() in ("", "-", "null", "none")

    for key, value in o.items():
        v = value
        what = f"outcome.{key}"
        if key == "deltas":
            if not isinstance(v, list | str):
                raise ReplayFileError(f"{what}: expected a list or a string, not {_show(v)}")
        elif key == "zimo":
            if not isinstance(v, str | bool) and v is not None:
                raise ReplayFileError(f"{what}: expected yes/no, not {_show(v)}")
        elif v is not None and (not isinstance(v, str | int) or isinstance(v, bool)):
            raise ReplayFileError(f"{what}: expected a string or a number, not {_show(v)}")
        if key == "result":
            if not none(v):
                if isinstance(v, int) or _INT_RE.match(str(v)):
                    out["outcome"] = _int(v, what, 0, max(OutcomeKind))
                else:
                    try:
                        out["outcome"] = int(OutcomeKind[str(v).strip().upper()])
                    except KeyError:
                        raise ReplayFileError(f"unknown result {_show(v)}") from None
        elif key == "source":
            if none(v):
                out["source"] = None
            elif isinstance(v, int) or _INT_RE.match(str(v)):
                out["source"] = _int(v, what, 0, max(Source))
            else:
                try:
                    out["source"] = int(Source[str(v).strip().upper()])
                except KeyError:
                    raise ReplayFileError(f"unknown source {_show(v)}") from None
        elif key == "hu_card":
            if none(v):
                out["hu_card"] = None
            elif isinstance(v, int):
                out["hu_card"] = _int(v, what, 0, NUM_KINDS - 1)
            else:
                out["hu_card"] = parse_card(str(v).strip())
        elif key in ("winner", "from_seat", "huxi", "deng", "fan", "score", "stock_left"):
            out[key] = None if none(v) else _int(v, what)
        elif key == "zimo":
            out["zimo"] = None if none(v) else _bool(v)
        elif key == "mingtang":
            if isinstance(v, int):
                out["mingtang"] = _int(v, what, 0, (1 << 16) - 1)
            else:
                mask = 0
                for name in [] if none(v) else str(v).replace(",", " ").split():
                    if name not in schema.MINGTANG_BITS:
                        raise ReplayFileError(f"unknown 名堂 {_show(name)} (use the pinyin ids of"
                                              " docs/LOG_FORMAT.md §5.5)")  # fmt: skip
                    mask |= 1 << schema.MINGTANG_BITS[name]
                out["mingtang"] = mask
        elif key == "deltas":
            vals = v if isinstance(v, list) else str(v).replace(",", " ").split()
            if len(vals) != players:
                raise ReplayFileError(f"deltas: {len(vals)} values for {players} seats")
            for s, x in enumerate(vals):
                out[f"delta_{s}"] = _int(x, f"{what}[{s}]")
        else:
            raise ReplayFileError(f"unknown outcome field {_show(key)}")
    return out


def read_replay(text: str, name: str = "replay file") -> ReplayFile:
    """Parse a replay file (text or JSON spelling). Raises :class:`ReplayFileError` with
    the line or field at fault. The hand is not replayed here (see :func:`check_replay`)."""
    try:
        if text.lstrip().startswith("{"):
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as e:
                raise ReplayFileError(
                    f"{name}: bad JSON at line {e.lineno} column {e.colno}: {e.msg}"
                ) from None
            except RecursionError:
                raise ReplayFileError(f"{name}: the JSON is nested too deeply") from None
            except ValueError as e:  # e.g. an integer of more than 4300 digits
                raise ReplayFileError(f"{name}: bad JSON: {e}") from None
            if not isinstance(obj, dict):
                raise ReplayFileError(f"{name}: the JSON must be an object")
        else:
            obj = _parse_text(text)
        return _from_obj(obj, name)
    except (InvalidNotation, InvalidRules) as e:
        raise ReplayFileError(f"{name}: {e}") from None
    except ReplayFileError as e:
        msg = str(e)
        raise ReplayFileError(msg if msg.startswith(name) else f"{name}: {msg}") from None


#: The range of each record field (its ``hands`` column type).
_RECORD_MAX = {
    f.name: (1 << f.type.bit_width) - 1 for f in schema.HANDS_SCHEMA if f.name in RECORD_FIELDS
}


def _event(ev: Any, i: int) -> tuple[int, int]:
    """``(seat, code)`` of event ``i`` (an object or a ``seat S: ACTION`` string)."""
    if isinstance(ev, str):
        m = _EVENT_RE.match(ev.strip())
        if not m:
            raise ReplayFileError(f"expected 'seat S: ACTION', got {_show(ev)}")
        ev = {"seq": m.group(1), "seat": m.group(2), "action": m.group(3)}
    elif not isinstance(ev, dict):
        raise ReplayFileError(f"expected an object or a 'seat S: ACTION' string, not {_show(ev)}")
    if "seat" not in ev or "action" not in ev:
        raise ReplayFileError(f"an event needs a seat and an action: {_show(ev)}")
    seq = ev.get("seq")
    if seq is not None and _int(seq, "seq") != i:
        raise ReplayFileError(f"seq {seq} out of order (expected {i})")
    seat = _int(ev["seat"], "seat", 0, schema.MAX_SEATS - 1)
    action = _str(ev["action"], "action", none_ok=False)
    assert action is not None
    try:
        code = parse_action_text(action)
    except (InvalidNotation, KeyError, ValueError) as e:
        raise ReplayFileError(f"bad event: {e}") from None
    if ev.get("code") is not None and _int(ev["code"], "code") != code:
        raise ReplayFileError(f"code {ev['code']} does not match {action!r} ({code})")
    if ev.get("forced") is not None and not isinstance(ev["forced"], bool):
        raise ReplayFileError(f"forced: expected true or false, not {_show(ev['forced'])}")
    _list(ev.get("options"), "options")
    return seat, code


def _from_obj(obj: dict[str, Any], name: str) -> ReplayFile:
    fmt = obj.get("format", FORMAT)
    if fmt != FORMAT:
        raise ReplayFileError(f"format {_show(fmt)} is not {FORMAT!r}")
    version = _int(obj.get("version", VERSION), "version")
    if version != VERSION:
        raise ReplayFileError(f"unknown replay file version {version} (this reader knows"
                              f" {VERSION})")  # fmt: skip
    title = _str(obj.get("title"), "title")
    rules = _rules_from(obj.get("rules", "hunan"))
    dealer = _int(obj.get("dealer", 0), "dealer")
    if not 0 <= dealer < rules.players:
        raise ReplayFileError(f"dealer {dealer} is not a seat of a {rules.players}-player table")
    if obj.get("deck") is not None and obj.get("deal") is not None:
        raise ReplayFileError("give either the deck or the hands, not both")
    if obj.get("deck") is not None:
        deck_v = obj["deck"]
        if isinstance(deck_v, list):
            deck = tuple(_int(k, f"deck[{i}]", 0, NUM_KINDS - 1) for i, k in enumerate(deck_v))
        elif isinstance(deck_v, str):
            deck = tuple(parse_cards(deck_v))
        else:
            raise ReplayFileError(f"deck: expected cards (a string or a list), not {_show(deck_v)}")
        why = deck_problem(deck)
        if why:
            raise ReplayFileError(why)
    elif obj.get("deal") is not None:
        deck = _deck_from_deal(_obj(obj["deal"], "deal"), rules, dealer)
    else:
        raise ReplayFileError("no deck (deck: 80 cards, or hand N: lines with the stock)")
    events: list[tuple[int, int]] = []
    for i, ev in enumerate(_list(obj.get("events"), "events")):
        line = ev.get("line") if isinstance(ev, dict) else None
        where = f"line {line}" if isinstance(line, int) else f"event {i}"
        try:
            seat, code = _event(ev, i)
        except ReplayFileError as e:
            raise ReplayFileError(f"{where}: {e}") from None
        if not 0 <= seat < rules.players:
            raise ReplayFileError(f"{where}: seat {seat} is not a seat of this table")
        events.append((seat, code))
    record: dict[str, Any] = {}
    for k, v in _obj(obj.get("record"), "record").items():
        if k not in RECORD_FIELDS:
            raise ReplayFileError(f"unknown record field {_show(k)}")
        record[k] = _int(v, f"record field {k}", 0, _RECORD_MAX[k])
    policies: list[str | None] = []
    for p in _list(obj.get("policies"), "policies"):
        p = _str(p, "policies")
        policies.append(None if p in (None, "-", "") else p)
    if policies and len(policies) != rules.players:
        raise ReplayFileError(f"{len(policies)} policies for {rules.players} seats")
    outcome = _parse_outcome(_obj(obj.get("outcome"), "outcome"), rules.players)
    src = obj.get("source")
    if isinstance(src, str):
        m = re.match(r"run (\S+) hand (\d{1,18})", src)
        src = {"run": m.group(1), "hand_id": int(m.group(2))} if m else {"text": src}
    elif src is not None and not isinstance(src, dict):
        raise ReplayFileError(f"source: expected a string or an object, not {_show(src)}")
    meta = {"title": title, "source": name}
    log = HandLog.from_history(rules, deck, dealer, events, meta=meta)
    return ReplayFile(log, outcome, record, policies, title, src or {})


def read_bounded(path: str | Path, max_bytes: int, what: str = "file") -> bytes:
    """At most ``max_bytes`` of the file at ``path``, read in chunks (never more than
    ``max_bytes + 1`` bytes, so ``/dev/zero`` or a FIFO cannot exhaust memory). Raises
    :class:`ReplayFileError` naming the file and the limit when it is larger."""
    p = Path(path)
    chunks: list[bytes] = []
    size = 0
    try:
        with open(p, "rb") as f:
            while size <= max_bytes:
                chunk = f.read(min(1 << 16, max_bytes + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except FileNotFoundError:
        raise ReplayFileError(f"no such file: {p}") from None
    except IsADirectoryError:
        raise ReplayFileError(f"{p} is a directory, not a {what}") from None
    except OSError as e:
        raise ReplayFileError(f"cannot read {p}: {e.strerror or e}") from None
    if size > max_bytes:
        raise ReplayFileError(
            f"{p}: larger than {max_bytes:,} bytes, the limit for a {what}"
            " (raise it with --max-bytes)"
        )
    return b"".join(chunks)


def read_replay_file(path: str | Path, max_bytes: int = MAX_BYTES) -> ReplayFile:
    """Read and parse a replay file from disk (at most ``max_bytes``, default 1 MiB)."""
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
            for h in r.iter_hands():
                out.setdefault(hand_key(rules, h.deck, h.dealer, h.history), (name, h.hand_id))
        except (PaohuziError, KeyError, TypeError):
            continue
    return out


def _check_duplicates(root: Path, files: Sequence[ReplayFile]) -> None:
    seen = _imported_keys(root, files[0].log.rules)
    for rf in files:
        log = rf.log
        key = hand_key(log.rules, log.deck, log.dealer, log.events)
        where = seen.get(key)
        if where is not None:
            what = f"run {where[0]} hand {where[1]}" if where[1] >= 0 else where[0]
            raise ReplayFileError(
                f"{log.meta.get('source')}: the same hand (rules, deck, dealer and events) is"
                f" already imported as {what}; give --allow-duplicate to import it again"
            )
        seen[key] = (str(log.meta.get("source")), -1)


def _rows(
    rf: ReplayFile, state: State, hand_id: int
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The ``hands`` row and ``events`` columns of a verified hand."""
    log = rf.log
    ev: dict[str, list[Any]] = {f.name: [] for f in schema.EVENTS_SCHEMA}
    s = game_for(log.rules).new_initial_state(log.deck, log.dealer)
    for k, (seat, action) in enumerate(log.events):
        kind, card, from_seat, forced, n_legal, options = expected_event(s, seat, action)
        for c, v in (("hand_id", hand_id), ("seq", k), ("seat", seat), ("action", action),
                     ("kind", kind), ("card", card), ("from_seat", from_seat),
                     ("forced", bool(forced)), ("n_legal", n_legal), ("options", options)):  # fmt: skip
            ev[c].append(v)
        s.apply_checked(seat, action)
    row: dict[str, Any] = {
        "hand_id": hand_id,
        "session": rf.record.get("session", hand_id),
        "session_hand": rf.record.get("session_hand", 0),
        "rotation": rf.record.get("rotation", 0),
        "deal_id": rf.record.get("deal_id", hand_id),
        "dealer": log.dealer,
        "huang_streak": rf.record.get("huang_streak", 0),
        "deck": bytes(log.deck),
    }
    row.update(expected_hand(state, log.n_steps))
    n = log.rules.players
    for s_ in range(schema.MAX_SEATS):
        if s_ < n:
            p = rf.policies[s_] if rf.policies else None
            row[f"policy_{s_}"] = p or "import"
        else:
            row[f"policy_{s_}"] = None
    return row, ev


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


@dataclasses.dataclass
class ImportResult:
    run: str
    hand_ids: list[int]
    shard: int
    path: Path
    #: why ``DATA/paohuzi.duckdb`` could not be refreshed (the hands are committed; the next
    #: reader rebuilds it), or None
    catalog_problem: str | None = None


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
    run) is refused unless ``allow_duplicate``."""
    if not files:
        raise ReplayFileError("nothing to import")
    rules = files[0].log.rules
    for rf in files[1:]:
        if rf.log.rules != rules:
            raise ReplayFileError(
                f"{rf.log.meta.get('source')}: other rules than"
                f" {files[0].log.meta.get('source')}; import them into different runs"
            )
    states = [check_replay(rf) for rf in files]
    root = Path(store.ensure_writable(Path(root)))
    name = store.check_run_name(run or _default_run(root, rules))
    path = store.run_dir(root, name)
    if not allow_duplicate:  # before the lock, which creates the run folder
        _check_duplicates(root, files)
    with store.RunLock(path):
        mpath = path / store.MANIFEST_NAME
        if mpath.exists():
            manifest = store.read_manifest(path)
            if not Manifest(manifest).imported:
                raise ReplayFileError(f"run {name!r} is a simulated run; import into another --run")
            if manifest.get("rules_fingerprint") != rules.fingerprint():
                raise ReplayFileError(
                    f"run {name!r} holds hands with other rules"
                    f" ({manifest.get('rules_preset') or manifest.get('rules_fingerprint')});"
                    " import into another --run"
                )
        else:
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
        hrows: list[dict[str, Any]] = []
        ecols: dict[str, list[Any]] = {f.name: [] for f in schema.EVENTS_SCHEMA}
        ids = []
        for i, (rf, state) in enumerate(zip(files, states, strict=True)):
            row, ev = _rows(rf, state, first + i)
            hrows.append(row)
            for c in ecols:
                ecols[c] += ev[c]
            ids.append(first + i)
        hands_t = pa.Table.from_pylist(hrows, schema=schema.HANDS_SCHEMA)
        events_t = pa.Table.from_pydict(ecols, schema=schema.EVENTS_SCHEMA)
        files_entry = {
            "hands": store.write_shard_file(path, hands_t, "hands", index),
            "events": store.write_shard_file(path, events_t, "events", index),
        }
        shards.append(
            {
                "index": index,
                "first_session": None,
                "sessions": 0,
                "first_hand": first,
                "hands": len(files),
                "events": events_t.num_rows,
                "files": files_entry,
            }
        )
        manifest.setdefault("imported", [])
        for rf, hid in zip(files, ids, strict=True):
            manifest["imported"].append(
                {
                    "hand_id": hid,
                    "file": str(rf.log.meta.get("source")),
                    "title": rf.title,
                    "from": rf.source or None,
                    "at": datetime.now(UTC).isoformat(timespec="seconds"),
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
    try:
        store.refresh_catalog(root)
    except store.StoreError as e:  # the hands are committed whatever becomes of the catalog
        return ImportResult(name, ids, index, path, " ".join(str(e).split()))
    return ImportResult(name, ids, index, path)
