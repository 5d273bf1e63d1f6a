"""The ``search`` policy (issue 21): at a decision with more than one option it plays every
option out from the same determinizations (:func:`engine.search.playouts`) and improves on
its rollout policy (:func:`engine.search.improve`): the rollout policy's own choice, unless
another option beats it by more than 1.96 paired standard errors of the score delta — then
the best such option, ties to the lowest action code (why: docs/SEARCH.md). Where no deal
consistent with what the seat sees turns up in :data:`engine.search.MAX_TRIES` random draws
(a rare position whose hidden cards are so constrained that random deals almost never fit),
it plays the rollout policy's own choice. The compiled
engine plays it the same (engine.fast.search.search_act).

Its spec is ``search@N`` or ``search@N/POLICY``: ``N`` rollouts per option (1 …
:data:`MAX_ROLLOUTS`), each a determinization of what its seat sees played to the end by
``POLICY`` (``random``, ``greedy``, ``heuristic``, the default, or ``learned``), or by a
table of a weighted policy, ``POLICY@WEIGHTS`` (``search@64/learned@hunan``: a shipped set
or a file, recorded in the run's manifest as a seat's own table is). A new run, hand or
comparison under a preset's own rules gives a bare ``search@N`` the rollout policy measured
stronger there (:data:`PRESET_ROLLOUTS`, :func:`with_preset_rollout`) and records it so.
Its random numbers come from the stream the play loop gives its seat (two 64-bit words a
decision: the rollouts' seed, then the key of the rollout policy's own choice), so a run
stays a pure function of its command.

>>> parse_spec("search@64/greedy")
(64, 'greedy')
>>> parse_spec("search@64/Learned@HUNAN")
(64, 'learned@hunan')
>>> rollout_table_spec("search@16/heuristic@tuned-hunan"), rollout_table_spec("search@16")
('heuristic@tuned-hunan', None)
>>> parse_spec("search@0")
Traceback (most recent call last):
...
engine.errors.InvalidNotation: policy 'search@0': the rollouts must be 1 … 4096, not 0
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engine.errors import InvalidNotation, did_you_mean
from engine.search import SearchError, improve, playouts

if TYPE_CHECKING:
    from engine.rules import RuleSet

#: The largest budget (rollouts per option and decision) a spec may ask for.
MAX_ROLLOUTS = 4096
#: The built-in policies a rollout may be played by (every one but ``search``); a table of a
#: weighted policy (``POLICY@WEIGHTS``) may be named as well.
ROLLOUT_POLICIES = ("random", "greedy", "heuristic", "learned")
#: What the rollouts of a bare ``search@N`` play when they are read: a recorded run, a spec
#: given to :func:`load_policy` directly.
DEFAULT_ROLLOUT = "heuristic"
#: The rollout policy a bare ``search@N`` is given when a new run, hand or comparison is set
#: up under a preset's own rules (:func:`with_preset_rollout`): a preset is here only where
#: that policy was measured to make ``search@N`` stronger than :data:`DEFAULT_ROLLOUT` at the
#: same N (docs/SEARCH.md, "The rollout policy").
PRESET_ROLLOUTS = {"hunan": "learned@hunan", "hunan-4p": "learned@hunan-4p"}

_HEAD = re.compile(r"search@([0-9]{1,9})", re.IGNORECASE)


def is_search_spec(spec: str) -> bool:
    """Whether ``spec`` names the search policy (``search`` or ``search@…``)."""
    t = spec.strip().lower()
    return t == "search" or t.startswith("search@")


def parse_spec(spec: str) -> tuple[int, str]:
    """``(rollouts, rollout policy)`` of ``search@N[/POLICY]``, the rollout policy a built-in
    name or the canonical ``POLICY@WEIGHTS`` (:func:`engine.policies.weights.canonical`; its
    file is not read here); :class:`InvalidNotation` with one line for anything else."""
    from engine.policies import weights as W

    text = spec.strip()
    head, slash, rollout = text.partition("/")
    m = _HEAD.fullmatch(head)
    if m is None or (slash and not rollout.strip()):
        raise InvalidNotation(
            f"policy {spec[:60]!r}: write search@N or search@N/POLICY (N rollouts, POLICY one of"
            f" {', '.join(ROLLOUT_POLICIES)}, or POLICY@WEIGHTS)"
        )
    n = int(m.group(1))
    if not 1 <= n <= MAX_ROLLOUTS:
        raise InvalidNotation(f"policy {spec!r}: the rollouts must be 1 … {MAX_ROLLOUTS}, not {n}")
    rollout = rollout.strip() or DEFAULT_ROLLOUT
    if W.is_weighted_spec(rollout):
        try:
            return n, W.canonical(rollout)
        except InvalidNotation as e:
            raise InvalidNotation(f"policy {spec[:60]!r}: the rollout policy: {e}") from None
    if rollout.lower() not in ROLLOUT_POLICIES:
        raise InvalidNotation(
            f"policy {spec[:60]!r}: unknown rollout policy {rollout[:40]!r} (one of"
            f" {', '.join(ROLLOUT_POLICIES)}, or POLICY@WEIGHTS)"
            f"{did_you_mean(rollout, ROLLOUT_POLICIES)}"
        )
    return n, rollout.lower()


def canonical(spec: str) -> str:
    """The spec as a seat's policy is named: ``search@N``, with ``/POLICY`` when one was
    written (its table spec canonical, a path as written)."""
    n, rollout = parse_spec(spec)
    return f"search@{n}/{rollout}" if "/" in spec else f"search@{n}"


def with_preset_rollout(spec: str, rules: RuleSet) -> str:
    """``spec`` as a new run under ``rules`` records it: a bare ``search@N`` becomes
    ``search@N/POLICY`` with the rollout policy of :data:`PRESET_ROLLOUTS` when ``rules`` are
    that preset's own; any other spec, or other rules, as given. Recorded runs name their
    rollouts once and for all, so they play as they were recorded whatever this table says.

    >>> from engine.rules import find_rules
    >>> with_preset_rollout("search@64", find_rules("hunan"))
    'search@64/learned@hunan'
    >>> with_preset_rollout("search@16", find_rules("hunan-4p"))
    'search@16/learned@hunan-4p'
    >>> with_preset_rollout("search@64/heuristic", find_rules("hunan")), with_preset_rollout(
    ...     "search@64", find_rules("luzhou"))
    ('search@64/heuristic', 'search@64')
    >>> with_preset_rollout("search@64", find_rules("hunan").with_overrides(["min_huxi=10"]))
    'search@64'
    """
    if not is_search_spec(spec) or "/" in spec:
        return spec
    n, _ = parse_spec(spec)
    rollout = PRESET_ROLLOUTS.get(rules.preset_name() or "")
    return f"search@{n}/{rollout}" if rollout else spec


def rollout_table_spec(spec: str) -> str | None:
    """The canonical ``POLICY@WEIGHTS`` whose table the rollouts of the search ``spec`` play,
    or None when they play a built-in policy's defaults."""
    from engine.policies import weights as W

    rollout = parse_spec(spec)[1]
    return rollout if W.is_weighted_spec(rollout) else None


class SearchPolicy:
    """Determinized rollouts at every real choice (see the module)."""

    def __init__(self, spec: str, rollout_policy: Any) -> None:
        self.rollouts, self.rollout = parse_spec(spec)
        self.name = canonical(spec)
        self.rollout_policy = rollout_policy

    def act(self, observation: Any, legal_actions: Sequence[int], rng: random.Random) -> int:
        seed, key = rng.getrandbits(64), rng.getrandbits(64)
        options = list(legal_actions)
        own = self.rollout_policy.act(observation, options, random.Random(key))
        seat = observation.seat
        try:
            outcomes = playouts(
                observation._search_state(), seat, self.rollouts, self.rollout_policy, seed, options
            )
        except SearchError:  # no deal fits the seat's view in MAX_TRIES draws: its own choice
            return int(own)
        deltas = [[o.deltas[seat] for o in os] for os in outcomes]
        return improve(options, deltas, options.index(own))
