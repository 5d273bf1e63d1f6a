"""The dashboard's SQL: parameterised statements over the catalog views (no streamlit here).

Every function returns ``(sql, params)``. The SQL text is put together only from this
module's constant fragments and ``?`` placeholders; every value that comes from a person or
from the store (run names, policies, seats, thresholds, limits) travels as a parameter. The
one thing that varies in the text is the *number* of placeholders of an ``IN (?, ?, …)``
list, and a choice among the constant expressions of :data:`GROUP_KEYS` / :data:`CONDITIONS`
made by key (an unknown key raises ``KeyError``).

Conventions: ``c`` is the independent unit of an interval (a deal: the rotations of a
duplicate deal share deck and dealer; otherwise a hand), ``hash(run, deal_id)``. Filters
narrow three kinds of numbers differently (see :class:`Filters`).

>>> sql, params = headline(Filters(runs=("a", "b"), seats=(0,), policies=("random",)))
>>> sql.count("?") == len(params), params[:2]
(True, ['a', 'b'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.state import OutcomeKind

HUANG = int(OutcomeKind.HUANGZHUANG)
AUTO = int(OutcomeKind.TIANHU_AUTO)
MAX_SEATS = 4
C = "hash(run, deal_id)"


@dataclass(frozen=True)
class Filters:
    """The selection every page applies.

    * ``runs``: the runs (already narrowed by the rules-preset choice); empty selects none;
    * ``seats``, ``policies``: empty means all. Seat-level numbers (win rate per seat,
      dealer, policy) count only the selected seats played by the selected policies;
      winning-hand numbers (胡息, 等, 番, score, 名堂, source) count hands won by them;
      hand-level numbers (荒庄, survival) count hands in which a selected seat was played by
      a selected policy.
    """

    runs: tuple[str, ...]
    seats: tuple[int, ...] = ()
    policies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for s in self.seats:
            if not isinstance(s, int) or not 0 <= s < MAX_SEATS:
                raise ValueError(f"bad seat {s!r}")


def _in(col: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
    """``col IN (?, …)`` (``false`` for an empty list)."""
    if not values:
        return "false", []
    return f"{col} IN ({', '.join('?' * len(values))})", list(values)


def _runs(f: Filters, col: str = "run") -> tuple[str, list[Any]]:
    return _in(col, f.runs)


def _seat_filter(f: Filters) -> tuple[str, list[Any]]:
    """Seat rows (view ``seats``): the selected seats and policies."""
    parts, params = [], []
    if f.seats:
        s, p = _in("seat", f.seats)
        parts.append(s)
        params += p
    if f.policies:
        s, p = _in("policy", f.policies)
        parts.append(s)
        params += p
    return (" AND ".join(parts) or "true"), params


def _hand_filter(f: Filters) -> tuple[str, list[Any]]:
    """Hands (view ``hands``) in which a selected seat was played by a selected policy."""
    if not f.policies:
        return "true", []
    parts, params = [], []
    for i in f.seats or range(MAX_SEATS):
        s, p = _in(f"policy_{int(i)}", f.policies)
        parts.append(s)
        params += p
    return "(" + " OR ".join(parts) + ")", params


_WINNER_POLICY = (
    "CASE winner WHEN 0 THEN policy_0 WHEN 1 THEN policy_1 WHEN 2 THEN policy_2"
    " WHEN 3 THEN policy_3 END"
)


def _win_filter(f: Filters) -> tuple[str, list[Any]]:
    """Winning hands (outcome other than 荒庄) won by a selected seat and policy."""
    parts, params = [f"outcome <> {HUANG}"], []
    if f.seats:
        s, p = _in("winner", f.seats)
        parts.append(s)
        params += p
    if f.policies:
        s, p = _in(_WINNER_POLICY, f.policies)
        parts.append(s)
        params += p
    return " AND ".join(parts), params


def hands_where(f: Filters) -> tuple[str, list[Any]]:
    r, p1 = _runs(f)
    h, p2 = _hand_filter(f)
    return f"{r} AND {h}", p1 + p2


def wins_where(f: Filters) -> tuple[str, list[Any]]:
    r, p1 = _runs(f)
    w, p2 = _win_filter(f)
    return f"{r} AND {w}", p1 + p2


def seats_where(f: Filters) -> tuple[str, list[Any]]:
    r, p1 = _runs(f)
    s, p2 = _seat_filter(f)
    return f"{r} AND {s}", p1 + p2


# ---------------------------------------------------------------------------------------------
# Headline numbers
# ---------------------------------------------------------------------------------------------


def headline(f: Filters) -> tuple[str, list[Any]]:
    """One row: hand counts by outcome (hand level), 自摸 and dealer wins."""
    w, p = hands_where(f)
    return (
        f"SELECT count(*) AS n, count(DISTINCT {C}) AS clusters,"
        f" count(*) FILTER (WHERE outcome <> {HUANG}) AS wins,"
        f" count(*) FILTER (WHERE outcome = {HUANG}) AS huang,"
        " count(*) FILTER (WHERE outcome = 0) AS hu,"
        f" count(*) FILTER (WHERE outcome = {AUTO}) AS tianhu_auto,"
        " count(*) FILTER (WHERE outcome = 3) AS tianhu,"
        f" count(*) FILTER (WHERE outcome <> {HUANG} AND winner = dealer) AS dealer_wins,"
        " count(*) FILTER (WHERE zimo) AS zimo,"
        " count(DISTINCT run) AS runs"
        f" FROM hands WHERE {w}",
        p,
    )


_VALUE_COLS = ("huxi", "deng", "fan", "score")


def winning_moments(f: Filters) -> tuple[str, list[Any]]:
    """Cluster sums of 胡息, 等, 番 and score over the selected wins (one row), for
    :func:`replay.intervals.cluster_mean_ci`, and the count of 自摸 among them."""
    w, p = wins_where(f)
    inner = ", ".join(f"sum({c}) AS y_{c}, count({c}) AS m_{c}" for c in _VALUE_COLS)
    outer = ", ".join(
        f"count(m_{c}) FILTER (WHERE m_{c} > 0) AS d_{c}, sum(y_{c}) AS y_{c}, sum(m_{c}) AS m_{c},"
        f" sum(y_{c} * y_{c}) AS yy_{c}, sum(y_{c} * m_{c}) AS ym_{c},"
        f" sum(m_{c} * m_{c}) AS mm_{c}"
        for c in _VALUE_COLS
    )
    return (
        f"SELECT count(*) AS clusters, sum(n) AS wins, sum(z) AS zimo, {outer} FROM"
        f" (SELECT {C} AS c, count(*) AS n, count(*) FILTER (WHERE zimo) AS z, {inner}"
        f" FROM hands WHERE {w} GROUP BY c)",
        p,
    )


# ---------------------------------------------------------------------------------------------
# Seat-level rates
# ---------------------------------------------------------------------------------------------

#: Group keys of seat rows: constant SQL expressions, chosen by name.
GROUP_KEYS: dict[str, str] = {
    "seat": "'seat ' || seat",
    "dealer": "CASE WHEN seat = dealer THEN 'dealer' ELSE 'non-dealer' END",
    "policy": "policy",
    "run": "run",
    "all": "'all'",
}


def group_rates(f: Filters, key: str) -> tuple[str, list[Any]]:
    """Per group of seat rows: seat-hands ``n``, wins, and the cluster sums of the score
    change (as ``replay.stats`` does per run)."""
    k = GROUP_KEYS[key]
    w, p = seats_where(f)
    return (
        "SELECT key, sum(n) AS n, sum(won) AS won, count(*) AS d, sum(y) AS y,"
        " sum(y * y) AS yy, sum(y * n) AS ym, sum(n * n) AS mm,"
        " sum(won * won) AS ww, sum(won * n) AS wm"
        f" FROM (SELECT {k} AS key, {C} AS c, count(*) AS n, sum(won::INT) AS won,"
        f" sum(delta) AS y FROM seats WHERE {w} GROUP BY 1, 2)"
        " GROUP BY key ORDER BY key",
        p,
    )


def paired(f: Filters) -> tuple[str, list[Any]]:
    """Policy a minus policy b over the same duplicate deals (within each run): sums of the
    differences of win rate and of mean score change, for :func:`paired_diff_ci`."""
    w, p = seats_where(f)
    return (
        "WITH s AS (SELECT run, deal_id, policy, avg(won::INT) AS w, avg(delta) AS y"
        f" FROM seats WHERE {w} AND run IN (SELECT run FROM runs WHERE duplicate)"
        " GROUP BY run, deal_id, policy)"
        " SELECT a.policy AS a, b.policy AS b, count(*) AS deals, count(DISTINCT a.run) AS runs,"
        " sum(a.w - b.w) AS dw, sum((a.w - b.w) ** 2) AS dww,"
        " sum(a.y - b.y) AS dy, sum((a.y - b.y) ** 2) AS dyy"
        " FROM s a JOIN s b ON a.run = b.run AND a.deal_id = b.deal_id AND a.policy < b.policy"
        " GROUP BY 1, 2 ORDER BY 1, 2",
        p,
    )


def convergence(f: Filters, key: str, width: int) -> tuple[str, list[Any]]:
    """Seat-hands and wins per group and per bin of ``width`` hands (by hand index)."""
    k = GROUP_KEYS[key]
    w, p = seats_where(f)
    return (
        f"SELECT {k} AS key, hand_id // ? AS bin, count(*) AS n, sum(won::INT) AS won"
        f" FROM seats WHERE {w} GROUP BY 1, 2 ORDER BY 1, 2",
        [int(width), *p],
    )


# ---------------------------------------------------------------------------------------------
# 胡息 and score
# ---------------------------------------------------------------------------------------------


def value_counts(f: Filters) -> tuple[str, list[Any]]:
    """Long table ``metric, v, n``: how many selected wins had each 胡息 / 等 / 番 / score."""
    w, p = wins_where(f)
    parts = [
        f"SELECT '{c}' AS metric, {c}::INTEGER AS v, count(*) AS n FROM w"
        f" WHERE {c} IS NOT NULL GROUP BY 1, 2"
        for c in _VALUE_COLS
    ]
    return (
        f"WITH w AS (SELECT huxi, deng, fan, score FROM hands WHERE {w}) "
        + " UNION ALL ".join(parts)
        + " ORDER BY 1, 2",
        p,
    )


def by_source(f: Filters) -> tuple[str, list[Any]]:
    """Per source of the hu card (null: a 3提/5坎 天胡): wins, clusters, moments of 胡息 and
    score."""
    w, p = wins_where(f)
    return (
        "SELECT coalesce(source, 255)::INTEGER AS source, count(*) AS n,"
        f" count(DISTINCT {C}) AS d, sum(huxi) AS huxi, sum(huxi * huxi) AS huxi2,"
        " sum(score) AS score, sum(score::DOUBLE * score) AS score2,"
        " count(*) FILTER (WHERE zimo) AS zimo"
        f" FROM hands WHERE {w} GROUP BY 1 ORDER BY 1",
        p,
    )


def by_mingtang(f: Filters) -> tuple[str, list[Any]]:
    """Per 名堂 level (花样, or the Luzhou mode) and 名堂 bit (−1: 平胡, no 名堂): wins carrying
    it, moments of 胡息 and score, and the score above 平胡 (score − 等); plus per level the
    totals (bit −2)."""
    w, p = wins_where(f)
    return (
        "WITH w AS (SELECT run, h.deal_id, h.huxi, h.deng, h.score, h.mingtang, r.level"
        f" FROM hands h JOIN runs r USING (run) WHERE {w})"
        " SELECT w.level, b.bit::INTEGER AS bit, count(*) AS n,"
        f" count(DISTINCT {C}) AS d, sum(huxi) AS huxi, sum(huxi * huxi) AS huxi2,"
        " sum(score) AS score, sum(score::DOUBLE * score) AS score2,"
        " sum(score - deng) AS extra"
        " FROM w JOIN mingtang_codes b ON (w.mingtang >> b.bit) & 1 = 1"
        " GROUP BY ALL"
        " UNION ALL SELECT level, -1, count(*), count(DISTINCT "
        + C
        + "), sum(huxi), sum(huxi * huxi), sum(score), sum(score::DOUBLE * score),"
        " sum(score - deng) FROM w WHERE mingtang = 0 GROUP BY ALL"
        " UNION ALL SELECT level, -2, count(*), count(DISTINCT "
        + C
        + "), sum(huxi), sum(huxi * huxi), sum(score), sum(score::DOUBLE * score),"
        " sum(score - deng) FROM w GROUP BY ALL"
        " ORDER BY 1, 2",
        p,
    )


def mingtang_codes() -> tuple[str, list[Any]]:
    return "SELECT bit::INTEGER AS bit, pinyin, name, level, fan FROM mingtang_codes", []


def win_sample(f: Filters, per_run: int, below: int) -> tuple[str, list[Any]]:
    """The first ``per_run`` selected wins with ``hand_id < below`` of each run (hands are
    independent draws, so the first ones are a fair sample), with their decks. The bound
    keeps the scan to the first shards, and so does :func:`events_for` for their events."""
    w, p = wins_where(f)
    return (
        "SELECT * EXCLUDE (k) FROM (SELECT *, row_number() OVER (PARTITION BY run"
        f" ORDER BY hand_id) AS k FROM hands WHERE {w} AND hand_id < ?) WHERE k <= ?"
        " ORDER BY run, hand_id",
        [*p, int(below), int(per_run)],
    )


# ---------------------------------------------------------------------------------------------
# 荒庄
# ---------------------------------------------------------------------------------------------

#: Hand-level group keys (``h`` is hands, ``r`` the runs table).
HAND_KEYS: dict[str, str] = {
    "rules": "r.rules",
    "policies": (
        "array_to_string(list_sort([x FOR x IN [h.policy_0, h.policy_1, h.policy_2,"
        " h.policy_3] IF x IS NOT NULL]), ',')"
    ),
    "run": "h.run",
    "players": "r.players::VARCHAR || ' players'",
    "all": "'all'",
}


def _hands_joined(f: Filters) -> tuple[str, list[Any]]:
    w, p = hands_where(f)
    return f"FROM hands h JOIN runs r USING (run) WHERE {w}", p


def huang_by(f: Filters, key: str) -> tuple[str, list[Any]]:
    k = HAND_KEYS[key]
    src, p = _hands_joined(f)
    return (
        f"SELECT {k} AS key, count(*) AS n, count(*) FILTER (WHERE h.outcome = {HUANG})"
        " AS huang, count(DISTINCT hash(h.run, h.deal_id)) AS d,"
        " count(*) FILTER (WHERE h.outcome = 1 AND h.huang_streak + 1 < r.huangzhuang_rotate)"
        f" AS retained {src} GROUP BY 1 ORDER BY 1",
        p,
    )


def survival(f: Filters, key: str) -> tuple[str, list[Any]]:
    """Hands per group and per number of cards left in the stock when they ended."""
    k = HAND_KEYS[key]
    src, p = _hands_joined(f)
    return (
        f"SELECT {k} AS key, h.stock_left::INTEGER AS stock_left, count(*) AS n,"
        f" count(*) FILTER (WHERE h.outcome = {HUANG}) AS huang {src} GROUP BY 1, 2"
        " ORDER BY 1, 2",
        p,
    )


def retention(f: Filters) -> tuple[str, list[Any]]:
    """By consecutive 荒庄 before the hand at this dealer (capped at 3): hands, 荒庄, dealer
    wins and clusters."""
    src, p = _hands_joined(f)
    return (
        "SELECT least(h.huang_streak, 3)::INTEGER AS streak, count(*) AS n,"
        f" count(*) FILTER (WHERE h.outcome = {HUANG}) AS huang,"
        f" count(*) FILTER (WHERE h.outcome <> {HUANG} AND h.winner = h.dealer) AS dealer_wins,"
        f" count(DISTINCT hash(h.run, h.deal_id)) AS d {src} GROUP BY 1 ORDER BY 1",
        p,
    )


# ---------------------------------------------------------------------------------------------
# Drill-down: hands matching a condition
# ---------------------------------------------------------------------------------------------

#: Drill-down conditions on ``hands h`` joined with ``runs r``: (SQL with at most one ``?``,
#: whether it takes a value, whether it is about winning hands).
CONDITIONS: dict[str, tuple[str, bool, bool]] = {
    "huxi_ge": ("h.huxi >= ?", True, True),
    "huxi_eq": ("h.huxi = ?", True, True),
    "deng_eq": ("h.deng = ?", True, True),
    "fan_eq": ("h.fan = ?", True, True),
    "score_ge": ("h.score >= ?", True, True),
    "score_eq": ("h.score = ?", True, True),
    "mingtang": ("(h.mingtang >> ?) & 1 = 1", True, True),
    "pinghu": ("h.mingtang = 0", False, True),
    "source": ("coalesce(h.source, 255) = ?", True, True),
    "zimo": ("h.zimo", False, True),
    "dealer_win": ("h.winner = h.dealer", False, True),
    "tianhu_auto": (f"h.outcome = {AUTO}", False, True),
    "huang": (f"h.outcome = {HUANG}", False, False),
    "huang_retained": (
        f"h.outcome = {HUANG} AND h.huang_streak + 1 < r.huangzhuang_rotate",
        False,
        False,
    ),
    "stock_left": ("h.stock_left = ?", True, False),
    "retained_dealer": ("h.huang_streak > 0", False, False),
    # 破跑胡 candidates: a 跑 of the hu card was possible (a 碰 or 偎 of it on the winner's
    # table, or three of it dealt to him and another's card); confirmed by replay.
    "popao": (
        "h.outcome IN (0, 3) AND h.hu_card IS NOT NULL AND coalesce(h.source, 2) <> 2 AND ("
        " EXISTS (SELECT 1 FROM events e WHERE e.run = h.run AND e.hand_id = h.hand_id"
        " AND e.seat = h.winner AND ((e.kind = 2 AND e.card = h.hu_card)"
        " OR (e.kind = 5 AND e.action = 50 + h.hu_card)))"
        " OR (h.source <> 0 AND len([i FOR i IN range(20) IF substr(hex(h.deck),"
        " 2 * (i + 20 * (CASE WHEN h.winner = h.dealer THEN 0"
        " WHEN h.winner = (h.dealer + 1) % r.players THEN 1 ELSE 2 END)) + 1, 2)"
        " = printf('%02X', h.hu_card)])"
        " + (h.winner = h.dealer AND substr(hex(h.deck), 121, 2) = printf('%02X', h.hu_card))::INT"
        " = 3))",
        False,
        True,
    ),
}

HAND_COLUMNS = (
    "run, h.hand_id, h.dealer, h.huang_streak, h.outcome, h.winner, h.source, h.hu_card,"
    " h.huxi, h.deng, h.fan, h.score, h.mingtang, h.zimo, h.stock_left, h.n_events"
)


def _condition(f: Filters, cond: str, value: int | None) -> tuple[str, list[Any]]:
    text, takes_value, about_wins = CONDITIONS[cond]
    where, p = wins_where(f) if about_wins else hands_where(f)
    params = [*p]
    if takes_value:
        if value is None:
            raise ValueError(f"condition {cond!r} needs a value")
        params.append(int(value))
    return f"FROM hands h JOIN runs r USING (run) WHERE {where} AND {text}", params


def hand_count(f: Filters, cond: str, value: int | None) -> tuple[str, list[Any]]:
    """How many hands match, out of how many (the base: selected hands, or selected wins)."""
    text, _, about_wins = CONDITIONS[cond]
    src, p = _condition(f, cond, value)
    base_where, bp = wins_where(f) if about_wins else hands_where(f)
    return (
        f"SELECT (SELECT count(*) {src}) AS k, (SELECT count(*) FROM hands WHERE {base_where})"
        " AS n",
        p + bp,
    )


def hand_list(
    f: Filters, cond: str, value: int | None, limit: int, with_deck: bool = False
) -> tuple[str, list[Any]]:
    """The first ``limit`` matching hands (by run and hand id); with their decks, to replay."""
    src, p = _condition(f, cond, value)
    cols = HAND_COLUMNS + (", h.deck" if with_deck else "")
    return (
        f"SELECT {cols} {src} ORDER BY run, h.hand_id LIMIT ?",
        [*p, int(limit)],
    )


def events_for(ranges: Sequence[tuple[str, int, int]]) -> tuple[str, list[Any]]:
    """The decisions of the hands in ``(run, first, last)`` ranges, one list per hand (the
    hand-id bounds let DuckDB skip the shards outside them)."""
    if not ranges:
        return (
            "SELECT NULL::VARCHAR AS run, NULL AS hand_id, [] AS seat, [] AS action WHERE false",
            [],
        )
    cond = " OR ".join("(run = ? AND hand_id BETWEEN ? AND ?)" for _ in ranges)
    params: list[Any] = []
    for run, lo, hi in ranges:
        params += [run, int(lo), int(hi)]
    return (
        "SELECT run, hand_id, list(seat ORDER BY seq) AS seat, list(action ORDER BY seq)"
        f" AS action FROM events WHERE {cond} GROUP BY run, hand_id",
        params,
    )


def hand_ids(run: str) -> tuple[str, list[Any]]:
    return "SELECT min(hand_id) AS lo, max(hand_id) AS hi FROM hands WHERE run = ?", [run]
