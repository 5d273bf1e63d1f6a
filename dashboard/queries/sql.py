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
    #: which of ``runs`` are --duplicate runs, if known (lets the SQL name the runs of each
    #: kind instead of asking the runs table for every row)
    duplicate: tuple[str, ...] | None = None

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


def _runs_of_kind(f: Filters, duplicate: bool) -> tuple[str, list[Any]]:
    """The selected runs that are (or are not) --duplicate runs."""
    if f.duplicate is None:
        r, p = _runs(f)
        kind = "" if duplicate else "NOT "
        return f"{r} AND run IN (SELECT run FROM runs WHERE {kind}duplicate)", p
    dup = set(f.duplicate)
    return _in("run", [r for r in f.runs if (r in dup) == duplicate])


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


# Clusters of a set of hand rows joined with ``runs r``: a hand is its own cluster, except in
# a --duplicate run, where the rotations of a deal form one (only those need a DISTINCT).
_CLUSTERS = (
    "count(*) FILTER (WHERE NOT r.duplicate)"
    " + count(DISTINCT hash(run, h.deal_id)) FILTER (WHERE r.duplicate)"
)


def headline(f: Filters) -> tuple[str, list[Any]]:
    """One row: hand counts by outcome (hand level), 自摸 and dealer wins."""
    w, p = hands_where(f)
    return (
        f"SELECT count(*) AS n, {_CLUSTERS} AS clusters,"
        f" count(*) FILTER (WHERE outcome <> {HUANG}) AS wins,"
        f" count(*) FILTER (WHERE outcome = {HUANG}) AS huang,"
        " count(*) FILTER (WHERE outcome = 0) AS hu,"
        f" count(*) FILTER (WHERE outcome = {AUTO}) AS tianhu_auto,"
        " count(*) FILTER (WHERE outcome = 3) AS tianhu,"
        f" count(*) FILTER (WHERE outcome <> {HUANG} AND winner = dealer) AS dealer_wins,"
        " count(*) FILTER (WHERE zimo) AS zimo,"
        " count(DISTINCT run) AS runs"
        f" FROM hands h JOIN runs r USING (run) WHERE {w}",
        p,
    )


_VALUE_COLS = ("huxi", "deng", "fan", "score")


def winning_moments(f: Filters) -> tuple[str, list[Any]]:
    """Cluster sums of 胡息, 等, 番 and score over the selected wins (one row), for
    :func:`replay.analysis.intervals.cluster_mean_ci`, and the count of 自摸 among them.

    Hands of ordinary runs are their own clusters, so their sums need no grouping; only the
    --duplicate runs are grouped by deal."""
    win, wp = _win_filter(f)
    plain, pp = _runs_of_kind(f, False)
    dup, dp = _runs_of_kind(f, True)
    cols = ["d", "y", "m", "yy", "ym", "mm"]
    single = ", ".join(
        f"count({c}) AS d_{c}, sum({c}) AS y_{c}, count({c}) AS m_{c},"
        f" sum({c}::DOUBLE * {c}) AS yy_{c}, sum({c}) AS ym_{c}, count({c}) AS mm_{c}"
        for c in _VALUE_COLS
    )
    inner = ", ".join(f"sum({c}) AS y_{c}, count({c}) AS m_{c}" for c in _VALUE_COLS)
    grouped = ", ".join(
        f"count(m_{c}) FILTER (WHERE m_{c} > 0) AS d_{c}, sum(y_{c}) AS y_{c}, sum(m_{c}) AS m_{c},"
        f" sum(y_{c}::DOUBLE * y_{c}) AS yy_{c}, sum(y_{c} * m_{c}) AS ym_{c},"
        f" sum(m_{c} * m_{c}) AS mm_{c}"
        for c in _VALUE_COLS
    )
    total = ", ".join(f"sum({k}_{c}) AS {k}_{c}" for c in _VALUE_COLS for k in cols)
    return (
        f"SELECT sum(clusters) AS clusters, sum(wins) AS wins, sum(zimo) AS zimo, {total} FROM ("
        f" SELECT count(*) AS clusters, count(*) AS wins, count(*) FILTER (WHERE zimo) AS zimo,"
        f" {single} FROM hands WHERE {plain} AND {win}"
        f" UNION ALL SELECT count(*), sum(n), sum(z), {grouped} FROM"
        f" (SELECT {C} AS c, count(*) AS n, count(*) FILTER (WHERE zimo) AS z, {inner}"
        f" FROM hands WHERE {dup} AND {win} GROUP BY c))",
        pp + wp + dp + wp,
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


def _seat_selected(f: Filters, i: int) -> tuple[str, list[Any]]:
    """Seat ``i`` of a hands row plays (not the 坐醒 sitter) and is selected."""
    if f.seats and i not in f.seats:
        return "false", []
    cond = f"policy_{i} IS NOT NULL AND NOT (policy_3 IS NOT NULL AND (dealer + 2) % 4 = {i})"
    if not f.policies:
        return f"({cond})", []
    pol, p = _in(f"policy_{i}", f.policies)
    return f"({cond} AND {pol})", p


_SEATS = range(MAX_SEATS)


def _sum(terms: Sequence[str]) -> str:
    return "(" + " + ".join(terms) + ")"


def _fixed_groups(key: str) -> list[tuple[str, str]]:
    """For a key whose groups are known in advance: ``(label, seat-in-group condition)``
    where the condition is about seat ``{j}``."""
    if key == "seat":
        return [(f"seat {i}", f"{{j}} = {i}") for i in _SEATS]
    if key == "dealer":
        return [("dealer", "{j} = dealer"), ("non-dealer", "{j} <> dealer")]
    return [("all", "true")]


def group_rates(f: Filters, key: str) -> tuple[str, list[Any]]:
    """Per group of seat rows: seat-hands ``n``, wins, and the cluster sums of the score
    change (as ``replay.analysis.stats`` does per run). See :func:`group_rates_by`."""
    return group_rates_by(f, (key,))


def group_rates_by(f: Filters, keys: Sequence[str]) -> tuple[str, list[Any]]:
    """:func:`group_rates` for several keys at once (column ``g`` names the key).

    In an ordinary run a cluster is a hand, so a group's cluster values (its seats in the
    hand ``m``, their wins, their summed score change ``y``) are sums over the four seat
    columns of the hand's row: no unpivot, no grouping by hand. Keys with groups known in
    advance (seat, dealer, all) become columns of one aggregate row; the policy key keeps,
    per hand, one row per policy present (its first seat); the run key groups by run.
    --Duplicate runs, whose clusters are deals, are grouped by deal from the seats view.
    """
    for key in keys:
        GROUP_KEYS[key]  # noqa: B018 - an unknown key raises KeyError
    r, rp = _runs_of_kind(f, False)
    sel, sp = [], []
    for i in _SEATS:
        c, p = _seat_selected(f, i)
        sel.append(f"{c} AS s{i}")
        sp += p
    deltas = ", ".join(f"coalesce(delta_{i}, 0) AS d{i}" for i in _SEATS)
    base = (
        f"SELECT run, dealer, winner, policy_0, policy_1, policy_2, policy_3, {deltas},"
        f" {', '.join(sel)} FROM hands WHERE {r}"
    )
    parts: list[str] = []
    params: list[Any] = []

    def cluster(in_group: str) -> tuple[str, str, str]:
        """Per hand: seats in the group, their wins, their score change."""
        conds = [f"s{j} AND " + in_group.format(j=j) for j in _SEATS]
        m = _sum([f"({c})::INTEGER" for c in conds])
        w = _sum([f"({c} AND winner = {j})::INTEGER" for j, c in zip(_SEATS, conds)])
        y = _sum([f"CASE WHEN {c} THEN d{j} ELSE 0 END" for j, c in zip(_SEATS, conds)])
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
        params += sp + rp
    if "policy" in keys:
        structs = []
        for i in _SEATS:
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
        params += sp + rp
    if "run" in keys:
        m, w, y = cluster("true")
        parts.append(
            f"SELECT 'run', run, {aggs} FROM (SELECT run, {m} AS m, {w} AS w, ({y})::BIGINT AS y"
            f" FROM ({base})) GROUP BY run"
        )
        params += sp + rp
    dr, dp = _runs_of_kind(f, True)
    sf, sfp = _seat_filter(f)
    for key in keys if dr != "false" else ():
        parts.append(
            f"SELECT '{key}', key, sum(n), sum(won), count(*), sum(y), sum(y::DOUBLE * y),"
            f" sum(y * n), sum(n * n) FROM (SELECT {GROUP_KEYS[key]} AS key, {C} AS c,"
            f" count(*) AS n, sum(won::INT) AS won, sum(delta) AS y FROM seats"
            f" WHERE {dr} AND {sf} GROUP BY 1, 2) GROUP BY key"
        )
        params += dp + sfp
    return (
        "SELECT g, key, sum(n) AS n, sum(won) AS won, sum(d) AS d, sum(y) AS y,"
        " sum(yy) AS yy, sum(ym) AS ym, sum(mm) AS mm"
        f" FROM ({' UNION ALL '.join(parts)}) AS t (g, key, n, won, d, y, yy, ym, mm)"
        " WHERE n > 0 GROUP BY g, key ORDER BY g, key",
        params,
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
    """Seat-hands and wins per group and per bin of ``width`` hands (by hand index). For
    the seat key the four seat columns of the hands row are counted directly."""
    k = GROUP_KEYS[key]
    if key == "seat":
        r, rp = _runs(f)
        sel, sp = [], []
        for i in _SEATS:
            c, p = _seat_selected(f, i)
            sel.append(f"{c} AS s{i}")
            sp += p
        cols = ", ".join(
            f"count(*) FILTER (WHERE s{i}) AS n{i},"
            f" count(*) FILTER (WHERE s{i} AND winner = {i}) AS w{i}"
            for i in _SEATS
        )
        structs = ", ".join(
            f"{{'key': 'seat {i}', 'bin': bin, 'n': n{i}, 'won': w{i}}}" for i in _SEATS
        )
        return (
            "SELECT u.key, u.bin, u.n, u.won FROM (SELECT unnest([" + structs + "]) AS u"
            f" FROM (SELECT bin, {cols} FROM (SELECT hand_id // ? AS bin, winner,"
            f" {', '.join(sel)} FROM hands WHERE {r}) GROUP BY bin)) WHERE u.n > 0"
            " ORDER BY 1, 2",
            [int(width), *sp, *rp],
        )
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
        f" {_CLUSTERS} AS d, sum(huxi) AS huxi, sum(huxi * huxi) AS huxi2,"
        " sum(score) AS score, sum(score::DOUBLE * score) AS score2,"
        " count(*) FILTER (WHERE zimo) AS zimo"
        f" FROM hands h JOIN runs r USING (run) WHERE {w} GROUP BY 1 ORDER BY 1",
        p,
    )


def by_mingtang(f: Filters) -> tuple[str, list[Any]]:
    """Per 名堂 level (花样, or the Luzhou mode) and 名堂 bit (−1: 平胡, no 名堂): wins carrying
    it, moments of 胡息 and score, and the score above 平胡 (score − 等); plus per level the
    totals (bit −2)."""
    w, p = wins_where(f)
    agg = (
        "count(*) AS n, count(*) FILTER (WHERE NOT dup) + count(DISTINCT c) FILTER (WHERE dup)"
        " AS d, sum(huxi) AS huxi, sum(huxi * huxi) AS huxi2, sum(score) AS score,"
        " sum(score::DOUBLE * score) AS score2, sum(score - deng) AS extra"
    )
    return (
        f"WITH w AS (SELECT {C} AS c, r.duplicate AS dup, h.huxi, h.deng, h.score,"
        f" h.mingtang, r.level FROM hands h JOIN runs r USING (run) WHERE {w})"
        f" SELECT w.level, b.bit::INTEGER AS bit, {agg}"
        " FROM w JOIN mingtang_codes b ON (w.mingtang >> b.bit) & 1 = 1 GROUP BY ALL"
        f" UNION ALL SELECT level, -1, {agg} FROM w WHERE mingtang = 0 GROUP BY ALL"
        f" UNION ALL SELECT level, -2, {agg} FROM w GROUP BY ALL"
        " ORDER BY 1, 2",
        p,
    )


def mingtang_codes() -> tuple[str, list[Any]]:
    return "SELECT bit::INTEGER AS bit, pinyin, name, level, fan FROM mingtang_codes", []


def win_sample(
    f: Filters, per_run: int, below: int, source: str = "hands"
) -> tuple[str, list[Any]]:
    """The first ``per_run`` selected wins with ``hand_id < below`` of each run (hands are
    independent draws, so the first ones are a fair sample), with their decks. The bound
    keeps the scan to the first shards (``source``: a relation over only their files), and
    so does :func:`events_for` for their events."""
    w, p = wins_where(f)
    return (
        "SELECT * EXCLUDE (k) FROM (SELECT *, row_number() OVER (PARTITION BY run"
        f" ORDER BY hand_id) AS k FROM {source} WHERE {w} AND hand_id < ?) WHERE k <= ?"
        " ORDER BY run, hand_id",
        [*p, int(below), int(per_run)],
    )


# ---------------------------------------------------------------------------------------------
# 荒庄
# ---------------------------------------------------------------------------------------------

#: Hand-level group keys (``h`` is hands, ``r`` the runs table).
HAND_KEYS: dict[str, str] = {
    "rules": "r.rules",
    "policies": "r.policy_mix",  # the rotations of a duplicate deal share it
    "run": "h.run",
    "players": "r.players::VARCHAR || ' players'",
    "all": "'all'",
}


def _hands_joined(f: Filters) -> tuple[str, list[Any]]:
    w, p = hands_where(f)
    return f"FROM hands h JOIN runs r USING (run) WHERE {w}", p


def huang_by(f: Filters, key: str) -> tuple[str, list[Any]]:
    """Per group of hands: hands, 荒庄, clusters and 荒庄 that kept the dealer."""
    return huang_by_keys(f, (key,))


def huang_by_keys(f: Filters, keys: Sequence[str]) -> tuple[str, list[Any]]:
    """:func:`huang_by` for several keys (column ``g`` names the key). Every key is a
    property of the run, so the hands are counted once per run and the few per-run rows are
    then grouped by each key (``GROUPING SETS``); clusters never span runs, so they add."""
    src, p = _hands_joined(f)
    return (
        "WITH per AS (SELECT run, count(*) AS n, count(*) FILTER (WHERE h.outcome = 1) AS huang,"
        " count(*) FILTER (WHERE NOT r.duplicate)"
        " + count(DISTINCT h.deal_id) FILTER (WHERE r.duplicate) AS d,"
        " count(*) FILTER (WHERE h.outcome = 1 AND h.huang_streak + 1 < r.huangzhuang_rotate)"
        f" AS retained {src} GROUP BY run) " + huang_outer(keys),
        p,
    )


def huang_outer(keys: Sequence[str]) -> str:
    """The part of :func:`huang_by_keys` after its ``per`` CTE (per run: n, huang, d,
    retained): the per-run rows grouped by each run-level key."""
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


def survival(f: Filters, key: str) -> tuple[str, list[Any]]:
    """Hands per group and per number of cards left in the stock when they ended (counted
    per run, then grouped: the key is a property of the run)."""
    w, p = hands_where(f)
    return (
        "WITH per AS (SELECT run, stock_left::INTEGER AS stock_left, count(*) AS n,"
        f" count(*) FILTER (WHERE outcome = {HUANG}) AS huang FROM hands WHERE {w}"
        " GROUP BY 1, 2)" + survival_outer(key),
        p,
    )


def survival_outer(key: str) -> str:
    """The part of :func:`survival` after its ``per`` CTE (per run and stock_left: n, huang)."""
    k = HAND_KEYS[key]
    return (
        f" SELECT {k} AS key, h.stock_left, sum(h.n)::BIGINT AS n, sum(h.huang)::BIGINT AS huang"
        " FROM per h JOIN runs r USING (run) GROUP BY 1, 2 ORDER BY 1, 2"
    )


def retention(f: Filters) -> tuple[str, list[Any]]:
    """By consecutive 荒庄 before the hand at this dealer (capped at 3): hands, 荒庄, dealer
    wins and clusters."""
    src, p = _hands_joined(f)
    return (
        "SELECT least(h.huang_streak, 3)::INTEGER AS streak, count(*) AS n,"
        f" count(*) FILTER (WHERE h.outcome = {HUANG}) AS huang,"
        f" count(*) FILTER (WHERE h.outcome <> {HUANG} AND h.winner = h.dealer) AS dealer_wins,"
        f" {_CLUSTERS} AS d {src} GROUP BY 1 ORDER BY 1",
        p,
    )


# ---------------------------------------------------------------------------------------------
# Drill-down: hands matching a condition
# ---------------------------------------------------------------------------------------------

#: 破跑胡 needs the events: it is looked for among the hands with ``hand_id`` below this in
#: each run (the first shards; hands are independent, so a fair sample).
POPAO_BOUND = 20_000

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
        f" AND e.hand_id < {POPAO_BOUND}"
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


#: Conditions too costly for a whole store (a join with the events) look at the hands with
#: ``hand_id`` below this in each run: the first shards, a fair sample of independent hands.
SCAN_BOUND: dict[str, int] = {"popao": POPAO_BOUND}


def _base(f: Filters, cond: str) -> tuple[str, list[Any]]:
    """The hands a condition is counted among: selected wins or hands (bounded if costly)."""
    _, _, about_wins = CONDITIONS[cond]
    where, p = wins_where(f) if about_wins else hands_where(f)
    if cond in SCAN_BOUND:
        return f"{where} AND hand_id < ?", [*p, SCAN_BOUND[cond]]
    return where, p


def _condition(
    f: Filters, cond: str, value: int | None, source: str = "hands", events: str = "events"
) -> tuple[str, list[Any]]:
    text, takes_value, _ = CONDITIONS[cond]
    text = text.replace("FROM events e", f"FROM {events} e")  # the 破跑胡 test reads events
    where, params = _base(f, cond)
    if takes_value:
        if value is None:
            raise ValueError(f"condition {cond!r} needs a value")
        params.append(int(value))
    return f"FROM {source} h JOIN runs r USING (run) WHERE {where} AND {text}", params


def hand_count(
    f: Filters, cond: str, value: int | None, source: str = "hands", events: str = "events"
) -> tuple[str, list[Any]]:
    """How many hands match, out of how many (the base: selected hands, or selected wins;
    for the conditions of :data:`SCAN_BOUND`, those below the bound). ``source``: the hands
    relation (the catalog's view, or one over the shards that can hold them), ``events``
    likewise for a condition that reads the decisions."""
    src, p = _condition(f, cond, value, source, events)
    base_where, bp = _base(f, cond)
    return (
        f"SELECT (SELECT count(*) {src}) AS k, (SELECT count(*) FROM {source} WHERE {base_where})"
        " AS n",
        p + bp,
    )


def hand_list(
    f: Filters,
    cond: str,
    value: int | None,
    limit: int,
    with_deck: bool = False,
    source: str = "hands",
    events: str = "events",
) -> tuple[str, list[Any]]:
    """The first ``limit`` matching hands (by run and hand id); with their decks, to replay."""
    src, p = _condition(f, cond, value, source, events)
    cols = HAND_COLUMNS + (", h.deck" if with_deck else "")
    return (
        f"SELECT {cols} {src} ORDER BY run, h.hand_id LIMIT ?",
        [*p, int(limit)],
    )


def hand_list_range(
    f: Filters,
    cond: str,
    value: int | None,
    limit: int,
    lo: int,
    hi: int,
    with_deck: bool = False,
    source: str = "hands",
) -> tuple[str, list[Any]]:
    """:func:`hand_list` within hand ids ``lo … hi`` (a few shards of one run; ``source``
    names only their files, so no other file is opened)."""
    src, p = _condition(f, cond, value, source)
    cols = HAND_COLUMNS + (", h.deck" if with_deck else "")
    return (
        f"SELECT {cols} {src} AND h.hand_id BETWEEN ? AND ? ORDER BY run, h.hand_id LIMIT ?",
        [*p, int(lo), int(hi), int(limit)],
    )


def events_for(
    ranges: Sequence[tuple[str, int, int]], source: str = "events"
) -> tuple[str, list[Any]]:
    """The decisions of the hands in ``(run, first, last)`` ranges, one list per hand
    (``source``: the events relation, best one over only the shards of those ranges)."""
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
        f" AS action FROM {source} WHERE {cond} GROUP BY run, hand_id",
        params,
    )


def hand_ids(run: str) -> tuple[str, list[Any]]:
    return "SELECT min(hand_id) AS lo, max(hand_id) AS hi FROM hands WHERE run = ?", [run]
