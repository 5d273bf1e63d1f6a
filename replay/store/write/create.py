"""A new run's manifest (docs/LOG_FORMAT.md §2), before its first shard: a simulated run
(status ``running``, the writer that plays it, its identity, parameters and seeds) or a run
of imported hands (status ``complete``, no seed, no policy: none of its hands was played
here; §13). Both are :meth:`~replay.store.manifest.Manifest.new` documents; the run's writer
(:meth:`~replay.store.write.run.RunWriter.create`) adopts one."""

from __future__ import annotations

from typing import Any

from engine.rules import RuleSet
from replay.store.manifest import Manifest

__all__ = ["imported_manifest", "imported_params", "simulated_manifest"]


def simulated_manifest(
    name: str,
    rules: RuleSet,
    command: list[str],
    identity: dict[str, Any],
    params: dict[str, Any],
    seeds: dict[str, Any],
) -> dict[str, Any]:
    """A new simulated run's manifest: its ``identity`` (what a resumed run must match),
    ``params`` and ``seeds`` as the recorder gives them."""
    return Manifest.new(
        name,
        rules,
        status="running",
        command=command,
        identity=identity,
        params=params,
        seeds=seeds,
        history="resumed",
        writer=True,
    ).doc


def imported_params() -> dict[str, Any]:
    """The ``params`` of a new run of imported hands: none of them played here."""
    return {
        "seed": None,
        "deals": 0,
        "hands_total": 0,
        "session_length": None,
        "duplicate": False,
        "rotations": 1,
        "policies": [],
        "policies_text": "import",
        "seat_policies": [],
        "shard_hands": None,
    }


def imported_manifest(name: str, rules: RuleSet, command: list[str] | None) -> dict[str, Any]:
    """The manifest of a new run of imported hands ``name``, before its first shard."""
    return Manifest.new(
        name,
        rules,
        status="complete",
        command=command or [],
        identity={"imported": True},
        params=imported_params(),
        seeds=None,
        history="imported",
    ).doc
