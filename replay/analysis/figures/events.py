"""What players do, from the event log: each figure from the per-shard event summaries
(``pl``, a :data:`~replay.analysis.figures.selection.Plan`: the ``summary_ev_*`` views of
:mod:`replay.derived.summarize_events`) or, with ``pl`` None, by SQL over the raw
``events`` table joined with ``hands`` — the same numbers (tests/replay/analysis/
test_event_summaries.py).

An event's **policy** is the one of the seat that declared it (``policy_S`` of its hand).
The independent unit is the deal (a hand outside --duplicate runs), as everywhere.

* :func:`actions` — events per (policy, kind, forced), with the cluster sums of events per
  seat-hand of the policy: *actions per seat-hand by kind*;
* :func:`declines` — per policy and offered kind (胡, 碰, 吃): real choices (two or more
  options) offering it, and those that passed (过);
* :func:`options` — per policy, the histogram of ``n_legal`` over real choices;
* :func:`hand_facts` — per hand: its decisions, whether it had a 臭胡 (a 胡 declined), a
  忍碰 (a 碰 declined), a 八块 (a seat's second 跑 or 提): their rates per hand and the
  distribution of decisions per hand;
* :func:`hand_length` — the hands' mean length in decisions and in draws (cluster sums);
* :func:`win_timing` — the wins by stock left;
* :func:`paired_actions` — --duplicate runs: policy a minus policy b, over the same deals,
  of events per seat-hand by kind.

>>> sql, params = declines(Selection(runs=("a",)), None)
>>> sorted(params.items())
[('run_0', 'a')]
"""

from __future__ import annotations

from engine.actions import ActionKind
from engine.cards import STOCK_SIZE
from replay.analysis.figures.params import Params, Statement
from replay.analysis.figures.selection import (
    HAND_BIT,
    HUANG,
    MASK,
    SEAT_BIT,
    WINNER_BIT,
    Plan,
    Selection,
    hands_where,
    runs_in,
    runs_of_kind,
    seats_where,
    summary_rows,
    wins_where,
)

#: The policy of the seat that declared an event ``e`` of hand ``h``.
EVENT_POLICY = (
    "CASE e.seat WHEN 0 THEN h.policy_0 WHEN 1 THEN h.policy_1 WHEN 2 THEN h.policy_2"
    " ELSE h.policy_3 END"
)
PASS, HU, PENG, CHI = (int(ActionKind.PASS), int(ActionKind.HU), int(ActionKind.PENG),
                       int(ActionKind.CHI))  # fmt: skip
TI, PAO = int(ActionKind.TI), int(ActionKind.PAO)
#: The offered kinds whose decline is counted, by name.
DECLINED = {"胡": HU, "碰": PENG, "吃": CHI}
#: Their names from their codes, in SQL.
_OFFERED_NAME = (
    "CASE x.action " + " ".join(f"WHEN {b} THEN '{n}'" for n, b in DECLINED.items()) + " END"
)
#: 跑 and 提, the kinds of a 八块 (a seat's second one).
FOUR = (TI, PAO)
FOUR_KINDS = f"({TI}, {PAO})"


def declined(e: str, bit: int) -> str:
    """Event ``e`` passed on an offered kind (``bit``) in a real choice: a 臭胡 for 胡, a
    忍碰 for 碰 (the one definition; the drill-down conditions use it too)."""
    return f"{e}.kind = {PASS} AND ({e}.options >> {bit}) & 1 = 1 AND {e}.n_legal >= 2"


#: A cluster of a row with ``run``, ``deal_id`` and ``hand_id``: the deal in a --duplicate
#: run, else the hand.
CLUSTER = "CASE WHEN r.duplicate THEN h.deal_id ELSE h.hand_id END"


def _events(sel: Selection, p: Params) -> str:
    """The selected events: of the selected runs, declared by a selected seat and policy."""
    parts = [runs_in(sel, p, "e.run")]
    if sel.seats:
        parts.append(p.in_("e.seat", sel.seats, "seat"))
    if sel.policies:
        parts.append(p.in_(EVENT_POLICY, sel.policies, "pol"))
    return (
        f"SELECT e.run, e.hand_id, e.seq, e.seat, e.kind, e.forced, e.n_legal, e.options,"
        f" {EVENT_POLICY} AS policy, {CLUSTER} AS c FROM events e"
        " JOIN hands h ON h.run = e.run AND h.hand_id = e.hand_id JOIN runs r ON r.run = e.run"
        f" WHERE {' AND '.join(parts)}"
    )


def actions(sel: Selection, pl: Plan | None) -> Statement:
    """Rows per (policy, kind, forced): ``n`` events and over the clusters of the policy's
    seat-hands ``y`` = Σ events, ``yy`` = Σ (events per cluster)², ``ym`` = Σ events ×
    seat-hands; and per policy (``kind`` NULL) ``d`` clusters, ``m`` = Σ seat-hands,
    ``mm`` = Σ seat-hands² (for :class:`~replay.analysis.intervals.ClusterSums`)."""
    p = Params()
    if pl is not None:
        return p.statement(
            summary_rows(pl, p, "ev_actions", MASK)
            + " SELECT policy, action AS kind, forced, sum(n) AS n, sum(n) AS y, sum(yy) AS yy,"
            " sum(ym) AS ym, NULL AS d, NULL AS m, NULL AS mm FROM x WHERE action IS NOT NULL"
            " GROUP BY ALL UNION ALL SELECT policy, NULL, NULL, NULL, NULL, NULL, NULL, sum(d),"
            " sum(m), sum(mm) FROM x WHERE action IS NULL GROUP BY ALL"
            " ORDER BY 1, 2 NULLS FIRST, 3"
        )
    ev = _events(sel, p)
    sh_where = seats_where(sel, p)
    return p.statement(
        f"WITH ev AS ({ev}),"
        " sh AS (SELECT s.policy, s.run, CASE WHEN r.duplicate THEN s.deal_id ELSE s.hand_id"
        f" END AS c, count(*) AS m FROM seats s JOIN runs r USING (run) WHERE {sh_where}"
        " GROUP BY ALL),"
        " ck AS (SELECT policy, kind, forced, run, c, count(*) AS y FROM ev GROUP BY ALL)"
        " SELECT ck.policy, ck.kind, ck.forced, sum(ck.y) AS n, sum(ck.y) AS y,"
        " sum(ck.y * ck.y) AS yy, sum(ck.y * sh.m) AS ym, NULL AS d, NULL AS m, NULL AS mm"
        " FROM ck JOIN sh USING (policy, run, c) GROUP BY ALL"
        " UNION ALL SELECT policy, NULL, NULL, NULL, NULL, NULL, NULL, count(*), sum(m),"
        " sum(m * m) FROM sh GROUP BY ALL ORDER BY 1, 2 NULLS FIRST, 3"
    )


def declines(sel: Selection, pl: Plan | None) -> Statement:
    """Rows per (policy, offered kind): ``n`` real choices (``n_legal`` ≥ 2) offering it,
    ``k`` of them passed, ``d`` their clusters."""
    p = Params()
    if pl is not None:
        return p.statement(
            summary_rows(pl, p, "ev_declines", MASK)
            + f" SELECT policy, {_OFFERED_NAME} AS offered, sum(n) AS n, sum(k) AS k,"
            " sum(d) AS d FROM x GROUP BY ALL ORDER BY 1, 2"
        )
    ev = _events(sel, p)
    parts = [
        f"SELECT policy, '{name}' AS offered, count(*) AS n,"
        f" count(*) FILTER (WHERE kind = {PASS}) AS k, count(DISTINCT (run, c)) AS d"
        f" FROM ev WHERE n_legal >= 2 AND (options >> {bit}) & 1 = 1 GROUP BY ALL"
        for name, bit in DECLINED.items()
    ]
    return p.statement(f"WITH ev AS ({ev}) " + " UNION ALL ".join(parts) + " ORDER BY 1, 2")


def forced(sel: Selection, pl: Plan | None) -> Statement:
    """Rows per policy: ``n`` events, ``k`` forced ones, ``d`` clusters."""
    p = Params()
    if pl is not None:
        return p.statement(
            summary_rows(pl, p, "ev_forced", MASK)
            + " SELECT policy, sum(n) AS n, sum(k) AS k, sum(d) AS d FROM x GROUP BY ALL"
            " ORDER BY 1"
        )
    return p.statement(
        f"WITH ev AS ({_events(sel, p)}) SELECT policy, count(*) AS n,"
        " count(*) FILTER (WHERE forced) AS k, count(DISTINCT (run, c)) AS d FROM ev"
        " GROUP BY ALL ORDER BY 1"
    )


def options(sel: Selection, pl: Plan | None) -> Statement:
    """Rows per (policy, ``v`` = n_legal): ``n`` real choices (two or more options, not
    forced)."""
    p = Params()
    if pl is not None:
        return p.statement(
            summary_rows(pl, p, "ev_options", SEAT_BIT)
            + " SELECT policy, v, sum(n) AS n FROM x GROUP BY ALL ORDER BY 1, 2"
        )
    return p.statement(
        f"WITH ev AS ({_events(sel, p)}) SELECT policy, n_legal AS v, count(*) AS n FROM ev"
        " WHERE n_legal >= 2 AND NOT forced GROUP BY ALL ORDER BY 1, 2"
    )


def hand_facts(sel: Selection, pl: Plan | None) -> Statement:
    """Rows per ``decisions`` value of the selected hands: ``n`` hands and how many of them
    had a 臭胡, a 忍碰, a 八块; and one more row, ``decisions`` NULL, with every selected hand
    (``n``) and their clusters (``d``: cluster counts do not add over the other rows)."""
    p = Params()
    if pl is not None:
        facts = ", ".join(
            f"coalesce(sum(n) FILTER (WHERE what = '{w}'), 0) AS {w}"
            for w in ("chouhu", "renpeng", "bakuai")
        )
        return p.statement(
            summary_rows(pl, p, "ev_hands", HAND_BIT)
            + ", c AS (SELECT coalesce(sum(c.d), 0) AS d FROM summary_clusters c JOIN sel"
            " USING (run) WHERE c.what = 'hand' AND c.mask = sel.hmask)"
            " SELECT v AS decisions, coalesce(sum(n) FILTER (WHERE what = 'hands'), 0) AS n,"
            f" {facts}, NULL AS d FROM x GROUP BY ALL"
            " UNION ALL SELECT NULL, (SELECT coalesce(sum(n), 0) FROM x WHERE what = 'hands'),"
            " NULL, NULL, NULL, (SELECT d FROM c) ORDER BY 1 NULLS FIRST"
        )
    where = hands_where(sel, p)
    return p.statement(
        "WITH hs AS (SELECT h.run, h.hand_id, CASE WHEN r.duplicate THEN h.deal_id ELSE"
        f" h.hand_id END AS c FROM hands h JOIN runs r USING (run) WHERE {where}),"
        " e1 AS (SELECT e.run, e.hand_id, count(*) AS decisions,"
        f" bool_or({declined('e', HU)}) AS chouhu, bool_or({declined('e', PENG)}) AS renpeng"
        " FROM events e JOIN hs USING (run, hand_id) GROUP BY ALL),"
        f" e2 AS (SELECT e.run, e.hand_id, max(cnt) >= 2 AS bakuai FROM (SELECT e.run,"
        f" e.hand_id, e.seat, count(*) FILTER (WHERE e.kind IN {FOUR_KINDS}) AS cnt FROM"
        " events e JOIN hs USING (run, hand_id) GROUP BY ALL) e GROUP BY ALL),"
        " x AS (SELECT hs.run, hs.c, coalesce(e1.decisions, 0) AS decisions,"
        " coalesce(e1.chouhu, false) AS chouhu, coalesce(e1.renpeng, false) AS renpeng,"
        " coalesce(e2.bakuai, false) AS bakuai FROM hs LEFT JOIN e1 USING (run, hand_id)"
        " LEFT JOIN e2 USING (run, hand_id))"
        " SELECT decisions, count(*) AS n, count(*) FILTER (WHERE chouhu) AS chouhu,"
        " count(*) FILTER (WHERE renpeng) AS renpeng, count(*) FILTER (WHERE bakuai) AS"
        " bakuai, NULL AS d FROM x GROUP BY ALL"
        " UNION ALL SELECT NULL, count(*), NULL, NULL, NULL, count(DISTINCT (run, c)) FROM x"
        " ORDER BY 1 NULLS FIRST"
    )


def hand_length(sel: Selection, pl: Plan | None) -> Statement:
    """Rows per ``what`` (``decisions``: the hand's events; ``draws``: cards drawn from the
    stock, ``STOCK_SIZE`` − ``stock_left``) over the selected hands: ``n`` hands, and over
    their clusters ``d`` = their number, ``y`` = Σ length, ``m`` = Σ hands, ``yy``, ``ym``,
    ``mm`` (for :class:`~replay.analysis.intervals.ClusterSums`)."""
    p = Params()
    sums = ", ".join(f"sum({c}) AS {c}" for c in ("n", "d", "y", "m", "yy", "ym", "mm"))
    if pl is not None:
        return p.statement(
            summary_rows(pl, p, "ev_length", "x.mask = sel.hmask")
            + f" SELECT what, {sums} FROM x GROUP BY ALL ORDER BY 1"
        )
    where = hands_where(sel, p)
    parts = [
        f"SELECT '{w}' AS what, run, c, count(*) AS m, sum({w}) AS y FROM hl GROUP BY ALL"
        for w in ("decisions", "draws")
    ]
    return p.statement(
        "WITH hs AS (SELECT h.run, h.hand_id, CASE WHEN r.duplicate THEN h.deal_id ELSE"
        f" h.hand_id END AS c, {STOCK_SIZE} - h.stock_left AS draws FROM hands h JOIN runs r"
        f" USING (run) WHERE {where}),"
        " ne AS (SELECT e.run, e.hand_id, count(*) AS decisions FROM events e JOIN hs"
        " USING (run, hand_id) GROUP BY ALL),"
        " hl AS (SELECT hs.run, hs.c, hs.draws, coalesce(ne.decisions, 0) AS decisions FROM hs"
        " LEFT JOIN ne USING (run, hand_id)),"
        f" pc AS ({' UNION ALL '.join(parts)})"
        " SELECT what, sum(m) AS n, count(*) AS d, sum(y) AS y, sum(m) AS m, sum(y * y) AS yy,"
        " sum(y * m) AS ym, sum(m * m) AS mm FROM pc GROUP BY ALL ORDER BY 1"
    )


def win_timing(sel: Selection, pl: Plan | None) -> Statement:
    """Rows per ``v`` = stock left at the win: ``n`` selected wins; and the 荒庄 count as
    ``v`` NULL (its hands end with the stock empty)."""
    p = Params()
    if pl is not None:
        return p.statement(
            summary_rows(pl, p, "ev_wins", WINNER_BIT)
            + " SELECT stock AS v, sum(n) AS n FROM x GROUP BY ALL"
            " UNION ALL SELECT NULL, coalesce(sum(x.n), 0) FROM summary_stock x JOIN sel"
            f" USING (run) WHERE {HAND_BIT} AND x.outcome = {HUANG} ORDER BY 1 NULLS FIRST"
        )
    wins = wins_where(sel, p)
    hands = hands_where(sel, p)
    return p.statement(
        f"SELECT stock_left AS v, count(*) AS n FROM hands WHERE {wins} GROUP BY ALL"
        f" UNION ALL SELECT NULL, count(*) FROM hands WHERE {hands} AND outcome = {HUANG}"
        " ORDER BY 1 NULLS FIRST"
    )


def paired_actions(sel: Selection, pl: Plan | None) -> Statement:
    """--duplicate runs: rows per (a, b, kind, forced) with policies a < b: ``deals`` where
    both have a selected seat (and ``runs``), and over them the sums ``dy``, ``dyy`` of the
    per-deal difference a − b of events of that kind per seat-hand (for
    :func:`~replay.analysis.figures.results.paired_rows`'s moments)."""
    p = Params()
    if pl is not None:
        return p.statement(
            summary_rows(pl, p, "ev_paired", MASK)
            + ", dd AS (SELECT a, b, sum(d) AS deals, count(DISTINCT run) AS runs FROM x"
            " WHERE action IS NULL GROUP BY ALL)"
            " SELECT x.a, x.b, x.action AS kind, x.forced, dd.deals, dd.runs, sum(x.dy) AS dy,"
            " sum(x.dyy) AS dyy FROM x JOIN dd USING (a, b) WHERE x.action IS NOT NULL"
            " GROUP BY ALL ORDER BY 1, 2, 3, 4"
        )
    dup = runs_of_kind(sel, p, True)
    ev = _events(sel, p)
    return p.statement(
        f"WITH s AS (SELECT run, deal_id, policy, count(*) AS m FROM seats WHERE"
        f" {seats_where(sel, p)} AND {dup} GROUP BY ALL),"
        f" ev AS ({ev}),"
        " y AS (SELECT run, c AS deal_id, policy, kind, forced, count(*) AS y FROM ev"
        " GROUP BY ALL),"
        " pr AS (SELECT a.run, a.deal_id, a.policy AS a, b.policy AS b, a.m AS ma, b.m AS mb"
        " FROM s a JOIN s b ON a.run = b.run AND a.deal_id = b.deal_id AND a.policy < b.policy),"
        " dd AS (SELECT a, b, count(*) AS deals, count(DISTINCT run) AS runs FROM pr"
        " GROUP BY ALL),"
        " k AS (SELECT DISTINCT run, kind, forced FROM y),"
        " df AS (SELECT pr.a, pr.b, k.kind, k.forced,"
        " coalesce(ya.y, 0)::DOUBLE / pr.ma - coalesce(yb.y, 0)::DOUBLE / pr.mb AS x"
        " FROM pr JOIN k USING (run)"
        " LEFT JOIN y ya ON ya.run = pr.run AND ya.deal_id = pr.deal_id AND ya.policy = pr.a"
        " AND ya.kind = k.kind AND ya.forced = k.forced"
        " LEFT JOIN y yb ON yb.run = pr.run AND yb.deal_id = pr.deal_id AND yb.policy = pr.b"
        " AND yb.kind = k.kind AND yb.forced = k.forced"
        " WHERE ya.y IS NOT NULL OR yb.y IS NOT NULL)"
        " SELECT df.a, df.b, df.kind, df.forced, dd.deals, dd.runs, sum(df.x) AS dy,"
        " sum(df.x * df.x) AS dyy FROM df JOIN dd USING (a, b) GROUP BY ALL ORDER BY 1, 2, 3, 4"
    )
