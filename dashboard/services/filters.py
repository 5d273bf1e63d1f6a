"""The filter every page applies: run(s), rules preset, policy and seat. No streamlit.

An empty choice means "all". The rules choice narrows the runs; policies and seats go to the
SQL as parameters (:class:`replay.analysis.figures.selection.Selection`).

A first view shows one rule set: the store's main run and the runs like it
(:func:`default_runs`), never all runs pooled. The choice lives in the URL's query string
(:func:`to_params`, :func:`from_params`), so a link reproduces the view: ``runs`` (``*``: every
run), ``rules``, ``policies`` and ``seats``, each repeated or comma-separated.

>>> from replay.store.scan import StoreState
>>> resolve(StoreState("/d", True, (), "x"), ["nope"], [], [], [])
Selection(runs=(), seats=(), policies=(), duplicate=None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def default_runs(state: StoreState) -> tuple[str, ...]:
    """The first view's runs: the main run — the one with the most hands (the first by name
    among equals; ``make demo``'s ``demo-hunan``, learned@hunan in every seat) — and the runs
    like it (the same rules, policies and ``--duplicate``), so one rule set, never a pool of
    several.

    >>> from types import SimpleNamespace as R
    >>> runs = (R(name="a", hands=5, rules="hunan", policies=("x",), duplicate=False),
    ...         R(name="b", hands=9, rules="hunan", policies=("y",), duplicate=False),
    ...         R(name="c", hands=2, rules="hunan", policies=("y",), duplicate=False),
    ...         R(name="d", hands=3, rules="hunan-4p", policies=("y",), duplicate=False))
    >>> default_runs(R(usable_runs=runs))
    ('b', 'c')
    """
    usable = state.usable_runs
    if not usable:
        return ()
    main = max(usable, key=lambda r: r.hands)
    like = (main.rules, tuple(main.policies), main.duplicate)
    return tuple(r.name for r in usable if (r.rules, tuple(r.policies), r.duplicate) == like)


def rule_groups(state: StoreState, f: Selection) -> dict[str, tuple[str, ...]]:
    """The selection's runs by rule set (the sidebar's Rules label), in the store's order.

    >>> from types import SimpleNamespace as R
    >>> runs = (R(name="a", rules="hunan"), R(name="b", rules="hunan-4p"), R(name="c", rules="hunan"))
    >>> rule_groups(R(usable_runs=runs), Selection(runs=("a", "b", "c")))
    {'hunan': ('a', 'c'), 'hunan-4p': ('b',)}
    """
    out: dict[str, list[str]] = {}
    for r in state.usable_runs:
        if r.name in f.runs:
            out.setdefault(r.rules, []).append(r.name)
    return {k: tuple(v) for k, v in out.items()}


def pooled_note(groups: Mapping[str, Sequence[str]]) -> str | None:
    """What a page pooling several rule sets says of it (None for one rule set).

    >>> print(pooled_note({"hunan": ["a", "c"], "hunan-4p": ["b"]}))
    The selection pools 2 rule sets — hunan (a, c) · hunan-4p (b) — whose games differ: the figures below mix them. Choose one under Rules in the sidebar to see one rule set's.
    """
    if len(groups) < 2:
        return None
    parts = " · ".join(
        f"{k} ({', '.join(v) if len(v) <= 3 else f'{len(v)} runs'})" for k, v in groups.items()
    )
    return (
        f"The selection pools {len(groups)} rule sets — {parts} — whose games differ: the"
        " figures below mix them. Choose one under Rules in the sidebar to see one rule set's."
    )


#: The sidebar's filters in the URL's query string (each key its session-state key).
URL_KEYS = {"runs": "f_runs", "rules": "f_rules", "policies": "f_policies", "seats": "f_seats"}
#: ``runs`` of every run (an empty Runs filter): a link without ``runs`` is the default view.
ALL_RUNS = "*"


@dataclass(frozen=True)
class Picked:
    """The sidebar's four choices (empty: all)."""

    runs: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    policies: tuple[str, ...] = ()
    seats: tuple[int, ...] = ()


def to_params(p: Picked) -> dict[str, list[str]]:
    """The query string of a choice: ``runs`` always (``*`` for all runs), the others when
    not empty.

    >>> to_params(Picked(("a", "b"), (), ("greedy",), (0, 2)))
    {'runs': ['a', 'b'], 'policies': ['greedy'], 'seats': ['0', '2']}
    >>> to_params(Picked())
    {'runs': ['*']}
    """
    out = {"runs": list(p.runs) or [ALL_RUNS]}
    for key, values in (("rules", p.rules), ("policies", p.policies), ("seats", p.seats)):
        if values:
            out[key] = [str(v) for v in values]
    return out


def from_params(params: Mapping[str, Sequence[str]]) -> Picked | None:
    """The choice a query string names (each key's values, repeated keys as a list), or None
    when it names none (no ``runs``). Runs and seats may also be comma-separated; a seat that
    is not a number is dropped.

    >>> from_params({"runs": ["a,b"], "seats": ["1", "x"], "rules": ["hunan min_huxi=10"]})
    Picked(runs=('a', 'b'), rules=('hunan min_huxi=10',), policies=(), seats=(1,))
    >>> from_params({"runs": ["*"]}), from_params({"hand": ["3"]})
    (Picked(runs=(), rules=(), policies=(), seats=()), None)
    """
    if not params.get("runs"):
        return None

    def split(values: Sequence[str]) -> list[str]:
        return [x.strip() for v in values for x in v.split(",") if x.strip()]

    runs = [r for r in split(params["runs"]) if r != ALL_RUNS]
    seats = [int(s) for s in split(params.get("seats", ())) if s.isdigit()]
    return Picked(
        runs=tuple(dict.fromkeys(runs)),
        rules=tuple(dict.fromkeys(v for v in params.get("rules", ()) if v)),
        policies=tuple(dict.fromkeys(v for v in params.get("policies", ()) if v)),
        seats=tuple(dict.fromkeys(seats)),
    )
