"""The calculator's benchmark: realistic ``--batch`` lines, generated, in any of the spellings
a JSON writer produces, and the lines per second of each engine on them.

Entry points: :func:`figures` (a dict of rates, for a benchmarks runner) and :func:`main`
(``python -m replay.calculator.bench bench|generate [N [SEED [SPELLING]]]``, also
``python -m replay.calculator …``).

>>> generate_batch_lines(1, 5, "ascii")[0][:31]
'{"hand": "s10 b8 b2 b3 s6 b1 b9'
>>> print(generate_batch_lines(1, 5, "escaped")[0][:22])
{"hand": "\\u5341\\u634c
"""

from __future__ import annotations

import io
import json
import random
import sys
import time
from collections.abc import Sequence
from typing import Any

from engine.cards import CARD_CHARS, COPIES, NUM_KINDS, format_cards, parse_cards
from engine.groups import EAT_SHAPES, is_one_five_ten
from replay.calculator.batch import fast_available, run_batch

__all__ = ["SPELLINGS", "bench_batch", "bench_engines", "figures", "generate_batch_lines", "main"]

#: How a line is written: ``utf8`` as ``json.dumps(…, ensure_ascii=False)``; ``escaped`` as
#: ``json.dumps(…)`` (every card a ``\u`` escape); ``ascii`` the cards in ``s1``…``b10``.
SPELLINGS = ("utf8", "escaped", "ascii")

_SENTENCE_SHAPES = tuple(s for s in EAT_SHAPES if not is_one_five_ten(s))


def _random_request(rng: random.Random) -> dict[str, Any] | None:
    """One plausible hu chance: 7 门子 built from the deck, then sometimes spoilt by one card."""
    avail = [COPIES] * NUM_KINDS
    melds: list[str] = []
    hand: list[int] = []
    q = rng.choice((0, 0, 0, 1, 1, 2))
    for _ in range(q):
        face = rng.choice([f for f in range(NUM_KINDS) if avail[f] == COPIES])
        melds.append(f"{rng.choice(('pao', 'ti'))}:{CARD_CHARS[face]}")
        avail[face] = 0
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.6:
            fits = [s for s in _SENTENCE_SHAPES if all(avail[k] >= s.count(k) for k in s)]
            shape = rng.choice(fits)
            for k in shape:
                avail[k] -= 1
            melds.append("chi:" + ",".join(CARD_CHARS[k] for k in shape))
        else:
            face = rng.choice([f for f in range(NUM_KINDS) if avail[f] == COPIES])
            melds.append(f"{rng.choice(('peng', 'peng', 'wei'))}:{CARD_CHARS[face]}")
            avail[face] = 0  # the 4th copy is elsewhere: an own 碰/偎 face is never in hand
    left = 7 - len(melds)
    if q:
        face = rng.choice([f for f in range(NUM_KINDS) if avail[f] >= 2])
        hand += [face, face]
        avail[face] = 0
        left -= 1
    for _ in range(left):
        if rng.random() < 0.12:
            faces = [f for f in range(NUM_KINDS) if avail[f] >= 3 and f not in hand]
            if faces:
                face = rng.choice(faces)
                hand += [face] * 3
                avail[face] = 0
                continue
        fits = [s for s in _SENTENCE_SHAPES if all(avail[k] >= s.count(k) for k in s)]
        if not fits:
            return None
        shape = rng.choice(fits)
        for k in shape:
            avail[k] -= 1
        hand += shape
    if rng.random() < 0.35:  # spoil: swap one card for another face still in the deck
        i = rng.randrange(len(hand))
        avail[hand[i]] += 1
        hand[i] = rng.choice([f for f in range(NUM_KINDS) if avail[f] > 0 and f != hand[i]])
        avail[hand[i]] -= 1
    rng.shuffle(hand)
    req: dict[str, Any] = {"melds": melds}
    if rng.random() < 0.8:
        card = hand.pop()
        req["card"] = CARD_CHARS[card]
        req["source"] = rng.choices(("other", "own", "liang"), (70, 25, 5))[0]
    req = {"hand": "".join(CARD_CHARS[k] for k in hand), **req}
    if any(hand.count(k) >= COPIES for k in hand):
        return None  # a dealt 4-of-a-kind is a 提 on the table, never a hand
    return req


def _ascii(req: dict[str, Any]) -> dict[str, Any]:
    """The request with its cards in ASCII notation (``s1 s2 s3``, ``chi:s1,s2,s3``)."""
    out = dict(req, hand=format_cards(parse_cards(req["hand"]), ascii=True))
    out["melds"] = [
        f"{name}:{','.join(format_cards([k], ascii=True) for k in parse_cards(body))}"
        for name, _, body in (m.partition(":") for m in req["melds"])
    ]
    if "card" in req:
        out["card"] = format_cards(parse_cards(req["card"]), ascii=True)
    return out


def generate_batch_lines(n: int, seed: int = 0, spelling: str = "utf8") -> list[str]:
    """``n`` realistic ``--batch`` input lines, deterministic in ``seed``; the same requests in
    every spelling (:data:`SPELLINGS`).

    About 1 in 3 is spoilt by one card; the rest are 7-门子 hands whose 胡息 decides the win.
    """
    if spelling not in SPELLINGS:
        raise ValueError(f"unknown spelling {spelling!r} (known: {', '.join(SPELLINGS)})")
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        req = _random_request(rng)
        if req is None:
            continue
        if spelling == "utf8":
            out.append(json.dumps(req, ensure_ascii=False))
        else:
            out.append(json.dumps(_ascii(req) if spelling == "ascii" else req))
    return out


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
        "usage: python -m replay.calculator.bench bench|generate [N [SEED [SPELLING]]]",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
