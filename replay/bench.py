"""``make bench``: throughput figures on one core (measured, never asserted in tests).

* self-play hands/s with the ``random`` and ``heuristic`` policies (engine only, no recording);
* ``paohuzi score --batch`` hands/s.
"""

from __future__ import annotations

import argparse
import time

from engine.deck import derive_seed, shuffle_deck
from engine.play import play_to_end
from engine.policies import load_policies
from engine.rules import find_rules
from engine.state import Game


def selfplay_rate(policy: str, hands: int, preset: str = "hunan", seed: int = 1) -> float:
    """Hands per second of self-play (decks are shuffled inside the timed loop)."""
    rules = find_rules(preset)
    game = Game(rules)
    policies = load_policies(policy, rules.players)
    start = time.perf_counter()
    for i in range(hands):
        hand_seed = derive_seed(seed, "bench", i)
        play_to_end(game, shuffle_deck(hand_seed), i % rules.players, policies, hand_seed)
    return hands / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m replay.bench", description=__doc__)
    p.add_argument("--hands", type=int, default=3000, help="hands per self-play figure")
    p.add_argument("--scored", type=int, default=100_000, help="hands for the score figure")
    args = p.parse_args(argv)
    from replay.calculator import bench_batch

    print(
        f"self-play random     : {selfplay_rate('random', args.hands):9.0f} hands/s  (target ≥ 1,000)"
    )
    print(
        f"self-play heuristic  : {selfplay_rate('heuristic', args.hands // 3):9.0f} hands/s  (target ≥ 300)"
    )
    print(f"score --batch        : {bench_batch(args.scored, 1):9.0f} hands/s  (target ≥ 50,000)")


if __name__ == "__main__":
    main()
