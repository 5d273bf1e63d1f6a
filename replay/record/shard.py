"""The shard player: :func:`play_shard` plays one shard of a run with the reference engine
(:func:`play_sessions`, hand by hand through the recorder) or the compiled one
(:mod:`replay.record.fast_engine`), derives its summary and facts, and writes its files
through the store's writer (:func:`replay.store.write.write_shard`); the same function runs
inline, in a pool worker and in a Ray task (STYLE §21), so every backend writes the same
bytes, and the run's writer lists the entry it returns."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.policies import load_policies
from engine.session import DealerState, next_dealer
from replay.derived.shard_derived import simulated_derived
from replay.derived.summaries import spec_manifest
from replay.record.recorder import ShardRecorder
from replay.record.spec import RunError, RunSpec
from replay.store.write.shard import ShardTables, write_shard

__all__ = ["play_sessions", "play_shard"]


def play_sessions(
    spec: RunSpec, sessions: range, rec: ShardRecorder, progress: Callable[[int], None] | None
) -> None:
    """Play and record the given sessions (hands in id order) with the reference engine.

    Each session gets fresh policy objects, so a policy that keeps state between hands still
    gives results that depend on the session alone, not on which worker played what before.
    """
    rotations = spec.rotations
    seeds = spec.seeds
    seat_names = [spec.seat_policies(r) for r in range(rotations)]
    for session in sessions:
        tables = spec.tables()  # the run's recorded weights, never its files again
        by_rotation = [load_policies(list(names), spec.n_seats, tables) for names in seat_names]
        ds: DealerState = seeds.first_dealer(spec.rules, session)
        deals = spec.session_deals(session)
        for k, deal_id in enumerate(deals):
            deck = seeds.deck(deal_id)
            board_winner = None
            for r in range(rotations):
                hand_id = deal_id * rotations + r
                policies, names = by_rotation[r], seat_names[r]
                try:
                    winner = rec.play_hand(
                        deck, ds.dealer, policies, names, seeds.hand(hand_id),
                        hand_id=hand_id, session=session, session_hand=k, rotation=r,
                        deal_id=deal_id, huang_streak=ds.huang_streak,
                    )  # fmt: skip
                except Exception as e:
                    raise RunError(
                        f"hand {hand_id} (session {session}, deal {deal_id}, rotation {r})"
                        f" failed: {type(e).__name__}: {e}"
                    ) from e
                if r == 0:
                    board_winner = winner
            ds = next_dealer(spec.rules, ds, board_winner)
        if progress is not None:
            progress(len(deals) * rotations)


def play_shard(
    spec: RunSpec,
    index: int,
    run_path: Path,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Play shard ``index`` with ``spec.engine`` and write its files (its two tables, its
    summary and facts; :func:`~replay.store.write.shard.write_shard`); its manifest entry
    (which names the engine that wrote it), for the run's writer to list."""
    sessions = spec.shard_sessions(index)
    hr = spec.shard_hands_range(index)
    if spec.engine == "fast":
        from replay.record.fast_engine import play_shard_tables

        hands, events, facts = play_shard_tables(spec, sessions)
        if progress is not None:
            progress(len(hr))
    else:
        rec = ShardRecorder(spec.rules)
        play_sessions(spec, sessions, rec, progress)
        hands, events = rec.tables()
        facts = None  # derived by replay
    assert hands.num_rows == len(hr), (hands.num_rows, hr)
    derived = simulated_derived(hands, events, spec_manifest(spec), spec.rules, facts)
    shard = ShardTables(
        index, hr.start, hands, events, derived=derived,
        first_session=sessions.start, sessions=len(sessions), engine=spec.engine,
    )  # fmt: skip
    return write_shard(run_path, shard)
