"""The calculator's benchmark: the lines per second of each engine of ``paohuzi score
--batch`` on the same generated lines (:mod:`engine.calculator.samples`), in every spelling a
JSON writer produces.

    .venv/bin/python -m bench.calculator bench [N [SEED [SPELLING]]]
    .venv/bin/python -m bench.calculator generate N [SEED [SPELLING]]   # the lines, on stdout

:func:`figures` gives the rates as a dict (``make bench`` prints them).
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Sequence
from typing import Any

from engine.calculator.batch import fast_available, run_batch
from engine.calculator.samples import SPELLINGS, generate_batch_lines


class _Sink(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        return len(b)


def bench_batch(n: int = 100_000, seed: int = 0, engine: str = "reference") -> float:
    """Batch throughput in hands per second on ``n`` generated lines (generation not timed;
    for ``engine="fast"`` neither is the compile or cache load, done on a first tiny batch)."""
    return bench_engines(n, seed, (engine,))[engine]


def bench_engines(
    n: int = 100_000,
    seed: int = 0,
    engines: Sequence[str] = ("reference", "fast"),
    repeat: int = 1,
    spelling: str = "utf8",
) -> dict[str, float]:
    """Lines per second of :func:`run_batch` for each engine on the same ``n`` generated lines
    (the best of ``repeat`` interleaved runs; the outputs are checked equal)."""
    data = [s.encode() for s in generate_batch_lines(n, seed, spelling)]
    sink = _Sink()
    if "fast" in engines:
        run_batch(data[:8], sink, engine="fast")  # type: ignore[arg-type]
    best = dict.fromkeys(engines, 0.0)
    outs: dict[str, bytes] = {}
    for _ in range(repeat):
        for engine in engines:
            buf = io.BytesIO()
            t0 = time.perf_counter()
            run_batch(data, buf, engine=engine)  # type: ignore[arg-type]
            best[engine] = max(best[engine], n / (time.perf_counter() - t0))
            outs[engine] = buf.getvalue()
    if len(set(outs.values())) > 1:
        raise AssertionError(f"the engines disagree on the bench input ({', '.join(outs)})")
    return best


def figures(
    n: int = 100_000, seed: int = 0, spellings: Sequence[str] = SPELLINGS, repeat: int = 1
) -> dict[str, dict[str, float]]:
    """Lines per second, ``{spelling: {engine: rate}}``, of both engines (the reference only
    without numba) on the same ``n`` requests in each spelling."""
    engines = ("reference", "fast") if fast_available() else ("reference",)
    return {sp: bench_engines(n, seed, engines, repeat, sp) for sp in spellings}


def main(argv: Sequence[str]) -> int:
    """``bench [N [SEED [SPELLING]]]``: lines per second of each engine (every spelling unless
    one is named); ``generate N [SEED [SPELLING]]``: the lines, on stdout."""
    if len(argv) >= 1 and argv[0] in ("bench", "generate") and len(argv) <= 4:
        n = int(argv[1]) if len(argv) > 1 else 100_000
        seed = int(argv[2]) if len(argv) > 2 else 0
        if argv[0] == "generate":
            spelling = argv[3] if len(argv) > 3 else "utf8"
            sys.stdout.write("\n".join(generate_batch_lines(n, seed, spelling)) + "\n")
            return 0
        for sp, rates in figures(n, seed, argv[3:] or SPELLINGS).items():
            ref = rates["reference"]
            print(
                f"paohuzi score --batch: {ref:,.0f} hands/s reference "
                f"({n} lines, seed {seed}, {sp})"
            )
            if "fast" in rates:
                fast = rates["fast"]
                print(
                    f"paohuzi score --batch: {fast:,.0f} hands/s fast, {fast / ref:.1f}× the "
                    f"reference ({sp})"
                )
        return 0
    print(
        "usage: python -m bench.calculator bench|generate [N [SEED [SPELLING]]]",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
