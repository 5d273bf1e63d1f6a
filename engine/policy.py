"""The one interface every policy (bot) meets: ``act(observation, legal_actions, rng) ->
action``. Its own module, below :mod:`engine.policies` (which builds policies by name) and
:mod:`engine.search` (which plays them out), so that neither imports the other for it.

A policy sees only its own seat's :class:`~engine.observation.Observation`, the sorted legal
action codes, and a ``random.Random`` owned by the play loop (so play is reproducible)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from engine.observation import Observation


@runtime_checkable
class Policy(Protocol):
    name: str

    def act(
        self, observation: Observation, legal_actions: Sequence[int], rng: random.Random
    ) -> int:
        """Choose one of ``legal_actions``."""
        ...
