"""The ``--batch`` JSON-lines protocol (STYLE §12): reading bounded lines, parsing one line's
request, answering it, the error lines — and the reference scorer over them. The choice of
engine is :func:`engine.calculator.batch.run_batch`; the compiled driver
(:mod:`engine.calculator.fast`) writes the same bytes from the same pieces.

The protocol: an input line is an object ``{"hand": "…", "melds": ["pao:伍"], "card": "拾",
"source": "other", "rules": "hunan", "set": ["min_huxi=10"], "haidi": false, "dihu": false,
"tianhu": false, "id": …}`` (only ``hand`` is required; ``id`` is echoed); the output line has
``win``, ``huxi``, ``reason``, ``deng``, ``fan`` and ``score``, or is ``{"line": n, "error":
"…"}``. Every input line gets exactly one output line, in order, whatever it holds (a blank
line, bytes that are not UTF-8, a line over the limit, a value that is not an object …), and
every output line is UTF-8 JSON with no lone surrogate, raw or escaped. A byte-order mark at
the start of a line is skipped.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from engine import hu as _hu
from engine.calculator.request import _prepare, load_rules, shown
from engine.errors import InvalidNotation, PaohuziError, quote
from engine.groups import Group
from engine.hu import HuContext, NoWin
from engine.rules import RuleSet

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_SKIP_BYTES",
    "BatchStats",
    "LineTooLong",
    "read_lines",
    "run_reference",
]

_BATCH_KEYS = frozenset(
    {"hand", "melds", "card", "source", "rules", "set", "haidi", "dihu", "tianhu", "id"}
)
_COMMON_KEYS = frozenset({"hand", "melds", "card", "source"})
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
# The echoed "id": NaN and Infinity (1e400 reads as Infinity) are no JSON, so refused.
_ID_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner
# A blank line is one of ASCII whitespace only (what bytes.strip() removes), whether the line
# comes as bytes or as str: str.strip() would also drop controls such as "\x1f".
_BLANK = " \t\n\r\x0b\x0c"
_BOM = "\ufeff"
_BOM_BYTES = _BOM.encode()


def _strip(line: bytes | str) -> bytes | str:
    return line.strip(_BLANK) if isinstance(line, str) else line.strip()


_FLUSH_EVERY = 2048
_LINE_CACHE_LIMIT = 1 << 16
_CACHED_LINE_BYTES = 1024  # longer lines are not remembered: the cache stays under ~64 MiB

#: The longest ``--batch`` input line read by default (``--max-line-bytes``); a line is ~200.
MAX_LINE_BYTES = 1 << 16
#: A longer line is answered with an error line and skipped, read in bounded pieces, up to
#: this many bytes: an input with no line end in its first GiB (``/dev/zero``) is not JSON lines
#: and stops the batch.
MAX_SKIP_BYTES = 1 << 30


class LineTooLong(InvalidNotation):
    """A ``--batch`` input line longer than the limit. :func:`read_lines` yields it in the
    line's place (the batch answers it with an error line and goes on), and raises it for a
    line with no end within :data:`MAX_SKIP_BYTES`."""


def read_lines(
    stream: BinaryIO, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[bytes | LineTooLong]:
    """The lines of ``stream`` one at a time, each read with a bound (never more than
    ``max_line_bytes + 1`` bytes held), so ``/dev/zero`` or a file without newlines cannot
    exhaust memory. A longer line is read to its end in bounded pieces and comes as a
    :class:`LineTooLong` (the error its answer says); one still without an end after
    :data:`MAX_SKIP_BYTES` raises it, naming its number.

    >>> import io
    >>> list(read_lines(io.BytesIO(b'a\\nbb\\n'), 4))
    [b'a\\n', b'bb\\n']
    >>> list(read_lines(io.BytesIO(b'a\\nbbbbbb\\nc'), 4))
    [b'a\\n', LineTooLong('longer than 4 bytes, the limit (raise it with --max-line-bytes)'), b'c']
    """
    n = 0
    skip_limit = max(MAX_SKIP_BYTES, max_line_bytes)
    while True:
        line = stream.readline(max_line_bytes + 1)
        if not line:
            return
        n += 1
        if len(line) > max_line_bytes and not (
            len(line) == max_line_bytes + 1 and line.endswith(b"\n")
        ):
            size = len(line)
            while not line.endswith(b"\n"):
                line = stream.readline(max_line_bytes + 1)
                if not line:
                    break
                size += len(line)
                if size > skip_limit:
                    raise LineTooLong(
                        f"line {n} has no end within {skip_limit:,} bytes: not JSON lines"
                        f" (the limit of a line is {max_line_bytes:,} bytes)"
                    )
            yield LineTooLong(
                f"longer than {max_line_bytes:,} bytes, the limit (raise it with --max-line-bytes)"
            )
            continue
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
        raise InvalidNotation(f'"{key}" must be a {kind.__name__}, got {shown(v)}')
    return v


def _echo_id(value: Any) -> str:
    """The ``"id"`` as the output writes it: JSON that any strict reader takes back."""
    try:
        text = _ID_ENCODER.encode(value)
        if not text.isascii():
            text.encode()
    except UnicodeEncodeError as e:
        bad = e.object[e.start]
        raise InvalidNotation(
            f'"id" holds a lone surrogate (U+{ord(bad):04X}), which is no Unicode text'
        ) from None
    except ValueError:
        raise InvalidNotation(
            '"id" holds NaN or Infinity (1e400 reads as Infinity), which JSON cannot write'
        ) from None
    except RecursionError:
        raise InvalidNotation('"id" is nested too deep') from None
    return text


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
        known = ", ".join(sorted(_BATCH_KEYS))
        raise InvalidNotation(f"unknown key {quote(bad)} (known: {known})")
    hand = obj.get("hand")
    if hand is None:
        raise InvalidNotation('missing "hand"')
    melds = obj.get("melds", ())
    if type(melds) is not list and melds != ():
        raise InvalidNotation(f'"melds" must be a list, got {shown(melds)}')
    head = ""
    if not common:
        preset = _want(obj, "rules", str, rules)
        extra = _want(obj, "set", list, ())
        if not all(type(a) is str for a in extra):
            raise InvalidNotation(
                f'"set" must be a list of "key=value" strings, got {shown(extra)}'
            )
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
            head = f'"id":{_echo_id(obj["id"])},'
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
        # json.loads would read bytes as UTF-16 or -32, or with surrogates: not this protocol
        json.loads(line.decode() if type(line) is bytes else line)
    except RecursionError:
        return "bad JSON: nested too deep"
    except UnicodeDecodeError:
        return "bad JSON: not UTF-8"
    except json.JSONDecodeError as e:
        # "Invalid control character at" + " at column 11" said "at" twice
        return f"bad JSON: {e.msg.removesuffix(' at')} at column {e.colno}"
    except ValueError as e:
        if "integer string conversion" in str(e):  # Python's int limit, not JSON's
            return f"bad JSON: a number of more than {sys.get_int_max_str_digits():,} digits"
        return f"bad JSON: {e}"
    return "bad JSON"


def _line_object(raw: bytes | str | LineTooLong) -> tuple[Any, str | None]:
    """The JSON value of one input line as ``(value, None)``, or ``(None, message)`` when the
    line holds none (blank, over the limit, not UTF-8, not JSON)."""
    if isinstance(raw, LineTooLong):
        return None, str(raw)
    line = _strip(raw)
    if not line:
        return None, "blank line"
    try:
        if isinstance(line, bytes):
            line = line.removeprefix(_BOM_BYTES)
            text = line.decode()
        else:
            text = line = line.removeprefix(_BOM)
        obj, end = _SCAN(text, 0)
        if end != len(text):
            raise ValueError
    except (ValueError, StopIteration, RecursionError):
        return None, _json_error(line)
    return obj, None


def _answer(
    n: int,
    raw: bytes | str | LineTooLong,
    default_rules: RuleSet,
    rules: str,
    defaults: tuple[str, ...],
) -> tuple[str, bool]:
    """The output line (no newline) of input line ``n``, and whether it is a result; never
    raises but for an interrupt."""
    obj, error = _line_object(raw)
    if error is not None:
        return _batch_error(n, error), False
    try:
        return _batch_result(obj, default_rules, rules, defaults), True
    except PaohuziError as e:
        return _batch_error(n, str(e)), False
    except Exception as e:  # an engine bug must not hide the rest of the batch
        return _batch_error(n, f"internal error: {type(e).__name__}: {e}"), False


def run_reference(
    lines: Iterable[bytes | str | LineTooLong],
    out: BinaryIO,
    rules: str = "hunan",
    overrides: Sequence[str] = (),
    *,
    start: int = 0,
) -> BatchStats:
    """The reference scorer: each line evaluated with :func:`engine.hu.evaluate_hu`; the
    first line is line ``start + 1``. Output is written in blocks; whatever was answered is
    written when the input fails (a read error, an interrupt) before the error goes on."""
    defaults = tuple(overrides)
    default_rules = load_rules(rules, defaults)[1]  # fail early, before any output
    seen: dict[bytes | str, str] = {}  # identical lines give identical answers
    buf: list[str] = []
    n = start
    results = errors = 0
    try:
        for raw in lines:
            n += 1
            hit = seen.get(raw) if type(raw) is not LineTooLong else None  # type: ignore[arg-type]
            if hit is not None:
                buf.append(hit)
                results += 1
            else:
                answer, ok = _answer(n, raw, default_rules, rules, defaults)
                buf.append(answer)
                if ok:
                    results += 1
                    if len(raw) <= _CACHED_LINE_BYTES:  # type: ignore[arg-type]
                        if len(seen) >= _LINE_CACHE_LIMIT:
                            seen.clear()
                        seen[raw] = answer  # type: ignore[index]
                else:
                    errors += 1
            if len(buf) >= _FLUSH_EVERY:
                _write(out, buf)
    finally:
        _write(out, buf)
        out.flush()
    return BatchStats(n - start, results, errors)


def _write(out: BinaryIO, buf: list[str]) -> None:
    if buf:
        buf.append("")
        data = "\n".join(buf).encode()
        buf.clear()
        out.write(data)


def _batch_error(lineno: int, message: str) -> str:
    """An error line. A lone surrogate the message quotes is written as the text ``\\udc80``:
    the line stays UTF-8, and JSON that every strict reader takes."""
    if not message.isascii():
        try:
            message.encode()
        except UnicodeEncodeError:
            message = message.encode(errors="backslashreplace").decode()
    return _ENCODER.encode({"line": lineno, "error": message})
