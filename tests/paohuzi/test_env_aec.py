"""The PettingZoo AEC environment (paohuzi/env_aec.py, issue 63): PettingZoo's api_test and
seed_test on 3 and 4 players, zero-sum rewards, an illegal move as the classic games."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from paohuzi.env_aec import env, raw_env


@pytest.mark.parametrize("rules", ["hunan", "hunan-4p", "luzhou"])
def test_api_test(rules: str) -> None:
    api_test(env(rules=rules), num_cycles=400)


@pytest.mark.parametrize("rules", ["hunan", "hunan-4p"])
def test_seed_test(rules: str) -> None:
    seed_test(lambda: env(rules=rules), num_cycles=200)


def _play(rules: str, seed: int) -> dict[str, float]:
    e = env(rules=rules)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return totals


@pytest.mark.parametrize("rules", ["hunan", "hunan-4p"])
def test_rewards_are_zero_sum_settlements(rules: str) -> None:
    for seed in range(5):
        totals = _play(rules, seed)
        assert sum(totals.values()) == 0
        assert totals == _play(rules, seed)


def test_an_illegal_move_ends_the_game_for_the_mover() -> None:
    e = env(rules="hunan")
    e.reset(seed=2)
    mover = e.agent_selection
    mask = e.observe(mover)["action_mask"]
    e.step(int(np.flatnonzero(mask == 0)[0]))  # PettingZoo logs a warning
    assert all(e.terminations.values())
    assert e.rewards[mover] == -1


def test_render_ansi() -> None:
    e = raw_env(rules="hunan", render_mode="ansi")
    e.reset(seed=4)
    assert isinstance(e.render(), str)
