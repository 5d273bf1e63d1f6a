"""The compiled engine (:mod:`engine.fast`) behind ``paohuzi simulate --engine fast``: whole
sessions of hands in one compiled call, their columns turned into the same two tables as the
reference recorder (:func:`replay.record.recorder.build_tables`). The Python engine stays
the reference; ``make test`` holds the two to equal rows (tests/replay/record/
test_engines_equal.py).

Imported only when the fast engine is used (numba and its compiled code are heavy)."""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from replay.record.recorder import build_tables

if TYPE_CHECKING:
    from replay.record.spec import RunSpec

ENGINES = ("auto", "fast", "reference")


def fast_policies() -> frozenset[str]:
    """The built-in policies the compiled engine plays (and ``search@N[/POLICY]`` over them,
    and ``greedy@WEIGHTS`` / ``heuristic@WEIGHTS`` / ``learned@WEIGHTS``: any table)."""
    from engine.fast.policies import POLICY_CODES

    return frozenset(POLICY_CODES)


def unsupported(spec: RunSpec) -> str | None:
    """Why the compiled engine cannot play ``spec``, or None."""
    from engine.policies.search_policy import is_search_spec
    from engine.policies.weights import is_weighted_spec

    have = fast_policies()
    for name in spec.policies:
        key = name.strip().lower()
        if key not in have and not is_search_spec(key) and not is_weighted_spec(name):
            return (
                f"policy {name!r} has no compiled version (the fast engine plays"
                f" {', '.join(sorted(have))}, POLICY@WEIGHTS of greedy, heuristic and learned,"
                " and search@N)"
            )
    return None


def resolve(engine: str, spec: RunSpec) -> str:
    """``fast`` or ``reference`` for ``--engine`` (``auto``: fast when it can play ``spec``);
    raises ``PaohuziError`` when ``fast`` is asked for and cannot be had."""
    from engine.errors import PaohuziError

    if engine not in ENGINES:
        raise PaohuziError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    if engine == "reference":
        return "reference"
    why = unsupported(spec)
    if why is None:
        return "fast"
    if engine == "fast":
        raise PaohuziError(f"--engine fast: {why}")
    return "reference"


def play_shard_tables(spec: RunSpec, sessions: range) -> tuple[pa.Table, pa.Table, np.ndarray]:
    """The ``(hands, events)`` tables of ``sessions``, played by the compiled engine, and the
    hands' facts rows counted as they were played (``engine.fast.facts``; the facts table is
    ``replay.derived.facts.facts_table`` of them)."""
    from engine.fast.play import play_sessions

    events, hands = play_sessions(spec, sessions, facts=True)
    rows = hands.pop("facts")
    events = dict(events)
    events["hand_id"] = events.pop("hand")
    rotation = np.asarray(hands["rotation"], dtype=np.int64)
    by_rotation = np.empty((spec.rotations, 4), dtype=object)  # None: no such seat
    for r in range(spec.rotations):
        by_rotation[r, : spec.n_seats] = spec.seat_policies(r)
    policies = [by_rotation[rotation, s] for s in range(4)]
    return (*build_tables(hands, events, policies, spec.n_seats), rows)


def warm_up(spec: RunSpec, say: bool = True) -> None:
    """Compile (or load from numba's cache) the kernels ``spec`` needs, in this process,
    before workers start; says once on stderr when that takes a while (a first run)."""
    done = threading.Event()

    def notice() -> None:
        if not done.wait(1.5) and say:
            print(
                "compiling the fast engine (first run on this machine; cached afterwards)…",
                file=sys.stderr,
                flush=True,
            )

    from engine.fast.cache import compile_lock
    from engine.fast.play import sessions_kernel

    t = threading.Thread(target=notice, daemon=True)
    t.start()
    start = time.monotonic()
    try:
        with compile_lock([sessions_kernel]):  # one compiles, others wait, then load
            play_shard_tables(spec, range(0, 1))
    finally:
        done.set()
    if say and time.monotonic() - start > 1.5:
        print(f"compiled in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
