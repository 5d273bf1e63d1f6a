"""Seat-level figures: win rate and mean score change per seat, dealer / non-dealer, policy,
run (with their cluster sums), the paired difference of two policies over the same
--duplicate deals, and the cumulative win rate per bin of hands — each from the hands (``pl``
None) or from the summary tables.

>>> sql, params = group_rates_by(Selection(runs=("a",)), None, ("seat", "policy"))
>>> params
{'run_0': 'a'}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replay.analysis.figures.params import Params, Statement
from replay.analysis.figures.selection import (
    SEAT_BIT,
    SEATS,
    C,
    Plan,
    Selection,
    runs_in,
    runs_of_kind,
    seat_filter,
    seat_selected,
    seats_where,
    sel_cte,
)

#: Group keys of seat rows: constant SQL expressions, chosen by name (an unknown name
#: raises ``KeyError``).
GROUP_KEYS: dict[str, str] = {
    "seat": "'seat ' || seat",
    "dealer": "CASE WHEN seat = dealer THEN 'dealer' ELSE 'non-dealer' END",
    "policy": "policy",
    "run": "run",
    "all": "'all'",
}


def _sum(terms: Sequence[str]) -> str:
    return "(" + " + ".join(terms) + ")"


def _fixed_groups(key: str) -> list[tuple[str, str]]:
    """For a key whose groups are known in advance: ``(label, seat-in-group condition)``
    where the condition is about seat ``{j}``."""
    if key == "seat":
        return [(f"seat {i}", f"{{j}} = {i}") for i in SEATS]
    if key == "dealer":
        return [("dealer", "{j} = dealer"), ("non-dealer", "{j} <> dealer")]
    return [("all", "true")]


def group_rates_by(sel: Selection, pl: Plan | None, keys: Sequence[str]) -> Statement:
    """Per key (column ``g``) and group of seat rows (``key``): seat-hands ``n``, wins
    ``won``, clusters ``d`` and the cluster sums ``y, yy, ym, mm`` of the score change.

    From the hands: in an ordinary run a cluster is a hand, so a group's cluster values (its
    seats in the hand ``m``, their wins, their summed score change ``y``) are sums over the
    four seat columns of the hand's row: no unpivot, no grouping by hand. Keys with groups
    known in advance (seat, dealer, all) become columns of one aggregate row; the policy key
    keeps, per hand, one row per policy present (its first seat); the run key groups by run.
    --Duplicate runs, whose clusters are deals, are grouped by deal from the seats view.
    """
    for key in keys:
        GROUP_KEYS[key]  # noqa: B018 - an unknown key raises KeyError
    p = Params()
    if pl is not None:
        return _group_rates_summary(pl, p, keys)
    r = runs_of_kind(sel, p, False)
    chosen = ", ".join(f"{seat_selected(sel, p, i)} AS s{i}" for i in SEATS)
    deltas = ", ".join(f"coalesce(delta_{i}, 0) AS d{i}" for i in SEATS)
    base = (
        f"SELECT run, dealer, winner, policy_0, policy_1, policy_2, policy_3, {deltas},"
        f" {chosen} FROM hands WHERE {r}"
    )
    parts: list[str] = []

    def cluster(in_group: str) -> tuple[str, str, str]:
        """Per hand: seats in the group, their wins, their score change."""
        conds = [f"s{j} AND " + in_group.format(j=j) for j in SEATS]
        m = _sum([f"({c})::INTEGER" for c in conds])
        w = _sum([f"({c} AND winner = {j})::INTEGER" for j, c in zip(SEATS, conds)])
        y = _sum([f"CASE WHEN {c} THEN d{j} ELSE 0 END" for j, c in zip(SEATS, conds)])
        return m, w, y

    aggs = (
        "sum(m) AS n, sum(w) AS won, count(*) FILTER (WHERE m > 0) AS d, sum(y) AS y,"
        " sum(y::DOUBLE * y) AS yy, sum(y * m) AS ym, sum(m * m) AS mm"
    )
    fixed = [
        (k, lab, cond)
        for k in keys
        if k in ("seat", "dealer", "all")
        for lab, cond in _fixed_groups(k)
    ]
    if fixed:
        cols, structs = [], []
        for x, (k, lab, cond) in enumerate(fixed):
            m, w, y = cluster(cond)
            cols.append(f"{m} AS m{x}, {w} AS w{x}, {y}::BIGINT AS y{x}")
            structs.append(
                f"{{'g': '{k}', 'key': '{lab}', 'n': sum(m{x}), 'won': sum(w{x}),"
                f" 'd': count(*) FILTER (WHERE m{x} > 0), 'y': sum(y{x}),"
                f" 'yy': sum(y{x}::DOUBLE * y{x}), 'ym': sum(y{x} * m{x}),"
                f" 'mm': sum(m{x} * m{x})}}"
            )
        parts.append(
            "SELECT u.g, u.key, u.n, u.won, u.d, u.y, u.yy, u.ym, u.mm FROM"
            f" (SELECT unnest([{', '.join(structs)}]) AS u FROM"
            f" (SELECT {', '.join(cols)} FROM ({base})))"
        )
    if "policy" in keys:
        structs = []
        for i in SEATS:
            m, w, y = cluster(f"policy_{{j}} = policy_{i}")
            first = " AND ".join(
                [f"s{i}"]
                + [f"NOT coalesce(s{j} AND policy_{j} = policy_{i}, false)" for j in range(i)]
            )
            structs.append(
                f"{{'key': policy_{i}, 'first': coalesce({first}, false), 'm': {m},"
                f" 'w': {w}, 'y': ({y})::BIGINT}}"
            )
        parts.append(
            "SELECT 'policy', u.key, sum(u.m), sum(u.w), count(*), sum(u.y),"
            " sum(u.y::DOUBLE * u.y), sum(u.y * u.m), sum(u.m * u.m) FROM"
            f" (SELECT unnest([{', '.join(structs)}]) AS u FROM ({base})) WHERE u.first"
            " GROUP BY u.key"
        )
    if "run" in keys:
        m, w, y = cluster("true")
        parts.append(
            f"SELECT 'run', run, {aggs} FROM (SELECT run, {m} AS m, {w} AS w, ({y})::BIGINT AS y"
            f" FROM ({base})) GROUP BY run"
        )
    dr = runs_of_kind(sel, p, True)
    sf = seat_filter(sel, p) if dr != "false" else ""
    for key in keys if dr != "false" else ():
        parts.append(
            f"SELECT '{key}', key, sum(n), sum(won), count(*), sum(y), sum(y::DOUBLE * y),"
            f" sum(y * n), sum(n * n) FROM (SELECT {GROUP_KEYS[key]} AS key, {C} AS c,"
            f" count(*) AS n, sum(won::INT) AS won, sum(delta) AS y FROM seats"
            f" WHERE {dr} AND {sf} GROUP BY 1, 2) GROUP BY key"
        )
    return p.statement(
        "SELECT g, key, sum(n) AS n, sum(won) AS won, sum(d) AS d, sum(y) AS y,"
        " sum(yy) AS yy, sum(ym) AS ym, sum(mm) AS mm"
        f" FROM ({' UNION ALL '.join(parts)}) AS t (g, key, n, won, d, y, yy, ym, mm)"
        " WHERE n > 0 GROUP BY g, key ORDER BY g, key"
    )


def _group_rates_summary(pl: Plan, p: Params, keys: Sequence[str]) -> Statement:
    sums = (
        "sum(x.n) AS n, sum(x.won) AS won, sum(x.d) AS d, sum(x.y) AS y, sum(x.yy) AS yy,"
        " sum(x.ym) AS ym, sum(x.mm) AS mm"
    )
    src = "FROM summary_clusters x JOIN sel USING (run) WHERE x.mask = sel.mask"
    parts = []
    plain = [k for k in keys if k != "run"]
    if plain:
        whats = ", ".join(f"'g:{k}'" for k in plain)
        parts.append(
            f"SELECT substr(x.what, 3) AS g, x.key, {sums} {src} AND x.what IN ({whats})"
            " GROUP BY 1, 2"
        )
    if "run" in keys:
        parts.append(f"SELECT 'run' AS g, run AS key, {sums} {src} AND x.what = 'g:all' GROUP BY 2")
    return p.statement(
        f"WITH {sel_cte(pl, p)} SELECT * FROM ({' UNION ALL '.join(parts)}) WHERE n > 0"
        " ORDER BY g, key"
    )


def paired(sel: Selection, pl: Plan | None) -> Statement:
    """Policy ``a`` minus policy ``b`` over the same duplicate deals (within each run):
    deals, runs, and the sums of the per-deal differences of win rate (``dw``, ``dww``) and
    of mean score change (``dy``, ``dyy``), for :func:`paired_diff_ci`."""
    p = Params()
    if pl is not None:
        return p.statement(
            f"WITH {sel_cte(pl, p)} SELECT a, b, sum(d) AS deals, count(DISTINCT run) AS runs,"
            " sum(dw) AS dw, sum(dww) AS dww, sum(dy) AS dy, sum(dyy) AS dyy"
            " FROM summary_paired x JOIN sel USING (run) WHERE x.mask = sel.mask"
            " GROUP BY 1, 2 ORDER BY 1, 2"
        )
    return p.statement(
        "WITH s AS (SELECT run, deal_id, policy, avg(won::INT) AS w, avg(delta) AS y"
        f" FROM seats WHERE {seats_where(sel, p)}"
        " AND run IN (SELECT run FROM runs WHERE duplicate) GROUP BY run, deal_id, policy)"
        " SELECT a.policy AS a, b.policy AS b, count(*) AS deals, count(DISTINCT a.run) AS runs,"
        " sum(a.w - b.w) AS dw, sum((a.w - b.w) ** 2) AS dww,"
        " sum(a.y - b.y) AS dy, sum((a.y - b.y) ** 2) AS dyy"
        " FROM s a JOIN s b ON a.run = b.run AND a.deal_id = b.deal_id AND a.policy < b.policy"
        " GROUP BY 1, 2 ORDER BY 1, 2"
    )


def duels(sel: Selection) -> Statement:
    """Each pair of policies over the same duplicate deals (within each run), the deal a
    match: ``a``, ``b`` (``a < b``), the deals where ``a``'s mean score change per seat-hand
    is above ``b``'s (``a_won``), below it (``b_won``) and equal (``ties``); for a
    Bradley–Terry rating (:mod:`replay.analysis.ladder`). From the hands."""
    p = Params()
    return p.statement(
        "WITH s AS (SELECT run, deal_id, policy, avg(delta) AS y"
        f" FROM seats WHERE {seats_where(sel, p)}"
        " AND run IN (SELECT run FROM runs WHERE duplicate) GROUP BY run, deal_id, policy)"
        " SELECT a.policy AS a, b.policy AS b, count(*) AS deals,"
        " count(*) FILTER (WHERE a.y > b.y) AS a_won, count(*) FILTER (WHERE a.y < b.y) AS b_won,"
        " count(*) FILTER (WHERE a.y = b.y) AS ties"
        " FROM s a JOIN s b ON a.run = b.run AND a.deal_id = b.deal_id AND a.policy < b.policy"
        " GROUP BY 1, 2 ORDER BY 1, 2"
    )


def seat_scores(run: str) -> Statement:
    """Every seat-hand of a duplicate ``run``: ``deal_id``, ``rotation``, ``seat``, ``policy``,
    ``delta``, in that order (the variance decomposition of :mod:`replay.analysis.skill`)."""
    p = Params()
    return p.statement(
        "SELECT deal_id, rotation, seat, policy, delta FROM seats"
        f" WHERE run = {p.bind(run, 'run')} ORDER BY deal_id, rotation, seat"
    )


#: The convergence keys the summary's ``conv`` rows hold.
CONV_KEYS = {"seat": "'seat ' || x.seat", "policy": "x.policy"}


def convergence_plan(state: Any, pl: Plan | None, key: str, width: int) -> Plan | None:
    """``pl`` when its ``conv`` rows give :func:`convergence` for this key and bin width
    (their bins, ``granule`` hands, a power of two, must nest in the width), else None (the
    hands)."""
    if pl is None or key not in CONV_KEYS:
        return None
    for run, _, _ in pl:
        info = state.run(run)
        if info is None or width % info.granule:
            return None
    return pl


def convergence(sel: Selection, pl: Plan | None, key: str, width: int) -> Statement:
    """Seat-hands and wins per group and per bin of ``width`` hands (by hand index); ``pl``
    must come from :func:`convergence_plan`. From the hands, for the seat key the four seat
    columns of the hands row are counted directly."""
    k = GROUP_KEYS[key]
    p = Params()
    w_ = p.bind(int(width), "width")
    if pl is not None:
        return p.statement(
            f"WITH {sel_cte(pl, p)} SELECT {CONV_KEYS[key]} AS key,"
            f" (x.bin::BIGINT * x.granule) // {w_} AS bin, sum(x.n) AS n, sum(x.won) AS won"
            f" FROM summary_conv x JOIN sel USING (run) WHERE {SEAT_BIT} GROUP BY 1, 2"
            " HAVING sum(x.n) > 0 ORDER BY 1, 2"
        )
    if key == "seat":
        chosen = ", ".join(f"{seat_selected(sel, p, i)} AS s{i}" for i in SEATS)
        cols = ", ".join(
            f"count(*) FILTER (WHERE s{i}) AS n{i},"
            f" count(*) FILTER (WHERE s{i} AND winner = {i}) AS w{i}"
            for i in SEATS
        )
        structs = ", ".join(
            f"{{'key': 'seat {i}', 'bin': bin, 'n': n{i}, 'won': w{i}}}" for i in SEATS
        )
        return p.statement(
            "SELECT u.key, u.bin, u.n, u.won FROM (SELECT unnest([" + structs + "]) AS u"
            f" FROM (SELECT bin, {cols} FROM (SELECT hand_id // {w_} AS bin, winner,"
            f" {chosen} FROM hands WHERE {runs_in(sel, p)}) GROUP BY bin)) WHERE u.n > 0"
            " ORDER BY 1, 2"
        )
    return p.statement(
        f"SELECT {k} AS key, hand_id // {w_} AS bin, count(*) AS n, sum(won::INT) AS won"
        f" FROM seats WHERE {seats_where(sel, p)} GROUP BY 1, 2 ORDER BY 1, 2"
    )
