"""``paohuzi stats --events``: what players do, per run, from its event log
(:mod:`replay.analysis.figures.events`), each figure with its count, its denominator and a
95 % interval (the deal the cluster in --duplicate runs, as in ``paohuzi stats``).

* actions per seat-hand by kind (chosen and forced apart), per policy;
* decline rates: 胡, 碰, 吃 passed when offered in a real choice (two or more options);
* forced share of the events, per policy;
* legal options per real choice (its distribution and mean), per policy;
* per hand: its length in decisions (mean with its interval, and the distribution) and in
  draws from the stock (mean with its interval); 臭胡 (a 胡 declined), 忍碰 (a 碰 declined)
  and 八块 (a seat's second 跑 or 提) rates;
* win timing: the wins by stock left, and the 荒庄 count;
* --duplicate runs: per pair of policies, the paired difference of each kind's events per
  seat-hand over the same deals;
* from the per-hand facts (:func:`facts_rows`), per policy: 破跑胡 per win and per seat-hand,
  比牌 per seat-hand, claim conflicts per hand.

The figures come from the run's event summaries (``summary_ev_*``, the facts' too) when every
shard has one of this version, else from its events and facts tables; the two give the same
numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.actions import ActionKind
from replay.analysis.figures import events as E
from replay.analysis.figures import fetch
from replay.analysis.figures.results import Distribution, Mean, Rate, count, num
from replay.analysis.figures.selection import Plan, Selection, plan, summaries_enabled
from replay.analysis.intervals import ClusterSums, Moments, paired_diff_ci
from replay.store.ducklimits import failure_line
from replay.store.runs import Store

#: Kind names as the figures print them.
KIND_NAMES = {
    int(ActionKind.PASS): "过 pass",
    int(ActionKind.HU): "胡",
    int(ActionKind.PENG): "碰",
    int(ActionKind.DISCARD): "打 discard",
    int(ActionKind.TI): "提",
    int(ActionKind.WEI): "偎",
    int(ActionKind.PAO): "跑",
    int(ActionKind.CHI): "吃",
}


@dataclass(frozen=True)
class ActionRow:
    policy: str
    kind: str
    forced: bool
    events: int
    per_seat_hand: Mean


@dataclass(frozen=True)
class DeclineRow:
    policy: str
    offered: str
    declined: Rate  # k passed of n offers


@dataclass(frozen=True)
class PolicyRate:
    policy: str
    rate: Rate


@dataclass(frozen=True)
class OptionsRow:
    policy: str
    choices: int
    mean: float
    values: tuple[int, ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class PairedActionRow:
    """Policy ``a`` minus policy ``b`` over the same duplicate deals: events of a kind per
    seat-hand."""

    a: str
    b: str
    kind: str
    forced: bool
    deals: int
    diff: Mean


@dataclass(frozen=True)
class FactsRow:
    """Per policy of a seat, from the facts (docs/LOG_FORMAT.md §12): its wins by 破跑胡 per
    win and per seat-hand; its seat-hands with a 比牌 eat (and the eats, ``bipai``); the hands
    it played with a claim conflict (and the conflicts, ``conflicts``)."""

    policy: str
    popao_per_win: Rate
    popao_per_hand: Rate
    bipai: int
    bipai_per_seat_hand: Rate
    conflicts: int
    conflict_per_hand: Rate


def facts_rows(con: Any, sel: Selection, pl: Plan | None) -> list[FactsRow] | None:
    """:class:`FactsRow` per policy of the selection's seats, from the summaries' ``ev_facts``
    (``pl``) or the facts table; None without facts."""
    from replay.analysis.figures import facts as F

    rows = fetch(con, F.seat_facts(sel, pl))
    if not rows:
        return None
    return [
        FactsRow(
            str(r["policy"]),
            Rate.of(count(r["popao"]), count(r["wins"]), count(r["d_wins"])),
            Rate.of(count(r["popao"]), count(r["seat_hands"]), count(r["d"])),
            count(r["bipai"]),
            Rate.of(count(r["bipai_hands"]), count(r["seat_hands"]), count(r["d"])),
            count(r["conflicts"]),
            Rate.of(count(r["conflict_hands"]), count(r["hands"]), count(r["d_hands"])),
        )
        for r in rows
    ]


@dataclass
class EventStats:
    """The event figures of one run."""

    run: str
    hands: int
    clusters: int
    actions: list[ActionRow] = field(default_factory=list)
    declines: list[DeclineRow] = field(default_factory=list)
    forced: list[PolicyRate] = field(default_factory=list)
    options: list[OptionsRow] = field(default_factory=list)
    #: hand length: mean decisions (events) and draws from the stock per hand
    decisions_per_hand: Mean | None = None
    draws_per_hand: Mean | None = None
    decisions: dict[str, Any] = field(default_factory=dict)  # values, counts, quantiles
    chouhu: Rate | None = None
    renpeng: Rate | None = None
    bakuai: Rate | None = None
    win_stock: dict[str, Any] = field(default_factory=dict)  # values, counts; huang
    paired: list[PairedActionRow] = field(default_factory=list)  # --duplicate runs
    source: str = "events"  # what the figures were read from: "summaries" or "events"
    #: per policy, from the per-hand facts; None when the run has none (not indexed)
    facts: list[FactsRow] | None = None

    def to_dict(self) -> dict[str, Any]:
        from replay.analysis.stats import _jsonable

        out: dict[str, Any] = _jsonable(self)
        return out


def event_stats(
    store: Store,
    names: Sequence[str] = (),
    on_skip: Callable[[str], None] | None = None,
    seats: Sequence[int] = (),
    policies: Sequence[str] = (),
) -> list[EventStats]:
    """The event figures of the named runs (all when none), each run checked first as
    ``paohuzi stats`` checks it (a damaged run named and left out, or refused by name); of
    the events of ``seats`` played by ``policies`` (all when empty)."""
    import duckdb

    from engine.errors import CorruptLog
    from replay.analysis.stats import _scan, checked_runs

    state = _scan(store)
    runs = checked_runs(store, state, names, on_skip, summaries=True)
    con = store.connect(state)
    try:
        return [summarize_events(con, r.name, seats, policies, state) for r in runs]
    except duckdb.Error as e:
        raise CorruptLog(f"cannot read the store {store.root}: {failure_line(e)}") from None
    finally:
        con.close()


def summarize_events(
    con: Any,
    run: str,
    seats: Sequence[int] = (),
    policies: Sequence[str] = (),
    state: Any = None,
) -> EventStats:
    """One run's event figures from the catalog on ``con`` (the run already checked): of
    the events declared by ``seats`` played by ``policies``, the hands in which such a seat
    played (all when empty). From the run's event summaries when ``state`` (the scanned
    :class:`~replay.store.scan.StoreState`) says it has them, else from its events."""
    sel = Selection(runs=(run,), seats=tuple(seats), policies=tuple(policies))
    pl = plan(state, sel) if state is not None and summaries_enabled() else None
    st = _summarize(con, sel, pl)
    st.source = "summaries" if pl is not None else "events"
    return st


def _summarize(con: Any, sel: Selection, pl: Plan | None) -> EventStats:
    run = sel.runs[0]
    facts = fetch(con, E.hand_facts(sel, pl))
    total = next((r for r in facts if r["decisions"] is None), None)
    hands = count(total["n"]) if total else 0
    clusters = count(total["d"]) if total else 0
    st = EventStats(run, hands, clusters)
    if not hands:
        return st
    per_value = [r for r in facts if r["decisions"] is not None]
    d = Distribution.of("decisions", ((r["decisions"], r["n"]) for r in per_value))
    st.decisions = {"values": list(d.values), "counts": list(d.counts),
                    "quantiles": {str(q): v for q, v in d.quantiles.items()}}  # fmt: skip
    length = {str(r["what"]): r for r in fetch(con, E.hand_length(sel, pl))}
    for what, attr in (("decisions", "decisions_per_hand"), ("draws", "draws_per_hand")):
        r = length.get(what)
        if r is not None:
            cs = ClusterSums(count(r["d"]), num(r["y"]), num(r["m"]), num(r["yy"]),
                             num(r["ym"]), num(r["mm"]))  # fmt: skip
            setattr(st, attr, Mean.of(cs))
    for name in ("chouhu", "renpeng", "bakuai"):
        k = sum(count(r[name]) for r in per_value)
        setattr(st, name, Rate.of(k, hands, clusters))
    sums: dict[str, tuple[int, float, float]] = {}
    rows = fetch(con, E.actions(sel, pl))
    for r in rows:
        if r["kind"] is None:
            sums[str(r["policy"])] = (count(r["d"]), num(r["m"]), num(r["mm"]))
    for r in rows:
        if r["kind"] is None:
            continue
        dd, m, mm = sums.get(str(r["policy"]), (0, 0.0, 0.0))
        cs = ClusterSums(dd, num(r["y"]), m, num(r["yy"]), num(r["ym"]), mm)
        st.actions.append(
            ActionRow(
                str(r["policy"]),
                KIND_NAMES.get(int(r["kind"]), str(r["kind"])),
                bool(r["forced"]),
                count(r["n"]),
                Mean.of(cs),
            )  # fmt: skip
        )
    for r in fetch(con, E.declines(sel, pl)):
        st.declines.append(
            DeclineRow(
                str(r["policy"]),
                str(r["offered"]),
                Rate.of(count(r["k"]), count(r["n"]), count(r["d"])),
            )  # fmt: skip
        )
    for r in fetch(con, E.forced(sel, pl)):
        st.forced.append(
            PolicyRate(str(r["policy"]), Rate.of(count(r["k"]), count(r["n"]), count(r["d"])))
        )
    by_policy: dict[str, list[tuple[int, int]]] = {}
    for r in fetch(con, E.options(sel, pl)):
        by_policy.setdefault(str(r["policy"]), []).append((int(r["v"]), count(r["n"])))
    for policy, pairs in by_policy.items():
        n = sum(c for _, c in pairs)
        mean = math.fsum(v * c for v, c in pairs) / n if n else math.nan
        st.options.append(OptionsRow(policy, n, mean, tuple(v for v, _ in pairs),
                                     tuple(c for _, c in pairs)))  # fmt: skip
    for r in fetch(con, E.paired_actions(sel, pl)):
        n = count(r["deals"])
        m, lo, hi = paired_diff_ci(Moments(num(r["dy"]), num(r["dyy"]), n))
        kind = KIND_NAMES.get(int(r["kind"]), str(r["kind"]))
        st.paired.append(
            PairedActionRow(
                str(r["a"]), str(r["b"]), kind, bool(r["forced"]), n, Mean(m, lo, hi, n)
            )
        )
    timing = fetch(con, E.win_timing(sel, pl))
    st.win_stock = {
        "values": [int(r["v"]) for r in timing if r["v"] is not None],
        "counts": [count(r["n"]) for r in timing if r["v"] is not None],
        "huang": sum(count(r["n"]) for r in timing if r["v"] is None),
    }
    st.facts = facts_rows(con, sel, pl)
    return st
