"""The play loop: one hand from a deck with a policy per seat.

>>> from engine.deck import shuffle_deck
>>> from engine.policies import load_policy
>>> from engine.state import Game
>>> game = Game()
>>> policies = [load_policy("random")] * 3
>>> steps = list(play_hand(game, shuffle_deck(7), 0, policies, seed=7))
>>> steps[-1].state.is_terminal()
True
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from engine.actions import action_str
from engine.deck import derive_seeds
from engine.policy import Policy
from engine.state import Game, State


@dataclass(frozen=True, slots=True)
class Step:
    """One applied action: who, what, whether it was forced, and how many options there were.
    ``state`` is the live state after the action (not a copy)."""

    seat: int
    action: int
    forced: bool
    n_legal: int
    state: State

    def __str__(self) -> str:
        """The step in card notation: ``seat 0: 打 一``, ``seat 1: 提 八 (forced)``."""
        return f"seat {self.seat}: {action_str(self.action)}{' (forced)' if self.forced else ''}"

    def __repr__(self) -> str:
        """The step with its action in card notation, not the live state's (long) repr:
        ``Step(seat=0, action=10 '打 一', forced=False, n_legal=15)``."""
        return (
            f"Step(seat={self.seat}, action={self.action} {action_str(self.action)!r},"
            f" forced={self.forced}, n_legal={self.n_legal})"
        )


def play_hand(
    game: Game,
    deck: Sequence[int],
    dealer: int,
    policies: Sequence[Policy],
    seed: int,
) -> Iterator[Step]:
    """Play a hand to the end, yielding every action taken; the last step's state holds the
    outcome. Forced actions are applied without asking the policy. Each seat's policy gets its
    own RNG derived from ``seed`` and the seat, so a hand is a pure function of its inputs."""
    yield from _play(game.new_initial_state(deck, dealer), policies, seed)


def seat_seeds(seed: int, n_seats: int) -> list[int]:
    """The RNG seed of each seat's policy in a hand played with ``seed`` (the fast engine
    seeds its generators with the same)."""
    return derive_seeds(seed, "policy", range(n_seats))


def play_state(state: State, policies: Sequence[Policy], seed: int) -> Iterator[Step]:
    """:func:`play_hand` from ``state`` (a new hand's initial state, which the caller keeps:
    ``paohuzi play`` shows it to the person at each of their decisions)."""
    return _play(state, policies, seed)


def _play(state: State, policies: Sequence[Policy], seed: int) -> Iterator[Step]:
    rngs = [random.Random(s) for s in seat_seeds(seed, len(policies))]
    while state.outcome is None:
        forced = state.forced
        for seat in state.deciders():
            legal = state.pending[seat]
            if forced or len(legal) == 1:
                action = legal[0]
            else:
                action = policies[seat].act(state.observation(seat), legal, rngs[seat])
            state.apply(seat, action)
            yield Step(seat, action, forced, len(legal), state)
            if state.outcome is not None or state.declared == {}:
                break


def play_to_end(
    game: Game, deck: Sequence[int], dealer: int, policies: Sequence[Policy], seed: int
) -> State:
    """Play a hand and return its final state."""
    state = game.new_initial_state(deck, dealer)
    for _ in _play(state, policies, seed):
        pass
    return state
