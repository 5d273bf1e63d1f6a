"""跑胡子 as a Gymnasium environment (issue 63; docs/ENV.md): one learner seat, the other
seats played by any policy spec ``engine.policies.load_policies`` accepts.

>>> import gymnasium as gym
>>> import paohuzi.env  # registers paohuzi/Hunan-v0 and one id per preset
>>> env = gym.make("paohuzi/Hunan-v0", opponents="random")
>>> obs, info = env.reset(seed=7)
>>> obs.shape, int(env.unwrapped.action_masks().sum()) > 1
((897,), True)

Actions and observations are those of :mod:`engine.encoding`. A hand is one episode; the
reward is the learner seat's settlement at its end (0 before). Decisions with a single option
(forced 提/偎/跑, a compulsory 碰) are applied without asking, as ``engine.play`` does, and so
are the other seats' choices; a hand in which the learner never has a choice (another seat's
automatic 天胡; on a 4-player table, the hands it sits out) is played out and skipped.

Seeds: ``reset(seed=S)`` deals what ``paohuzi simulate --seed S`` deals first (deck, dealer
and the other seats' random streams of hand 0 of run seed S); the hands after it (and any
skipped) take run seeds from the environment's generator.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from engine.encoding import (
    ACTION_SIZE,
    OBS_HIGH,
    OBS_SIZE,
    index_action,
    legal_mask,
    observation_vector,
)
from engine.play import seat_seeds
from engine.policies import load_policies
from engine.policy import Policy
from engine.rules import PRESETS, RuleSet, find_rules
from engine.session import RunSeeds
from engine.state import Game, State

#: The registered id of each preset.
ENV_IDS = {
    "hunan": "paohuzi/Hunan-v0",
    "hunan-basic": "paohuzi/HunanBasic-v0",
    "hunan-full": "paohuzi/HunanFull-v0",
    "hunan-4p": "paohuzi/Hunan4p-v0",
    "luzhou": "paohuzi/Luzhou-v0",
}


def rules_of(rules: str | RuleSet) -> RuleSet:
    return find_rules(rules) if isinstance(rules, str) else rules


def deal(game: Game, run_seed: int) -> tuple[State, list[random.Random]]:
    """Hand 0 of ``paohuzi simulate --seed run_seed``: its initial state and each seat's
    policy stream (``engine.session.RunSeeds``, ``engine.play.seat_seeds``)."""
    seeds = RunSeeds(run_seed)
    dealer = seeds.first_dealer(game.rules, 0).dealer
    state = game.new_initial_state(seeds.deck(0), dealer)
    rngs = [random.Random(s) for s in seat_seeds(seeds.hand(0), game.rules.players)]
    return state, rngs


def advance(
    state: State, policies: Sequence[Policy | None], rngs: Sequence[random.Random]
) -> int | None:
    """Play ``state`` on up to the next choice of a seat whose policy is None (returned), or
    to the end of the hand (None): single options are applied, the others' policies asked,
    in ``engine.play``'s order."""
    while state.outcome is None:
        seat = state.current_player()
        assert seat is not None
        legal = state.pending[seat]
        if state.forced or len(legal) == 1:
            state.apply(seat, legal[0])
            continue
        policy = policies[seat]
        if policy is None:
            return seat
        state.apply(seat, policy.act(state.observation(seat), legal, rngs[seat]))
    return None


def render_seat(state: State, seat: int) -> str:
    """The table as ``seat`` sees it, in the text of ``paohuzi replay``."""
    from replay.replayer.render_text import render_view
    from replay.replayer.views import state_view

    return render_view(state_view(state, seat))


class PaohuziEnv(gym.Env[np.ndarray, np.int64]):
    """One learner seat at a table (module docstring). ``rules``: a preset name or a
    :class:`~engine.rules.RuleSet`; ``opponents``: a policy spec for every other seat or a
    comma list of one per seat (the learner's entry is ignored); ``seat``: the learner's
    seat; ``illegal_reward``: the reward of an illegal index, which ends the hand."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        rules: str | RuleSet = "hunan",
        opponents: str = "heuristic",
        seat: int = 0,
        illegal_reward: float = -10.0,
        render_mode: str | None = None,
    ) -> None:
        self.rules = rules_of(rules)
        self.game = Game(self.rules)
        n = self.rules.players
        if not 0 <= seat < n:
            raise ValueError(f"seat {seat} out of range for {n} players")
        self.seat = seat
        self.policies: list[Policy | None] = list(load_policies(opponents, n))
        self.policies[seat] = None
        self.illegal_reward = float(illegal_reward)
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi'")
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(ACTION_SIZE)
        self.state: State | None = None
        self.run_seed: int | None = None
        self._rngs: list[random.Random] = []

    def _info(self, skipped: int = 0) -> dict[str, Any]:
        return {"run_seed": self.run_seed, "skipped": skipped, "action_mask": self.action_masks()}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        run_seed = seed
        skipped = 0
        while True:
            if run_seed is None:
                run_seed = int(self.np_random.integers(0, 2**63))
            self.run_seed = run_seed
            self.state, self._rngs = deal(self.game, run_seed)
            if advance(self.state, self.policies, self._rngs) is not None:
                break
            skipped += 1
            run_seed = None
        return observation_vector(self.state, self.seat), self._info(skipped)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        state = self.state
        if state is None or state.outcome is not None:
            raise RuntimeError("step() before reset() or after the end of the hand")
        index = int(action)
        try:
            code = index_action(index, state.card)
        except ValueError:
            code = -1
        if code not in state.pending.get(self.seat, ()):
            info = self._info()
            info["illegal"] = index
            return observation_vector(state, self.seat), self.illegal_reward, True, False, info
        state.apply(self.seat, code)
        advance(state, self.policies, self._rngs)
        done = state.outcome is not None
        reward = float(state.outcome.deltas[self.seat]) if state.outcome is not None else 0.0
        return observation_vector(state, self.seat), reward, done, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal indices of the learner (sb3-contrib's MaskablePPO reads this)."""
        if self.state is None:
            return np.zeros(ACTION_SIZE, dtype=bool)
        return legal_mask(self.state, self.seat)

    def render(self) -> str | None:  # type: ignore[override]
        if self.render_mode != "ansi" or self.state is None:
            return None
        return render_seat(self.state, self.seat)


def register() -> None:
    """Register :data:`ENV_IDS` with Gymnasium (done on import)."""
    for preset, env_id in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(env_id, entry_point="paohuzi.env:PaohuziEnv", kwargs={"rules": preset})


assert set(ENV_IDS) == set(PRESETS)
register()
