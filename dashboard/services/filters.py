"""The filter every page applies: run(s), rules preset, policy and seat. No streamlit.

An empty choice means "all". The rules choice narrows the runs; policies and seats go to the
SQL as parameters (:class:`replay.analysis.figures.selection.Selection`).

>>> from replay.store.scan import StoreState
>>> resolve(StoreState("/d", True, (), "x"), ["nope"], [], [], [])
Selection(runs=(), seats=(), policies=(), duplicate=None)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replay.analysis.figures.selection import Selection
from replay.store.scan import RunInfo, StoreState


@dataclass(frozen=True)
class Choices:
    """What the sidebar offers."""

    runs: tuple[str, ...]
    rules: tuple[str, ...]
    policies: tuple[str, ...]
    seats: tuple[int, ...]


def choices(state: StoreState, runs: Sequence[str] = ()) -> Choices:
    """Options over the usable runs; policies and seats of the chosen runs (all if none)."""
    usable = state.usable_runs
    chosen = [r for r in usable if not runs or r.name in runs] or list(usable)
    return Choices(
        runs=tuple(r.name for r in usable),
        rules=tuple(sorted({r.rules for r in usable})),
        policies=tuple(sorted({p for r in chosen for p in r.policies})),
        seats=tuple(range(max((r.players for r in chosen), default=3))),
    )


def selected_runs(
    state: StoreState, runs: Sequence[str], rules: Sequence[str]
) -> tuple[RunInfo, ...]:
    return tuple(
        r
        for r in state.usable_runs
        if (not runs or r.name in runs) and (not rules or r.rules in rules)
    )


def resolve(
    state: StoreState,
    runs: Sequence[str],
    rules: Sequence[str],
    policies: Sequence[str],
    seats: Sequence[int],
) -> Selection:
    """The SQL filter for a sidebar choice. Names not in the store are dropped, so a stale
    URL or session cannot select what is not there."""
    if runs and not any(state.run(n) for n in runs):
        return Selection(runs=())
    picked = selected_runs(state, runs, rules)
    known_policies = {p for r in picked for p in r.policies}
    max_seats = max((r.players for r in picked), default=3)
    return Selection(
        runs=tuple(r.name for r in picked),
        seats=tuple(sorted({int(s) for s in seats if 0 <= int(s) < max_seats})),
        policies=tuple(sorted({p for p in policies if p in known_policies})),
        duplicate=tuple(r.name for r in picked if r.duplicate),
    )


def describe(f: Selection, state: StoreState) -> str:
    """One line saying what is selected."""
    n_hands = sum(r.hands for r in state.usable_runs if r.name in f.runs)
    runs = (
        "all runs"
        if len(f.runs) == len(state.usable_runs)
        else (", ".join(f.runs) if len(f.runs) <= 3 else f"{len(f.runs)} runs")
    )
    seats = "all seats" if not f.seats else "seat " + ", ".join(str(s) for s in f.seats)
    pols = "all policies" if not f.policies else ", ".join(f.policies)
    return f"{runs} ({n_hands:,} hands) · {seats} · {pols}"


def convergence_width(state: StoreState, f: Selection, bins: int = 100) -> int:
    """Hands per bin of the convergence curve: about ``bins`` points over the longest run,
    a power of two (so the summary tables' bins, also powers of two, nest in it).

    >>> from replay.store.scan import StoreState
    >>> convergence_width(StoreState("/d", True, (), "x"), Selection(runs=()))
    1
    """
    longest = max((r.hands for r in state.usable_runs if r.name in f.runs), default=0)
    want = max(1, -(-longest // bins))
    return 1 << (want - 1).bit_length()
