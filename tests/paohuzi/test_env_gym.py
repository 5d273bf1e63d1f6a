"""The Gymnasium environment (paohuzi/env.py, issue 63): Gymnasium's own checker, seeded
episodes of random legal actions played twice alike, and a seed dealing simulate's hand."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from engine.encoding import action_index
from engine.play import play_to_end
from engine.policies import load_policy
from engine.session import RunSeeds
from paohuzi.env import ENV_IDS, PaohuziEnv, deal


@pytest.mark.parametrize("preset", ["hunan", "hunan-4p", "luzhou"])
def test_check_env(preset: str) -> None:
    env = gym.make(ENV_IDS[preset], opponents="random", render_mode="ansi").unwrapped
    check_env(env, skip_render_check=False)


def _episodes(seed: int, n: int, preset: str = "hunan") -> list[tuple]:
    env = PaohuziEnv(preset, opponents="heuristic,random,greedy", seat=1)
    rng = np.random.default_rng(seed)
    out = []
    obs, info = env.reset(seed=seed)
    for _ in range(n):
        total, steps, done = 0.0, 0, False
        while not done:
            mask = env.action_masks()
            assert mask.any() and np.array_equal(mask, info["action_mask"])
            action = int(rng.choice(np.flatnonzero(mask)))
            obs, reward, done, truncated, info = env.step(action)
            assert not truncated and "illegal" not in info
            assert env.observation_space.contains(obs)
            total += reward
            steps += 1
        assert env.state is not None and env.state.outcome is not None
        assert total == env.state.outcome.deltas[1]
        out.append((info["run_seed"], steps, total, tuple(env.state.history)))
        obs, info = env.reset()
    return out


def test_seeded_episodes_are_deterministic() -> None:
    a = _episodes(5, 6)
    assert a == _episodes(5, 6)
    assert a[0][0] == 5 and len({e[0] for e in a}) == 6
    assert _episodes(6, 1) != a[:1]


def test_an_illegal_index_ends_the_hand() -> None:
    env = PaohuziEnv("hunan", opponents="random")
    env.reset(seed=3)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, done, _, info = env.step(bad)
    assert done and reward == -10.0 and info["illegal"] == bad


@pytest.mark.parametrize("seed", range(20))
def test_a_seed_deals_what_simulate_deals(seed: int) -> None:
    """The learner choosing as ``random`` with its seat's stream: the hand ``engine.play``
    plays from hand 0 of run seed ``seed`` (skipped hands aside)."""
    env = PaohuziEnv("hunan", opponents="random", seat=0)
    env.reset(seed=seed)
    assert env.state is not None
    if env.run_seed != seed:
        return  # the learner had no choice in that hand
    _, rngs = deal(env.game, seed)
    me, learner = rngs[0], load_policy("random")
    done = False
    while not done:
        legal = env.state.legal_actions(0)
        code = learner.act(env.state.observation(0), legal, me)
        index = action_index(code, env.state.card)
        assert env.action_masks()[index]
        _, _, done, _, _ = env.step(index)
    fresh, _ = deal(env.game, seed)
    policies = [load_policy("random")] * 3
    ref = play_to_end(env.game, fresh.deck, fresh.dealer, policies, RunSeeds(seed).hand(0))
    assert ref.history == env.state.history


def test_render_shows_the_seats_view() -> None:
    env = PaohuziEnv("hunan", opponents="random", render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert isinstance(text, str) and text
