"""The fast driver of ``paohuzi score --batch``: chunks of lines through the compiled scorer
(:mod:`engine.fast.batch_score`), which parses, evaluates and writes the lines it can read with
certainty; the others are parsed here as the reference parses them (:mod:`engine.calculator.batch`)
and evaluated by the kernel in one call. The bytes out are the reference's, line for line.

Each batch logs, at DEBUG level on this module's logger, how many lines the compiled parser took
and how many the Python did (``record.compiled``, ``record.python``).
"""

from __future__ import annotations

import io
import itertools
import logging
import sys
from collections.abc import Iterable
from typing import Any, BinaryIO

from engine import hu as _hu
from engine.calculator.protocol import (
    BatchStats,
    LineTooLong,
    _batch_answer,
    _batch_error,
    _batch_parse,
    _line_object,
    run_reference,
)
from engine.calculator.request import SOURCES, load_rules
from engine.errors import PaohuziError
from engine.groups import EAT_SHAPE_ID, TABLE_KINDS, Group, GroupKind
from engine.hu import HuContext, NoWin
from engine.rules import RuleSet

__all__ = ["run_batch_fast"]

_log = logging.getLogger(__name__)
_FAST_CHUNK = 8192  # lines per compiled call


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
        self.compiled = 0  # lines the compiled parser read (and scored)
        self.python = 0  # lines it left to the reference parser
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
                    r = b"\0"  # not understood (a lone surrogate, a LineTooLong): the Python's
            raws.append(r)
        n = len(raws)
        data = b"".join(raws)
        arr = np.frombuffer(data, dtype=np.uint8)
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, raws), dtype=np.int64, count=n), out=starts[1:])
        status = np.empty(n, dtype=np.int64)
        out_end = np.empty(n, dtype=np.int64)
        obuf = np.empty(bs.out_capacity(n, len(data)), dtype=np.uint8)
        total = bs.score_chunk(arr, starts, self.p0, *t.args(), status, obuf, out_end)
        view = memoryview(obuf)
        fallback = np.flatnonzero(status != bs.DONE).tolist()  # a blank line is answered too
        done = int(np.count_nonzero(status == bs.DONE))
        self.compiled += done
        self.python += len(fallback)
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
            obj, error = _line_object(pending[i])
            if error is not None:
                texts[i] = _batch_error(n, error) + "\n"
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


def run_batch_fast(
    lines: Iterable[bytes | str | LineTooLong],
    out: BinaryIO,
    rules: str,
    overrides: tuple[str, ...],
    engine: str = "fast",
) -> BatchStats:
    """:func:`engine.calculator.batch.run_batch` with ``engine="fast"``: chunks of lines through
    the compiled scorer.

    The scorer is built (compiled, or loaded from numba's cache) at the first line, so an
    empty input costs nothing. With ``engine="auto"`` a scorer that cannot be built (numba
    broken) means the reference, with a note on stderr. A chunk the scorer fails on (a bug) is
    answered by the reference, so no line loses its answer; what was answered is written when
    the input fails.
    """
    load_rules(rules, overrides)  # fail early, before any output
    it = iter(lines)
    try:
        first = next(it)
    except StopIteration:
        out.flush()
        return BatchStats(0, 0, 0)
    try:
        scorer = _FastScorer(rules, overrides)
    except Exception as e:
        if engine != "auto":
            raise
        print(
            f"note: the fast scorer is unavailable ({type(e).__name__}: {e}); using the reference",
            file=sys.stderr,
        )
        return run_reference(itertools.chain([first], it), out, rules, overrides)
    pending: list[Any] = [first]
    n = 1
    results = errors = 0

    def emit() -> None:
        nonlocal results, errors
        if pending:
            base = n - len(pending)
            try:
                data, r, e = scorer.chunk(pending, base)
            except Exception as exc:  # the scorer's bug: the reference answers these lines
                _log.warning(
                    "fast batch: chunk at line %d: %r; the reference answers it", base, exc
                )
                buf = io.BytesIO()
                st = run_reference(pending, buf, rules, overrides, start=base)
                data, r, e = buf.getvalue(), st.results, st.errors
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
    finally:
        emit()  # what was read is answered and written, even when the input fails
        out.flush()
    _log.debug(
        "fast batch: %d lines, %d by the compiled parser, %d by the reference parser",
        n,
        scorer.compiled,
        scorer.python,
        extra={"compiled": scorer.compiled, "python": scorer.python},
    )
    return BatchStats(n, results, errors)
