"""Statistics of recorded runs: the queries and numbers behind ``paohuzi stats``.

No click and no printing here (``paohuzi.cli.stats`` renders). Every number is a figure of the
one statistics layer (:mod:`replay.analysis.figures`) for a selection of one run, from its
summary tables when it has them and from its hands otherwise — the same statements and
intervals the dashboard's pages use.

Intervals are 95 % (``replay.analysis.intervals``): Wilson for rates, normal for means. Observations
are not all independent, so each statistic names its **cluster**: a hand, or with
``--duplicate`` a deal, whose rotations share the deck and the dealer. Rates then count
clusters as the independent units (Wilson on the effective size, conservative) and means use
the cluster-robust ratio estimator. The automatic 3提/5坎 天胡 depends on the deck and the
dealer alone, so it is counted over rotation 0 only, beside its exact probability
(``replay.analysis.exact``).

>>> import tempfile
>>> from replay.store import open_store
>>> run_stats(open_store(tempfile.mkdtemp()))
Traceback (most recent call last):
...
replay.store.layout.StoreError: no runs in the store ...
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from engine.errors import CorruptLog
from engine.mingtang import LEVELS
from engine.rules import RuleSet
from replay import schema
from replay.analysis import exact
from replay.analysis.figures import fetch, groups, outcomes, values
from replay.analysis.figures.results import (
    QUANTILES,
    GroupRow,
    Mean,
    PairedRow,
    Rate,
    cluster_mean,
    count,
    distribution,
    group_rows,
    paired_rows,
)
from replay.analysis.figures.selection import Plan, Selection, plan
from replay.store.ducklimits import failure_line
from replay.store.layout import StoreError
from replay.store.manifest import Manifest
from replay.store.params import played_policies
from replay.store.runs import Run, RunHead, Store
from replay.store.scan import StoreState, rollup_note, rules_label, summary_warning

if TYPE_CHECKING:
    from replay.analysis.review_rates import StoredRates

__all__ = [
    "QUANTILES",
    "AutoTianhu",
    "GroupRow",
    "Mean",
    "MingtangRow",
    "PairedRow",
    "Rate",
    "RunStats",
    "Winning",
    "run_stats",
    "stats_payload",
    "summarize",
    "use_summaries",
]


# ---------------------------------------------------------------------------------------------
# Result types (the layer's Rate, Mean, GroupRow and PairedRow, and these)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Winning:
    """Mean, quantiles (:data:`QUANTILES`), min and max of a value over winning hands."""

    mean: Mean
    quantiles: tuple[float, ...]
    min: float
    max: float


@dataclass(frozen=True)
class MingtangRow:
    """A 名堂: how many wins carried it, as a share of all wins."""

    pinyin: str
    name: str
    share: Rate


@dataclass(frozen=True)
class AutoTianhu:
    """Observed 3提/5坎 天胡 over distinct deals, beside the exact per-deal probabilities."""

    any: Rate
    dealer: Rate
    non_dealer: Rate
    exact_any: float
    exact_dealer: float
    exact_non_dealer: float
    exact_bound: float  # exact_any and exact_non_dealer are exact within this (RULES §9)


@dataclass
class RunStats:
    """Everything ``paohuzi stats`` shows for one run."""

    run: str
    status: str  # complete, being written, stopped, interrupted, failed (as paohuzi runs)
    rules: str
    players: int
    #: Per seat, as the run was simulated; a run of imported hands: the distinct policies
    #: its hands were played by, sorted (replay.store.params.played_policies).
    policies: tuple[str, ...]
    duplicate: bool
    rotations: int
    cluster: str  # "hand" or "deal": the independent unit of the intervals
    hands: int
    deals: int
    outcomes: dict[str, Rate] = field(default_factory=dict)
    seats: list[GroupRow] = field(default_factory=list)
    dealer: list[GroupRow] = field(default_factory=list)
    policy: list[GroupRow] = field(default_factory=list)
    paired: list[PairedRow] = field(default_factory=list)
    winning: dict[str, Winning] = field(default_factory=dict)
    zimo: Rate | None = None
    mingtang: list[MingtangRow] = field(default_factory=list)
    auto_tianhu: AutoTianhu | None = None
    #: The rates of the run's stored reviews, per review key (replay.analysis.review_rates).
    reviews: list[StoredRates] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data: NaN becomes None, rates carry their proportion."""
        return _jsonable(self)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Rate):
        return {"k": obj.k, "n": obj.n, "p": _jsonable(obj.p), "lo": obj.lo, "hi": obj.hi}
    if hasattr(obj, "__dataclass_fields__"):
        return {k: _jsonable(getattr(obj, k)) for k in asdict(obj)}
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# ---------------------------------------------------------------------------------------------
# One run's figures
# ---------------------------------------------------------------------------------------------


def run_stats(
    store: Store,
    names: Sequence[str] = (),
    con: Any = None,
    on_skip: Callable[[str], None] | None = None,
    summaries: bool = True,
    state: StoreState | None = None,
) -> list[RunStats]:
    """The statistics of the named runs (all runs when ``names`` is empty), in that order.

    Every run is checked first (:func:`replay.store.scan.scan_store`: sizes, rows, hand ids,
    SHA-256 of each shard). A damaged run asked for by name is refused (``CorruptLog`` naming
    the shard); without names a damaged run is left out and ``on_skip`` gets its one-line
    reason, so no number is ever computed from a damaged shard. Raises ``StoreError`` for a
    missing store or an unknown run; both are one-line ``ValueError``s.

    A run whose every shard has a summary file (``paohuzi index``) is answered from the
    summary tables, with the same numbers; ``summaries=False`` reads the hands of every run.
    ``state``: the store's scan the caller made (and ``con`` was opened on), else one is
    made here.
    """
    state = state if state is not None else _scan(store)
    healthy = checked_runs(store, state, names, on_skip, summaries)
    import duckdb

    own = con is None
    try:
        if own:
            con = store.connect(state)
        return [
            _stated(
                summarize(con, run, plan(state, _selection(run)) if summaries else None, on_skip),
                state,
            )
            for run in healthy
        ]
    except duckdb.Error as e:
        raise CorruptLog(f"cannot read the store {store.root}: {failure_line(e)}") from None
    finally:
        if own and con is not None:
            con.close()


def _stated(st: RunStats, state: StoreState) -> RunStats:
    """``st`` with the run's state as ``paohuzi runs`` shows it, from the scan
    (:attr:`~replay.store.scan.RunInfo.state`): a run still "running" whose writer was
    killed is "stopped", one whose writer is alive "being written"."""
    info = state.run(st.run)
    if info is not None:
        st.status = info.state
    return st


def _scan(store: Store) -> StoreState:
    if not store.root.is_dir():
        raise StoreError(f"no store at {store.root} (run 'paohuzi simulate' first)")
    return store.scan(manifests=False)  # a figure reads the run's head the scan kept


def checked_runs(
    store: Store,
    state: StoreState,
    names: Sequence[str] = (),
    on_skip: Callable[[str], None] | None = None,
    summaries: bool = True,
) -> list[Run | RunHead]:
    """The runs a figure may be computed from, in order: the named ones (all when none),
    each checked by the scan ``state``. A damaged run asked for by name is refused
    (``CorruptLog``); without names it is left out and ``on_skip`` gets its one line (and a
    run whose summaries cannot be used, the warning saying so, when ``summaries``).

    Each run is the one ``state`` checked (:meth:`~replay.store.runs.Store.run_in`: the
    manifest the scan read, never one read later), so its figures, its manifest's counts
    and the catalog opened on ``state`` are one view of it while a writer commits."""
    if not store.root.is_dir():
        raise StoreError(f"no store at {store.root} (run 'paohuzi simulate' first)")
    asked = list(dict.fromkeys(names))
    for name in asked:
        info = state.run(name)
        if info is None or info.problem is not None:
            # StoreError if unknown or a refused folder, CorruptLog if its manifest is damaged
            store.run(name)
            if info is None:
                raise StoreError(f"no run {name!r} when the store was read (created since)")
    if not state.runs:
        raise StoreError(f"no runs in the store {store.root} (run 'paohuzi simulate' first)")
    healthy = []
    for name in asked or [r.name for r in state.runs]:
        info = state.run(name)
        problem = info.problem if info is not None else f"run {name} is unreadable"
        if problem is None:
            healthy.append(store.run_head(state, name))
            if summaries and info is not None and info.summary_problem and on_skip is not None:
                on_skip(summary_warning(name, info.summary_problem))
            elif summaries and info is not None and info.rollup_problem and on_skip is not None:
                on_skip(rollup_note(name, info.rollup_problem))
        elif names:
            raise CorruptLog(f"run {name} is damaged and left out: {problem}")
        elif on_skip is not None:
            on_skip(f"run {name} is damaged and left out: {problem}")
    if not healthy:
        raise CorruptLog("every run of the store is damaged (see 'paohuzi verify')")
    return healthy


#: ``PAOHUZI_SUMMARY=0``: read the hands even where summary tables exist (comparisons).
SUMMARY_ENV = "PAOHUZI_SUMMARY"


def use_summaries() -> bool:
    """Whether :func:`run_stats` reads summary tables where they exist (``$PAOHUZI_SUMMARY``
    is not ``0``)."""
    return os.environ.get(SUMMARY_ENV, "1") != "0"


def stats_payload(result: Sequence[RunStats]) -> dict[str, Any]:
    """The object ``paohuzi stats --json`` prints (and the service's ``/stats`` answers)."""
    return {"runs": [r.to_dict() for r in result]}


def _selection(run: Run | RunHead) -> Selection:
    duplicate = Manifest(run.manifest).params.duplicate
    return Selection(runs=(run.name,), duplicate=(run.name,) if duplicate else ())


def summarize(
    con: Any,
    run: Run | RunHead,
    pl: Plan | None = None,
    warn: Callable[[str], None] | None = None,
) -> RunStats:
    """One run's statistics from the catalog on ``con`` (the run already checked): from its
    hands, or from its summary tables when ``pl`` is its summary plan; and the rates of its
    stored reviews (a damaged review file named through ``warn`` and left out)."""
    m = run.manifest
    params = Manifest(m).params
    rules = run.rules
    duplicate, rotations = params.duplicate, params.rotations
    sel = _selection(run)
    (hl,) = fetch(con, outcomes.headline(sel, pl))
    hands, deals = count(hl["n"]), count(hl["clusters"])
    try:
        listed = int(m.get("progress", {}).get("hands", run.n_hands))
    except (TypeError, ValueError):
        listed = run.n_hands
    if hands < listed:
        raise CorruptLog(
            f"run {run.name}: the manifest lists {listed} hands, the shards hold {hands}"
        )
    st = RunStats(
        run=run.name,
        status=run.status,
        rules=rules_label(m.get("rules", {}), m.get("rules_preset")),
        players=rules.players,
        policies=params.policies,
        duplicate=duplicate,
        rotations=rotations,
        cluster="deal" if duplicate else "hand",
        hands=hands,
        deals=deals,
    )
    if not hands:
        return st
    ks = {
        "win": hl["wins"],
        "hu": hl["hu"],
        "tianhu": hl["tianhu"],
        "tianhu_auto": hl["tianhu_auto"],
        "huangzhuang": hl["huang"],
    }
    st.outcomes.update({name: Rate.of(count(k), hands, deals) for name, k in ks.items()})
    # Policy rows when the hands carry several policies. A run of imported hands lists none
    # in its manifest, so its hands' own are grouped; one policy row would repeat the totals.
    several = len(set(st.policies)) > 1 or not st.policies
    keys = ("seat", "dealer", "policy") if several else ("seat", "dealer")
    rows = fetch(con, groups.group_rates_by(sel, pl, keys))
    st.seats.extend(group_rows(r for r in rows if r["g"] == "seat"))
    st.dealer.extend(group_rows(r for r in rows if r["g"] == "dealer"))
    by_policy = [r for r in rows if r["g"] == "policy"]
    if not st.policies:  # a run of imported hands: the policies its hands were played by
        st.policies = played_policies([[str(r["key"])] for r in by_policy])
    if len(by_policy) > 1:
        st.policy.extend(group_rows(by_policy))
        if duplicate:
            st.paired.extend(paired_rows(fetch(con, groups.paired(sel, pl))))
    (wm,) = fetch(con, outcomes.winning_moments(sel, pl))
    counts = fetch(con, values.value_counts(sel, pl))
    for col in values.VALUE_COLS:
        if not count(wm[f"d_{col}"]):
            continue
        d = distribution(counts, col)
        st.winning[col] = Winning(cluster_mean(wm, col), tuple(d.quantiles.values()), d.min, d.max)
    wins = st.outcomes["win"].k
    if wins:
        st.zimo = Rate.of(count(wm["zimo"]), count(wm["wins"]), count(wm["clusters"]))
        st.mingtang.extend(_mingtang(fetch(con, values.by_mingtang(sel, pl)), rules))
    (at,) = fetch(con, outcomes.auto_tianhu(sel, pl))
    n, k, kd = count(at["n"]), count(at["k"]), count(at["kd"])
    o = exact.auto_tianhu_odds()
    st.auto_tianhu = AutoTianhu(
        any=Rate.of(k, n),
        dealer=Rate.of(kd, n),
        non_dealer=Rate.of(k - kd, n),
        exact_any=o.per_hand,
        exact_dealer=o.dealer,
        exact_non_dealer=o.non_dealer,
        exact_bound=o.triple_bound,
    )
    if m.get("reviews"):  # stored reviews: the engine's judge is imported only for them
        from replay.analysis.review_rates import stored_rates

        st.reviews.extend(stored_rates(run.path, m, warn))
    return st


def _mingtang(rows: list[dict[str, Any]], rules: RuleSet) -> list[MingtangRow]:
    """Every 名堂 the rules can award, with the share of wins carrying it (zero if none
    did), then 平胡: from the rows of ``by_mingtang`` of one run (one 名堂 level)."""
    by_bit = {count(r["bit"]): r for r in rows}
    total = by_bit.get(-2, {})
    n, d = count(total.get("n")), count(total.get("d"))
    out = [
        MingtangRow(c["pinyin"], c["name"], Rate.of(count(by_bit.get(c["bit"], {}).get("n")), n, d))
        for c in _mingtang_codes(rules)
    ]
    out.append(MingtangRow("pinghu", "平胡", Rate.of(count(by_bit.get(-1, {}).get("n")), n, d)))
    return out


def _mingtang_codes(rules: RuleSet) -> list[dict[str, Any]]:
    """The 名堂 the rules can award: Hunan up to the 花样 level, Luzhou its score mode."""
    out = []
    for c in schema.codes()["mingtang"]:
        if c["pinyin"].startswith("lz_") != rules.luzhou:
            continue
        if rules.luzhou:
            if c["level"] == rules.luzhou_di_mode:
                out.append(c)
        elif LEVELS[c["level"]] <= LEVELS[rules.huayang]:
            out.append(c)
    return out
