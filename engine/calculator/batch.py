"""``paohuzi score --batch``: the choice of engine. The protocol and the reference scorer are
:mod:`engine.calculator.protocol`; :func:`run_batch` with ``engine="fast"`` hands chunks of
lines to :mod:`engine.calculator.fast`, which writes the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import BinaryIO

from engine.calculator.protocol import (
    MAX_LINE_BYTES,
    MAX_SKIP_BYTES,
    BatchStats,
    LineTooLong,
    read_lines,
    run_reference,
)
from engine.errors import PaohuziError

__all__ = [
    "ENGINES",
    "MAX_LINE_BYTES",
    "MAX_SKIP_BYTES",
    "BatchStats",
    "LineTooLong",
    "fast_available",
    "read_lines",
    "run_batch",
]


def run_batch(
    lines: Iterable[bytes | str | LineTooLong],
    out: BinaryIO,
    *,
    rules: str = "hunan",
    overrides: Sequence[str] = (),
    engine: str = "reference",
) -> BatchStats:
    """Score JSON lines, writing one JSON line per input line, in order, whatever it holds.

    Each input is an object like ``{"hand": "…", "melds": ["pao:伍"], "card": "拾",
    "source": "other", "rules": "hunan"}`` (only ``hand`` is required; also ``set``, ``haidi``,
    ``dihu``, ``tianhu``, and ``id``, which is echoed). Each output has ``win``, ``huxi`` (null
    when the hand cannot be split), ``reason``, ``deng``, ``fan`` and ``score`` (null unless a
    scored win); a bad line (blank, not UTF-8, not a JSON object, a :class:`LineTooLong` from
    :func:`read_lines`, an invalid request) gives ``{"line": n, "error": "…"}`` and the batch
    goes on (STYLE §12). ``rules`` and ``overrides`` are the defaults for lines without their
    own. What was answered is written even when ``lines`` raises.

    ``engine``: ``reference`` evaluates each line with :func:`engine.hu.evaluate_hu`;
    ``fast`` scores chunks of lines with the compiled kernel (:mod:`engine.calculator.fast`
    over :mod:`engine.fast.batch_score`, imports numpy and numba) — the same bytes out, line for line; ``auto`` is ``fast`` when
    numba is installed, else ``reference``.

    >>> import io
    >>> buf = io.BytesIO()
    >>> run_batch(['{"hand": "壹贰叁柒捌玖六七八九九", "melds": ["pao:伍", "peng:三", '
    ...            '"chi:二,七,十"]}', '', '{"hand": "壹X"}'], buf)
    BatchStats(lines=3, results=1, errors=2)
    >>> print(buf.getvalue().decode(), end="")
    {"win":true,"huxi":19,"reason":null,"deng":null,"fan":null,"score":null}
    {"line":2,"error":"blank line"}
    {"line":3,"error":"bad hand: unknown card 'X' at position 1 in '壹X'"}
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    if engine != "reference" and fast_available():
        from engine.calculator.fast import run_batch_fast

        return run_batch_fast(lines, out, rules, tuple(overrides), engine)
    if engine == "fast":
        raise PaohuziError("the fast engine needs numba and numpy (pip install numba)")
    return run_reference(lines, out, rules, overrides)


#: ``run_batch(engine=…)`` / ``paohuzi score --batch --engine``.
ENGINES = ("auto", "fast", "reference")


def fast_available() -> bool:
    """Whether numba (and numpy) can be imported, without importing them."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("numba", "numpy"))
