"""Winning hands: the histograms of 胡息 / 等 / 番 / score, wins by the source of the hu card,
wins by 名堂 — each from the hands (``pl`` None) or from the summary tables — and a sample of
wins with their decks (hands only).

>>> sql, params = value_counts(Selection(runs=("a",), seats=(2,)), None)
>>> params
{'run_0': 'a', 'seat_0': 2}
"""

from __future__ import annotations

from replay.analysis.figures.outcomes import CLUSTERS
from replay.analysis.figures.params import Params, Statement
from replay.analysis.figures.selection import (
    WIN_BIT,
    WINNER_BIT,
    C,
    Plan,
    Selection,
    sel_cte,
    wins_where,
)
from replay.store import summary_schema as summary

VALUE_COLS = summary.VALUE_COLS


def value_counts(sel: Selection, pl: Plan | None) -> Statement:
    """Long table ``metric, v, n``: how many selected wins had each 胡息 / 等 / 番 / score."""
    p = Params()
    if pl is not None:
        return p.statement(
            f"WITH {sel_cte(pl, p)} SELECT metric, v, sum(n) AS n FROM summary_values x"
            f" JOIN sel USING (run) WHERE {WINNER_BIT} GROUP BY 1, 2 ORDER BY 1, 2"
        )
    parts = [
        f"SELECT '{c}' AS metric, {c}::INTEGER AS v, count(*) AS n FROM w"
        f" WHERE {c} IS NOT NULL GROUP BY 1, 2"
        for c in VALUE_COLS
    ]
    return p.statement(
        f"WITH w AS (SELECT huxi, deng, fan, score FROM hands WHERE {wins_where(sel, p)}) "
        + " UNION ALL ".join(parts)
        + " ORDER BY 1, 2"
    )


def by_source(sel: Selection, pl: Plan | None) -> Statement:
    """Per source of the hu card (255: a 3提/5坎 天胡): wins, clusters, moments of 胡息 and
    score, 自摸."""
    p = Params()
    if pl is not None:
        return p.statement(
            f"WITH {sel_cte(pl, p)}, w AS (SELECT coalesce(x.source, 255)::INTEGER AS source,"
            " sum(x.n) AS n, sum(x.huxi_s) AS huxi, sum(x.huxi_ss) AS huxi2,"
            " sum(x.score_s) AS score, sum(x.score_ss) AS score2,"
            " coalesce(sum(x.n) FILTER (WHERE x.zimo), 0) AS zimo"
            f" FROM summary_hands x JOIN sel USING (run) WHERE {WIN_BIT} GROUP BY 1),"
            " c AS (SELECT x.key::INTEGER AS source, sum(x.d) AS d FROM summary_clusters x"
            " JOIN sel USING (run) WHERE x.what = 'win_source' AND x.mask = sel.mask GROUP BY 1)"
            " SELECT w.source, w.n, c.d, w.huxi, w.huxi2, w.score, w.score2, w.zimo"
            " FROM w LEFT JOIN c USING (source) ORDER BY 1"
        )
    return p.statement(
        "SELECT coalesce(source, 255)::INTEGER AS source, count(*) AS n,"
        f" {CLUSTERS} AS d, sum(huxi) AS huxi, sum(huxi * huxi) AS huxi2,"
        " sum(score) AS score, sum(score::DOUBLE * score) AS score2,"
        " count(*) FILTER (WHERE zimo) AS zimo"
        f" FROM hands h JOIN runs r USING (run) WHERE {wins_where(sel, p)} GROUP BY 1 ORDER BY 1"
    )


def by_mingtang(sel: Selection, pl: Plan | None) -> Statement:
    """Per 名堂 level (花样, or the Luzhou mode) and 名堂 bit (−1: 平胡, no 名堂): wins carrying
    it, clusters, moments of 胡息 and score, and the score above 平胡 (score − 等); plus per
    level the totals (bit −2)."""
    p = Params()
    if pl is not None:
        return p.statement(
            f"WITH {sel_cte(pl, p)}, m AS (SELECT r.level, x.bit::INTEGER AS bit, sum(x.n) AS n,"
            " sum(x.huxi_s) AS huxi, sum(x.huxi_ss) AS huxi2, sum(x.score_s) AS score,"
            " sum(x.score_ss) AS score2, sum(x.extra_s) AS extra FROM summary_mingtang x"
            f" JOIN sel USING (run) JOIN runs r USING (run) WHERE {WINNER_BIT} GROUP BY 1, 2),"
            " c AS (SELECT r.level, x.key::INTEGER AS bit, sum(x.d) AS d FROM summary_clusters x"
            " JOIN sel USING (run) JOIN runs r USING (run) WHERE x.what = 'win_bit'"
            " AND x.mask = sel.mask GROUP BY 1, 2)"
            " SELECT m.level, m.bit, m.n, c.d, m.huxi, m.huxi2, m.score, m.score2, m.extra"
            " FROM m LEFT JOIN c USING (level, bit) ORDER BY 1, 2"
        )
    agg = (
        "count(*) AS n, count(*) FILTER (WHERE NOT dup) + count(DISTINCT c) FILTER (WHERE dup)"
        " AS d, sum(huxi) AS huxi, sum(huxi * huxi) AS huxi2, sum(score) AS score,"
        " sum(score::DOUBLE * score) AS score2, sum(score - deng) AS extra"
    )
    return p.statement(
        f"WITH w AS (SELECT {C} AS c, r.duplicate AS dup, h.huxi, h.deng, h.score,"
        " h.mingtang, r.level FROM hands h JOIN runs r USING (run)"
        f" WHERE {wins_where(sel, p)})"
        f" SELECT w.level, b.bit::INTEGER AS bit, {agg}"
        " FROM w JOIN mingtang_codes b ON (w.mingtang >> b.bit) & 1 = 1 GROUP BY ALL"
        f" UNION ALL SELECT level, -1, {agg} FROM w WHERE mingtang = 0 GROUP BY ALL"
        f" UNION ALL SELECT level, -2, {agg} FROM w GROUP BY ALL"
        " ORDER BY 1, 2"
    )


def mingtang_codes() -> Statement:
    """The 名堂 code table: bit, pinyin, name, level, 番."""
    return "SELECT bit::INTEGER AS bit, pinyin, name, level, fan FROM mingtang_codes", {}
