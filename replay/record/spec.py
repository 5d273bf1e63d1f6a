"""The run spec: what a run plays (rules, policies, seed, deals) and its layout in sessions,
rotations and shards; its seeds (``engine.session.RunSeeds``) and its identity.

**Work layout.** A run plays ``deals`` deals in sessions of ``session_length`` consecutive
deals at one table (the last session may be shorter). Session ``i`` holds deals
``i·L … i·L+L−1``. With ``duplicate`` every deal is played once per rotation of the policies
over the seats (``rotations`` = seats), otherwise once. Hand ids follow play order:
``hand_id = deal_id · rotations + rotation``. A shard is ``sessions_per_shard`` consecutive
sessions (``shard_hands // (L · rotations)``, at least 1); it is the unit of work of a worker
and the unit of resume. The layout depends on the arguments only, never on ``--workers``.

**Seeds, method version 1** (``engine.session.SEED_METHOD_VERSION``): :attr:`RunSpec.seeds`,
an ``engine.session.RunSeeds`` (SHA-256 sub-streams of the run seed: the session seeds and
first dealers, the deck of each deal, the policy seed of each hand). Both engines take them
from there, and nothing else derives a seed of a run.

**Dealers.** Within a session the dealer follows RULES §2/§12 (``engine.session``). With
``duplicate`` a deal is a *board*: all its rotations are dealt the same deck by the same
dealer, and the dealer sequence follows the outcomes of rotation 0.

**Rotations.** In rotation ``r`` seat ``s`` is played by ``policies[(s − r) mod seats]``, so
policy ``p`` sits at seat ``(p + r) mod seats``.

**Weights.** A ``greedy@WEIGHTS`` / ``heuristic@WEIGHTS`` policy plays the table in
:attr:`RunSpec.weights` (canonical spec → table), read once when the spec is made
(:func:`resolve_tables`) and recorded in the manifest (``params.weights``); shards, workers
and a resumed run play that table and never read the file again.

>>> spec = RunSpec(rules=find_rules("hunan"), policies=("random",) * 3, seed=1, deals=20,
...                session_length=8, duplicate=True, shard_hands=48)
>>> spec.rotations, spec.n_sessions, spec.sessions_per_shard, spec.n_shards, spec.hands_total
(3, 3, 2, 2, 60)
>>> spec.seat_policies(1)
('random', 'random', 'random')
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.deck import SHUFFLE_VERSION
from engine.errors import PaohuziError
from engine.policies import table_spec
from engine.policies import weights as W
from engine.rules import RuleSet, find_rules
from engine.session import SEED_METHOD, RunSeeds
from replay import schema

DEFAULT_SESSION_LENGTH = 8
DEFAULT_SHARD_HANDS = 4096
DEFAULT_POLICIES = "random"

__all__ = [
    "DEFAULT_POLICIES",
    "DEFAULT_SESSION_LENGTH",
    "DEFAULT_SHARD_HANDS",
    "RunError",
    "RunSpec",
    "find_rules",
    "resolve_tables",
]


class RunError(PaohuziError):
    """A run that stopped before the end (a worker died, a hand failed); the store is intact."""


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's content and its shard layout."""

    rules: RuleSet
    policies: tuple[str, ...]
    seed: int
    deals: int
    session_length: int = DEFAULT_SESSION_LENGTH
    duplicate: bool = False
    shard_hands: int = DEFAULT_SHARD_HANDS
    #: ``reference`` (engine/, the Python engine) or ``fast`` (engine/fast/, compiled). Not
    #: part of the identity: both write the same rows, so a run may be resumed with either.
    engine: str = "reference"
    #: The table of every weighted policy: ``(canonical spec, table)`` sorted by spec; one
    #: missing is read from its file or shipped set when the spec is made. Recorded in the
    #: manifest (``params.weights``) and checked on resume, outside the identity (so a run's
    #: name does not depend on a file that may be gone when it is resumed).
    weights: tuple[tuple[str, W.PolicyWeights], ...] = ()

    def __post_init__(self) -> None:
        if self.deals < 1 or self.session_length < 1 or self.shard_hands < 1:
            raise PaohuziError("hands, session length and shard size must be at least 1")
        if self.hands_total > 2**32 - 1:
            raise PaohuziError(f"{self.hands_total:,} hands is more than a run holds (2³² − 1)")
        if self.session_length > 65535:
            raise PaohuziError(f"session length {self.session_length} is above 65535")
        tables = resolve_tables(self.policies, dict(self.weights))
        if tables != self.weights:
            object.__setattr__(self, "weights", tables)

    def tables(self) -> dict[str, W.PolicyWeights]:
        """The weighted policies' tables by canonical spec."""
        return dict(self.weights)

    def weights_manifest(self) -> dict[str, dict[str, float]]:
        """The manifest's ``params.weights``: every weighted spec's parameters by name."""
        return {key: table.as_dict() for key, table in self.weights}

    @property
    def seeds(self) -> RunSeeds:
        return RunSeeds(self.seed)

    @property
    def n_seats(self) -> int:
        return self.rules.players

    @property
    def rotations(self) -> int:
        return self.n_seats if self.duplicate else 1

    @property
    def hands_total(self) -> int:
        return self.deals * self.rotations

    @property
    def n_sessions(self) -> int:
        return -(-self.deals // self.session_length)

    @property
    def sessions_per_shard(self) -> int:
        return max(1, self.shard_hands // (self.session_length * self.rotations))

    @property
    def n_shards(self) -> int:
        return -(-self.n_sessions // self.sessions_per_shard)

    def shard_sessions(self, index: int) -> range:
        lo = index * self.sessions_per_shard
        return range(lo, min(lo + self.sessions_per_shard, self.n_sessions))

    def session_deals(self, session: int) -> range:
        lo = session * self.session_length
        return range(lo, min(lo + self.session_length, self.deals))

    def shard_hands_range(self, index: int) -> range:
        s = self.shard_sessions(index)
        first = self.session_deals(s.start).start
        last = self.session_deals(s.stop - 1).stop
        return range(first * self.rotations, last * self.rotations)

    def seat_policies(self, rotation: int) -> tuple[str, ...]:
        n = self.n_seats
        return tuple(self.policies[(s - rotation) % n] for s in range(n))

    def identity(self) -> dict[str, Any]:
        """What a resumed run must match (content and layout)."""
        return {
            "schema_version": schema.SCHEMA_VERSION,
            "seed_method_version": schema.SEED_METHOD_VERSION,
            "shuffle_version": SHUFFLE_VERSION,
            "rules_fingerprint": self.rules.fingerprint(),
            "policies": list(self.policies),
            "seed": self.seed,
            "deals": self.deals,
            "session_length": self.session_length,
            "duplicate": self.duplicate,
            "shard_hands": self.shard_hands,
        }

    def seeds_manifest(self) -> dict[str, Any]:
        """The manifest's ``seeds``: the run seed, the method's versions and its recipe."""
        return {
            "run_seed": self.seed,
            "seed_method_version": schema.SEED_METHOD_VERSION,
            "shuffle_version": SHUFFLE_VERSION,
            **SEED_METHOD,
        }

    def default_name(self) -> str:
        """The run name used without ``--run``: readable, plus a digest of the identity."""
        digest = hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()
        preset = self.rules.preset_name() or "custom"
        dup = "dup-" if self.duplicate else ""
        return f"{preset}-{dup}s{self.seed}-n{self.deals}-{digest[:8]}"


def resolve_tables(
    policies: Iterable[str], recorded: Mapping[str, W.PolicyWeights], run: str | None = None
) -> tuple[tuple[str, W.PolicyWeights], ...]:
    """The table of every ``POLICY@WEIGHTS`` in ``policies`` (a seat's, or a search's rollout
    policy: :func:`engine.policies.table_spec`), sorted by spec (other policies have
    none). Without ``run``, a table in ``recorded`` is taken as given and the others are
    read now. With ``run`` (``recorded``: that run's manifest) each file or shipped set is
    read again: one that cannot be read any more gives the recorded table; one that can must
    equal it, else one line naming the first parameter that differs."""
    out: dict[str, W.PolicyWeights] = {}
    for seat_spec in policies:
        name = table_spec(seat_spec)
        if name is None:
            continue
        key = W.canonical(name)
        if key in out:
            continue
        old = recorded.get(key)
        if old is not None and run is None:
            out[key] = old  # given with the spec: not read again
            continue
        try:
            new = W.load_spec(name)
        except W.WeightsUnreadable:
            if old is None:
                raise
            new = old  # the file is gone: the run plays the table it recorded
        if old is not None and new != old:
            raise PaohuziError(
                f"run {run!r} was recorded with other weights for {key}"
                f" ({W.first_difference(old, new)} as its file says now): restore the file (or"
                " remove it: the recorded table is used), or give another --run"
            )
        out[key] = new
    return tuple(sorted(out.items()))


def recorded_tables(manifest: Mapping[str, Any]) -> dict[str, W.PolicyWeights]:
    """The tables a run's manifest records (``params.weights``), by canonical spec."""
    recorded = (manifest.get("params") or {}).get("weights") or {}
    return {
        key: W.weights_from_mapping(
            values, W.parse_spec(key)[0], f"manifest field params.weights[{key!r}]"
        )
        for key, values in recorded.items()
    }
