"""Figures from the per-hand ``facts`` (docs/LOG_FORMAT.md §12): the group types of the
winning readings over every selected win, and per policy 破跑胡, 比牌 and claim conflicts.
Each from the shard summaries' ``ev_groups`` / ``ev_facts`` rows (``pl``, a
:data:`~replay.analysis.figures.selection.Plan`: every selected run summarised by this
version, which summarises the facts of every hand) or, with ``pl`` None, by SQL over the
``facts`` table of the runs that have facts (a run recorded before them has none until
``paohuzi index``; :attr:`replay.store.scan.RunInfo.has_facts` says which) — the same
numbers (tests/replay/derived/test_event_summaries.py).

>>> sql, params = group_sources(Selection(runs=("a",)), None)
>>> "g_kan_huxi" in sql and "JOIN facts" in sql
True
"""

from __future__ import annotations

from replay.analysis.figures.params import Params, Statement
from replay.analysis.figures.selection import (
    MASK,
    WINNER_BIT,
    Plan,
    Selection,
    runs_in,
    seat_filter,
    summary_rows,
    wins_where,
)
from replay.schema import MAX_SEATS
from replay.store.facts_schema import GROUP_TYPES as GROUP_TYPES


def group_sources(sel: Selection, pl: Plan | None) -> Statement:
    """One row over the selected wins that have facts: ``wins``, and per group type ``t``
    ``t_groups`` (groups of that type in the winning readings), ``t_hands`` (wins with at
    least one) and ``t_huxi`` (their 胡息)."""
    p = Params()
    if pl is not None:
        cols = ", ".join(
            f"coalesce(sum(n) FILTER (WHERE what = '{t}'), 0)::BIGINT AS {t}_groups,"
            f" coalesce(sum(k) FILTER (WHERE what = '{t}'), 0)::BIGINT AS {t}_hands,"
            f" coalesce(sum(huxi_s) FILTER (WHERE what = '{t}'), 0)::BIGINT AS {t}_huxi"
            for t in GROUP_TYPES
        )
        return p.statement(
            summary_rows(pl, p, "ev_groups", WINNER_BIT)
            + f" SELECT coalesce(sum(n) FILTER (WHERE what = 'wins'), 0)::BIGINT AS wins, {cols}"
            " FROM x"
        )
    cols = ", ".join(
        f"coalesce(sum(g_{t}_n), 0)::BIGINT AS {t}_groups,"
        f" count(*) FILTER (WHERE g_{t}_n > 0) AS {t}_hands,"
        f" coalesce(sum(g_{t}_huxi), 0)::BIGINT AS {t}_huxi"
        for t in GROUP_TYPES
    )
    return p.statement(
        f"SELECT count(*) AS wins, {cols} FROM hands JOIN facts USING (run, hand_id)"
        f" WHERE {wins_where(sel, p)}"
    )


def seat_facts(sel: Selection, pl: Plan | None) -> Statement:
    """Per policy of a selected seat, over the seat-hands of the runs with facts: ``seat_hands``
    and their clusters ``d``; ``wins`` and their clusters ``d_wins``; ``popao`` (its wins by
    破跑胡); ``bipai`` (its eats with 比 groups) and ``bipai_hands`` (seat-hands with one);
    ``hands`` (hands it played a seat in) and their clusters ``d_hands``, ``conflicts`` (claim
    conflicts in them) and ``conflict_hands`` (those with one). A cluster is a deal in
    --duplicate runs, else a hand."""
    p = Params()
    if pl is not None:

        def col(what: str, c: str, name: str) -> str:
            return f"coalesce(sum({c}) FILTER (WHERE what = '{what}'), 0)::BIGINT AS {name}"

        cols = ", ".join(
            col(w, c, name)
            for w, c, name in (
                ("seats", "n", "seat_hands"), ("seats", "d", "d"), ("wins", "n", "wins"),
                ("wins", "d", "d_wins"), ("wins", "k", "popao"), ("seats", "y", "bipai"),
                ("seats", "k", "bipai_hands"), ("hands", "n", "hands"), ("hands", "d", "d_hands"),
                ("hands", "y", "conflicts"), ("hands", "k", "conflict_hands"),
            )
        )  # fmt: skip
        return p.statement(
            summary_rows(pl, p, "ev_facts", MASK)
            + f" SELECT policy, {cols} FROM x GROUP BY policy ORDER BY policy"
        )
    bipai = " ".join(f"WHEN {i} THEN f.bipai_{i}" for i in range(MAX_SEATS))
    where = f"{runs_in(sel, p, 's.run')} AND {seat_filter(sel, p)}"
    return p.statement(
        "WITH s AS (SELECT s.run, s.hand_id, s.policy, s.won, f.popao, f.conflicts,"
        f" CASE s.seat {bipai} END AS bipai,"
        " CASE WHEN r.duplicate THEN s.deal_id ELSE s.hand_id END AS c"
        " FROM seats s JOIN runs r ON r.run = s.run JOIN facts f ON f.run = s.run"
        f" AND f.hand_id = s.hand_id WHERE {where}),"
        " a AS (SELECT policy, count(*) AS seat_hands, count(DISTINCT (run, c)) AS d,"
        " count(*) FILTER (WHERE won) AS wins,"
        " count(DISTINCT (run, c)) FILTER (WHERE won) AS d_wins,"
        " count(*) FILTER (WHERE won AND popao) AS popao,"
        " coalesce(sum(bipai), 0)::BIGINT AS bipai,"
        " count(*) FILTER (WHERE bipai > 0) AS bipai_hands FROM s GROUP BY policy),"
        " h AS (SELECT policy, count(*) AS hands, count(DISTINCT (run, c)) AS d_hands,"
        " coalesce(sum(conflicts), 0)::BIGINT AS conflicts,"
        " count(*) FILTER (WHERE conflicts > 0) AS conflict_hands"
        " FROM (SELECT DISTINCT run, hand_id, c, policy, conflicts FROM s) GROUP BY policy)"
        " SELECT * FROM a JOIN h USING (policy) ORDER BY policy"
    )
