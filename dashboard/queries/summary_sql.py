"""The dashboard's statements over the summary tables (``summary_<kind>``, see
:mod:`replay.analysis.summary`): each function gives the same columns and the same numbers as
its namesake in :mod:`dashboard.queries.sql`, which reads the hands. No streamlit.

A :data:`Plan` is, per selected run, its seat mask and its rotation mask for the sidebar's
seats and policies (:func:`plan`); it travels as parameters of a ``sel`` CTE, and every
summary row is kept or dropped by a bit test against it. The SQL text is put together only
from this module's constant fragments (and those of :mod:`dashboard.queries.sql`).

>>> sql, params = headline((("a", 7, 1),))
>>> sql.count("?") == len(params), params
(True, ['a', 7, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dashboard.queries import sql as raw
from dashboard.queries.sql import HUANG, Filters
from replay.analysis import summary

#: Per selected run: (run, seat mask, rotation mask).
Plan = tuple[tuple[str, int, int], ...]


def plan(state: Any, f: Filters) -> Plan | None:
    """The masks of the selected runs, or None when one of them has no summary (then the
    pages read the hands)."""
    out = []
    for name in f.runs:
        info = state.run(name)
        if info is None or not summary.summarized(info):
            return None
        per = summary.seat_policies(info.policies, info.players, info.rotations)
        out.append(
            (
                name,
                summary.seat_mask(per, info.players, f.seats, f.policies),
                summary.hand_mask(per, f.seats, f.policies),
            )
        )
    return tuple(out)


def _sel(p: Plan) -> tuple[str, list[Any]]:
    if not p:
        return (
            "sel AS (SELECT NULL::VARCHAR AS run, 0::USMALLINT AS mask, 0::USMALLINT AS hmask"
            " WHERE false)",
            [],
        )
    values = ", ".join("(?, ?::USMALLINT, ?::USMALLINT)" for _ in p)
    params: list[Any] = []
    for run, mask, hmask in p:
        params += [run, int(mask), int(hmask)]
    return f"sel (run, mask, hmask) AS (VALUES {values})", params


SEAT_BIT = "(sel.mask >> (4 * x.rotation + x.seat)) & 1 = 1"
WIN_BIT = f"x.outcome <> {HUANG} AND (sel.mask >> (4 * x.rotation + x.winner)) & 1 = 1"
WINNER_BIT = "(sel.mask >> (4 * x.rotation + x.winner)) & 1 = 1"
HAND_BIT = "(sel.hmask >> x.rotation) & 1 = 1"


def headline(p: Plan) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.headline`."""
    s, params = _sel(p)
    return (
        f"WITH {s}, h AS (SELECT x.* FROM summary_hands x JOIN sel USING (run) WHERE {HAND_BIT}),"
        " c AS (SELECT coalesce(sum(x.d), 0) AS clusters FROM summary_clusters x JOIN sel"
        " USING (run) WHERE x.what = 'hand' AND x.mask = sel.hmask)"
        " SELECT coalesce(sum(n), 0) AS n, (SELECT clusters FROM c) AS clusters,"
        f" coalesce(sum(n) FILTER (WHERE outcome <> {HUANG}), 0) AS wins,"
        f" coalesce(sum(n) FILTER (WHERE outcome = {HUANG}), 0) AS huang,"
        " coalesce(sum(n) FILTER (WHERE outcome = 0), 0) AS hu,"
        f" coalesce(sum(n) FILTER (WHERE outcome = {raw.AUTO}), 0) AS tianhu_auto,"
        " coalesce(sum(n) FILTER (WHERE outcome = 3), 0) AS tianhu,"
        f" coalesce(sum(n) FILTER (WHERE outcome <> {HUANG} AND winner = dealer), 0)"
        " AS dealer_wins, coalesce(sum(n) FILTER (WHERE zimo), 0) AS zimo,"
        " count(DISTINCT run) AS runs FROM h",
        params,
    )


def winning_moments(p: Plan) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.winning_moments`."""
    s, params = _sel(p)
    cols = ", ".join(
        f"coalesce(sum(d) FILTER (WHERE what = 'win:{c}'), 0) AS d_{c},"
        f" sum(y) FILTER (WHERE what = 'win:{c}') AS y_{c},"
        f" coalesce(sum(m) FILTER (WHERE what = 'win:{c}'), 0) AS m_{c},"
        f" sum(yy) FILTER (WHERE what = 'win:{c}') AS yy_{c},"
        f" sum(ym) FILTER (WHERE what = 'win:{c}') AS ym_{c},"
        f" coalesce(sum(mm) FILTER (WHERE what = 'win:{c}'), 0) AS mm_{c}"
        for c in summary.VALUE_COLS
    )
    whats = ", ".join(f"'win:{c}'" for c in summary.VALUE_COLS)
    return (
        f"WITH {s} SELECT coalesce(sum(d) FILTER (WHERE what = 'win'), 0) AS clusters,"
        " coalesce(sum(n) FILTER (WHERE what = 'win'), 0) AS wins,"
        f" coalesce(sum(won) FILTER (WHERE what = 'win'), 0) AS zimo, {cols}"
        " FROM summary_clusters x JOIN sel USING (run) WHERE x.mask = sel.mask"
        f" AND x.what IN ('win', {whats})",
        params,
    )


def group_rates_by(p: Plan, keys: Sequence[str]) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.group_rates_by` (keys seat, dealer, policy, all, run)."""
    for key in keys:
        raw.GROUP_KEYS[key]  # noqa: B018 - an unknown key raises KeyError
    s, params = _sel(p)
    sums = (
        "sum(x.n) AS n, sum(x.won) AS won, sum(x.d) AS d, sum(x.y) AS y, sum(x.yy) AS yy,"
        " sum(x.ym) AS ym, sum(x.mm) AS mm"
    )
    src = "FROM summary_clusters x JOIN sel USING (run) WHERE x.mask = sel.mask"
    parts = []
    plain = [k for k in keys if k != "run"]
    if plain:
        whats = ", ".join(f"'g:{k}'" for k in plain)
        parts.append(f"SELECT substr(x.what, 3) AS g, x.key, {sums} {src} AND x.what IN ({whats})")
        parts[-1] += " GROUP BY 1, 2"
    if "run" in keys:
        parts.append(f"SELECT 'run' AS g, run AS key, {sums} {src} AND x.what = 'g:all' GROUP BY 2")
    return (
        f"WITH {s} SELECT * FROM ({' UNION ALL '.join(parts)}) WHERE n > 0 ORDER BY g, key",
        params,
    )


def paired(p: Plan) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.paired`."""
    s, params = _sel(p)
    return (
        f"WITH {s} SELECT a, b, sum(d) AS deals, count(DISTINCT run) AS runs, sum(dw) AS dw,"
        " sum(dww) AS dww, sum(dy) AS dy, sum(dyy) AS dyy FROM summary_paired x JOIN sel"
        " USING (run) WHERE x.mask = sel.mask GROUP BY 1, 2 ORDER BY 1, 2",
        params,
    )


CONV_KEYS = {"seat": "'seat ' || x.seat", "policy": "x.policy"}


def convergence_ok(state: Any, p: Plan, key: str, width: int) -> bool:
    """Whether the ``conv`` rows give :func:`convergence` for this key and bin width: their
    bins (``granule`` hands, a power of two) must nest in the width."""
    if key not in CONV_KEYS:
        return False
    for run, _, _ in p:
        info = state.run(run)
        if info is None or width % summary.granule(info.hands_target):
            return False
    return True


def convergence(p: Plan, key: str, width: int) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.convergence` (when :func:`convergence_ok`)."""
    s, params = _sel(p)
    return (
        f"WITH {s} SELECT {CONV_KEYS[key]} AS key, (x.bin::BIGINT * x.granule) // ? AS bin,"
        " sum(x.n) AS n, sum(x.won) AS won FROM summary_conv x JOIN sel USING (run)"
        f" WHERE {SEAT_BIT} GROUP BY 1, 2 HAVING sum(x.n) > 0 ORDER BY 1, 2",
        [*params, int(width)],
    )


def value_counts(p: Plan) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.value_counts`."""
    s, params = _sel(p)
    return (
        f"WITH {s} SELECT metric, v, sum(n) AS n FROM summary_values x JOIN sel USING (run)"
        f" WHERE {WINNER_BIT} GROUP BY 1, 2 ORDER BY 1, 2",
        params,
    )


def by_source(p: Plan) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.by_source`."""
    s, params = _sel(p)
    return (
        f"WITH {s}, w AS (SELECT coalesce(x.source, 255)::INTEGER AS source, sum(x.n) AS n,"
        " sum(x.huxi_s) AS huxi, sum(x.huxi_ss) AS huxi2, sum(x.score_s) AS score,"
        " sum(x.score_ss) AS score2, coalesce(sum(x.n) FILTER (WHERE x.zimo), 0) AS zimo"
        f" FROM summary_hands x JOIN sel USING (run) WHERE {WIN_BIT} GROUP BY 1),"
        " c AS (SELECT x.key::INTEGER AS source, sum(x.d) AS d FROM summary_clusters x"
        " JOIN sel USING (run) WHERE x.what = 'win_source' AND x.mask = sel.mask GROUP BY 1)"
        " SELECT w.source, w.n, c.d, w.huxi, w.huxi2, w.score, w.score2, w.zimo"
        " FROM w LEFT JOIN c USING (source) ORDER BY 1",
        params,
    )


def by_mingtang(p: Plan) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.by_mingtang`."""
    s, params = _sel(p)
    return (
        f"WITH {s}, m AS (SELECT r.level, x.bit::INTEGER AS bit, sum(x.n) AS n,"
        " sum(x.huxi_s) AS huxi, sum(x.huxi_ss) AS huxi2, sum(x.score_s) AS score,"
        " sum(x.score_ss) AS score2, sum(x.extra_s) AS extra FROM summary_mingtang x"
        f" JOIN sel USING (run) JOIN runs r USING (run) WHERE {WINNER_BIT} GROUP BY 1, 2),"
        " c AS (SELECT r.level, x.key::INTEGER AS bit, sum(x.d) AS d FROM summary_clusters x"
        " JOIN sel USING (run) JOIN runs r USING (run) WHERE x.what = 'win_bit'"
        " AND x.mask = sel.mask GROUP BY 1, 2)"
        " SELECT m.level, m.bit, m.n, c.d, m.huxi, m.huxi2, m.score, m.score2, m.extra"
        " FROM m LEFT JOIN c USING (level, bit) ORDER BY 1, 2",
        params,
    )


def _hand_rows(p: Plan) -> tuple[str, list[Any]]:
    s, params = _sel(p)
    return (
        f"WITH {s}, hh AS (SELECT x.* FROM summary_hands x JOIN sel USING (run) WHERE {HAND_BIT})",
        params,
    )


def huang_by_keys(p: Plan, keys: Sequence[str]) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.huang_by_keys`."""
    w, params = _hand_rows(p)
    return (
        f"{w}, hn AS (SELECT run, sum(h.n) AS n,"
        f" coalesce(sum(h.n) FILTER (WHERE h.outcome = {HUANG}), 0) AS huang,"
        f" coalesce(sum(h.n) FILTER (WHERE h.outcome = {HUANG}"
        " AND h.streak + 1 < r.huangzhuang_rotate), 0) AS retained"
        " FROM hh h JOIN runs r USING (run) GROUP BY run),"
        " hc AS (SELECT run, sum(x.d) AS d FROM summary_clusters x JOIN sel USING (run)"
        " WHERE x.what = 'hand' AND x.mask = sel.hmask GROUP BY run),"
        " per AS (SELECT run, n, huang, d, retained FROM hn JOIN hc USING (run))"
        + raw.huang_outer(keys),
        params,
    )


def survival(p: Plan, key: str) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.survival`."""
    s, params = _sel(p)
    return (
        f"WITH {s}, per AS (SELECT run, x.stock::INTEGER AS stock_left, sum(x.n) AS n,"
        f" coalesce(sum(x.n) FILTER (WHERE x.outcome = {HUANG}), 0) AS huang"
        f" FROM summary_stock x JOIN sel USING (run) WHERE {HAND_BIT} GROUP BY 1, 2)"
        + raw.survival_outer(key),
        params,
    )


def retention(p: Plan) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.retention`."""
    w, params = _hand_rows(p)
    return (
        f"{w}, t AS (SELECT least(streak, 3)::INTEGER AS streak, sum(n) AS n,"
        f" coalesce(sum(n) FILTER (WHERE outcome = {HUANG}), 0) AS huang,"
        f" coalesce(sum(n) FILTER (WHERE outcome <> {HUANG} AND winner = dealer), 0)"
        " AS dealer_wins FROM hh GROUP BY 1),"
        " c AS (SELECT x.key::INTEGER AS streak, sum(x.d) AS d FROM summary_clusters x"
        " JOIN sel USING (run) WHERE x.what = 'hand_streak' AND x.mask = sel.hmask GROUP BY 1)"
        " SELECT t.streak, t.n, t.huang, t.dealer_wins, c.d FROM t LEFT JOIN c USING (streak)"
        " ORDER BY 1",
        params,
    )


# ---------------------------------------------------------------------------------------------
# Drill-down counts (the lists themselves read the hands, shard by shard)
# ---------------------------------------------------------------------------------------------

#: Drill-down conditions the summary counts exactly: (kind, condition on its rows ``x``, with
#: at most one ``?``). ``popao`` needs the events and is never here.
DRILL: dict[str, tuple[str, str]] = {
    "huxi_ge": ("values", "x.metric = 'huxi' AND x.v >= ?"),
    "huxi_eq": ("values", "x.metric = 'huxi' AND x.v = ?"),
    "deng_eq": ("values", "x.metric = 'deng' AND x.v = ?"),
    "fan_eq": ("values", "x.metric = 'fan' AND x.v = ?"),
    "score_ge": ("values", "x.metric = 'score' AND x.v >= ?"),
    "score_eq": ("values", "x.metric = 'score' AND x.v = ?"),
    "mingtang": ("mingtang", "x.bit = ?"),
    "pinghu": ("mingtang", "x.bit = -1"),
    "source": ("hands", "coalesce(x.source, 255) = ?"),
    "zimo": ("hands", "x.zimo"),
    "dealer_win": ("hands", "x.winner = x.dealer"),
    "tianhu_auto": ("hands", f"x.outcome = {raw.AUTO}"),
    "huang": ("hands", f"x.outcome = {HUANG}"),
    "huang_retained": (
        "hands",
        f"x.outcome = {HUANG} AND x.streak + 1 < (SELECT huangzhuang_rotate FROM runs r"
        " WHERE r.run = x.run)",
    ),
    "stock_left": ("stock", "x.stock = ?"),
    "retained_dealer": ("hands", "x.streak > 0"),
}


def hand_count(p: Plan, cond: str, value: int | None) -> tuple[str, list[Any]]:
    """:func:`dashboard.queries.sql.hand_count` for a condition of :data:`DRILL`: k of n
    (n: the selected wins, or the selected hands)."""
    kind, text = DRILL[cond]
    _, takes_value, about_wins = raw.CONDITIONS[cond]
    s, params = _sel(p)
    if about_wins:
        # every win once: the 'hands' rows (the other kinds count a win once per value/bit)
        base = f"FROM summary_hands x JOIN sel USING (run) WHERE {WIN_BIT}"
        bit = WIN_BIT if kind == "hands" else WINNER_BIT
        src = f"FROM summary_{kind} x JOIN sel USING (run) WHERE {bit}"
    else:
        base = f"FROM summary_hands x JOIN sel USING (run) WHERE {HAND_BIT}"
        src = f"FROM summary_{kind} x JOIN sel USING (run) WHERE {HAND_BIT}"
    vp: list[Any] = []
    if takes_value:
        if value is None:
            raise ValueError(f"condition {cond!r} needs a value")
        vp = [int(value)]
    return (
        f"WITH {s} SELECT (SELECT coalesce(sum(x.n), 0) {src} AND {text}) AS k,"
        f" (SELECT coalesce(sum(x.n), 0) {base}) AS n",
        [*params, *vp],
    )
