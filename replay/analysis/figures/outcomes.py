"""How hands end: the headline counts (outcomes, 自摸, dealer wins), the moments of the
winning 胡息 / 等 / 番 / score, and the automatic 3提/5坎 天胡 per deal — each from the hands
(``pl`` None) or from the summary tables (a :data:`~replay.analysis.figures.selection.Plan`).

>>> sql, params = headline(Selection(runs=("a", "b"), seats=(0,), policies=("random",)), None)
>>> sorted(params.items())
[('pol_0', 'random'), ('run_0', 'a'), ('run_1', 'b')]
"""

from __future__ import annotations

from replay.analysis.figures.params import Params, Statement
from replay.analysis.figures.selection import (
    AUTO,
    HAND_BIT,
    HU,
    HUANG,
    TIANHU,
    C,
    Plan,
    Selection,
    hands_where,
    runs_of_kind,
    sel_cte,
    win_filter,
)
from replay.store import summary_schema as summary

VALUE_COLS = summary.VALUE_COLS

# Clusters of a set of hand rows joined with ``runs r``: a hand is its own cluster, except in
# a --duplicate run, where the rotations of a deal form one (only those need a DISTINCT).
CLUSTERS = (
    "count(*) FILTER (WHERE NOT r.duplicate)"
    " + count(DISTINCT hash(run, h.deal_id)) FILTER (WHERE r.duplicate)"
)


def headline(sel: Selection, pl: Plan | None) -> Statement:
    """One row: hand counts by outcome (hand level), 自摸 and dealer wins, clusters, runs."""
    p = Params()
    if pl is None:
        return p.statement(
            f"SELECT count(*) AS n, {CLUSTERS} AS clusters,"
            f" count(*) FILTER (WHERE outcome <> {HUANG}) AS wins,"
            f" count(*) FILTER (WHERE outcome = {HUANG}) AS huang,"
            f" count(*) FILTER (WHERE outcome = {HU}) AS hu,"
            f" count(*) FILTER (WHERE outcome = {AUTO}) AS tianhu_auto,"
            f" count(*) FILTER (WHERE outcome = {TIANHU}) AS tianhu,"
            f" count(*) FILTER (WHERE outcome <> {HUANG} AND winner = dealer) AS dealer_wins,"
            " count(*) FILTER (WHERE zimo) AS zimo,"
            " count(DISTINCT run) AS runs"
            f" FROM hands h JOIN runs r USING (run) WHERE {hands_where(sel, p)}"
        )
    return p.statement(
        f"WITH {sel_cte(pl, p)}, h AS (SELECT x.* FROM summary_hands x JOIN sel USING (run)"
        f" WHERE {HAND_BIT}),"
        " c AS (SELECT coalesce(sum(x.d), 0) AS clusters FROM summary_clusters x JOIN sel"
        " USING (run) WHERE x.what = 'hand' AND x.mask = sel.hmask)"
        " SELECT coalesce(sum(n), 0) AS n, (SELECT clusters FROM c) AS clusters,"
        f" coalesce(sum(n) FILTER (WHERE outcome <> {HUANG}), 0) AS wins,"
        f" coalesce(sum(n) FILTER (WHERE outcome = {HUANG}), 0) AS huang,"
        f" coalesce(sum(n) FILTER (WHERE outcome = {HU}), 0) AS hu,"
        f" coalesce(sum(n) FILTER (WHERE outcome = {AUTO}), 0) AS tianhu_auto,"
        f" coalesce(sum(n) FILTER (WHERE outcome = {TIANHU}), 0) AS tianhu,"
        f" coalesce(sum(n) FILTER (WHERE outcome <> {HUANG} AND winner = dealer), 0)"
        " AS dealer_wins, coalesce(sum(n) FILTER (WHERE zimo), 0) AS zimo,"
        " count(DISTINCT run) AS runs FROM h"
    )


def winning_moments(sel: Selection, pl: Plan | None) -> Statement:
    """Cluster sums ``d, y, m, yy, ym, mm`` of 胡息, 等, 番 and score over the selected wins
    (one row, columns ``d_huxi`` …), for :func:`replay.analysis.intervals.cluster_mean_ci`,
    with the wins, their clusters and the 自摸 among them.

    From the hands, those of ordinary runs are their own clusters, so their sums need no
    grouping; only the --duplicate runs are grouped by deal."""
    p = Params()
    if pl is not None:
        cols = ", ".join(
            f"coalesce(sum(d) FILTER (WHERE what = 'win:{c}'), 0) AS d_{c},"
            f" sum(y) FILTER (WHERE what = 'win:{c}') AS y_{c},"
            f" coalesce(sum(m) FILTER (WHERE what = 'win:{c}'), 0) AS m_{c},"
            f" sum(yy) FILTER (WHERE what = 'win:{c}') AS yy_{c},"
            f" sum(ym) FILTER (WHERE what = 'win:{c}') AS ym_{c},"
            f" coalesce(sum(mm) FILTER (WHERE what = 'win:{c}'), 0) AS mm_{c}"
            for c in VALUE_COLS
        )
        whats = ", ".join(f"'win:{c}'" for c in VALUE_COLS)
        return p.statement(
            f"WITH {sel_cte(pl, p)} SELECT coalesce(sum(d) FILTER (WHERE what = 'win'), 0)"
            " AS clusters, coalesce(sum(n) FILTER (WHERE what = 'win'), 0) AS wins,"
            f" coalesce(sum(won) FILTER (WHERE what = 'win'), 0) AS zimo, {cols}"
            " FROM summary_clusters x JOIN sel USING (run) WHERE x.mask = sel.mask"
            f" AND x.what IN ('win', {whats})"
        )
    win = win_filter(sel, p)
    plain = runs_of_kind(sel, p, False)
    dup = runs_of_kind(sel, p, True)
    keys = ["d", "y", "m", "yy", "ym", "mm"]
    single = ", ".join(
        f"count({c}) AS d_{c}, sum({c}) AS y_{c}, count({c}) AS m_{c},"
        f" sum({c}::DOUBLE * {c}) AS yy_{c}, sum({c}) AS ym_{c}, count({c}) AS mm_{c}"
        for c in VALUE_COLS
    )
    inner = ", ".join(f"sum({c}) AS y_{c}, count({c}) AS m_{c}" for c in VALUE_COLS)
    grouped = ", ".join(
        f"count(m_{c}) FILTER (WHERE m_{c} > 0) AS d_{c}, sum(y_{c}) AS y_{c}, sum(m_{c}) AS m_{c},"
        f" sum(y_{c}::DOUBLE * y_{c}) AS yy_{c}, sum(y_{c} * m_{c}) AS ym_{c},"
        f" sum(m_{c} * m_{c}) AS mm_{c}"
        for c in VALUE_COLS
    )
    total = ", ".join(f"sum({k}_{c}) AS {k}_{c}" for c in VALUE_COLS for k in keys)
    return p.statement(
        f"SELECT sum(clusters) AS clusters, sum(wins) AS wins, sum(zimo) AS zimo, {total} FROM ("
        f" SELECT count(*) AS clusters, count(*) AS wins, count(*) FILTER (WHERE zimo) AS zimo,"
        f" {single} FROM hands WHERE {plain} AND {win}"
        f" UNION ALL SELECT count(*), sum(n), sum(z), {grouped} FROM"
        f" (SELECT {C} AS c, count(*) AS n, count(*) FILTER (WHERE zimo) AS z, {inner}"
        f" FROM hands WHERE {dup} AND {win} GROUP BY c))"
    )


def auto_tianhu(sel: Selection, pl: Plan | None) -> Statement:
    """The automatic 3提/5坎 天胡 over distinct deals (deck and dealer decide it: of a
    --duplicate run, its rotation 0; of a run of imported hands, whose hands keep the
    rotation they were played in, every hand):
    deals ``n``, such 天胡 ``k``, and those of the dealer ``kd`` (hand level)."""
    p = Params()
    if pl is None:
        return p.statement(
            f"SELECT count(*) AS n, count(*) FILTER (WHERE outcome = {AUTO}) AS k,"
            f" count(*) FILTER (WHERE outcome = {AUTO} AND winner = dealer) AS kd"
            f" FROM hands WHERE {hands_where(sel, p)}"
            f" AND (rotation = 0 OR ({runs_of_kind(sel, p, False)}))"
        )
    return p.statement(
        f"WITH {sel_cte(pl, p)} SELECT coalesce(sum(n), 0) AS n,"
        f" coalesce(sum(n) FILTER (WHERE outcome = {AUTO}), 0) AS k,"
        f" coalesce(sum(n) FILTER (WHERE outcome = {AUTO} AND winner = dealer), 0) AS kd"
        f" FROM summary_hands x JOIN sel USING (run) WHERE {HAND_BIT}"
        f" AND (x.rotation = 0 OR ({runs_of_kind(sel, p, False)}))"
    )
