"""``random``: uniform over the legal actions, declines included."""

from __future__ import annotations

import random
from collections.abc import Sequence

from engine.observation import Observation


class RandomPolicy:
    name = "random"

    def act(
        self, observation: Observation, legal_actions: Sequence[int], rng: random.Random
    ) -> int:
        return legal_actions[rng.randrange(len(legal_actions))]
