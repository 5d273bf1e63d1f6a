"""Compile (or load from numba's disk cache) the kernels of the compiled engine, once, in one
process: ``python -m engine.fast.warmup`` (``make test`` runs it, and the batch scorer's
warm-up, before the suite, so test workers only load the cached code). Holds :func:`engine.fast.cache.compile_lock`, so
several processes calling it at once compile once.

>>> seconds = warm_up(say=False)  # doctest: +SKIP
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

from engine.fast.cache import compile_lock, is_cached
from engine.rules import RuleSet, find_rules


@dataclass(frozen=True)
class SessionSpec:
    """The fields of a run that :func:`engine.fast.play.play_sessions` reads (a stand-in for
    replay.record.spec.RunSpec where no run is recorded: the warm-up, tests)."""

    rules: RuleSet
    policies: tuple[str, ...]
    seed: int = 1
    deals: int = 2
    session_length: int = 2
    duplicate: bool = False

    def tables(self) -> dict[str, Any]:
        """No recorded weights: a ``POLICY@WEIGHTS`` seat reads its file or shipped set."""
        return {}


def _entry_points() -> list[Any]:
    from engine.fast import event_counts, facts, hu, learned, play, policies, search, state, verify

    return [play.sessions_kernel, play.play_kernel, state.new_state, state.legal_actions,
            state.apply_checked, hu.hu_eval, hu.hu_auto_tianhu, verify.verify_kernel, verify.replay_prefix,
            verify.expected_outcome, play.event_fields, search.determinize,
            search.evaluate_kernel, event_counts.count_events, facts.facts_kernel,
            learned.features, policies.choose]  # fmt: skip


def warm_facts() -> None:
    """Replay one played hand for its facts (engine.fast.facts.facts_kernel: ``paohuzi index``
    and the reference engine's shards), with int64 columns as replay.derived.facts passes."""
    import numpy as np

    from engine.deck import shuffle_deck
    from engine.fast import facts, play
    from engine.fast.rule_arrays import rule_arrays

    rules = find_rules("hunan")
    decks = np.array([shuffle_deck(1)], dtype=np.uint8)
    ev, _ = play.play_batch(rules, decks, [0], [1], ["random"] * 3)
    col = {k: np.ascontiguousarray(v, dtype=np.int64) for k, v in ev.items()}
    n = len(col["seq"])
    rp, hp = rule_arrays(rules)
    facts.facts_kernel(
        rp, hp, facts.facts_scratch(rules), decks.astype(np.int64), np.zeros(1, np.int64),
        np.zeros(1, np.int64), np.full(1, n, np.int64), col["seat"], col["action"], col["kind"],
        col["options"], col["forced"], np.zeros((1, facts.ROW_SIZE), np.int64),
    )  # fmt: skip


def warm_event_counts() -> None:
    """Count one hand with one event (engine.fast.event_counts: the event summaries of every
    shard), with the column types of the events table (uint8; its hand ids uint32) and of
    the summaries' hand arrays (int64)."""
    import numpy as np

    from engine.fast.event_counts import counts

    z, u8 = np.zeros(1, np.int64), np.zeros(1, np.uint8)
    events = (np.zeros(1, np.uint32), u8, u8, u8, u8, u8)
    counts(z, z, z, np.array([0, 1]), z, z, z - 1, z, z, np.zeros((4, 1), np.int64), events,
           np.zeros((1, 1, 1), np.int64), np.ones((1, 1), np.int64), 1, 8, (1, 2, 7), 0,
           (4, 6), True)  # fmt: skip


def warm_verify() -> None:
    """Call the verifier's kernels once (engine.fast.verify; replay.replayer.verify's fast
    path, and its one-by-one re-check on engine.fast.state)."""
    import numpy as np

    from engine.deck import shuffle_deck
    from engine.fast import state, verify
    from engine.fast.play import event_fields
    from engine.fast.rule_arrays import rule_arrays

    rules = find_rules("hunan")
    rp, hp = rule_arrays(rules)
    deck = np.array([shuffle_deck(1)], dtype=np.int64)
    z = np.zeros(1, dtype=np.int64)
    verify.run_kernel(rules, deck, z, z, z, z, z, np.zeros((6, 1), np.int64), np.zeros((1, 17)))
    st = np.zeros(state.STATE_SIZE, dtype=np.int32)
    verify.replay_prefix(rp, hp, deck[0], 0, z[:0], z[:0], st)
    event_fields(st, 0, int(st[state.PEND_A]))
    verify.expected_outcome(st, 3, 0, np.zeros(16, np.int64), np.zeros(17, np.int64))
    state.apply_checked(rp, hp, st, 0, int(st[state.PEND_A]))
    # the determinization of engine.fast.search, from the dealer's first decision
    from engine.fast import pyrandom, search

    verify.replay_prefix(rp, hp, deck[0], 0, z[:0], z[:0], st)
    out = np.zeros(state.STATE_SIZE, dtype=np.int32)
    search.determinize(rp, hp, st, 0, pyrandom.new_generator(1), out, 5)


def warm_hu() -> None:
    """Evaluate one hand and one dealt hand through the hand evaluator's Python entry points
    (engine.fast.hu.evaluate, reading and hu_auto_tianhu: their int64 arguments are other
    specializations than the play kernels' state arrays, each some seconds to compile)."""
    import numpy as np

    from engine.fast import hu

    params = hu.rule_params(find_rules("hunan"))
    counts = np.zeros(20, dtype=np.int64)
    counts[:3] = 1
    hu.evaluate(params, (), counts.tolist(), 3, 0)
    hu.reading(hu.reading_params(find_rules("hunan")), (), counts.tolist(), 3, 0)
    hu.hu_auto_tianhu(params, counts, np.zeros(hu.OUT_SIZE, dtype=np.int64))


def warm_search() -> None:
    """Value the options of a first discard once (engine.fast.search.evaluate's kernel; the
    search policy inside the play loop compiles with sessions_kernel)."""
    from engine.deck import shuffle_deck
    from engine.fast import search
    from engine.state import Game

    s = Game(find_rules("hunan")).new_initial_state(shuffle_deck(1), 0)
    seat = s.current_player()
    assert seat is not None
    search.evaluate(s, seat, 1, "random", 1)


def warm_learned() -> None:
    """What ``paohuzi distill``'s teacher data calls from Python (replay.distill.teacher): the
    learned policy's features and choice, and the search's rollouts by the learned policy."""
    import numpy as np

    from engine.deck import shuffle_deck
    from engine.fast import learned, policies, search
    from engine.fast.features import weights_array
    from engine.fast.pyrandom import new_generator
    from engine.fast.rule_arrays import rule_arrays
    from engine.fast.state import MAXA, PEND_A, PEND_N, STATE_SIZE, current_player, new_state

    rp, hp = rule_arrays(find_rules("hunan"))
    st = np.zeros(STATE_SIZE, dtype=np.int32)
    new_state(rp, hp, np.array(shuffle_deck(1), dtype=np.int64), 0, st)
    seat = current_player(st)
    w = weights_array()
    out = np.zeros((MAXA, learned.N_FEATURES), dtype=np.float64)
    learned.features(rp, w, st, seat, out)
    policies.choose(policies.LEARNED, rp, hp, w, st, seat, new_generator(1))
    n = int(st[PEND_N + seat])
    legal = st[PEND_A + seat * MAXA : PEND_A + seat * MAXA + n].astype(np.int64)
    res = np.zeros((n, 1, 4), dtype=np.int64)
    search.evaluate_kernel(rp, hp, w, st, seat, 1, policies.LEARNED, np.uint64(1), legal, res)


def warm_up(say: bool = True) -> float:
    """Call every entry point once; the seconds it took. Says on stderr when the kernels are
    not cached yet (a first run on this machine, or after an edit of engine/fast)."""
    start = time.perf_counter()
    with compile_lock(_entry_points()):
        from engine.fast import play
        from engine.fast.policies import POLICY_CODES

        if say and not is_cached(_entry_points()):
            print(
                "compiling the fast engine (once; a few minutes on a slow machine, then"
                " loaded from the cache)…",
                file=sys.stderr,
                flush=True,
            )
        rules = find_rules("hunan")
        for name in [*sorted(POLICY_CODES), "heuristic@default"]:
            play.play_sessions(SessionSpec(rules, (name,) * rules.players), range(0, 1))
            play.play_sessions(SessionSpec(rules, (name,) * 3, duplicate=True), range(0, 1))
        import numpy as np

        from engine.deck import shuffle_deck

        decks = np.array([shuffle_deck(1)], dtype=np.uint8)
        play.play_batch(rules, decks, [0], [1], ["random"] * 3)
        warm_verify()
        warm_search()
        warm_learned()
        warm_event_counts()
        warm_facts()
        warm_hu()
    return time.perf_counter() - start


def main() -> None:
    seconds = warm_up()
    print(f"fast engine ready ({seconds:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
