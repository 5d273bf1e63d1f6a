"""A run's ``params`` as the store's readers take them (:class:`RunParams`): a leaf of the store
(``replay.store.manifest`` and ``replay.store.summary_schema`` both read them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunParams:
    """A run's ``params``: how it was played (defaults for what an imported run lacks)."""

    seed: int | None
    deals: int
    hands_total: int
    session_length: int | None
    duplicate: bool
    rotations: int
    policies: tuple[str, ...]
    shard_hands: int | None

    @classmethod
    def of(cls, params: Any) -> RunParams:
        """From a manifest's ``params`` (missing: an empty one); ``ValueError`` if it is not
        an object or a value has the wrong type."""
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise ValueError(f"params is {type(params).__name__}, not an object")
        p = params
        return cls(
            seed=p.get("seed"),
            deals=int(p.get("deals") or 0),
            hands_total=int(p.get("hands_total") or 0),
            session_length=p.get("session_length"),
            duplicate=bool(p.get("duplicate")),
            rotations=int(p.get("rotations") or 1),
            policies=tuple(p.get("policies") or ()),
            shard_hands=p.get("shard_hands"),
        )


def policies_label(policies: Sequence[str]) -> str:
    """A run's policies as every command names them (``paohuzi runs``, ``paohuzi stats``,
    the service's ``/runs``): comma-separated, ``none recorded`` when there are none. A
    simulated run's are its seats' (``params.policies``); a run of imported hands' are the
    distinct policies its hands were played by, sorted (:func:`played_policies`).

    >>> policies_label(("heuristic", "random", "heuristic")), policies_label(())
    ('heuristic,random,heuristic', 'none recorded')
    """
    return ",".join(policies) or "none recorded"


def played_policies(seats: Iterable[Iterable[str | None]]) -> tuple[str, ...]:
    """The distinct policies of seat assignments (a run of imported hands'
    ``params.seat_policies``, or its hands' ``policy_*`` columns), sorted: what a run of
    imported hands is labelled by (:func:`policies_label`).

    >>> played_policies([["human:ann", "heuristic", "heuristic"], ["import"] * 3])
    ('heuristic', 'human:ann', 'import')
    """
    return tuple(sorted({p for seat in seats for p in seat if p is not None}))
