"""Speed of the compiled hu kernels against :func:`engine.hu.evaluate_hu_counts`.

``python -m bench.hu_kernel [hands per preset]`` plays seeded hands with the reference
engine (random and heuristic policies, every preset), records every evaluate_hu_counts input,
then times (CPU time) the Python function (its lru caches cleared first, and warm) and the kernel (a
compiled loop over the same inputs) and prints calls/s and the ratio. A measurement, not a
test.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from engine.fast import hu as F
from engine.fast.cache_guard import guard


def record(n_hands: int = 200) -> list[tuple[Any, Any, tuple[int, ...], int | None, Any]]:
    """(rules, melds, hand counts, card, ctx) of every hu evaluation in reference play."""
    import engine.state as engine_state
    from engine.deck import derive_seed, shuffle_deck
    from engine.play import play_to_end
    from engine.policies import load_policy
    from engine.rules import PRESETS
    from engine.state import Game

    calls: list[tuple[Any, Any, tuple[int, ...], int | None, Any]] = []
    orig = engine_state.evaluate_hu_counts

    def wrapped(rules: Any, melds: Any, hc: Sequence[int], card: int | None, ctx: Any) -> Any:
        calls.append((rules, tuple(melds), tuple(hc), card, ctx))
        return orig(rules, melds, hc, card, ctx)

    engine_state.evaluate_hu_counts = wrapped  # type: ignore[assignment]
    try:
        for p, rules in enumerate(PRESETS.values()):
            game = Game(rules)
            for policy in ("random", "heuristic"):
                pols = [load_policy(policy)] * rules.players
                for i in range(n_hands // 2):
                    s = derive_seed(p, policy, i)
                    play_to_end(game, shuffle_deck(s), i % rules.players, pols, s)
    finally:
        engine_state.evaluate_hu_counts = orig  # type: ignore[assignment]
    return calls


def pack(calls: Sequence[tuple[Any, Any, tuple[int, ...], int | None, Any]]) -> tuple[Any, ...]:
    """The recorded inputs as arrays for :func:`run_batch`."""
    n = len(calls)
    params = np.zeros((n, F.PARAMS_SIZE), dtype=np.int64)
    kinds = np.zeros((n, 16), dtype=np.int64)
    ids = np.zeros((n, 16), dtype=np.int64)
    nm = np.zeros(n, dtype=np.int64)
    hands = np.zeros((n, 20), dtype=np.int64)
    card = np.zeros(n, dtype=np.int64)
    ctx = np.zeros((n, 4), dtype=np.int64)
    cache: dict[Any, np.ndarray] = {}
    for i, (rules, melds, hc, c, cx) in enumerate(calls):
        if rules not in cache:
            cache[rules] = F.rule_params(rules)
        params[i] = cache[rules]
        k, m, nn = F.meld_arrays(melds)
        kinds[i, :nn] = k[:nn]
        ids[i, :nn] = m[:nn]
        nm[i] = nn
        hands[i] = hc
        card[i] = -1 if c is None else c
        ctx[i] = (int(cx.source), int(cx.tianhu), int(cx.haidi), int(cx.dihu))
    return params, kinds, ids, nm, hands, card, ctx


@njit(cache=True)
def run_batch(params, kinds, ids, nm, hands, card, ctx, out):  # type: ignore[no-untyped-def]
    """hu_eval over every packed input; returns the number of wins."""
    wins = 0
    ws = np.empty(F.WS_SIZE, dtype=np.int64)
    for i in range(card.shape[0]):
        wins += F.hu_eval_ws(
            params[i],
            kinds[i],
            ids[i],
            nm[i],
            hands[i],
            card[i],
            ctx[i, 0],
            ctx[i, 1],
            ctx[i, 2],
            ctx[i, 3],
            out[i],
            ws,
        )
    return wins


def bench(n_hands: int = 200, repeat: int = 5) -> dict[str, float]:
    """Calls/s of the Python function (cold and warm caches) and the kernel; prints them."""
    from engine import hu as H

    calls = record(n_hands)
    packed = pack(calls)
    out = np.zeros((len(calls), F.OUT_SIZE), dtype=np.int64)
    run: Any = run_batch
    run(*packed, out)  # compile / load
    t_kernel = 1e9
    for _ in range(repeat):  # CPU time, the best of ``repeat`` (shared machines are noisy)
        t = time.process_time()
        run(*packed, out)
        t_kernel = min(t_kernel, time.process_time() - t)

    def python_pass() -> float:
        t0 = time.process_time()
        for rules, melds, hc, c, cx in calls:
            H.evaluate_hu_counts(rules, melds, hc, c, cx)
        return time.process_time() - t0

    H.best_split.cache_clear()
    H.best_packing.cache_clear()
    t_cold = python_pass()
    t_warm = min(python_pass() for _ in range(2))
    n = len(calls)
    res = {
        "calls": float(n),
        "kernel_per_s": n / t_kernel,
        "python_cold_per_s": n / t_cold,
        "python_warm_per_s": n / t_warm,
    }
    res["ratio_cold"] = res["kernel_per_s"] / res["python_cold_per_s"]
    res["ratio_warm"] = res["kernel_per_s"] / res["python_warm_per_s"]
    print(
        f"{n} recorded calls: kernel {res['kernel_per_s']:,.0f}/s, python "
        f"{res['python_cold_per_s']:,.0f}/s cold caches ({res['ratio_cold']:.0f}×), "
        f"{res['python_warm_per_s']:,.0f}/s warm ({res['ratio_warm']:.0f}×)"
    )
    return res


guard("hu_bench", globals())


if __name__ == "__main__":
    bench(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
