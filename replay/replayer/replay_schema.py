"""The typed schema of a replay file (docs/REPLAY_FILE.md), one ``pydantic_core`` validator
for both spellings: the JSON spelling is parsed by :func:`parse_json` (nested at most 200
deep, no ``NaN`` or ``Infinity``, no lone surrogate) and the text spelling by the text parser,
which turns its numbers into integers; then :func:`check_doc` checks the document strictly —
an integer is a JSON integer in its range (no ``"0"``, no ``2.0``, no ``true``), a flag is
``true`` or ``false`` (no ``"false"``), a string is a string, no field is unknown — so that a
hand-written or damaged file is refused with one line naming the field, and the reader never
meets a wrong type.

>>> check_doc({"dealer": 0, "events": [{"seat": True, "action": "过"}]})
Traceback (most recent call last):
...
replay.replayer.replay_schema.ReplayFileError: field events[0].seat: expected an integer in 0 … 3, got True
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pydantic_core import SchemaValidator, ValidationError, from_json
from pydantic_core import core_schema as cs

from engine.actions import MAX_ACTION
from engine.cards import NUM_KINDS
from engine.errors import PaohuziError
from engine.hu import Source
from engine.rules import RuleSet
from engine.state import OutcomeKind
from replay import schema
from replay.store.manifest_schema import expected_text, shown_value

FORMAT = "paohuzi-replay"
VERSION = 1

#: The ``hands`` columns a replay file may carry in its record (kept on import).
RECORD_FIELDS = ("session", "session_hand", "rotation", "deal_id", "huang_streak")

#: How deep a JSON replay file may nest (``pydantic_core.from_json``'s own limit).
MAX_DEPTH = 200


class ReplayFileError(PaohuziError):
    """A replay file that cannot be read, or whose hand breaks the rules. ``reason`` says
    which (one of :data:`REASONS`: what an import answers per hand), ``event`` the event at
    fault when there is one."""

    def __init__(self, message: str, reason: str = "malformed", event: int | None = None):
        super().__init__(message)
        self.reason = reason
        self.event = event


#: Why a hand is refused (``ReplayFileError.reason``; docs/SERVICE.md): not a replay file or
#: not one the schema allows, a JSON line longer than the limit, rules that are no rule set,
#: rules other than the run's, an event the rules do not allow at that point (or a hand that
#: ends early or goes on after its end), a stated outcome the replay does not give, a hand
#: already stored, a hand the compiled verifier flags after the rows were derived.
REASONS = (
    "malformed",
    "too_long",
    "unknown_rules",
    "other_rules",
    "illegal",
    "outcome_differs",
    "duplicate",
    "unverifiable",
)


def _column_range(name: str) -> tuple[int, int]:
    """The values a ``hands`` integer column holds (its Arrow type)."""
    t = schema.HANDS_SCHEMA.field(name).type
    if pa.types.is_signed_integer(t):
        return -(1 << (t.bit_width - 1)), (1 << (t.bit_width - 1)) - 1
    return 0, (1 << t.bit_width) - 1


SEATS = (0, schema.MAX_SEATS - 1)
CARDS = (0, NUM_KINDS - 1)

#: The range of each record field (its ``hands`` column type).
RECORD_RANGE = {k: _column_range(k) for k in RECORD_FIELDS}

#: The range of each outcome field given as an integer (``deltas``: each of its values).
OUTCOME_RANGE: dict[str, tuple[int, int]] = {
    "result": (0, int(max(OutcomeKind))),
    "winner": SEATS,
    "source": (0, int(max(Source))),
    "hu_card": CARDS,
    "from_seat": SEATS,
    **{k: _column_range(k) for k in ("huxi", "deng", "fan", "score", "stock_left", "mingtang")},
    "deltas": _column_range("delta_0"),
}

# ---------------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------------

_KINDS = {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}


def _kind(v: Any) -> str:
    """The tag of ``v``'s JSON type (a union below picks its choice by it)."""
    return "<null>" if v is None else f"<{_KINDS.get(type(v), 'other')}>"


_TAG_RE = re.compile(r"^<[a-z]+>$")


def _int(lo: int, hi: int, message: str | None = None) -> cs.CoreSchema:
    """A JSON integer in ``lo … hi``; any other value is ``expected an integer in lo … hi``
    (or ``message``)."""
    return cs.custom_error_schema(
        cs.int_schema(ge=lo, le=hi, strict=True),
        "int_range",
        custom_error_message=message or f"expected an integer in {lo} … {hi}",
    )


def _text(max_length: int | None = None) -> cs.CoreSchema:
    return cs.str_schema(max_length=max_length, strict=True)


def _either(message: str, **choices: cs.CoreSchema) -> cs.CoreSchema:
    """One of ``choices`` (``str=…``, ``int=…``, ``null=…`` …) picked by the value's JSON type;
    a value of another type is ``message``."""
    return cs.tagged_union_schema(
        {f"<{k}>": v for k, v in choices.items()},
        discriminator=_kind,
        custom_error_type="wrong_type",
        custom_error_message=message,
    )


def _nullable(schema: cs.CoreSchema, what: str) -> cs.CoreSchema:
    return _either(
        f"expected {what} or null", **{_tag_of(schema): schema, "null": cs.none_schema()}
    )


def _tag_of(schema: cs.CoreSchema) -> str:
    inner: Any = schema
    while inner["type"] == "custom-error":
        inner = inner["schema"]
    return {"typed-dict": "dict", "dict": "dict", "list": "list"}.get(inner["type"], inner["type"])


#: The fields of each object of the format, by its path (list indices as 0): what an unknown
#: field's message lists.
FIELDS: dict[tuple[str | int, ...], tuple[str, ...]] = {}


def _obj(
    path: tuple[str | int, ...], fields: dict[str, tuple[cs.CoreSchema, bool]]
) -> cs.CoreSchema:
    """A JSON object with exactly these ``{name: (schema, required)}`` fields."""
    FIELDS[path] = tuple(fields)
    return cs.typed_dict_schema(
        {k: cs.typed_dict_field(v, required=req) for k, (v, req) in fields.items()},
        extra_behavior="forbid",
        strict=True,
    )


def _rule_field(f: dataclasses.Field[Any]) -> cs.CoreSchema:
    kind = f.type if isinstance(f.type, str) else f.type.__name__
    if kind == "bool":
        return cs.bool_schema(strict=True)
    if kind == "int":
        return _int(-(10**9), 10**9, "expected an integer")  # RuleSet checks the range
    return _text(200)


# ---------------------------------------------------------------------------------------------
# The document
# ---------------------------------------------------------------------------------------------

TEXT = _text()
SEAT = _int(*SEATS)
CARD = _int(*CARDS)
NUMBER_OR_TEXT = "expected a string, an integer or null"

_EVENT = _obj(
    ("events", 0),
    {
        "seq": (_nullable(_int(0, _column_range("n_events")[1]), "an integer"), False),
        "seat": (SEAT, True),
        "action": (_text(200), True),
        "code": (_nullable(_int(0, MAX_ACTION), "an action code"), False),
        "forced": (_nullable(cs.bool_schema(strict=True), "true, false"), False),
        "options": (_nullable(cs.list_schema(_text(200), strict=True), "a list"), False),
    },
)
_RULES = _either(
    "expected a preset name or an object",
    str=TEXT,
    dict=_obj(
        ("rules",),
        {
            "preset": (_nullable(_text(200), "a string"), False),
            "set": (
                _either(
                    "expected a list of 'switch=value' strings, an object or null",
                    list=cs.list_schema(_text(200), strict=True),
                    dict=cs.dict_schema(
                        _text(200),
                        _either(
                            "expected a string, an integer or true/false",
                            str=_text(200),
                            int=_int(-(10**9), 10**9),
                            bool=cs.bool_schema(strict=True),
                        ),
                        strict=True,
                    ),
                    null=cs.none_schema(),
                ),
                False,
            ),
            "full": (
                _nullable(
                    _obj(
                        ("rules", "full"),
                        {f.name: (_rule_field(f), False) for f in dataclasses.fields(RuleSet)},
                    ),
                    "an object",
                ),
                False,
            ),
        },
    ),
)
_SOURCE = _either(
    "expected a string, an object or null",
    str=_text(1000),
    dict=_obj(
        ("source",),
        {
            "run": (_nullable(_text(255), "a string"), False),
            "hand_id": (_nullable(_int(0, _column_range("hand_id")[1]), "an integer"), False),
            "text": (_nullable(_text(1000), "a string"), False),
        },
    ),
    null=cs.none_schema(),
)
_DECK = _either(
    f"expected the cards (a string, or a list of card codes {CARDS[0]} … {CARDS[1]}) or null",
    str=TEXT,
    list=cs.list_schema(CARD, strict=True),
    null=cs.none_schema(),
)
_DEAL = _obj(
    ("deal",),
    {
        "hands": (cs.dict_schema(TEXT, TEXT, strict=True), True),  # seats: checked later
        "liang": (_nullable(TEXT, "a string"), False),
        "stock": (_nullable(TEXT, "a string"), False),
    },
)
_RECORD = _obj(("record",), {k: (_int(*r), False) for k, r in RECORD_RANGE.items()})
_POLICIES = cs.list_schema(
    _nullable(_text(200), "a string"), max_length=schema.MAX_SEATS, strict=True
)


def _outcome_value(key: str) -> cs.CoreSchema:
    if key == "zimo":
        return _either(
            "expected yes/no, true/false or null",
            str=TEXT,
            bool=cs.bool_schema(strict=True),
            null=cs.none_schema(),
        )
    if key == "deltas":
        return _either(
            "expected a list of integers or a string",
            str=TEXT,
            list=cs.list_schema(_int(*OUTCOME_RANGE[key]), strict=True),
        )
    return _either(NUMBER_OR_TEXT, str=TEXT, int=_int(*OUTCOME_RANGE[key]), null=cs.none_schema())


#: The fields of ``[outcome]``, in the order an exported file lists them.
OUTCOME_FIELDS = ("result", "winner", "source", "hu_card", "from_seat", "huxi", "deng", "fan",
                  "score", "mingtang", "zimo", "deltas", "stock_left")  # fmt: skip
_OUTCOME = _obj(("outcome",), {k: (_outcome_value(k), False) for k in OUTCOME_FIELDS})

#: The whole document (both spellings, once the text spelling is parsed).
REPLAY_SCHEMA = _obj(
    (),
    {
        "format": (cs.literal_schema([FORMAT]), False),
        "version": (_int(0, (1 << 32) - 1), False),
        "title": (_nullable(_text(1000), "a string"), False),
        "source": (_SOURCE, False),
        "rules": (_RULES, False),
        "dealer": (SEAT, False),
        "deck": (_DECK, False),
        "deal": (_nullable(_DEAL, "an object"), False),
        "record": (_nullable(_RECORD, "an object"), False),
        "policies": (_nullable(_POLICIES, "a list"), False),
        "events": (
            _nullable(
                cs.list_schema(
                    _either(
                        "expected an object or a 'seat S: ACTION' string",
                        dict=_EVENT,
                        str=_text(1000),
                    ),  # fmt: skip
                    strict=True,
                ),
                "a list",
            ),
            False,
        ),
        "outcome": (_nullable(_OUTCOME, "an object"), False),
    },
)

_VALIDATORS: dict[str, SchemaValidator] = {}


def _validator(name: str) -> SchemaValidator:
    if name not in _VALIDATORS:
        _VALIDATORS[name] = SchemaValidator(REPLAY_SCHEMA if name == "doc" else _EVENT)
    return _VALIDATORS[name]


# ---------------------------------------------------------------------------------------------
# Errors as one line
# ---------------------------------------------------------------------------------------------

_KEY_RE = re.compile(r"[A-Za-z0-9_]{1,40}")  # fullmatch: "$" would let a key end in "\n"


def where(loc: tuple[int | str, ...]) -> str:
    """A field's path as the docs write it: ``events[3].seat``, ``deal.hands.0``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _TAG_RE.match(part):
            continue  # a union's choice, no field
        elif _KEY_RE.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{shown_value(part)}]"
    return out


def _path(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """``loc`` without union tags, list indices as 0: the key of :data:`FIELDS`."""
    return tuple(0 if isinstance(p, int) else p for p in loc if not _TAG_RE.match(str(p)))


def line_of(loc: tuple[int | str, ...], lines: Mapping[str, int] | None) -> int | None:
    """The line of the text spelling that gave the field at ``loc`` (keys ``dealer``,
    ``events.3``, ``outcome.winner`` …), if known."""
    if not lines:
        return None
    parts = [str(p) for p in loc if not _TAG_RE.match(str(p))]
    for n in range(min(len(parts), 3), 0, -1):
        no = lines.get(".".join(parts[:n]))
        if no is not None:
            return no
    return None


def describe(
    e: ValidationError, lines: Mapping[str, int] | None = None, base: tuple[int | str, ...] = ()
) -> str:
    """The first error of ``e`` as ``field LOC: expected …, got …`` (``line N: `` first for a
    field of the text spelling)."""
    err = e.errors(include_url=False)[0]
    loc = base + tuple(err["loc"])
    no = line_of(loc, lines)
    head = f"line {no}: " if no is not None else ""
    kind = err["type"]
    if not loc:
        return f"{head}a replay file is a JSON object, got {shown_value(err.get('input'))}"
    name = where(loc)
    if kind == "missing":
        return f"{head}field {name} is missing"
    if kind == "extra_forbidden":
        known = FIELDS.get(_path(loc)[:-1], ())
        return f"{head}unknown field {name} (known: {', '.join(known)})"
    if kind in ("wrong_type", "int_range"):
        expected = str(err["msg"])
    else:
        expected = expected_text(dict(err))
    return f"{head}field {name}: {expected}, got {shown_value(err.get('input'))}"


def check_doc(doc: Any, lines: Mapping[str, int] | None = None) -> dict[str, Any]:
    """``doc`` (parsed JSON, or the text spelling as the same dict) checked against the
    schema: the same document; :class:`ReplayFileError` naming the first field at fault
    otherwise. ``lines`` maps a field of the text spelling to its line (for the message)."""
    if isinstance(doc, dict):
        version = doc.get("version")
        if type(version) is int and version != VERSION:
            raise ReplayFileError(
                f"unknown replay file version {version} (this reader knows {VERSION})"
            )
    try:
        _validator("doc").validate_python(doc)  # strict: nothing is converted, so doc is it
    except ValidationError as e:
        raise ReplayFileError(describe(e, lines)) from None
    return dict(doc)


def check_event(ev: dict[str, Any], i: int, lines: Mapping[str, int] | None = None) -> None:
    """Event ``i`` given as a ``seat S: ACTION`` string, once parsed, checked as an object."""
    try:
        _validator("event").validate_python(ev)
    except ValidationError as e:
        raise ReplayFileError(describe(e, lines, ("events", i))) from None


def check_range(value: int, key: str, lo: int, hi: int, head: str = "") -> int:
    """``value`` (read from the text of field ``key``) in ``lo … hi``."""
    if not lo <= value <= hi:
        raise ReplayFileError(f"{head}field {key}: expected an integer in {lo} … {hi}, got {value}")
    return value


# ---------------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------------

_POS_RE = re.compile(r"^(.*) at line (\d+) column (\d+)$")
_ESCAPE_RE = re.compile(rb"\\u([0-9a-fA-F]{4})")


def _json_problem(msg: str, data: bytes) -> str:
    """``pydantic_core``'s message for ``data`` as ``bad JSON at line L column C: …`` (the
    column counted in characters, not bytes; NaN, Infinity, a lone surrogate and the depth
    limit said in words)."""
    m = _POS_RE.match(msg)
    if not m:
        return f"bad JSON: {msg}"
    what, line, col = m.group(1), int(m.group(2)), int(m.group(3))
    rows = data.split(b"\n")
    row = rows[line - 1] if 0 < line <= len(rows) else b""
    at = max(col - 1, 0)
    rest = row[at:]
    if what == "recursion limit exceeded":
        what = f"nested too deeply (more than {MAX_DEPTH} levels)"
    elif rest.startswith((b"NaN", b"Infinity")) or row[max(at - 1, 0) :].startswith(b"-Inf"):
        what = "NaN and Infinity are not JSON numbers"
        at -= row[max(at - 1, 0) : at] == b"-"  # the column of the sign
    elif "surrogate" in what or "hex escape" in what:
        escapes = list(_ESCAPE_RE.finditer(row[: at + 1]))
        if escapes and 0xD800 <= int(escapes[-1].group(1), 16) <= 0xDFFF:
            what = f"a lone surrogate \\u{escapes[-1].group(1).decode()} (half of a UTF-16 pair)"
            at = escapes[-1].start()  # the column of the escape
    chars = len(row[:at].decode("utf-8", "replace")) + 1
    return f"bad JSON at line {line} column {chars}: {what}"


def parse_json(text: str) -> Any:
    """The JSON spelling parsed (``pydantic_core.from_json``: nested at most 200 deep, no
    ``NaN``/``Infinity``, no lone surrogate); :class:`ReplayFileError` saying where not."""
    data = text.encode("utf-8")  # the caller made sure it encodes
    try:
        return from_json(data, allow_inf_nan=False, cache_strings=False)
    except ValueError as e:
        raise ReplayFileError(_json_problem(str(e), data)) from None


def digits(text: str) -> int | str:
    """The text spelling's number: an integer for a decimal (``+5``, ``-1``, up to 30 digits),
    else the text itself (which the schema then refuses, naming the field)."""
    s = text.strip()
    return int(s) if re.fullmatch(r"[+-]?[0-9]{1,30}", s) else text
