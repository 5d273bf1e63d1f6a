"""The speed of search (issue 21), beside the engine-only self-play of the same run.

    python -m bench.search [--states 40] [--rollouts 64] [--hands 60] [--review-hands 1000]
    (also in ``make bench``)

Prints, per core (CPU time, one process):

* rollouts/s of the compiled option values (:func:`engine.fast.search.evaluate_kernel`, one
  compiled call per decision) from mid-hand states — random-policy hands stopped 20 actions
  in at a real choice — with the ``random`` and the ``heuristic`` rollout policy; a rollout
  is one option played out to the end from one determinization (the determinizations' cost
  included), so a decision of ``k`` options at budget ``N`` is ``k·N`` rollouts;
* the same for the reference (:func:`engine.search.evaluate`) on a few states;
* the compiled full-hand self-play rate of ``random`` and ``heuristic`` (the ratio the issue
  asks: rollouts/s with heuristic rollouts ≥ the heuristic's self-play hands/s);
* a ``search@16`` and a ``search@64`` seat against two ``heuristic`` seats, with heuristic
  rollouts and with ``learned@hunan``'s (what a bare ``search@N`` plays in a new hunan run):
  hands/s and the search seat's decisions/s (its choices among two or more options);
* ``paohuzi review`` of one recorded hand of about 30 decisions at 256 rollouts per option;
* ``paohuzi review RUN --hands …`` of 1,000 recorded hands on 2 workers at 64 rollouts per
  option: wall time, hands/s and decisions/s (``--review-hands``).
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from bench.engine import bench_fast, inputs
from engine.deck import derive_seed, shuffle_deck
from engine.rules import find_rules
from engine.state import Game, State


def mid_states(n: int, steps: int = 20, preset: str = "hunan") -> list[State]:
    """``n`` states of random-policy hands about ``steps`` actions in, each at a decision of
    two or more options (hands that end first are skipped)."""
    rules = find_rules(preset)
    game = Game(rules)
    out: list[State] = []
    i = 0
    while len(out) < n:
        seed = derive_seed(1, "bench-search", i)
        s = game.new_initial_state(shuffle_deck(seed), i % rules.players)
        rng = random.Random(seed)
        for step in range(400):
            seat = s.current_player()
            if seat is None:
                break
            legal = s.legal_actions(seat)
            if step >= steps and len(legal) > 1:
                out.append(s)
                break
            s.apply(seat, legal[rng.randrange(len(legal))])
        i += 1
    return out


def compiled_rollout_rate(states: list[State], rollouts: int, policy: str) -> float:
    """Rollouts per CPU second of the compiled option values over ``states``."""
    from engine.fast import search as F
    from engine.fast.features import weights_array
    from engine.fast.policies import POLICY_CODES

    code = POLICY_CODES[policy]
    w = weights_array()
    prepared = []
    for s in states:
        rp, hp, st = F.flat_state(s)
        seat = s.current_player()
        acts = np.array(s.legal_actions(seat), dtype=np.int64)
        prepared.append((rp, hp, st, seat, acts, np.zeros((len(acts), rollouts, 4), np.int64)))
    rp, hp, st, seat, acts, res = prepared[0]
    F.evaluate_kernel(rp, hp, w, st, seat, 1, code, np.uint64(1), acts, res)  # load / compile
    done = 0
    t = time.process_time()
    for i, (rp, hp, st, seat, acts, res) in enumerate(prepared):
        F.evaluate_kernel(rp, hp, w, st, seat, rollouts, code, np.uint64(i), acts, res)
        done += len(acts) * rollouts
    return done / (time.process_time() - t)


def reference_rollout_rate(states: list[State], rollouts: int, policy: str) -> float:
    """Rollouts per CPU second of :func:`engine.search.evaluate` over ``states``."""
    from engine.policies import load_policy
    from engine.search import evaluate

    pol = load_policy(policy)
    done = 0
    t = time.process_time()
    for i, s in enumerate(states):
        seat = s.current_player()
        assert seat is not None
        done += len(evaluate(s, seat, rollouts, pol, i)) * rollouts
    return done / (time.process_time() - t)


def search_seat_rate(spec: str, hands: int) -> tuple[float, float, float]:
    """(hands/s, the search seat's decisions/s, its decisions per hand) of ``spec`` in seat 0
    against two ``heuristic`` seats, compiled, per CPU second."""
    from engine.fast.play import play_batch

    rules = find_rules("hunan")
    decks, dealers, seeds = inputs(rules, hands)
    pols = [spec, "heuristic", "heuristic"]
    play_batch(rules, decks[:1], dealers[:1], seeds[:1], pols)  # load / compile
    t = time.process_time()
    ev, _ = play_batch(rules, decks, dealers, seeds, pols)
    cpu = time.process_time() - t
    decisions = int(((ev["seat"] == 0) & (ev["forced"] == 0) & (ev["n_legal"] > 1)).sum())
    return hands / cpu, decisions / cpu, decisions / hands


def review_time(rollouts: int = 256) -> tuple[float, int]:
    """(CPU seconds, decisions) of reviewing every seat of one recorded heuristic hunan hand
    of about 30 real decisions (replay.review.hand.review_hand, compiled rollouts)."""
    from engine.play import play_to_end
    from engine.policies import load_policies
    from replay.replayer.hand import HandLog
    from replay.review.hand import decisions_to_review, review_hand

    rules = find_rules("hunan")
    game = Game(rules)
    best: tuple[int, HandLog] | None = None
    for i in range(40):  # the hand whose number of decisions is nearest 30
        seed = derive_seed(1, "bench-review", i)
        end = play_to_end(game, shuffle_deck(seed), 0, load_policies("heuristic", 3), seed)
        log = HandLog.from_history(rules, end.deck, end.dealer, end.history, run="b", hand_id=i)
        n = len(decisions_to_review(log, [0, 1, 2]))
        if best is None or abs(n - 30) < abs(best[0] - 30):
            best = (n, log)
    assert best is not None
    review_hand(best[1], [0], 1, "heuristic", 0)  # load / compile
    t = time.process_time()
    review_hand(best[1], [0, 1, 2], rollouts, "heuristic", 0)
    return time.process_time() - t, best[0]


def review_many_rate(hands: int, rollouts: int = 64, workers: int = 2) -> tuple[float, int]:
    """(wall seconds, decisions) of ``paohuzi review RUN --hands 0-(hands − 1)`` — every
    seat, ``rollouts`` per option, heuristic rollouts — on ``workers`` processes, over a
    recorded heuristic hunan run of ``hands`` hands in a temporary store (nothing stored:
    the review is computed, as a first review is)."""
    import tempfile
    from pathlib import Path

    from click.testing import CliRunner

    from paohuzi.cli.main import main as cli
    from replay.review.many import review_hands

    with tempfile.TemporaryDirectory(prefix="bench-review-") as tmp:
        data = Path(tmp)
        r = CliRunner().invoke(cli, ["simulate", "--data", str(data), "--run", "r", "-n",
                                     str(hands), "-q", "-p", "heuristic", "--seed", "5"])  # fmt: skip
        assert r.exit_code == 0, r.output
        t = time.perf_counter()
        got = review_hands(data, "r", list(range(hands)), [0, 1, 2], rollouts, "heuristic", 0,
                           "fast", workers)  # fmt: skip
        wall = time.perf_counter() - t
    return wall, sum(len(rv.decisions) for _, rv, _ in got)


def figures(
    n_states: int, rollouts: int, hands: int, self_play_hands: int, review_hands: int = 1000
) -> dict[str, float]:
    """Print the search figures (see the module) and return them."""
    rules = find_rules("hunan")
    states = mid_states(n_states)
    out: dict[str, float] = {}
    print("# search (issue 21), per core (CPU time); self-play rates of this run beside them")
    for policy in ("random", "heuristic"):
        selfplay = bench_fast(rules, self_play_hands, policy)["hands_per_cpu_s"]
        fast = compiled_rollout_rate(states, rollouts, policy)
        ref = reference_rollout_rate(states[:3], 4, policy)
        out[f"rollouts_{policy}"], out[f"selfplay_{policy}"] = fast, selfplay
        print(
            f"rollouts, {policy:<9}: fast {fast:9,.0f}/s  reference {ref:7,.0f}/s  {fast / ref:5.0f}×;"
            f" {policy} self-play {selfplay:,.0f} hands/s: rollouts/s ÷ self-play"
            f" {fast / selfplay:.2f} ({n_states} states 20 actions in, N = {rollouts})"
        )
    for spec in (f"search@{n}/{r}" for n in (16, 64) for r in ("heuristic", "learned@hunan")):
        n = hands if spec.startswith("search@16/") else max(1, hands // 4)
        hps, dps, per = search_seat_rate(spec, n)
        out[f"{spec}_hands"], out[f"{spec}_decisions"] = hps, dps
        print(
            f"{spec:<23} + 2 heuristic: {hps:7.1f} hands/s, the search seat {dps:7.1f}"
            f" decisions/s ({per:.1f} per hand; {n} hands; target for search@16 ≥ 5 hands/s)"
        )
    seconds, decisions = review_time(256)
    out["review_s"] = seconds
    print(
        f"review of a hand      : {seconds:.1f} s for its {decisions} decisions, every seat,"
        " 256 rollouts per option, heuristic rollouts (target ≤ 10 s for 30 decisions)"
    )
    if review_hands:
        wall, n = review_many_rate(review_hands)
        out["review_many_s"] = wall
        print(
            f"review of {review_hands:,} hands: {wall:.0f} s wall on 2 workers,"
            f" {review_hands / wall:.2f} hands/s, {n / wall:.1f} decisions/s ({n:,} decisions,"
            " every seat, 64 rollouts per option, heuristic rollouts)"
        )
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    p = argparse.ArgumentParser(prog="python -m bench.search", description=__doc__)
    p.add_argument("--states", type=int, default=40, help="mid-hand states to value")
    p.add_argument("--rollouts", type=int, default=64, help="rollouts per option and state")
    p.add_argument("--hands", type=int, default=60, help="hands of the search@16 seat")
    p.add_argument("--self-play", type=int, default=20_000, help="hands per self-play figure")
    p.add_argument("--review-hands", type=int, default=1000,
                   help="hands of the many-hands review on 2 workers (0: skip)")  # fmt: skip
    a = p.parse_args(argv)
    return figures(a.states, a.rollouts, a.hands, a.self_play, a.review_hands)


if __name__ == "__main__":
    main()
