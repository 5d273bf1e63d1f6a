"""The ``search`` policy (issue 21): at a decision with more than one option it plays every
option out from the same determinizations (:func:`engine.search.playouts`) and improves on
its rollout policy (:func:`engine.search.improve`): the rollout policy's own choice, unless
another option beats it by more than 1.96 paired standard errors of the score delta — then
the best such option, ties to the lowest action code (why: docs/SEARCH.md). The compiled
engine plays it the same (engine.fast.search.search_act).

Its spec is ``search@N`` or ``search@N/POLICY``: ``N`` rollouts per option (1 …
:data:`MAX_ROLLOUTS`), each a determinization of what its seat sees played to the end by
``POLICY`` (``random``, ``greedy`` or ``heuristic``, the default). Its random numbers come
from the stream the play loop gives its seat (two 64-bit words a decision: the rollouts'
seed, then the key of the rollout policy's own choice), so a run stays a pure function of its
command.

>>> parse_spec("search@64/greedy")
(64, 'greedy')
>>> parse_spec("search@0")
Traceback (most recent call last):
...
engine.errors.InvalidNotation: policy 'search@0': the rollouts must be 1 … 4096, not 0
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from engine.errors import InvalidNotation
from engine.search import improve, playouts

#: The largest budget (rollouts per option and decision) a spec may ask for.
MAX_ROLLOUTS = 4096
#: What a rollout may be played by (every built-in but ``search``).
ROLLOUT_POLICIES = ("random", "greedy", "heuristic")
DEFAULT_ROLLOUT = "heuristic"

_SPEC = re.compile(r"search@([0-9]{1,9})(?:/([a-z_]{1,40}))?")


def is_search_spec(spec: str) -> bool:
    """Whether ``spec`` names the search policy (``search`` or ``search@…``)."""
    t = spec.strip().lower()
    return t == "search" or t.startswith("search@")


def parse_spec(spec: str) -> tuple[int, str]:
    """``(rollouts, rollout policy)`` of ``search@N[/POLICY]``; :class:`InvalidNotation` with
    one line for anything else."""
    text = spec.strip().lower()
    m = _SPEC.fullmatch(text)
    if m is None:
        raise InvalidNotation(
            f"policy {spec[:60]!r}: write search@N or search@N/POLICY (N rollouts, POLICY one of"
            f" {', '.join(ROLLOUT_POLICIES)})"
        )
    n, rollout = int(m.group(1)), m.group(2) or DEFAULT_ROLLOUT
    if not 1 <= n <= MAX_ROLLOUTS:
        raise InvalidNotation(f"policy {spec!r}: the rollouts must be 1 … {MAX_ROLLOUTS}, not {n}")
    if rollout not in ROLLOUT_POLICIES:
        raise InvalidNotation(
            f"policy {spec!r}: unknown rollout policy {rollout!r} (one of"
            f" {', '.join(ROLLOUT_POLICIES)})"
        )
    return n, rollout


class SearchPolicy:
    """Determinized rollouts at every real choice (see the module)."""

    def __init__(self, spec: str, rollout_policy: Any) -> None:
        self.rollouts, self.rollout = parse_spec(spec)
        self.name = spec.strip().lower()
        self.rollout_policy = rollout_policy

    def act(self, observation: Any, legal_actions: Sequence[int], rng: random.Random) -> int:
        seed, key = rng.getrandbits(64), rng.getrandbits(64)
        options = list(legal_actions)
        own = self.rollout_policy.act(observation, options, random.Random(key))
        seat = observation.seat
        outcomes = playouts(
            observation._search_state(), seat, self.rollouts, self.rollout_policy, seed, options
        )
        deltas = [[o.deltas[seat] for o in os] for os in outcomes]
        return improve(options, deltas, options.index(own))
