"""Self-play speed of the compiled play loop vs the reference, same machine, same run.

    python -m bench.engine [--rules hunan] [--policy random] [--hands 20000] [--ref-hands 500]

Not a test: it prints hands/s of :func:`engine.fast.play.play_batch` (after a warm-up call
that pays the numba load/compile) and of ``engine.play.play_to_end`` with the random policy,
and their ratio. Decks and seeds are derived as ``replay.runner`` does (run seed 1).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from engine.deck import derive_seed, shuffle_deck
from engine.rules import RuleSet, find_rules


def inputs(rules: RuleSet, n: int, run_seed: int = 1):
    decks = np.array(
        [shuffle_deck(derive_seed(run_seed, "deal", h)) for h in range(n)], dtype=np.uint8
    )
    dealers = np.array([h % rules.players for h in range(n)], dtype=np.int64)
    seeds = [derive_seed(run_seed, "hand", h) for h in range(n)]
    return decks, dealers, seeds


def bench_fast(rules: RuleSet, n: int, policy: str = "random") -> dict[str, float]:
    from engine.fast.play import play_batch, policy_keys

    decks, dealers, seeds = inputs(rules, n)
    pols = [policy] * rules.players
    t0 = time.perf_counter()
    play_batch(rules, decks[:2], dealers[:2], seeds[:2], pols)
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    keys = policy_keys(seeds, rules.players)
    t_keys = time.perf_counter() - t0
    t0 = time.perf_counter()
    c0 = time.process_time()
    ev, _ = play_batch(rules, decks, dealers, seeds, pols, keys=keys)
    t = time.perf_counter() - t0
    cpu = time.process_time() - c0
    return {
        "warmup_s": warm,
        "hands_per_s": n / t,
        "hands_per_cpu_s": n / cpu,
        "hands_per_s_with_seeds": n / (t + t_keys),
        "events_per_hand": len(ev["seq"]) / n,
    }


def bench_ref(rules: RuleSet, n: int, policy: str = "random") -> tuple[float, float]:
    from engine.play import play_to_end
    from engine.policies import load_policies
    from engine.state import Game

    decks, dealers, seeds = inputs(rules, n)
    game = Game(rules)
    pols = load_policies(policy, rules.players)
    t0 = time.perf_counter()
    c0 = time.process_time()
    for h in range(n):
        play_to_end(game, tuple(int(x) for x in decks[h]), int(dealers[h]), pols, seeds[h])
    return n / (time.perf_counter() - t0), n / (time.process_time() - c0)


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="hunan")
    ap.add_argument("--policy", default="random")
    ap.add_argument("--hands", type=int, default=20000)
    ap.add_argument("--ref-hands", type=int, default=500)
    a = ap.parse_args(argv)
    rules = find_rules(a.rules)
    fast = bench_fast(rules, a.hands, a.policy)
    ref, ref_cpu = bench_ref(rules, a.ref_hands, a.policy)
    fast["ref_hands_per_s"] = ref
    fast["ref_hands_per_cpu_s"] = ref_cpu
    fast["ratio"] = fast["hands_per_s"] / ref
    fast["ratio_cpu"] = fast["hands_per_cpu_s"] / ref_cpu
    print(
        f"{a.rules} {a.policy}: fast {fast['hands_per_s']:,.0f} hands/s wall"
        f" ({fast['hands_per_cpu_s']:,.0f} per CPU second;"
        f" {fast['hands_per_s_with_seeds']:,.0f} wall with seed derivation),"
        f" reference {ref:,.0f} hands/s wall ({ref_cpu:,.0f} per CPU s);"
        f" ratio {fast['ratio']:,.0f}x wall, {fast['ratio_cpu']:,.0f}x CPU"
        f" (warm-up {fast['warmup_s']:.1f} s, {fast['events_per_hand']:.1f} events/hand)"
    )
    return fast


if __name__ == "__main__":
    main()
