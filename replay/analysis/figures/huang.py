"""荒庄 (a hand nobody wins): its rate per run-level group (rules, policy mix, run, players),
the share of hands still in play at each stock count, and the effect of the dealer kept by
earlier 荒庄 — each from the hands (``pl`` None) or from the summary tables.

>>> sql, params = huang_by_keys(Selection(runs=("a",)), None, ("rules", "all"))
>>> "GROUPING SETS ((k0), (k1))" in sql, params
(True, {'run_0': 'a'})
"""

from __future__ import annotations

from collections.abc import Sequence

from replay.analysis.figures.outcomes import CLUSTERS
from replay.analysis.figures.params import Params, Statement
from replay.analysis.figures.selection import (
    HAND_BIT,
    HUANG,
    Plan,
    Selection,
    hands_where,
    sel_cte,
)

#: Hand-level group keys (``h`` is hands, ``r`` the runs table): properties of the run.
HAND_KEYS: dict[str, str] = {
    "rules": "r.rules",
    "policies": "r.policy_mix",  # the rotations of a duplicate deal share it
    "run": "h.run",
    "players": "r.players::VARCHAR || ' players'",
    "all": "'all'",
}


def _hands_joined(sel: Selection, p: Params) -> str:
    return f"FROM hands h JOIN runs r USING (run) WHERE {hands_where(sel, p)}"


def _summary_hands(pl: Plan, p: Params) -> str:
    return (
        f"WITH {sel_cte(pl, p)}, hh AS (SELECT x.* FROM summary_hands x JOIN sel USING (run)"
        f" WHERE {HAND_BIT})"
    )


def huang_by_keys(sel: Selection, pl: Plan | None, keys: Sequence[str]) -> Statement:
    """Per key (column ``g``) and group of hands: hands, 荒庄, clusters and 荒庄 that kept
    the dealer. Every key is a property of the run, so the hands are counted once per run and
    the few per-run rows are then grouped by each key (``GROUPING SETS``); clusters never span
    runs, so they add."""
    p = Params()
    if pl is not None:
        return p.statement(
            f"{_summary_hands(pl, p)}, hn AS (SELECT run, sum(h.n) AS n,"
            f" coalesce(sum(h.n) FILTER (WHERE h.outcome = {HUANG}), 0) AS huang,"
            f" coalesce(sum(h.n) FILTER (WHERE h.outcome = {HUANG}"
            " AND h.streak + 1 < r.huangzhuang_rotate), 0) AS retained"
            " FROM hh h JOIN runs r USING (run) GROUP BY run),"
            " hc AS (SELECT run, sum(x.d) AS d FROM summary_clusters x JOIN sel USING (run)"
            " WHERE x.what = 'hand' AND x.mask = sel.hmask GROUP BY run),"
            " per AS (SELECT run, n, huang, d, retained FROM hn JOIN hc USING (run))"
            + _huang_outer(keys)
        )
    return p.statement(
        f"WITH per AS (SELECT run, count(*) AS n, count(*) FILTER (WHERE h.outcome = {HUANG})"
        " AS huang, count(*) FILTER (WHERE NOT r.duplicate)"
        " + count(DISTINCT h.deal_id) FILTER (WHERE r.duplicate) AS d,"
        f" count(*) FILTER (WHERE h.outcome = {HUANG} AND h.huang_streak + 1"
        f" < r.huangzhuang_rotate) AS retained {_hands_joined(sel, p)} GROUP BY run) "
        + _huang_outer(keys)
    )


def _huang_outer(keys: Sequence[str]) -> str:
    """After a ``per`` CTE (per run: n, huang, d, retained): the per-run rows grouped by
    each run-level key."""
    exprs = [HAND_KEYS[k] for k in keys]
    n = len(keys)
    full = (1 << n) - 1
    # grouping(k0, …) has a bit set for each key *not* grouped; the first key is the top bit.
    which = " ".join(f"WHEN {full & ~(1 << (n - 1 - i))} THEN '{k}'" for i, k in enumerate(keys))
    names = ", ".join(f"k{i}" for i in range(n))
    return (
        f" SELECT CASE grouping({names}) {which} END AS g,"
        f" coalesce({', '.join(f'k{i}::VARCHAR' for i in range(n))}) AS key,"
        " sum(n)::BIGINT AS n, sum(huang)::BIGINT AS huang, sum(d)::BIGINT AS d,"
        " sum(retained)::BIGINT AS retained"
        f" FROM (SELECT {', '.join(f'{e} AS k{i}' for i, e in enumerate(exprs))}, h.n, h.huang,"
        " h.d, h.retained FROM per h JOIN runs r USING (run))"
        f" GROUP BY GROUPING SETS ({', '.join(f'(k{i})' for i in range(n))})"
        " ORDER BY g, key"
    )


def survival(sel: Selection, pl: Plan | None, key: str) -> Statement:
    """Hands per group and per number of cards left in the stock when they ended (counted
    per run, then grouped: the key is a property of the run)."""
    k = HAND_KEYS[key]
    p = Params()
    if pl is not None:
        per = (
            f"WITH {sel_cte(pl, p)}, per AS (SELECT run, x.stock::INTEGER AS stock_left,"
            f" sum(x.n) AS n, coalesce(sum(x.n) FILTER (WHERE x.outcome = {HUANG}), 0) AS huang"
            f" FROM summary_stock x JOIN sel USING (run) WHERE {HAND_BIT} GROUP BY 1, 2)"
        )
    else:
        per = (
            "WITH per AS (SELECT run, stock_left::INTEGER AS stock_left, count(*) AS n,"
            f" count(*) FILTER (WHERE outcome = {HUANG}) AS huang FROM hands"
            f" WHERE {hands_where(sel, p)} GROUP BY 1, 2)"
        )
    return p.statement(
        f"{per} SELECT {k} AS key, h.stock_left, sum(h.n)::BIGINT AS n,"
        " sum(h.huang)::BIGINT AS huang FROM per h JOIN runs r USING (run)"
        " GROUP BY 1, 2 ORDER BY 1, 2"
    )


def retention(sel: Selection, pl: Plan | None) -> Statement:
    """By consecutive 荒庄 before the hand at this dealer (capped at 3): hands, 荒庄, dealer
    wins and clusters."""
    p = Params()
    if pl is not None:
        return p.statement(
            f"{_summary_hands(pl, p)}, t AS (SELECT least(streak, 3)::INTEGER AS streak,"
            f" sum(n) AS n, coalesce(sum(n) FILTER (WHERE outcome = {HUANG}), 0) AS huang,"
            f" coalesce(sum(n) FILTER (WHERE outcome <> {HUANG} AND winner = dealer), 0)"
            " AS dealer_wins FROM hh GROUP BY 1),"
            " c AS (SELECT x.key::INTEGER AS streak, sum(x.d) AS d FROM summary_clusters x"
            " JOIN sel USING (run) WHERE x.what = 'hand_streak' AND x.mask = sel.hmask"
            " GROUP BY 1)"
            " SELECT t.streak, t.n, t.huang, t.dealer_wins, c.d FROM t LEFT JOIN c USING (streak)"
            " ORDER BY 1"
        )
    return p.statement(
        "SELECT least(h.huang_streak, 3)::INTEGER AS streak, count(*) AS n,"
        f" count(*) FILTER (WHERE h.outcome = {HUANG}) AS huang,"
        f" count(*) FILTER (WHERE h.outcome <> {HUANG} AND h.winner = h.dealer) AS dealer_wins,"
        f" {CLUSTERS} AS d {_hands_joined(sel, p)} GROUP BY 1 ORDER BY 1"
    )
