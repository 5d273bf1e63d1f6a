"""跑胡子 as a PettingZoo AEC environment, in the classic family's conventions (issue 63;
docs/ENV.md): every seat an agent ``player_0`` … ``player_{n-1}`` (3 or 4; on a 4-player
table the sitter never acts and is paid nothing), observations ``{"observation",
"action_mask"}`` of :mod:`engine.encoding`, zero-sum rewards = the settlement at the end of
the hand, an illegal move ends the game with ``-1`` for the mover (``TerminateIllegalWrapper``,
as the classic games), ``render_mode="ansi"``.

>>> e = env(rules="hunan")
>>> e.reset(seed=1)
>>> obs = e.observe(e.agent_selection)
>>> obs["observation"].shape, obs["action_mask"].dtype
((897,), dtype('int8'))
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from engine.encoding import ACTION_SIZE, OBS_HIGH, OBS_SIZE, index_action, legal_mask
from engine.encoding import observation_vector as _vector
from engine.rules import RuleSet
from engine.state import Game, State
from paohuzi.env import advance, deal, render_seat, rules_of


def env(**kwargs: Any) -> AECEnv:
    """The environment with the classic family's wrappers: an illegal move terminates the
    game with ``-1`` for the mover, an action out of range is an error, the order of calls is
    enforced."""
    e: AECEnv = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


class raw_env(AECEnv):  # noqa: N801 - the name PettingZoo's classic games use
    metadata = {"render_modes": ["ansi"], "name": "paohuzi_v0", "is_parallelizable": False}

    def __init__(self, rules: str | RuleSet = "hunan", render_mode: str | None = None) -> None:
        super().__init__()
        self.rules = rules_of(rules)
        self.game = Game(self.rules)
        n = self.rules.players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = self.possible_agents[:]
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32),
                    "action_mask": spaces.Box(0, 1, (ACTION_SIZE,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(ACTION_SIZE) for a in self.possible_agents}
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi'")
        self.render_mode = render_mode
        self.state: State | None = None
        self.run_seed: int | None = None
        self._np_random, _ = seeding.np_random(None)
        self._none: list[None] = [None] * n

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        assert self.state is not None
        seat = self.possible_agents.index(agent)
        mask = np.zeros(ACTION_SIZE, dtype=np.int8)
        if agent == self.agent_selection and self.state.outcome is None:
            mask[legal_mask(self.state, seat)] = 1
        return {"observation": _vector(self.state, seat), "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        run_seed = seed
        while True:
            if run_seed is None:
                run_seed = int(self._np_random.integers(0, 2**63))
            self.run_seed = run_seed
            state, rngs = deal(self.game, run_seed)
            if advance(state, self._none, rngs) is not None:
                break  # a hand that ends before any choice (automatic 天胡) is skipped
            run_seed = None
        self.state = state
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {"run_seed": run_seed} for a in self.agents}
        self.agent_selection = self._agent_to_act()

    def _agent_to_act(self) -> str:
        assert self.state is not None
        seat = self.state.current_player()
        assert seat is not None
        return self.possible_agents[seat]

    def step(self, action: Any) -> None:
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        state = self.state
        assert state is not None
        agent = self.agent_selection
        seat = self.possible_agents.index(agent)
        code = index_action(int(action), state.card)
        state.apply_checked(seat, code)
        advance(state, self._none, [])
        self._cumulative_rewards[agent] = 0.0
        if state.outcome is not None:
            for a, d in zip(self.agents, state.outcome.deltas):
                self.rewards[a] = float(d)
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self.agent_selection = self._agent_to_act()
        self._accumulate_rewards()

    def render(self) -> str | None:  # type: ignore[override]
        if self.render_mode != "ansi" or self.state is None:
            return None
        return render_seat(self.state, self.possible_agents.index(self.agent_selection))

    def close(self) -> None:
        pass
