"""The review of one recorded hand: every real decision of the reviewed seats valued by
determinized rollouts, the option played set against the best, classified.

For each decision (a seat with two or more legal options, not forced) the state before it is
rebuilt (:class:`replay.replayer.hand.Replayer`) and every legal option valued from what that
seat saw (:func:`engine.fast.search.evaluate` or, with ``engine="reference"``,
:func:`engine.search.evaluate`; the same numbers): win chance and mean score delta, each with
a 95 % interval. Then each decision is judged by :func:`engine.judge.judge`: the best
option, the score and win-chance losses, the class (Lichess's thresholds) and the accuracy.

Decision ``k``'s rollouts are seeded ``derive_seed(seed, "review", k)``, so the same seed
gives the same review in either engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.deck import derive_seed
from engine.judge import HandReview, judge
from engine.search import OptionValue
from replay.replayer.hand import HandLog, Replayer

ENGINES = ("auto", "fast", "reference")


def decisions_to_review(
    log: HandLog, seats: Sequence[int], rp: Replayer | None = None
) -> list[int]:
    """The steps at which a reviewed seat chose among two or more options (not forced), read
    from the replayer's decisions (``rp``: one already stepping through ``log``)."""
    rp = Replayer(log) if rp is None else rp
    decisions = (rp.decision(k) for k in range(log.n_steps))
    return [d.step for d in decisions if d.seat in seats and not d.forced and len(d.legal) > 1]


def review_hand(
    log: HandLog,
    seats: Sequence[int],
    rollouts: int,
    rollout_policy: str,
    seed: int,
    engine: str = "auto",
    progress: Callable[[int, int], None] | None = None,
) -> HandReview:
    """The review of ``log`` for ``seats`` (see the module); ``progress(done, total)`` after
    each decision. Raises the search's errors (SearchError, InvalidNotation) as they come."""
    from engine.errors import InvalidNotation

    if engine not in ENGINES:
        raise InvalidNotation(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    evaluate = _evaluator(engine, rollout_policy)
    rp = Replayer(log)  # one pass over the hand: its states are kept
    steps = decisions_to_review(log, seats, rp)
    out = []
    for i, k in enumerate(steps):
        d = rp.decision(k)
        seat, played = d.seat, d.action
        values = tuple(evaluate(rp.state_at(k), seat, rollouts, derive_seed(seed, "review", k)))
        out.append(judge(k, seat, d.phase, played, values))
        if progress is not None:
            progress(i + 1, len(steps))
    name = "reference" if engine == "reference" else "fast"
    return HandReview(log.where, tuple(seats), rollouts, rollout_policy, seed, name, tuple(out))


def _evaluator(engine: str, rollout_policy: str) -> Callable[..., list[OptionValue]]:
    """``evaluate(state, seat, rollouts, seed)`` of the engine asked for."""
    from engine.errors import InvalidNotation
    from engine.policies.search_policy import ROLLOUT_POLICIES

    if rollout_policy not in ROLLOUT_POLICIES:
        raise InvalidNotation(
            f"unknown rollout policy {rollout_policy!r} (one of {', '.join(ROLLOUT_POLICIES)})"
        )
    if engine == "reference":
        from engine.policies import load_policy
        from engine.search import evaluate as ref

        policy = load_policy(rollout_policy)
        return lambda s, seat, n, sd: ref(s, seat, n, policy, sd)
    from engine.fast.search import evaluate as fast

    return lambda s, seat, n, sd: fast(s, seat, n, rollout_policy, sd)
