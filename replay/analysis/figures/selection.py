"""What a figure is computed over: a :class:`Selection` of runs, seats and policies, and the
source that answers it — the summary tables when every selected run has them (a
:data:`Plan`), the hands otherwise.

Filters narrow three kinds of numbers differently (see :class:`Selection`); the helpers here
give each kind's ``WHERE`` over the raw views (``hands``, ``seats``) and, for the summary
tables, the per-run masks the rows are bit-tested against.

>>> s = Selection(runs=("a",), seats=(1,))
>>> p = Params()
>>> seats_where(s, p), p.values
('run IN ($run_0) AND seat IN ($seat_0)', {'run_0': 'a', 'seat_0': 1})
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.outcome import OutcomeKind
from replay.analysis.figures.params import Params
from replay.store import summary_schema as summary

HUANG = int(OutcomeKind.HUANGZHUANG)
AUTO = int(OutcomeKind.TIANHU_AUTO)
HU = int(OutcomeKind.HU)
TIANHU = int(OutcomeKind.TIANHU)
MAX_SEATS = 4
SEATS = range(MAX_SEATS)
#: The independent unit of an interval: a deal (the rotations of a --duplicate deal share
#: deck and dealer; otherwise a hand), within its run.
C = "hash(run, deal_id)"


@dataclass(frozen=True)
class Selection:
    """The runs, seats and policies a figure is about.

    * ``runs``: the runs; empty selects none;
    * ``seats``, ``policies``: empty means all. Seat-level numbers (win rate per seat,
      dealer, policy) count only the selected seats played by the selected policies;
      winning-hand numbers (胡息, 等, 番, score, 名堂, source) count hands won by them;
      hand-level numbers (荒庄, survival) count hands in which a selected seat was played by
      a selected policy.
    """

    runs: tuple[str, ...]
    seats: tuple[int, ...] = ()
    policies: tuple[str, ...] = ()
    #: which of ``runs`` are --duplicate runs, if known (lets the SQL name the runs of each
    #: kind instead of asking the runs table for every row)
    duplicate: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for s in self.seats:
            if not isinstance(s, int) or not 0 <= s < MAX_SEATS:
                raise ValueError(f"bad seat {s!r}")


# ---------------------------------------------------------------------------------------------
# The source: a summary plan, or None (the hands)
# ---------------------------------------------------------------------------------------------

#: Per selected run: (run, seat mask, rotation mask) of :mod:`replay.store.summary_schema`
#: (a run of imported hands: one per policy class, :func:`~replay.store.summary_schema.selection_masks`).
Plan = tuple[tuple[str, int, int], ...]


def summaries_enabled(env: Mapping[str, str] | None = None) -> bool:
    """``$PAOHUZI_SUMMARY=0`` turns the summary tables off: every figure from the hands
    (benchmarks, comparisons)."""
    return (os.environ if env is None else env).get("PAOHUZI_SUMMARY", "1") != "0"


def plan(state: Any, sel: Selection) -> Plan | None:
    """The masks of the selected runs, or None when one of them has no summary (then the
    figures read the hands). ``state`` is a :class:`~replay.store.scan.StoreState`."""
    out = []
    for name in sel.runs:
        info = state.run(name)
        if info is None or not info.per_rotation or not summary.summarized(info):
            return None
        per = list(info.per_rotation)
        pairs = summary.selection_masks(
            per, info.players, sel.seats, sel.policies, info.policy_classes
        )
        out += [(name, mask, hmask) for mask, hmask in pairs]
    return tuple(out)


def sel_cte(pl: Plan, p: Params) -> str:
    """The ``sel (run, mask, hmask)`` CTE of a plan: every summary row is kept or dropped by
    a bit test against its run's masks."""
    if not pl:
        return (
            "sel AS (SELECT NULL::VARCHAR AS run, 0::USMALLINT AS mask, 0::USMALLINT AS hmask"
            " WHERE false)"
        )
    rows = ", ".join(
        f"({p.bind(run, f'r{i}')}, {p.bind(int(mask), f'm{i}')}::USMALLINT,"
        f" {p.bind(int(hmask), f'h{i}')}::USMALLINT)"
        for i, (run, mask, hmask) in enumerate(pl)
    )
    return f"sel (run, mask, hmask) AS (VALUES {rows})"


#: Bit tests of a summary row ``x`` against its run's masks ``sel``.
SEAT_BIT = "(sel.mask >> (4 * x.rotation + x.seat)) & 1 = 1"
WIN_BIT = f"x.outcome <> {HUANG} AND (sel.mask >> (4 * x.rotation + x.winner)) & 1 = 1"
WINNER_BIT = "(sel.mask >> (4 * x.rotation + x.winner)) & 1 = 1"
HAND_BIT = "(sel.hmask >> x.rotation) & 1 = 1"
#: A cluster kind's rows of the selection's seat mask.
MASK = "x.mask = sel.mask"


def summary_rows(pl: Plan, p: Params, kind: str, test: str) -> str:
    """``WITH sel, x``: the rows of ``summary_<kind>`` kept by the plan, each joined with its
    run's ``sel`` masks and kept by the bit test or mask equality ``test``."""
    return (
        f"WITH {sel_cte(pl, p)}, x AS (SELECT x.* FROM summary_{kind} x JOIN sel USING (run)"
        f" WHERE {test})"
    )


# ---------------------------------------------------------------------------------------------
# The raw views: WHERE clauses of each kind of number
# ---------------------------------------------------------------------------------------------


def runs_in(sel: Selection, p: Params, col: str = "run") -> str:
    return p.in_(col, sel.runs, "run")


def runs_of_kind(sel: Selection, p: Params, duplicate: bool) -> str:
    """The selected runs that are (or are not) --duplicate runs."""
    if sel.duplicate is None:
        kind = "" if duplicate else "NOT "
        return f"{runs_in(sel, p)} AND run IN (SELECT run FROM runs WHERE {kind}duplicate)"
    dup = set(sel.duplicate)
    name = "dup" if duplicate else "plain"
    return p.in_("run", [r for r in sel.runs if (r in dup) == duplicate], name)


def seat_filter(sel: Selection, p: Params) -> str:
    """Seat rows (view ``seats``): the selected seats and policies."""
    parts = []
    if sel.seats:
        parts.append(p.in_("seat", sel.seats, "seat"))
    if sel.policies:
        parts.append(p.in_("policy", sel.policies, "pol"))
    return " AND ".join(parts) or "true"


def hand_filter(sel: Selection, p: Params) -> str:
    """Hands (view ``hands``) in which a selected seat was played by a selected policy."""
    if not sel.policies:
        return "true"
    parts = [p.in_(f"policy_{int(i)}", sel.policies, "pol") for i in sel.seats or SEATS]
    return "(" + " OR ".join(parts) + ")"


WINNER_POLICY = (
    "CASE winner WHEN 0 THEN policy_0 WHEN 1 THEN policy_1 WHEN 2 THEN policy_2"
    " WHEN 3 THEN policy_3 END"
)


def win_filter(sel: Selection, p: Params) -> str:
    """Winning hands (outcome other than 荒庄) won by a selected seat and policy."""
    parts = [f"outcome <> {HUANG}"]
    if sel.seats:
        parts.append(p.in_("winner", sel.seats, "seat"))
    if sel.policies:
        parts.append(p.in_(WINNER_POLICY, sel.policies, "pol"))
    return " AND ".join(parts)


def hands_where(sel: Selection, p: Params) -> str:
    return f"{runs_in(sel, p)} AND {hand_filter(sel, p)}"


def wins_where(sel: Selection, p: Params) -> str:
    return f"{runs_in(sel, p)} AND {win_filter(sel, p)}"


def seats_where(sel: Selection, p: Params) -> str:
    return f"{runs_in(sel, p)} AND {seat_filter(sel, p)}"


def seat_selected(sel: Selection, p: Params, i: int) -> str:
    """Seat ``i`` of a hands row plays (not the 坐醒 sitter) and is selected."""
    if sel.seats and i not in sel.seats:
        return "false"
    cond = f"policy_{i} IS NOT NULL AND NOT (policy_3 IS NOT NULL AND (dealer + 2) % 4 = {i})"
    if not sel.policies:
        return f"({cond})"
    return f"({cond} AND {p.in_(f'policy_{i}', sel.policies, 'pol')})"
