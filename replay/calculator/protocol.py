"""The ``--batch`` JSON-lines protocol (STYLE §12): reading bounded lines, parsing one line's
request, answering it, the error lines — and the reference scorer over them. The choice of
engine is :func:`replay.calculator.batch.run_batch`; the compiled driver
(:mod:`replay.calculator.fast`) writes the same bytes from the same pieces.

The protocol: an input line is an object ``{"hand": "…", "melds": ["pao:伍"], "card": "拾",
"source": "other", "rules": "hunan", "set": ["min_huxi=10"], "haidi": false, "dihu": false,
"tianhu": false, "id": …}`` (only ``hand`` is required; ``id`` is echoed); the output line has
``win``, ``huxi``, ``reason``, ``deng``, ``fan`` and ``score``, or is ``{"line": n, "error":
"…"}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from engine import hu as _hu
from engine.errors import InvalidNotation, PaohuziError
from engine.groups import Group
from engine.hu import HuContext, NoWin
from engine.rules import RuleSet
from replay.calculator.request import _prepare, load_rules

__all__ = ["MAX_LINE_BYTES", "BatchStats", "LineTooLong", "read_lines", "run_reference"]

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

    >>> import io
    >>> list(read_lines(io.BytesIO(b'a\\nbb\\n'), 4))
    [b'a\\n', b'bb\\n']
    >>> list(read_lines(io.BytesIO(b'a\\nbbbbbb\\n'), 4))
    Traceback (most recent call last):
    ...
    replay.calculator.protocol.LineTooLong: line 2 is longer than 4 bytes, the limit (raise it with --max-line-bytes)
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
    except RecursionError:
        return "bad JSON: nested too deep"
    except UnicodeDecodeError:
        return "bad JSON: not UTF-8"
    except json.JSONDecodeError as e:
        return f"bad JSON: {e.msg} at column {e.colno}"
    except ValueError as e:
        return f"bad JSON: {e}"
    return "bad JSON"


def run_reference(
    lines: Iterable[bytes | str],
    out: BinaryIO,
    rules: str = "hunan",
    overrides: Sequence[str] = (),
) -> BatchStats:
    """The reference scorer: each line evaluated with :func:`engine.hu.evaluate_hu`."""
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
                except (ValueError, StopIteration, RecursionError):
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
