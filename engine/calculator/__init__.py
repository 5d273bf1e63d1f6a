"""Hand calculator 算胡息 behind ``paohuzi score``: parse a request, evaluate it, render it.

A request is a concealed hand, the table melds and, optionally, the hu card with its source
(RULES.md §10.3). Without a hu card the hand is the whole closed hand including the winning
card, read as a dealt hand in which every triple is a 坎. The evaluation itself is
:func:`engine.hu.evaluate_hu`; this package only parses, validates, renders and batches:

* :mod:`~engine.calculator.request` — parse and validate a request (:func:`parse_request`);
* :mod:`~engine.calculator.render` — the text and JSON answers (:func:`calculate`);
* :mod:`~engine.calculator.batch` — the ``--batch`` JSON-lines protocol (:func:`run_batch`);
* :mod:`~engine.calculator.fast` — its fast driver over :mod:`engine.fast.batch_score`;
* :mod:`~engine.calculator.samples` — generated batch lines (the benchmark is
  ``bench/calculator.py``).

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

from engine.calculator.batch import (
    ENGINES,
    MAX_LINE_BYTES,
    BatchStats,
    LineTooLong,
    fast_available,
    read_lines,
    run_batch,
)
from engine.calculator.render import Calculation, calculate, reason_text, settlement
from engine.calculator.request import SOURCES, ScoreRequest, evaluate, load_rules, parse_request
from engine.calculator.samples import generate_batch_lines

__all__ = [
    "ENGINES",
    "MAX_LINE_BYTES",
    "SOURCES",
    "BatchStats",
    "Calculation",
    "LineTooLong",
    "ScoreRequest",
    "calculate",
    "evaluate",
    "fast_available",
    "generate_batch_lines",
    "load_rules",
    "parse_request",
    "read_lines",
    "reason_text",
    "run_batch",
    "settlement",
]
